package stackwalk

import (
	"github.com/gobreakpad/gobreakpad/minidump"
	"github.com/gobreakpad/gobreakpad/unwind"
)

// ProcessState is everything the walk learned about a dumped process: the
// system, the crash, every thread's call stack and the loaded modules. It is
// what the output formats (Print, PrintMachineReadable, stackwalk/jsonout)
// render. It mirrors Breakpad's google_breakpad::ProcessState.
type ProcessState struct {
	System SystemInfo

	// Crashed is true when the dump has an exception record; then
	// CrashReason and CrashAddress describe it.
	Crashed      bool
	CrashReason  string
	CrashAddress uint64
	// ExceptionCode, ExceptionFlags and CrashParameters are the raw
	// exception record (the parameters are printed by the human output).
	ExceptionCode    uint32
	ExceptionFlags   uint32
	ExceptionAddress uint64
	CrashParameters  []uint64
	// Assertion is the invalid-parameter or assertion text, when the dump
	// carries one.
	Assertion string

	// TimeDateStamp is when the dump was written and ProcessCreateTime when
	// the process started (seconds since the Unix epoch; zero when unknown).
	TimeDateStamp     uint32
	ProcessCreateTime uint32

	// RequestingThread is the index in Threads of the thread that crashed or
	// asked for the dump, or -1.
	RequestingThread int
	Threads          []*CallStack

	// Modules are the loaded modules in the dump's order; MainModule is the
	// index of the executable (the first module), or -1.
	Modules    []*Module
	MainModule int
	// UnloadedModules are modules the process had unloaded.
	UnloadedModules []*Module

	// What the dump says beyond Breakpad's report, as rust-minidump's
	// ProcessState carries it (the JSON output renders these).

	// ProcessID is the process's id (from the misc info stream, else a
	// Linux dump's /proc/PID/status); HasProcessID says whether it is known.
	ProcessID    uint32
	HasProcessID bool
	// DumpThreadIDs are the ids of every thread in the dump's thread list,
	// in order, the dump-writing thread that Threads leaves out included;
	// nil when the thread list is unreadable.
	DumpThreadIDs []uint32
	// ThreadNames maps thread ids to the readable names of the thread name
	// list (a later entry wins); nil without that stream.
	ThreadNames map[uint32]string
	// SoftErrors is Mozilla's soft-errors stream (JSON text of problems the
	// dump writer met), or nil.
	SoftErrors []byte
	// Problems are what Read and Walk met in the dump and left out, one
	// error each, with the context that names the part ("thread list: ...
	// no thread walked"), in the order met; nil when there were none.
	// cmd/minidump_stackwalk prints them on stderr and package jsonout
	// appends them to soft_errors. Every part of the dump that is dropped
	// rather than reported as missing is said here.
	Problems []error
	// LSBRelease is the Linux distribution from /etc/lsb-release (or
	// os-release), or nil.
	LSBRelease *LSBRelease
	// LinuxMapCount is the number of /proc/PID/maps entries of a Linux dump;
	// HasLinuxMaps says whether the dump has that stream.
	LinuxMapCount int
	HasLinuxMaps  bool
	// EntryPoint is the program's entry point (_start) from a Linux dump's
	// auxiliary vector (AT_ENTRY), or 0: the main thread's walk ends there.
	EntryPoint uint64
	// KernelVsyscall is the address of Linux i386's __kernel_vsyscall in
	// the vDSO from a Linux dump's auxiliary vector (AT_SYSINFO), or 0: a
	// frame stopped there is named from it when no symbols name it.
	KernelVsyscall uint64
	// Annotations are the crash annotations of the dump's Crashpad info
	// stream (key → value): the process's simple annotations, then each
	// module's simple annotations and string annotation objects, the first
	// value of a key winning. nil without that stream or with an
	// unreadable one (left out silently, as the outputs always did: not a
	// Problem). stackwalk/signature's rules read them.
	Annotations map[string]string

	mods        *moduleMap    // Modules indexed by address; built on first use
	moduleMerge mergeStrategy // how overlapping modules are indexed
	// memory is the dump's whole memory (MemoryList and Memory64List), or
	// nil: unwinders read code bytes from it, never stack values.
	memory unwind.Memory
	// maps is the dump's map of the address space (executable or not), or nil.
	maps memMap
}

