//go:build race

package symbfile

// raceBuild is set in -race builds, whose corpus-wide checks take a
// sample to stay fast.
const raceBuild = true
