package minidump

import (
	"cmp"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/gobreakpad/gobreakpad/internal/rangemap"
)

// Limits of Breakpad's processor (minidump.cc) beyond the format's own
// bounds. The plain accessors do not apply them; the Strict* accessors,
// CheckStreams and RegionBytes do.
const (
	// MaxStreams is the most directory entries Breakpad reads.
	MaxStreams = 128
	// MaxThreads is the most entries of a thread list or thread name list.
	MaxThreads = 4096
	// MaxMemoryRegions is the most entries of a memory list.
	MaxMemoryRegions = 4096
	// MaxRegionBytes is the largest memory region whose bytes Breakpad
	// reads; larger regions have no memory.
	MaxRegionBytes = 64 << 20
	// MaxModules is the most entries of a module list or unloaded module
	// list.
	MaxModules = 2048
)

// CheckStreams reports why Breakpad's processor refuses the whole dump: a
// directory of more than MaxStreams entries, or a stream type that may
// appear once appearing several times (see DuplicateStreams).
func (f *File) CheckStreams() error {
	if f.Header.StreamCount > MaxStreams {
		return fmt.Errorf("stream count %d exceeds %d", f.Header.StreamCount, MaxStreams)
	}
	if dup := f.DuplicateStreams(); len(dup) > 0 {
		return fmt.Errorf("several streams of type %s", dup[0])
	}
	return nil
}

// StrictThreadList is ThreadList with Breakpad's further checks: at most
// MaxThreads threads, and no thread id repeated.
func (f *File) StrictThreadList() ([]Thread, error) {
	b, err := f.Stream(ThreadListStream)
	if err != nil {
		return nil, err
	}
	if len(b) >= 4 {
		// Breakpad checks the limit only once the stream holds the entries.
		if n := le32(b); n > MaxThreads && uint64(len(b)) >= 4+uint64(n)*threadSize {
			return nil, fmt.Errorf("thread list: %d threads exceeds %d", n, MaxThreads)
		}
	}
	threads, err := f.ThreadList()
	if err != nil {
		return nil, err
	}
	seen := make(map[uint32]bool, len(threads))
	for i, t := range threads {
		if seen[t.ThreadID] {
			return nil, fmt.Errorf("thread list: thread %d repeats id %#x", i, t.ThreadID)
		}
		seen[t.ThreadID] = true
	}
	return threads, nil
}

// HasStack reports whether Breakpad's reader keeps the thread's stack
// memory: its location has a non-zero offset and size, and the range does
// not wrap past 2^64.
func (t *Thread) HasStack() bool {
	s := t.Stack
	return s.Memory.Rva != 0 && s.Memory.DataSize != 0 && uint64(s.Memory.DataSize) <= ^uint64(0)-s.StartOfMemoryRange
}

// StrictThreadNames is ThreadNames as Breakpad accepts the list: no padding
// after the count, at most MaxThreads names, every name readable.
func (f *File) StrictThreadNames() ([]ThreadName, error) {
	b, err := f.Stream(ThreadNamesStream)
	if err != nil {
		return nil, err
	}
	names, err := f.ThreadNames()
	if err != nil {
		return nil, err
	}
	if uint64(len(b)) != 4+threadNameSize*uint64(len(names)) || len(names) > MaxThreads {
		return nil, fmt.Errorf("thread name list: %d bytes for %d names", len(b), len(names))
	}
	for _, n := range names {
		if n.NameErr != nil {
			return nil, n.NameErr
		}
	}
	return names, nil
}

// StrictModuleList is ModuleList with the checks of Breakpad's
// MinidumpModuleList::Read, which refuses the whole list when one fails: at
// most MaxModules modules, no base address of all ones, and every module
// stored in a range map (package internal/rangemap) in the dump's order.
// Linux and Android lists (as the system info says) use the TruncateLower
// strategy, where only a module starting where a stored one starts fails;
// the others the Exclusive one, where any overlap fails. A module that
// repeats the stored module holding its base (same base, size, name and
// code identifier) is skipped. On Android, a module named under
// /dev/ashmem/ is skipped when it cannot be stored, and one starting below
// the end of the module stored before it is moved up to that end (Breakpad
// backs out the client's correction for packed relocations) and stored again.
// The modules are returned whole, as the dump has them.
func (f *File) StrictModuleList() ([]Module, error) {
	mods, err := f.ModuleList()
	if err != nil {
		return nil, err
	}
	if err := f.CheckModuleList(mods); err != nil {
		return nil, err
	}
	return mods, nil
}

