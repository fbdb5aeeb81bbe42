package minidump

import (
	"cmp"
	"errors"
	"fmt"
	"slices"
)

// Memory64Descriptor is one range of a Memory64List (MDMemoryDescriptor64).
// Its bytes follow those of the previous range, from the list's BaseRva on.
type Memory64Descriptor struct {
	StartOfMemoryRange uint64
	DataSize           uint64
}

// Memory64List is the full-memory list stream (MDRawMemoryList64).
type Memory64List struct {
	BaseRva uint64
	Ranges  []Memory64Descriptor
}

// MemoryList decodes the memory list stream.
func (f *File) MemoryList() ([]MemoryDescriptor, error) {
	b, n, err := f.countedList(MemoryListStream, "memory list", memoryDescriptorSize)
	if err != nil {
		return nil, err
	}
	list := make([]MemoryDescriptor, n)
	for i := range list {
		list[i] = memoryDescriptor(b[i*memoryDescriptorSize:])
	}
	return list, nil
}

// Memory64List decodes the Memory64List stream.
func (f *File) Memory64List() (*Memory64List, error) {
	b, err := f.stream(Memory64ListStream)
	if err != nil {
		return nil, fmt.Errorf("memory64 list: %w", err)
	}
	if len(b) < 16 {
		return nil, fmt.Errorf("memory64 list: %d bytes, too short for its header", len(b))
	}
	n := le64(b)
	if n > uint64(len(b)-16)/16 {
		return nil, fmt.Errorf("memory64 list: count %d needs %d bytes, stream has %d", n, n*16, len(b)-16)
	}
	l := &Memory64List{BaseRva: le64(b[8:]), Ranges: make([]Memory64Descriptor, n)}
	for i := range l.Ranges {
		e := b[16+16*i:]
		l.Ranges[i] = Memory64Descriptor{le64(e), le64(e[8:])}
	}
	return l, nil
}

// Memory gives access to the crashed process's memory saved in the dump,
// from the MemoryList and Memory64List streams together. It is what
// unwinders and the CFI evaluator read: see ReadMemory.
type Memory struct {
	f       *File
	regions []MemoryRegion // sorted by Start
}

// MemoryRegion is one saved range of memory: Size bytes of the process's
// address space from Start, stored at file offset Offset.
type MemoryRegion struct {
	Start  uint64
	Size   uint64
	Offset uint64
}

// End returns the address just past the region (saturating at 2^64-1).
func (r MemoryRegion) End() uint64 {
	if r.Start+r.Size < r.Start {
		return ^uint64(0)
	}
	return r.Start + r.Size
}

// Memory returns the dump's memory from its MemoryList and Memory64List. The
// result is never nil: when a list is unreadable, the error says why and the
// Memory holds the ranges of the other. Ranges whose bytes lie outside the
// file are dropped (and reported). It is built once and cached.
func (f *File) Memory() (*Memory, error) {
	f.memOnce.Do(func() { f.mem, f.memErr = f.buildMemory() })
	return f.mem, f.memErr
}

// maxRangeErrors is how many ranges past the end of the file are reported
// one by one; the rest are counted in one error (a hostile list of 200,000
// such ranges made an error each, ten times the file's size).
const maxRangeErrors = 8

