// Package mmap maps files read-only into memory, for the readers of symbol,
// index and dump files: with mmap(2) on Unix, by reading them whole
// elsewhere ([Supported] tells which). Advice on how a mapping will be read,
// and giving its pages back, are passed to the kernel on Linux and ignored
// elsewhere. [Anon] gives large buffers outside the Go heap (anonymous
// mappings on Unix) whose pages can be discarded while in use ([Discard],
// Linux).
package mmap

import (
	"fmt"
	"os"
)

// Advice tells the kernel how a mapping will be read.
type Advice int

const (
	// Normal gives no advice.
	Normal Advice = iota
	// Sequential: the mapping is read in order, so the kernel reads ahead
	// and maps several pages a fault (MADV_SEQUENTIAL).
	Sequential
	// Random: a few scattered pages are read, so the kernel does not read
	// ahead (MADV_RANDOM).
	Random
)

// File returns the first size bytes of f (its size, from Stat) mapped
// read-only, and the function that unmaps them; the mapping stays valid
// after f is closed. An empty file is not mapped: the data is nil and unmap
// does nothing. Where mapping is not supported, the whole file is read and
// unmap does nothing.
func File(f *os.File, size int64, advice Advice) (data []byte, unmap func() error, err error) {
	return file(f, size, advice)
}

// Open maps the file at path as [File] does and closes it. Errors opening
// and examining the file are returned as they are (they name the file),
// errors mapping it wrapped with its path.
func Open(path string, advice Advice) (data []byte, unmap func() error, err error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, nil, err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return nil, nil, err
	}
	data, unmap, err = file(f, st.Size(), advice)
	if err != nil {
		return nil, nil, fmt.Errorf("%s: %w", path, err)
	}
	return data, unmap, nil
}

func noUnmap() error { return nil }
