//go:build !race

package formats

const raceBuild = false
