package symfile

import (
	"syscall"
	"unsafe"
)

// mmapFlags maps the file shared and read-only. The pass reads it
// sequentially (see advise) and gives pages back behind itself
// (releasePages), so MAP_POPULATE, which would make the whole file resident
// at once, is not used.
const mmapFlags = syscall.MAP_SHARED

// advise tells the kernel that the mapping is read in order, so that it
// reads ahead and maps several pages a fault.
func advise(b []byte) { _ = syscall.Madvise(b, syscall.MADV_SEQUENTIAL) }

// releasePages drops the whole pages of b, a part of a read-only shared file
// mapping, from this process's resident memory. Their contents stay in the
// page cache and come back on the next access, so this never changes what
// the mapping reads.
func releasePages(b []byte) {
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
