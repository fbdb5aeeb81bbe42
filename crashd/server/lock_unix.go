//go:build unix

package server

import (
	"fmt"
	"os"
	"syscall"
)

// lockDir takes an exclusive lock on path (created if needed) for the life
// of the process; the kernel drops it when the process dies.
func lockDir(path string) (func(), error) {
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		return nil, fmt.Errorf("lock: %w", err)
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		f.Close()
		return nil, fmt.Errorf("%w: %s: %v", ErrLocked, path, err)
	}
	return func() { f.Close() }, nil
}
