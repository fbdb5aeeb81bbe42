package minidump

import "fmt"

// MemoryInfo describes one region of the process's address space
// (MDRawMemoryInfo).
type MemoryInfo struct {
	BaseAddress       uint64
	AllocationBase    uint64
	AllocationProtect uint32
	RegionSize        uint64
	State             uint32
	Protect           uint32
	Type              uint32
}

// MemoryInfo.State values.
const (
	MemCommit  = 0x1000
	MemReserve = 0x2000
	MemFree    = 0x10000
)

// MemoryInfo.Protect bits.
const (
	PageNoAccess         = 0x01
	PageReadOnly         = 0x02
	PageReadWrite        = 0x04
	PageWriteCopy        = 0x08
	PageExecute          = 0x10
	PageExecuteRead      = 0x20
	PageExecuteReadWrite = 0x40
	PageExecuteWriteCopy = 0x80
	PageGuard            = 0x100
	PageNoCache          = 0x200
	PageWriteCombine     = 0x400
)

// Executable reports whether the region's protection allows execution.
func (m *MemoryInfo) Executable() bool {
	return m.Protect&(PageExecute|PageExecuteRead|PageExecuteReadWrite|PageExecuteWriteCopy) != 0
}

// MemoryInfoList is the memory info list stream (MDRawMemoryInfoList).
type MemoryInfoList struct {
	SizeOfHeader uint32
	SizeOfEntry  uint32
	Entries      []MemoryInfo
}

// Sizes of the memory info list's header (MDRawMemoryInfoList) and entries
// (MDRawMemoryInfo).
const (
	memoryInfoListHeaderSize = 16
	memoryInfoSize           = 48
)

// MemoryInfoList decodes the memory info list stream. Entries larger than
// the known 48 bytes are accepted (the rest is skipped); smaller ones are not.
func (f *File) MemoryInfoList() (*MemoryInfoList, error) {
	b, err := f.stream(MemoryInfoListStream)
	if err != nil {
		return nil, fmt.Errorf("memory info list: %w", err)
	}
	if len(b) < memoryInfoListHeaderSize {
		return nil, fmt.Errorf("memory info list: %d bytes, too short for its header", len(b))
	}
	l := &MemoryInfoList{SizeOfHeader: le32(b), SizeOfEntry: le32(b[4:])}
	n := le64(b[8:])
	if l.SizeOfHeader < memoryInfoListHeaderSize || uint64(l.SizeOfHeader) > uint64(len(b)) {
		return nil, fmt.Errorf("memory info list: size_of_header %d (stream has %d bytes)", l.SizeOfHeader, len(b))
	}
	if l.SizeOfEntry < memoryInfoSize {
		return nil, fmt.Errorf("memory info list: size_of_entry %d, want at least %d", l.SizeOfEntry, memoryInfoSize)
	}
	avail := uint64(len(b)) - uint64(l.SizeOfHeader)
	if n > avail/uint64(l.SizeOfEntry) {
		return nil, fmt.Errorf("memory info list: count %d of %d bytes needs more than the %d bytes left", n, l.SizeOfEntry, avail)
	}
	l.Entries = make([]MemoryInfo, n)
	for i := range l.Entries {
		e := b[uint64(l.SizeOfHeader)+uint64(i)*uint64(l.SizeOfEntry):]
		l.Entries[i] = MemoryInfo{
			BaseAddress:       le64(e),
			AllocationBase:    le64(e[8:]),
			AllocationProtect: le32(e[16:]),
			RegionSize:        le64(e[24:]),
			State:             le32(e[32:]),
			Protect:           le32(e[36:]),
			Type:              le32(e[40:]),
		}
	}
	return l, nil
}