// CheckModuleList applies StrictModuleList's checks to mods, the module list
// of f as ModuleList returned it, for callers that already read it.
func (f *File) CheckModuleList(mods []Module) error {
	if len(mods) > MaxModules {
		return fmt.Errorf("module list: %d modules exceed %d", len(mods), MaxModules)
	}
	linux, android := false, false
	if si, err := f.SystemInfo(); err == nil {
		android = si.PlatformID == PlatformAndroid
		linux = android || si.PlatformID == PlatformLinux
	}
	var rm rangemap.Map[int]
	rm.Reserve(len(mods))
	if linux {
		rm.Strategy = rangemap.TruncateLower
	}
	var lastEnd uint64
	for i := range mods {
		m := &mods[i]
		base, size := m.BaseOfImage, uint64(m.SizeOfImage)
		if base == ^uint64(0) {
			return fmt.Errorf("module list: module %d (%s): bad base address", i, m.Name)
		}
		if r, ok := rm.Retrieve(base); ok {
			o := &mods[r.Entry]
			if o.BaseOfImage == m.BaseOfImage && o.SizeOfImage == m.SizeOfImage &&
				o.Name == m.Name && o.CodeIdentifier() == m.CodeIdentifier() {
				continue // a repeat (crbug.com/838322)
			}
		}
		if !rm.Store(base, size, i) && !(android && strings.HasPrefix(m.Name, "/dev/ashmem/")) {
			if !android || base >= lastEnd {
				return fmt.Errorf("module list: module %d (%s) %#x+%#x overlaps another", i, m.Name, base, size)
			}
			size -= lastEnd - base
			base = lastEnd
			if !rm.Store(base, size, i) {
				return fmt.Errorf("module list: module %d (%s) %#x+%#x overlaps another, after moving its base", i, m.Name, base, size)
			}
		}
		lastEnd = base + size
	}
	return nil
}

// StrictMemoryList is MemoryList with Breakpad's checks: at most
// MaxMemoryRegions regions, none empty or wrapping past 2^64, none
// overlapping another.
func (f *File) StrictMemoryList() ([]MemoryDescriptor, error) {
	list, err := f.MemoryList()
	if err != nil {
		return nil, err
	}
	if len(list) > MaxMemoryRegions {
		return nil, fmt.Errorf("memory list: %d regions exceeds %d", len(list), MaxMemoryRegions)
	}
	spans := make([]addrSpan, 0, len(list))
	for i, r := range list {
		size := uint64(r.Memory.DataSize)
		if size == 0 || size > ^uint64(0)-r.StartOfMemoryRange {
			return nil, fmt.Errorf("memory list: region %d: bad range %#x+%#x", i, r.StartOfMemoryRange, size)
		}
		spans = append(spans, addrSpan{r.StartOfMemoryRange, r.StartOfMemoryRange + size - 1})
	}
	if a, b, ok := firstOverlap(spans); ok {
		return nil, fmt.Errorf("memory list: regions at %#x and %#x overlap", a.lo, b.lo)
	}
	return list, nil
}

// StrictMemoryInfoList is MemoryInfoList with Breakpad's checks: a header
// and entries of exactly the known sizes, no bytes after the entries, and no
// empty, wrapping or overlapping region.
func (f *File) StrictMemoryInfoList() (*MemoryInfoList, error) {
	b, err := f.Stream(MemoryInfoListStream)
	if err != nil {
		return nil, err
	}
	l, err := f.MemoryInfoList()
	if err != nil {
		return nil, err
	}
	if l.SizeOfHeader != memoryInfoListHeaderSize || l.SizeOfEntry != memoryInfoSize {
		return nil, fmt.Errorf("memory info list: header %d and entry %d bytes, want %d and %d",
			l.SizeOfHeader, l.SizeOfEntry, memoryInfoListHeaderSize, memoryInfoSize)
	}
	if uint64(len(b)) != memoryInfoListHeaderSize+memoryInfoSize*uint64(len(l.Entries)) {
		return nil, fmt.Errorf("memory info list: %d bytes for %d entries", len(b), len(l.Entries))
	}
	spans := make([]addrSpan, 0, len(l.Entries))
	for i, e := range l.Entries {
		if e.RegionSize == 0 || e.RegionSize > ^uint64(0)-e.BaseAddress {
			return nil, fmt.Errorf("memory info list: entry %d: bad range %#x+%#x", i, e.BaseAddress, e.RegionSize)
		}
		spans = append(spans, addrSpan{e.BaseAddress, e.BaseAddress + e.RegionSize - 1})
	}
	if _, _, ok := firstOverlap(spans); ok {
		return nil, errors.New("memory info list: overlapping regions")
	}
	return l, nil
}

// RegionBytes returns the bytes of a memory region's location as Breakpad's
// MinidumpMemoryRegion gives them: an error for an empty region, for one of
// more than MaxRegionBytes, and for one not inside the file. The slice may
// alias the mapped file and must not be modified.
func (f *File) RegionBytes(l LocationDescriptor) ([]byte, error) {
	if l.DataSize == 0 {
		return nil, errors.New("memory region: empty")
	}
	if l.DataSize > MaxRegionBytes {
		return nil, fmt.Errorf("memory region: %d bytes exceeds %d", l.DataSize, MaxRegionBytes)
	}
	b, err := f.location(l)
	if err != nil {
		return nil, fmt.Errorf("memory region: %w", err)
	}
	return b, nil
}

// addrSpan is an inclusive address range [lo, hi].
type addrSpan struct{ lo, hi uint64 }

// firstOverlap sorts spans by start and returns the first two that overlap.
func firstOverlap(spans []addrSpan) (a, b addrSpan, ok bool) {
	slices.SortFunc(spans, func(a, b addrSpan) int { return cmp.Compare(a.lo, b.lo) })
	for i := 1; i < len(spans); i++ {
		if spans[i].lo <= spans[i-1].hi {
			return spans[i-1], spans[i], true
		}
	}
	return addrSpan{}, addrSpan{}, false
}