// moduleMap returns the modules indexed by address.
func (p *ProcessState) moduleMap() *moduleMap {
	if p.mods == nil || len(p.mods.all) != len(p.Modules) || p.mods.merge != p.moduleMerge {
		p.mods = newModuleMap(p.Modules, p.moduleMerge)
	}
	return p.mods
}

// Uptime returns the process's age in seconds when the dump was written, and
// whether it is known.
func (p *ProcessState) Uptime() (uint32, bool) {
	if p.TimeDateStamp != 0 && p.ProcessCreateTime != 0 && p.TimeDateStamp >= p.ProcessCreateTime {
		return p.TimeDateStamp - p.ProcessCreateTime, true
	}
	return 0, false
}

// ModulesByAddress returns the modules Breakpad lists, in its order (by
// address): those its processor's range map stores. For Linux and Android
// minidumps, overlapping modules are shrunk (the lower ends below the
// other's base) and only a module at a stored one's base is left out; for
// other minidumps an overlap makes Breakpad refuse the whole list (none is
// returned); for Android microdumps, only a module ending where another
// ends is left out; for Linux microdumps, any overlapping one stored
// earlier.
func (p *ProcessState) ModulesByAddress() []*Module {
	return p.moduleMap().sorted
}

// SystemInfo describes the machine the dump came from.
type SystemInfo struct {
	// OS is Breakpad's long name ("Windows NT", "Linux", "Mac OS X") and
	// OSShort its short one ("windows", "linux", "mac", "ios", ...).
	OS, OSShort, OSVersion string
	// CPU is Breakpad's name for the architecture ("x86", "amd64", "arm64").
	CPU      string
	CPUInfo  string
	CPUCount int
	// CPUVendor is the x86 CPUID vendor ("GenuineIntel", "AuthenticAMD")
	// of x86 and amd64 dumps, NULs removed; Breakpad's CPUInfo names it
	// for x86 only. crashd indexes it (its correlations).
	CPUVendor string
	// RustCPUInfo is cpu_info as rust-minidump writes it in --json where it
	// differs from Breakpad's CPUInfo: on x86 the CPUID vendor's 12 bytes
	// whole, NULs included, each byte one character (Latin-1), where
	// Breakpad stops at the first NUL and leaves an empty vendor out. ""
	// elsewhere (then CPUInfo is rust-minidump's too).
	RustCPUInfo string
	// GL fields are filled by Breakpad for some Android dumps; kept for the
	// machine-readable format.
	GLVersion, GLVendor, GLRenderer string
	// PlatformID and ProcessorArchitecture are the raw MDRawSystemInfo
	// fields (as stackwalk/crashreason takes them), and so are the version
	// fields; RawValid is false when the dump had no readable system info
	// stream (the JSON output then derives the ids from OSShort and CPU).
	PlatformID, ProcessorArchitecture       uint32
	RawValid                                bool
	MajorVersion, MinorVersion, BuildNumber uint32
	CSDVersion                              string
	// CPUMicrocode is the microcode version from a Linux dump's
	// /proc/cpuinfo; HasCPUMicrocode says whether it is known.
	CPUMicrocode    uint64
	HasCPUMicrocode bool
}

// LSBRelease is a Linux distribution's identification.
type LSBRelease struct {
	ID, Release, Codename, Description string
}

// Module is one loaded (or unloaded) code module.
type Module struct {
	Base, Size uint64
	// CodeFile is the module's path as loaded; DebugFile and DebugID name
	// its symbol file (for ELF, the file name and build-id-derived ID).
	CodeFile, CodeID   string
	DebugFile, DebugID string
	// RustCodeID and RustDebugID are the identifiers rust-minidump gives
	// the module, for --json ("" where it has none; never Breakpad's
	// placeholder "id"): minidump.Module.RustCodeIdentifier and
	// RustDebugIdentifier, and for an unloaded module the time stamp and
	// image size on every system. Microdump modules (which rust-minidump
	// does not read) keep Breakpad's.
	RustCodeID, RustDebugID string
	// Version is "a.b.c.d" from a Windows version resource, or empty.
	Version string
	// MissingSymbols is set when a frame fell in the module but no symbol
	// file was found; CorruptSymbols when its symbol file had bad lines.
	MissingSymbols, CorruptSymbols bool
	// Unloaded marks a module from the unloaded-module list.
	Unloaded bool
	// SymbolsLoaded is set when a symbol file was found and used.
	SymbolsLoaded bool
}

