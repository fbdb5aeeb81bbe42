package pdb

import "syscall"

// dropPages gives the pages of a read-only shared file mapping back to the
// system: they leave the process's resident set and are read again from
// the file (or its page cache) when touched.
func dropPages(b []byte) { syscall.Madvise(b, syscall.MADV_DONTNEED) }
