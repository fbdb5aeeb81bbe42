//go:build race

package gsym_test

// raceBuild is set in -race builds, whose corpus-wide checks against
// LLVM take a sample to stay fast.
const raceBuild = true
