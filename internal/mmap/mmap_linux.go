package mmap

import (
	"syscall"
	"unsafe"
)

func advise(b []byte, advice Advice) {
	switch advice {
	case Sequential:
		_ = syscall.Madvise(b, syscall.MADV_SEQUENTIAL)
	case Random:
		_ = syscall.Madvise(b, syscall.MADV_RANDOM)
	}
}

// Release drops the whole pages of b, a part of a mapping made by [File],
// from this process's resident memory. Their contents stay in the page cache
// and come back on the next access, so this never changes what the mapping
// reads.
func Release(b []byte) {
	lo, hi := pageSpan(b)
	if lo < hi {
		_ = syscall.Madvise(b[lo:hi], syscall.MADV_DONTNEED)
	}
}

// pageSpan returns the bounds, within b, of the whole pages b covers.
func pageSpan(b []byte) (lo, hi int) {
	if len(b) == 0 {
		return 0, 0
	}
	page := uintptr(syscall.Getpagesize())
	start := uintptr(unsafe.Pointer(unsafe.SliceData(b)))
	end := start + uintptr(len(b))
	lo = int((page - start%page) % page)
	hi = len(b) - int(end%page)
	return lo, hi
}

// Discard drops the whole pages of b, a part of memory from [Anon], from
// this process's resident memory: what they held is lost (they read as
// zeros on Linux, unchanged elsewhere), so the caller must not read them
// again before writing them.
func Discard(b []byte) {
	lo, hi := pageSpan(b)
	if lo < hi {
		_ = syscall.Madvise(b[lo:hi], syscall.MADV_DONTNEED)
	}
}