// End returns the first address past the module.
func (m *Module) End() uint64 { return m.Base + m.Size }

// CallStack is one thread's frames, innermost first.
type CallStack struct {
	ThreadID   uint32
	ThreadName string
	Frames     []*StackFrame
	// Memory is the thread's stack, for printing stack contents; may be nil.
	Memory StackMemory

	context *minidump.Context // the context Walk starts from; nil if none
	// exception is the dump's exception record when context is the
	// exception's (unwind.Env's Exception); nil otherwise.
	exception *unwind.ExceptionRecord
}

// StackMemory is a thread's stack region.
type StackMemory interface {
	ReadMemory(addr uint64, n int) ([]byte, error)
}

// StackFrame is one frame of a call stack: where it is, what it is, and the
// registers the unwinder recovered for it.
type StackFrame struct {
	// Instruction is the address used for symbol lookups: the program
	// counter for the innermost frame, else the return address moved back
	// into the call instruction.
	Instruction uint64
	// Module contains Instruction, or is nil.
	Module *Module
	// UnloadedModule is, when Module is nil, the unloaded module Breakpad
	// attributes the frame to: the one of ProcessState.UnloadedModules
	// containing Instruction, as its range map keeps them (truncate lower:
	// a module overlapped by a later one ends where that one begins). The
	// human and -m outputs name it as a module.
	UnloadedModule *Module

	// Function is the enclosing FUNC or PUBLIC name, FunctionBase its
	// absolute start address. SourceFile, SourceLine and SourceLineBase come
	// from the LINE record covering Instruction (or the INLINE call site).
	Function       string
	FunctionBase   uint64
	SourceFile     string
	SourceLine     int
	SourceLineBase uint64

	// Trust says how the frame was found; TrustInline frames come from
	// INLINE records and carry no registers.
	Trust unwind.Trust

	// The frame's registers, packed (frames.go): the values of the known
	// ones only, in slot order, in its thread's register store; Context
	// rebuilds them. A kept frame costs about 165 bytes (one found by
	// frame pointers), where a whole unwind.Context alone took 272
	// (docs/hostile.md, "The memory bound").
	at    uint32       // where the values start in thr.vals
	valid uint64       // which registers are known (unwind.Context.Valid)
	pc    uint64       // the program counter slot, known or not
	thr   *frameThread // the thread's unwinder, print layout and registers
}

// ReturnAddress is the address printed for the frame, as Breakpad chooses
// it: on x86 and amd64 the program counter of physical frames (for callers,
// the return address itself); Instruction for arm64 and inline frames.
func (f *StackFrame) ReturnAddress() uint64 {
	if f.Trust == unwind.TrustInline || f.layout() == nil || !f.layout().reportsPC {
		return f.Instruction
	}
	return f.pc
}

// Register is a named register value.
type Register struct {
	Name  string
	Value uint64
}

// Registers returns the frame's known registers in Breakpad's print order
// (none for inline frames).
func (f *StackFrame) Registers() []Register { return f.appendRegisters(nil) }

// appendRegisters appends the frame's Registers to dst.
func (f *StackFrame) appendRegisters(dst []Register) []Register {
	l := f.layout()
	if f.Trust == unwind.TrustInline || l == nil {
		return dst
	}
	names := l.names
	always := l.always
	all := uint64(1)<<uint(len(names)) - 1
	vals := f.values()
	k := 0 // the index in vals of register i
	for i, n := range names {
		bit := uint64(1) << uint(i)
		if f.valid&bit == 0 {
			continue
		}
		k++
		if always&bit == 0 && f.valid&all != all {
			continue
		}
		dst = append(dst, Register{n, vals[k-1]})
	}
	return dst
}

// WordSize is the size of the frame's CPU registers in bytes (4 or 8), or 0.
func (f *StackFrame) WordSize() int {
	if f.cpu() == nil {
		return 0
	}
	return f.cpu().WordSize()
}

// StackPointer returns the frame's stack pointer and whether it is known.
func (f *StackFrame) StackPointer() (uint64, bool) {
	if f.cpu() == nil || f.Trust == unwind.TrustInline {
		return 0, false
	}
	return f.reg(f.cpu().SP())
}
