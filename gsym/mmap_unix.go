//go:build unix

package gsym

import (
	"fmt"
	"os"
	"syscall"
)

// mapFile maps f read-only. Lookups touch a few scattered pages, so the
// kernel is told not to read ahead.
func mapFile(f *os.File, size int64) ([]byte, func() error, error) {
	if size == 0 {
		return nil, func() error { return nil }, nil
	}
	if size != int64(int(size)) {
		return nil, nil, fmt.Errorf("file of %d bytes is too large to map", size)
	}
	b, err := syscall.Mmap(int(f.Fd()), 0, int(size), syscall.PROT_READ, syscall.MAP_SHARED)
	if err != nil {
		return nil, nil, err
	}
	_ = syscall.Madvise(b, syscall.MADV_RANDOM)
	return b, func() error { return syscall.Munmap(b) }, nil
}
