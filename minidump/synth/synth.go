// Package synth builds small synthetic minidumps for tests: a thread with
// this context and this stack, a module at this address, an exception.
//
//	b := synth.New(arch.AMD64, minidump.PlatformLinux)
//	stack := synth.NewStack(0x7fff0000, 8)
//	stack.Ptr(0x401234) // a return address
//	ctx := &amd64.Context{ContextFlags: amd64.ContextFull, Rip: 0x401000, Rsp: stack.Start()}
//	b.AddThread(1, synth.AMD64(ctx), stack)
//	b.AddELFModule("/bin/app", 0x400000, 0x10000, buildID)
//	b.SetException(1, 0xb, 0, synth.AMD64(ctx))
//	f, err := b.File() // a *minidump.File over the encoded bytes
//
// It is a thin layer over minidump.Writer, which also serves real dump
// writers; use the Writer directly for full control of stream order.
package synth

import (
	"encoding/binary"
	"os"

	"github.com/gobreakpad/gobreakpad/arch"
	"github.com/gobreakpad/gobreakpad/arch/amd64"
	"github.com/gobreakpad/gobreakpad/arch/arm"
	"github.com/gobreakpad/gobreakpad/arch/arm64"
	"github.com/gobreakpad/gobreakpad/arch/mips"
	"github.com/gobreakpad/gobreakpad/arch/x86"
	"github.com/gobreakpad/gobreakpad/minidump"
)

// Builder collects the parts of a synthetic minidump.
type Builder struct {
	// SystemInfo is written as the system info stream; New fills the CPU and
	// the OS, tests may change anything.
	SystemInfo minidump.SystemInfo
	// TimeDateStamp goes into the header.
	TimeDateStamp uint32

	threads   []minidump.ThreadData
	modules   []minidump.ModuleData
	unloaded  []minidump.UnloadedModule
	memory    []minidump.MemoryRange
	exception *exceptionData
	breakpad  *minidump.BreakpadInfo
	misc      *minidump.MiscInfo
	streams   []rawStream
}

type exceptionData struct {
	threadID uint32
	rec      minidump.ExceptionRecord
	ctx      *minidump.Context
}

type rawStream struct {
	t minidump.StreamType
	b []byte
}

// New returns a Builder for a dump of the given CPU and OS.
func New(cpu arch.CPU, os minidump.PlatformID) *Builder {
	b := &Builder{}
	si := &b.SystemInfo
	si.PlatformID = os
	si.NumberOfProcessors = 1
	si.ProcessorArchitecture = minidump.LinuxArchitecture(cpu)
	if cpu == arch.X86 || cpu == arch.AMD64 {
		copy(si.CPUInfo[:12], "GenuineIntel") // CPUID vendor words, little-endian
	}
	return b
}

// X86 wraps an x86 context for the Builder.
func X86(c *x86.Context) *minidump.Context { return &minidump.Context{CPU: arch.X86, X86: c} }

// AMD64 wraps an amd64 context for the Builder.
func AMD64(c *amd64.Context) *minidump.Context { return &minidump.Context{CPU: arch.AMD64, AMD64: c} }

// ARM wraps an ARM context for the Builder.
func ARM(c *arm.Context) *minidump.Context { return &minidump.Context{CPU: arch.ARM, ARM: c} }

// ARM64 wraps an arm64 context for the Builder.
func ARM64(c *arm64.Context) *minidump.Context { return &minidump.Context{CPU: arch.ARM64, ARM64: c} }

// MIPS wraps a mips or mips64 context (as its flags say) for the Builder.
func MIPS(c *mips.Context) *minidump.Context { return &minidump.Context{CPU: c.CPU(), MIPS: c} }

// AddThread adds a thread with the given context and stack memory (which may
// be nil for a thread without a stack).
func (b *Builder) AddThread(id uint32, ctx *minidump.Context, stack *Stack) {
	t := minidump.ThreadData{ThreadID: id, Context: ctx}
	if stack != nil {
		t.StackStart = stack.start
		t.Stack = stack.Bytes()
	}
	b.threads = append(b.threads, t)
}

// AddModule adds a module with a raw CodeView record (nil for none).
func (b *Builder) AddModule(name string, base uint64, size uint32, codeView []byte) *minidump.ModuleData {
	b.modules = append(b.modules, minidump.ModuleData{BaseOfImage: base, SizeOfImage: size, Name: name, CodeView: codeView})
	return &b.modules[len(b.modules)-1]
}

// AddELFModule adds a module identified by an ELF build id.
func (b *Builder) AddELFModule(name string, base uint64, size uint32, buildID []byte) *minidump.ModuleData {
	return b.AddModule(name, base, size, minidump.CodeViewELFRecord(buildID))
}

// AddPDBModule adds a Windows module identified by a PDB 7.0 record.
func (b *Builder) AddPDBModule(name string, base uint64, size uint32, guid minidump.GUID, age uint32, pdb string) *minidump.ModuleData {
	return b.AddModule(name, base, size, minidump.CodeViewPDB70Record(guid, age, pdb))
}

// AddUnloadedModule adds an entry to the unloaded module list (the stream
// is written only when there is one); the entry returned is valid until the
// next call (set its TimeDateStamp there).
func (b *Builder) AddUnloadedModule(name string, base uint64, size uint32) *minidump.UnloadedModule {
	b.unloaded = append(b.unloaded, minidump.UnloadedModule{BaseOfImage: base, SizeOfImage: size, Name: name})
	return &b.unloaded[len(b.unloaded)-1]
}

