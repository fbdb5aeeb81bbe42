package minidump

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"unicode/utf16"
)

// Writer builds a minidump in memory: the encoder behind minidump/synth and
// the capture package. Add streams in the order they should appear in the
// directory, then call Bytes or WriteTo. Memory given with AddMemory or as
// thread stacks is written as a MemoryList stream when the dump is finished
// (unless the dump has none). A Writer is not safe for concurrent use.
//
// Offsets in a minidump are 32-bit: a Writer that would grow past 4 GiB
// records an error, returned by Bytes and WriteTo.
type Writer struct {
	// TimeDateStamp and Flags go into the header.
	TimeDateStamp uint32
	Flags         uint64

	buf      []byte
	dir      []Directory
	memory   []MemoryDescriptor
	memIndex int // directory index reserved for the memory list, or -1
	err      error
}

// NewWriter returns an empty Writer.
func NewWriter() *Writer {
	return &Writer{buf: make([]byte, headerSize), memIndex: -1}
}

// Data appends b (8-byte aligned) and returns where it is.
func (w *Writer) Data(b []byte) LocationDescriptor {
	w.align(8)
	if uint64(len(w.buf))+uint64(len(b)) > 1<<32-1 {
		if w.err == nil {
			w.err = fmt.Errorf("minidump writer: %d bytes would exceed the 4 GiB of 32-bit offsets", uint64(len(w.buf))+uint64(len(b)))
		}
		return LocationDescriptor{}
	}
	rva := uint32(len(w.buf))
	w.buf = append(w.buf, b...)
	return LocationDescriptor{uint32(len(b)), rva}
}

func (w *Writer) align(n int) {
	for len(w.buf)%n != 0 {
		w.buf = append(w.buf, 0)
	}
}

// String appends s as a MINIDUMP_STRING (UTF-16LE with its byte length and a
// terminating NUL not counted in it) and returns its offset.
func (w *Writer) String(s string) uint32 {
	u := utf16.Encode([]rune(s))
	b := make([]byte, 4, 4+2*len(u)+2)
	binary.LittleEndian.PutUint32(b, uint32(2*len(u)))
	for _, c := range u {
		b = binary.LittleEndian.AppendUint16(b, c)
	}
	b = append(b, 0, 0)
	return w.Data(b).Rva
}

// Stream appends a stream with the given bytes and adds it to the directory.
func (w *Writer) Stream(t StreamType, b []byte) LocationDescriptor {
	l := w.Data(b)
	w.dir = append(w.dir, Directory{t, l})
	return l
}

// AddMemory saves len(data) bytes of the process's memory at address start
// for the MemoryList stream and returns its descriptor. Empty data is not
// listed: Breakpad rejects a whole memory list holding an empty range.
func (w *Writer) AddMemory(start uint64, data []byte) MemoryDescriptor {
	if len(data) == 0 {
		return MemoryDescriptor{StartOfMemoryRange: start}
	}
	d := MemoryDescriptor{start, w.Data(data)}
	w.memory = append(w.memory, d)
	return d
}

// ThreadData is what the Writer needs to write one thread.
type ThreadData struct {
	ThreadID      uint32
	SuspendCount  uint32
	PriorityClass uint32
	Priority      uint32
	Teb           uint64
	// StackStart is the address of Stack[0] (the lowest address saved).
	StackStart uint64
	Stack      []byte
	// Context is the thread's CPU context; nil writes an empty location.
	Context *Context
}

// ThreadList writes the thread list stream. The stacks are also added to the
// memory list, as Breakpad's clients do.
func (w *Writer) ThreadList(threads []ThreadData) {
	b := binary.LittleEndian.AppendUint32(nil, uint32(len(threads)))
	entries := make([]byte, 0, threadSize*len(threads))
	for _, t := range threads {
		stack := w.AddMemory(t.StackStart, t.Stack)
		ctx := w.context(t.Context)
		e := binary.LittleEndian.AppendUint32(nil, t.ThreadID)
		e = binary.LittleEndian.AppendUint32(e, t.SuspendCount)
		e = binary.LittleEndian.AppendUint32(e, t.PriorityClass)
		e = binary.LittleEndian.AppendUint32(e, t.Priority)
		e = binary.LittleEndian.AppendUint64(e, t.Teb)
		e = appendMemoryDescriptor(e, stack)
		e = appendLocation(e, ctx)
		entries = append(entries, e...)
	}
	w.Stream(ThreadListStream, append(b, entries...))
}

func (w *Writer) context(c *Context) LocationDescriptor {
	if c == nil {
		return LocationDescriptor{}
	}
	return w.Data(c.Encode())
}

