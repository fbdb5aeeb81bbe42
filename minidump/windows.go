package minidump

import (
	"fmt"
	"strings"

	"github.com/gobreakpad/gobreakpad/moduleid"
)

// ThreadInfo is one entry of the thread info list (MINIDUMP_THREAD_INFO).
type ThreadInfo struct {
	ThreadID     uint32
	DumpFlags    uint32
	DumpError    uint32
	ExitStatus   uint32
	CreateTime   uint64 // FILETIME
	ExitTime     uint64
	KernelTime   uint64
	UserTime     uint64
	StartAddress uint64
	Affinity     uint64
}

const threadInfoSize = 64

// ThreadInfoList decodes the thread info list stream.
func (f *File) ThreadInfoList() ([]ThreadInfo, error) {
	b, n, size, err := f.headedList(ThreadInfoListStream, "thread info list", threadInfoSize)
	if err != nil {
		return nil, err
	}
	out := make([]ThreadInfo, n)
	for i := range out {
		e := b[i*size:]
		out[i] = ThreadInfo{le32(e), le32(e[4:]), le32(e[8:]), le32(e[12:]), le64(e[16:]),
			le64(e[24:]), le64(e[32:]), le64(e[40:]), le64(e[48:]), le64(e[56:])}
	}
	return out, nil
}

// UnloadedModule is one entry of the unloaded module list
// (MINIDUMP_UNLOADED_MODULE) with its name.
type UnloadedModule struct {
	BaseOfImage   uint64
	SizeOfImage   uint32
	CheckSum      uint32
	TimeDateStamp uint32
	ModuleNameRva uint32
	Name          string
}

const unloadedModuleSize = 24

// RustCodeIdentifier returns the code identifier rust-minidump gives an
// unloaded module on every system: the time stamp and image size as a
// Windows module's ("%08X%x"), lower-cased.
func (m *UnloadedModule) RustCodeIdentifier() string {
	return strings.ToLower(moduleid.PECodeID(m.TimeDateStamp, m.SizeOfImage))
}

// UnloadedModuleList decodes the unloaded module list stream.
func (f *File) UnloadedModuleList() ([]UnloadedModule, error) {
	b, n, size, err := f.headedList(UnloadedModuleListStream, "unloaded module list", unloadedModuleSize)
	if err != nil {
		return nil, err
	}
	out := make([]UnloadedModule, n)
	bud := f.newBudget()
	for i := range out {
		e := b[i*size:]
		m := &out[i]
		*m = UnloadedModule{BaseOfImage: le64(e), SizeOfImage: le32(e[8:]), CheckSum: le32(e[12:]),
			TimeDateStamp: le32(e[16:]), ModuleNameRva: le32(e[20:])}
		if m.Name, err = f.String(m.ModuleNameRva); err != nil {
			return nil, fmt.Errorf("unloaded module list: entry %d: name: %w", i, err)
		}
		if err := bud.take(len(m.Name)); err != nil {
			return nil, fmt.Errorf("unloaded module list: entry %d: %w", i, err)
		}
	}
	return out, nil
}

// HandleDescriptor is one entry of the handle data stream
// (MINIDUMP_HANDLE_DESCRIPTOR or _2), with its type and object names.
type HandleDescriptor struct {
	Handle        uint64
	TypeNameRva   uint32
	ObjectNameRva uint32
	Attributes    uint32
	GrantedAccess uint32
	HandleCount   uint32
	PointerCount  uint32
	ObjectInfoRva uint32 // only in 40-byte descriptors
	TypeName      string
	ObjectName    string
}

// HandleData decodes the handle data stream. Names whose offset is 0 are
// empty.
func (f *File) HandleData() ([]HandleDescriptor, error) {
	b, err := f.stream(HandleDataStream)
	if err != nil {
		return nil, fmt.Errorf("handle data: %w", err)
	}
	if len(b) < 16 {
		return nil, fmt.Errorf("handle data: %d bytes, too short for its header", len(b))
	}
	hdr, size, n := le32(b), le32(b[4:]), le32(b[8:])
	if hdr < 16 || uint64(hdr) > uint64(len(b)) {
		return nil, fmt.Errorf("handle data: size_of_header %d (stream has %d bytes)", hdr, len(b))
	}
	if size != 32 && size != 40 {
		return nil, fmt.Errorf("handle data: descriptor size %d, want 32 or 40", size)
	}
	if uint64(n) > (uint64(len(b))-uint64(hdr))/uint64(size) {
		return nil, fmt.Errorf("handle data: %d descriptors of %d bytes do not fit in %d bytes", n, size, len(b))
	}
	out := make([]HandleDescriptor, n)
	bud := f.newBudget()
	for i := range out {
		e := b[uint64(hdr)+uint64(i)*uint64(size):]
		h := &out[i]
		*h = HandleDescriptor{Handle: le64(e), TypeNameRva: le32(e[8:]), ObjectNameRva: le32(e[12:]),
			Attributes: le32(e[16:]), GrantedAccess: le32(e[20:]), HandleCount: le32(e[24:]), PointerCount: le32(e[28:])}
		if size == 40 {
			h.ObjectInfoRva = le32(e[32:])
		}
		if h.TypeNameRva != 0 {
			if h.TypeName, err = f.String(h.TypeNameRva); err != nil {
				return nil, fmt.Errorf("handle data: descriptor %d: type name: %w", i, err)
			}
		}
		if h.ObjectNameRva != 0 {
			if h.ObjectName, err = f.String(h.ObjectNameRva); err != nil {
				return nil, fmt.Errorf("handle data: descriptor %d: object name: %w", i, err)
			}
		}
		if err := bud.take(len(h.TypeName) + len(h.ObjectName)); err != nil {
			return nil, fmt.Errorf("handle data: descriptor %d: %w", i, err)
		}
	}
	return out, nil
}

// headedList checks a list stream with a 12-byte header (size of header,
// size of entry, number of entries) and returns the entries' bytes, their
// count and their size (at least min).
func (f *File) headedList(t StreamType, name string, min int) ([]byte, int, int, error) {
	b, err := f.stream(t)
	if err != nil {
		return nil, 0, 0, fmt.Errorf("%s: %w", name, err)
	}
	if len(b) < 12 {
		return nil, 0, 0, fmt.Errorf("%s: %d bytes, too short for its header", name, len(b))
	}
	hdr, size, n := le32(b), le32(b[4:]), le32(b[8:])
	if hdr < 12 || uint64(hdr) > uint64(len(b)) {
		return nil, 0, 0, fmt.Errorf("%s: size_of_header %d (stream has %d bytes)", name, hdr, len(b))
	}
	if size < uint32(min) {
		return nil, 0, 0, fmt.Errorf("%s: entry size %d, want at least %d", name, size, min)
	}
	if uint64(n) > (uint64(len(b))-uint64(hdr))/uint64(size) {
		return nil, 0, 0, fmt.Errorf("%s: %d entries of %d bytes do not fit in %d bytes", name, n, size, len(b))
	}
	return b[hdr:], int(n), int(size), nil
}
