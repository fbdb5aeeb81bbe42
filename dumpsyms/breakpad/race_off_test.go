//go:build !race

package breakpad_test

const raceBuild = false
