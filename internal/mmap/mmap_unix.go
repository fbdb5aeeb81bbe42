//go:build unix

package mmap

import (
	"fmt"
	"os"
	"syscall"
)

// Supported reports whether files are memory-mapped here.
const Supported = true

func file(f *os.File, size int64, advice Advice) ([]byte, func() error, error) {
	if size == 0 {
		return nil, noUnmap, nil
	}
	if size != int64(int(size)) {
		return nil, nil, fmt.Errorf("file of %d bytes is too large to map", size)
	}
	b, err := syscall.Mmap(int(f.Fd()), 0, int(size), syscall.PROT_READ, syscall.MAP_SHARED)
	if err != nil {
		return nil, nil, err
	}
	advise(b, advice)
	return b, func() error { return syscall.Munmap(b) }, nil
}

func anon(size int) ([]byte, func() error, error) {
	b, err := syscall.Mmap(-1, 0, size, syscall.PROT_READ|syscall.PROT_WRITE, syscall.MAP_PRIVATE|syscall.MAP_ANON)
	if err != nil {
		return nil, nil, fmt.Errorf("anonymous mapping of %d bytes: %w", size, err)
	}
	return b, func() error { return syscall.Munmap(b) }, nil
}
