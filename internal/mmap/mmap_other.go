//go:build !unix

package mmap

import (
	"io"
	"os"
)

// Supported reports whether files are memory-mapped here.
const Supported = false

func file(f *os.File, size int64, advice Advice) ([]byte, func() error, error) {
	b, err := io.ReadAll(f)
	return b, noUnmap, err
}

// Release does nothing: the file was read into the heap.
func Release([]byte) {}

func anon(size int) ([]byte, func() error, error) {
	return make([]byte, size), noUnmap, nil
}

// Discard does nothing: the memory is the heap's.
func Discard([]byte) {}