// ModuleData is what the Writer needs to write one module.
type ModuleData struct {
	BaseOfImage   uint64
	SizeOfImage   uint32
	CheckSum      uint32
	TimeDateStamp uint32
	Name          string
	VersionInfo   VSFixedFileInfo
	// CodeView and Misc are the raw records (see CodeViewPDB70Record,
	// CodeViewELFRecord); nil writes none.
	CodeView []byte
	Misc     []byte
}

// ModuleList writes the module list stream.
func (w *Writer) ModuleList(mods []ModuleData) { w.moduleList(ModuleListStream, mods) }

func (w *Writer) moduleList(t StreamType, mods []ModuleData) {
	b := binary.LittleEndian.AppendUint32(nil, uint32(len(mods)))
	for _, m := range mods {
		name := w.String(m.Name)
		var cv, misc LocationDescriptor
		if m.CodeView != nil {
			cv = w.Data(m.CodeView)
		}
		if m.Misc != nil {
			misc = w.Data(m.Misc)
		}
		b = binary.LittleEndian.AppendUint64(b, m.BaseOfImage)
		b = binary.LittleEndian.AppendUint32(b, m.SizeOfImage)
		b = binary.LittleEndian.AppendUint32(b, m.CheckSum)
		b = binary.LittleEndian.AppendUint32(b, m.TimeDateStamp)
		b = binary.LittleEndian.AppendUint32(b, name)
		b, _ = binary.Append(b, binary.LittleEndian, m.VersionInfo)
		b = appendLocation(b, cv)
		b = appendLocation(b, misc)
		b = append(b, make([]byte, 16)...) // reserved0, reserved1
	}
	w.Stream(t, b)
}

// CodeViewPDB70Record encodes an RSDS CodeView record.
func CodeViewPDB70Record(signature GUID, age uint32, pdbFileName string) []byte {
	b := binary.LittleEndian.AppendUint32(nil, CVSignaturePDB70)
	b, _ = binary.Append(b, binary.LittleEndian, signature)
	b = binary.LittleEndian.AppendUint32(b, age)
	b = append(b, pdbFileName...)
	return append(b, 0)
}

// CodeViewPDB20Record encodes an NB10 CodeView record.
func CodeViewPDB20Record(signature, age uint32, pdbFileName string) []byte {
	b := binary.LittleEndian.AppendUint32(nil, CVSignaturePDB20)
	b = binary.LittleEndian.AppendUint32(b, 0) // offset
	b = binary.LittleEndian.AppendUint32(b, signature)
	b = binary.LittleEndian.AppendUint32(b, age)
	b = append(b, pdbFileName...)
	return append(b, 0)
}

// CodeViewELFRecord encodes Breakpad's BpEL CodeView record for an ELF build id.
func CodeViewELFRecord(buildID []byte) []byte {
	b := binary.LittleEndian.AppendUint32(nil, CVSignatureELF)
	return append(b, buildID...)
}

// Memory64List writes a Memory64List stream holding ranges, their bytes
// stored contiguously.
func (w *Writer) Memory64List(ranges []MemoryRange) {
	b := binary.LittleEndian.AppendUint64(nil, uint64(len(ranges)))
	w.align(8)
	base := uint64(len(w.buf)) + 16 + 16*uint64(len(ranges)) // after this stream's own bytes
	b = binary.LittleEndian.AppendUint64(b, base)
	for _, r := range ranges {
		b = binary.LittleEndian.AppendUint64(b, r.Start)
		b = binary.LittleEndian.AppendUint64(b, uint64(len(r.Data)))
	}
	w.Stream(Memory64ListStream, b)
	for _, r := range ranges {
		if uint64(len(w.buf))+uint64(len(r.Data)) > 1<<32-1 && w.err == nil {
			w.err = errors.New("minidump writer: memory64 data would exceed 4 GiB")
			return
		}
		w.buf = append(w.buf, r.Data...)
	}
}

// MemoryRange is a range of process memory to save.
type MemoryRange struct {
	Start uint64
	Data  []byte
}

// Exception writes the exception stream.
func (w *Writer) Exception(threadID uint32, rec ExceptionRecord, ctx *Context) {
	l := w.context(ctx)
	b := binary.LittleEndian.AppendUint32(nil, threadID)
	b = binary.LittleEndian.AppendUint32(b, 0)
	b = binary.LittleEndian.AppendUint32(b, rec.ExceptionCode)
	b = binary.LittleEndian.AppendUint32(b, rec.ExceptionFlags)
	b = binary.LittleEndian.AppendUint64(b, rec.ExceptionRecord)
	b = binary.LittleEndian.AppendUint64(b, rec.ExceptionAddress)
	b = binary.LittleEndian.AppendUint32(b, rec.NumberParameters)
	b = binary.LittleEndian.AppendUint32(b, 0)
	for _, p := range rec.ExceptionInformation {
		b = binary.LittleEndian.AppendUint64(b, p)
	}
	b = appendLocation(b, l)
	w.Stream(ExceptionStream, b)
}

