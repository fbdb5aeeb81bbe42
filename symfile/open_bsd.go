//go:build unix && !linux

package symfile

import "syscall"

const mmapFlags = syscall.MAP_SHARED
