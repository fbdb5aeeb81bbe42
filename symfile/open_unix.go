//go:build unix

package symfile

import (
	"fmt"
	"os"
	"syscall"
)

// mapFile returns the contents of f, memory-mapped read-only, and the
// function that unmaps them.
func mapFile(f *os.File, size int64) ([]byte, func() error, error) {
	if size == 0 {
		return nil, func() error { return nil }, nil
	}
	if size != int64(int(size)) {
		return nil, nil, fmt.Errorf("file of %d bytes is too large to map", size)
	}
	b, err := syscall.Mmap(int(f.Fd()), 0, int(size), syscall.PROT_READ, mmapFlags)
	if err != nil {
		return nil, nil, err
	}
	advise(b)
	return b, func() error { return syscall.Munmap(b) }, nil
}