// SystemInfo writes the system info stream, with s.CSDVersion as its CSD
// version string (CSDVersionRva is ignored).
func (w *Writer) SystemInfo(s *SystemInfo) {
	csd := w.String(s.CSDVersion)
	b := binary.LittleEndian.AppendUint16(nil, uint16(s.ProcessorArchitecture))
	b = binary.LittleEndian.AppendUint16(b, s.ProcessorLevel)
	b = binary.LittleEndian.AppendUint16(b, s.ProcessorRevision)
	b = append(b, s.NumberOfProcessors, s.ProductType)
	b = binary.LittleEndian.AppendUint32(b, s.MajorVersion)
	b = binary.LittleEndian.AppendUint32(b, s.MinorVersion)
	b = binary.LittleEndian.AppendUint32(b, s.BuildNumber)
	b = binary.LittleEndian.AppendUint32(b, uint32(s.PlatformID))
	b = binary.LittleEndian.AppendUint32(b, csd)
	b = binary.LittleEndian.AppendUint16(b, s.SuiteMask)
	b = binary.LittleEndian.AppendUint16(b, s.Reserved2)
	b = append(b, s.CPUInfo[:]...)
	w.Stream(SystemInfoStream, b)
}

// MiscInfo writes the misc info stream, m.SizeOfInfo bytes of it (one of the
// MiscInfo*Size constants; 0 means MiscInfo5Size).
func (w *Writer) MiscInfo(m *MiscInfo) {
	mm := *m
	if mm.SizeOfInfo == 0 {
		mm.SizeOfInfo = MiscInfo5Size
	}
	b, _ := binary.Append(nil, binary.LittleEndian, &mm)
	w.Stream(MiscInfoStream, b[:min(int(mm.SizeOfInfo), len(b))])
}

// BreakpadInfo writes the Breakpad info stream.
func (w *Writer) BreakpadInfo(bi BreakpadInfo) {
	b := binary.LittleEndian.AppendUint32(nil, bi.Validity)
	b = binary.LittleEndian.AppendUint32(b, bi.DumpThreadID)
	b = binary.LittleEndian.AppendUint32(b, bi.RequestingThreadID)
	w.Stream(BreakpadInfoStream, b)
}

// MemoryInfoList writes the memory info list stream.
func (w *Writer) MemoryInfoList(entries []MemoryInfo) {
	b := binary.LittleEndian.AppendUint32(nil, 16)
	b = binary.LittleEndian.AppendUint32(b, memoryInfoSize)
	b = binary.LittleEndian.AppendUint64(b, uint64(len(entries)))
	for _, e := range entries {
		b = binary.LittleEndian.AppendUint64(b, e.BaseAddress)
		b = binary.LittleEndian.AppendUint64(b, e.AllocationBase)
		b = binary.LittleEndian.AppendUint32(b, e.AllocationProtect)
		b = binary.LittleEndian.AppendUint32(b, 0)
		b = binary.LittleEndian.AppendUint64(b, e.RegionSize)
		b = binary.LittleEndian.AppendUint32(b, e.State)
		b = binary.LittleEndian.AppendUint32(b, e.Protect)
		b = binary.LittleEndian.AppendUint32(b, e.Type)
		b = binary.LittleEndian.AppendUint32(b, 0)
	}
	w.Stream(MemoryInfoListStream, b)
}

// UnloadedModuleList writes the unloaded module list stream
// (MINIDUMP_UNLOADED_MODULE_LIST and its entries) from the BaseOfImage,
// SizeOfImage, CheckSum, TimeDateStamp and Name of each entry (ModuleNameRva
// is ignored); the names are written before the stream.
func (w *Writer) UnloadedModuleList(mods []UnloadedModule) {
	le := binary.LittleEndian
	b := le.AppendUint32(nil, 12) // SizeOfHeader
	b = le.AppendUint32(b, unloadedModuleSize)
	b = le.AppendUint32(b, uint32(len(mods)))
	for _, m := range mods {
		b = le.AppendUint64(b, m.BaseOfImage)
		b = le.AppendUint32(b, m.SizeOfImage)
		b = le.AppendUint32(b, m.CheckSum)
		b = le.AppendUint32(b, m.TimeDateStamp)
		b = le.AppendUint32(b, w.String(m.Name))
	}
	w.Stream(UnloadedModuleListStream, b)
}