// AddMemory adds a range of process memory (beyond the thread stacks).
func (b *Builder) AddMemory(start uint64, data []byte) {
	b.memory = append(b.memory, minidump.MemoryRange{Start: start, Data: data})
}

// SetException sets the exception stream: the crashing thread, the exception
// code and address, and the context at the crash.
func (b *Builder) SetException(threadID, code uint32, address uint64, ctx *minidump.Context) {
	b.exception = &exceptionData{threadID, minidump.ExceptionRecord{ExceptionCode: code, ExceptionAddress: address}, ctx}
}

// SetExceptionRecord sets the exception stream with a full record.
func (b *Builder) SetExceptionRecord(threadID uint32, rec minidump.ExceptionRecord, ctx *minidump.Context) {
	b.exception = &exceptionData{threadID, rec, ctx}
}

// SetBreakpadInfo sets the Breakpad info stream.
func (b *Builder) SetBreakpadInfo(bi minidump.BreakpadInfo) { b.breakpad = &bi }

// SetMiscInfo sets the misc info stream.
func (b *Builder) SetMiscInfo(m minidump.MiscInfo) { b.misc = &m }

// AddStream adds a stream with raw contents, for example a Linux text stream.
func (b *Builder) AddStream(t minidump.StreamType, data []byte) {
	b.streams = append(b.streams, rawStream{t, data})
}

// Bytes encodes the dump: thread list, module list, unloaded module list
// (when there are unloaded modules), memory list, exception, system info,
// misc info, Breakpad info, then the raw streams.
func (b *Builder) Bytes() ([]byte, error) {
	w := minidump.NewWriter()
	w.TimeDateStamp = b.TimeDateStamp
	w.ThreadList(b.threads)
	w.ModuleList(b.modules)
	if len(b.unloaded) > 0 {
		w.UnloadedModuleList(b.unloaded)
	}
	for _, m := range b.memory {
		w.AddMemory(m.Start, m.Data)
	}
	w.MemoryListHere()
	if e := b.exception; e != nil {
		w.Exception(e.threadID, e.rec, e.ctx)
	}
	si := b.SystemInfo
	if old := b.oldARM64(); old != nil && si.ProcessorArchitecture == minidump.ArchARM64 {
		si.ProcessorArchitecture = minidump.ContextArchitecture(old)
	}
	w.SystemInfo(&si)
	if b.misc != nil {
		w.MiscInfo(b.misc)
	}
	if b.breakpad != nil {
		w.BreakpadInfo(*b.breakpad)
	}
	for _, s := range b.streams {
		w.Stream(s.t, s.b)
	}
	return w.Bytes()
}

// oldARM64 returns the first old arm64 context of the dump's threads and
// exception, or nil: New's ArchARM64 is written as ArchARM64Old beside
// them, the pairing Breakpad's reader accepts.
func (b *Builder) oldARM64() *minidump.Context {
	for _, t := range b.threads {
		if t.Context != nil && t.Context.ARM64Old != nil {
			return t.Context
		}
	}
	if e := b.exception; e != nil && e.ctx != nil && e.ctx.ARM64Old != nil {
		return e.ctx
	}
	return nil
}

// WriteFile encodes the dump into the file at path.
func (b *Builder) WriteFile(path string) error {
	data, err := b.Bytes()
	if err != nil {
		return err
	}
	return os.WriteFile(path, data, 0o644)
}

// File encodes the dump and opens it.
func (b *Builder) File() (*minidump.File, error) {
	data, err := b.Bytes()
	if err != nil {
		return nil, err
	}
	return minidump.NewFileBytes(data)
}

// Stack builds the contents of a stack memory region from its lowest address
// up, the way a test describes frames: values, then padding.
type Stack struct {
	start   uint64
	ptrSize int
	buf     []byte
}

// NewStack returns an empty stack whose first byte is at address start, for
// a CPU whose pointers are ptrSize (4 or 8) bytes.
func NewStack(start uint64, ptrSize int) *Stack {
	return &Stack{start: start, ptrSize: ptrSize}
}

// Start returns the address of the stack's first byte.
func (s *Stack) Start() uint64 { return s.start }

// Here returns the address of the next byte to be appended.
func (s *Stack) Here() uint64 { return s.start + uint64(len(s.buf)) }

// U32 appends a little-endian 32-bit value and returns its address.
func (s *Stack) U32(v uint32) uint64 {
	a := s.Here()
	s.buf = binary.LittleEndian.AppendUint32(s.buf, v)
	return a
}

// U64 appends a little-endian 64-bit value and returns its address.
func (s *Stack) U64(v uint64) uint64 {
	a := s.Here()
	s.buf = binary.LittleEndian.AppendUint64(s.buf, v)
	return a
}

// Ptr appends a pointer-sized value and returns its address.
func (s *Stack) Ptr(v uint64) uint64 {
	if s.ptrSize == 4 {
		return s.U32(uint32(v))
	}
	return s.U64(v)
}

// Zeros appends n zero bytes and returns the address of the first.
func (s *Stack) Zeros(n int) uint64 {
	a := s.Here()
	s.buf = append(s.buf, make([]byte, n)...)
	return a
}

// Align appends zero bytes up to a multiple of n bytes from the start.
func (s *Stack) Align(n int) {
	for len(s.buf)%n != 0 {
		s.buf = append(s.buf, 0)
	}
}

// Bytes returns the stack contents.
func (s *Stack) Bytes() []byte { return s.buf }
