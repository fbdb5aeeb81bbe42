//go:build race

package elf

// raceBuild is set in -race builds, which leave Debian's libc out of
// TestUnitAtATime (20 s under the race detector).
const raceBuild = true
