//go:build unix && !linux

package symfile

import "syscall"

const mmapFlags = syscall.MAP_SHARED

// advise does nothing here.
func advise([]byte) {}

// releasePages does nothing here: the whole mapping stays resident.
func releasePages([]byte) {}