func (f *File) buildMemory() (*Memory, error) {
	m := &Memory{f: f}
	var errs []error
	dropped := 0
	drop := func(err func() error) {
		if dropped++; dropped <= maxRangeErrors {
			errs = append(errs, err())
		}
	}
	list, err := f.MemoryList()
	if err != nil && !errors.Is(err, ErrNoStream) {
		errs = append(errs, err)
	}
	l64, err64 := f.Memory64List()
	// One allocation of the final size: the index takes 24 bytes per
	// 16-byte descriptor of the file.
	n := len(list)
	if l64 != nil {
		n += len(l64.Ranges)
	}
	m.regions = make([]MemoryRegion, 0, n)
	for i, d := range list {
		r := MemoryRegion{d.StartOfMemoryRange, uint64(d.Memory.DataSize), uint64(d.Memory.Rva)}
		if r.Offset+r.Size > f.size {
			drop(func() error {
				return fmt.Errorf("memory list: entry %d: %w at %#x (the file's size): %d bytes at offset %#x run past end of file", i, ErrTruncated, f.size, r.Size, r.Offset)
			})
			continue
		}
		m.regions = append(m.regions, r)
	}
	if err64 != nil && !errors.Is(err64, ErrNoStream) {
		errs = append(errs, err64)
	}
	if l64 != nil {
		off := l64.BaseRva
		for i, d := range l64.Ranges {
			if off > f.size || d.DataSize > f.size-off {
				drop(func() error {
					return fmt.Errorf("memory64 list: entry %d: %w at %#x (the file's size): %d bytes at offset %#x run past end of file", i, ErrTruncated, f.size, d.DataSize, off)
				})
				break // later ranges' offsets depend on this one
			}
			m.regions = append(m.regions, MemoryRegion{d.StartOfMemoryRange, d.DataSize, off})
			off += d.DataSize
		}
	}
	if dropped > maxRangeErrors {
		errs = append(errs, fmt.Errorf("memory lists: %d more ranges past end of file", dropped-maxRangeErrors))
	}
	slices.SortStableFunc(m.regions, func(a, b MemoryRegion) int { return cmp.Compare(a.Start, b.Start) })
	return m, errors.Join(errs...)
}

// Regions returns the saved ranges sorted by start address. The slice must not
// be modified.
func (m *Memory) Regions() []MemoryRegion { return m.regions }

// Region returns the saved range holding addr.
func (m *Memory) Region(addr uint64) (MemoryRegion, bool) {
	i := m.find(addr)
	if i < 0 {
		return MemoryRegion{}, false
	}
	return m.regions[i], true
}

// find returns the index of a region holding addr, or -1. Among overlapping
// regions it prefers the one starting last.
func (m *Memory) find(addr uint64) int {
	// i = index of the first region starting after addr; candidates are before it.
	lo, hi := 0, len(m.regions)
	for lo < hi {
		mid := int(uint(lo+hi) >> 1)
		if m.regions[mid].Start <= addr {
			lo = mid + 1
		} else {
			hi = mid
		}
	}
	i := lo
	for j := i - 1; j >= 0 && j >= i-4; j-- { // a few steps back cover overlaps
		if r := m.regions[j]; addr-r.Start < r.Size {
			return j
		}
	}
	return -1
}

// ReadMemory returns n bytes of the process's memory at addr. It fails when
// the bytes are not all inside one saved range. The slice may alias the
// mapped file and must not be modified.
func (m *Memory) ReadMemory(addr uint64, n int) ([]byte, error) {
	if n < 0 {
		return nil, fmt.Errorf("read memory: negative length %d", n)
	}
	i := m.find(addr)
	if i < 0 {
		return nil, fmt.Errorf("read memory: %#x: not in the dump", addr)
	}
	r := m.regions[i]
	if uint64(n) > r.Size-(addr-r.Start) {
		return nil, fmt.Errorf("read memory: %d bytes at %#x: past the end of the saved range %#x-%#x", n, addr, r.Start, r.End())
	}
	return m.f.bytes(r.Offset+(addr-r.Start), uint64(n))
}

// ReadUint32 reads a little-endian 32-bit value at addr.
func (m *Memory) ReadUint32(addr uint64) (uint32, error) {
	b, err := m.ReadMemory(addr, 4)
	if err != nil {
		return 0, err
	}
	return le32(b), nil
}

// ReadUint64 reads a little-endian 64-bit value at addr.
func (m *Memory) ReadUint64(addr uint64) (uint64, error) {
	b, err := m.ReadMemory(addr, 8)
	if err != nil {
		return 0, err
	}
	return le64(b), nil
}
