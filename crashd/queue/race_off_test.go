//go:build !race

package queue

// raceBuild is set in -race builds (race_on_test.go).
const raceBuild = false
