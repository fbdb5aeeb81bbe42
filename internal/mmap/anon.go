package mmap

// Anon returns size bytes of zeroed, writable memory outside the Go heap
// (an anonymous private mapping on Unix; a heap slice elsewhere), and the
// function that frees it: for large buffers whose pages are given back
// while in use ([Discard]) and which do not count in the collector's heap
// goal. The memory must not be used after free.
func Anon(size int) (data []byte, free func() error, err error) {
	if size <= 0 {
		return nil, noUnmap, nil
	}
	return anon(size)
}
