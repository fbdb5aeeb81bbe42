package symfile

import (
	"fmt"
	"math"
	"os"
	"runtime"
	"sync"

	"github.com/gobreakpad/gobreakpad/internal/mmap"
)

// Open memory-maps the symbol file at path and indexes it as [Parse] does,
// keeping little of the file resident. Call [Table.Close] to release the
// mapping (it is also released when the Table is garbage-collected).
func Open(path string) (*Table, error) {
	return open(path, false)
}

// OpenLookups is [Open] for a caller that mostly looks addresses up: the
// STACK records (STACK CFI and STACK WIN, the bulk of large files), which
// [Table.Lookup] never reads, are only skipped over when the file is opened
// (their lines counted, nothing decoded) and indexed by the first call
// that needs them: [Table.CFIRules], [Table.StackWin], [Table.HasCFI],
// [Table.EachCFI], [Table.StackWinBounds], and [Table.Corrupt],
// [Table.Errors] and [Table.NumErrors], since a malformed STACK record
// counts. Every method answers as on a Table from Open.
func OpenLookups(path string) (*Table, error) {
	return open(path, true)
}

func open(path string, lazy bool) (*Table, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return nil, err
	}
	if !st.Mode().IsRegular() {
		return nil, fmt.Errorf("%s: not a regular file", path)
	}
	if st.Size() >= math.MaxUint32 {
		return nil, fmt.Errorf("%s: symbol file of %d bytes is too large (limit 4 GiB)", path, st.Size())
	}
	data, unmap, err := mmap.File(f, st.Size(), mmap.Sequential)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	// The index refers into the file by offsets, and a lookup reads only a
	// few lines, so pages are given back as the pass moves on and all of
	// them once it is done: a large file never stays resident as a whole
	// (the kernel reads a page in again when a lookup touches it).
	t := &Table{data: data}
	t.parse(0, mmap.Release, lazy)
	mmap.Release(data)
	// Unmap when the Table becomes unreachable without Close, once either way.
	var once sync.Once
	var err2 error
	release := func() error {
		once.Do(func() { err2 = unmap() })
		return err2
	}
	t.close = release
	runtime.AddCleanup(t, func(r func() error) { r() }, release)
	return t, nil
}
