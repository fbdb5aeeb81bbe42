//go:build unix

package pdb

import (
	"os"
	"syscall"
)

// mmapFile maps the whole file read-only. It returns nil data (and no
// error) when the file cannot be mapped (empty, too large for an int).
func mmapFile(fh *os.File, size int64) ([]byte, func() error, error) {
	if size <= 0 || int64(int(size)) != size {
		return nil, nil, nil
	}
	data, err := syscall.Mmap(int(fh.Fd()), 0, int(size), syscall.PROT_READ, syscall.MAP_SHARED)
	if err != nil {
		return nil, nil, err
	}
	return data, func() error { return syscall.Munmap(data) }, nil
}
