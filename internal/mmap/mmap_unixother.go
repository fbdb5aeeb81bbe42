//go:build unix && !linux

package mmap

// advise does nothing here.
func advise([]byte, Advice) {}

// Release does nothing here: the whole mapping stays resident.
func Release([]byte) {}

// Discard does nothing here: the memory stays resident.
func Discard([]byte) {}
