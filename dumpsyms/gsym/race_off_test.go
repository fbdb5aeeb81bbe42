//go:build !race

package gsym_test

const raceBuild = false