// ThreadNames writes the thread name list stream from the ThreadID and Name
// of each entry (ThreadNameRva and NameErr are ignored).
func (w *Writer) ThreadNames(names []ThreadName) {
	b := binary.LittleEndian.AppendUint32(nil, uint32(len(names)))
	for _, n := range names {
		b = binary.LittleEndian.AppendUint32(b, n.ThreadID)
		b = binary.LittleEndian.AppendUint64(b, uint64(w.String(n.Name)))
	}
	w.Stream(ThreadNamesStream, b)
}

// LinuxDSODebug writes the LinuxDSODebug stream (MDRawDebug32 when
// pointerSize is 4, MDRawDebug64 otherwise) from d's Version, Brk, LDBase, Dynamic
// and the Addr, Name and LD of each link map (MapRva, DSOCount and NameRva are
// ignored). The names and the link map array are written before the stream;
// an empty name is written as offset 0, an empty list as offset 0.
func (w *Writer) LinuxDSODebug(d *DSODebug, pointerSize int) {
	le := binary.LittleEndian
	put := func(b []byte, v uint64) []byte {
		if pointerSize == 4 {
			return le.AppendUint32(b, uint32(v))
		}
		return le.AppendUint64(b, v)
	}
	var maps []byte
	for _, m := range d.LinkMaps {
		var name uint32
		if m.Name != "" {
			name = w.String(m.Name)
		}
		maps = put(maps, m.Addr)
		maps = le.AppendUint32(maps, name)
		if pointerSize != 4 {
			maps = le.AppendUint32(maps, 0) // padding before l_ld
		}
		maps = put(maps, m.LD)
	}
	var rva uint32
	if len(maps) > 0 {
		rva = w.Data(maps).Rva
	}
	b := le.AppendUint32(nil, d.Version)
	b = le.AppendUint32(b, rva)
	b = le.AppendUint32(b, uint32(len(d.LinkMaps)))
	if pointerSize != 4 {
		b = le.AppendUint32(b, 0) // padding before brk
	}
	b = put(b, d.Brk)
	b = put(b, d.LDBase)
	w.Stream(LinuxDSODebug, put(b, d.Dynamic))
}

// MemoryListHere puts the memory list stream at this point of the directory
// (by default it comes last). Memory added later is still included.
func (w *Writer) MemoryListHere() {
	if w.memIndex < 0 {
		w.memIndex = len(w.dir)
		w.dir = append(w.dir, Directory{StreamType: MemoryListStream})
	}
}

// Bytes finishes the dump and returns it. The Writer can keep being used;
// a later Bytes call returns a dump including what was added since.
func (w *Writer) Bytes() ([]byte, error) {
	if w.err != nil {
		return nil, w.err
	}
	dir := append([]Directory(nil), w.dir...)
	saved := len(w.buf)
	if len(w.memory) > 0 || w.memIndex >= 0 {
		b := binary.LittleEndian.AppendUint32(nil, uint32(len(w.memory)))
		for _, d := range w.memory {
			b = appendMemoryDescriptor(b, d)
		}
		l := w.Data(b)
		if w.memIndex >= 0 {
			dir[w.memIndex].Location = l
		} else {
			dir = append(dir, Directory{MemoryListStream, l})
		}
	}
	w.align(4)
	dirRva := uint32(len(w.buf))
	for _, d := range dir {
		w.buf = binary.LittleEndian.AppendUint32(w.buf, uint32(d.StreamType))
		w.buf = appendLocation(w.buf, d.Location)
	}
	if w.err != nil {
		return nil, w.err
	}
	out := make([]byte, len(w.buf))
	copy(out, w.buf)
	w.buf = w.buf[:saved] // the memory list and directory are rewritten next time
	h := out[:0]
	h = binary.LittleEndian.AppendUint32(h, HeaderSignature)
	h = binary.LittleEndian.AppendUint32(h, HeaderVersion)
	h = binary.LittleEndian.AppendUint32(h, uint32(len(dir)))
	h = binary.LittleEndian.AppendUint32(h, dirRva)
	h = binary.LittleEndian.AppendUint32(h, 0)
	h = binary.LittleEndian.AppendUint32(h, w.TimeDateStamp)
	binary.LittleEndian.AppendUint64(h, w.Flags)
	return out, nil
}

// WriteTo finishes the dump and writes it to dst.
func (w *Writer) WriteTo(dst io.Writer) (int64, error) {
	b, err := w.Bytes()
	if err != nil {
		return 0, err
	}
	n, err := dst.Write(b)
	return int64(n), err
}

func appendLocation(b []byte, l LocationDescriptor) []byte {
	b = binary.LittleEndian.AppendUint32(b, l.DataSize)
	return binary.LittleEndian.AppendUint32(b, l.Rva)
}

func appendMemoryDescriptor(b []byte, d MemoryDescriptor) []byte {
	b = binary.LittleEndian.AppendUint64(b, d.StartOfMemoryRange)
	return appendLocation(b, d.Memory)
}
