//go:build !race

package symbfile

const raceBuild = false
