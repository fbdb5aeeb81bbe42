//go:build !race

package gsym

const raceBuild = false
