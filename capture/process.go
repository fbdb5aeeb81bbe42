// Package capture records crashed Linux processes as minidumps: live ones,
// stopped under ptrace at a fatal signal ([Run]), and dead ones, from the
// ELF core file the kernel or qemu-user wrote ([FromCore]).
//
// Both paths fill a [Process]: the threads' CPU contexts (in the layouts of
// the arch subpackages), the crash's signal, code and address, the modules
// (each mapped ELF file with its build ID), the memory worth keeping (every
// thread's stack and a window around each thread's program counter and the
// fault address) and the raw Linux /proc files. [Process.WriteMinidump]
// then encodes it with the minidump package's writer, in the streams
// Breakpad's Linux client writes, so Breakpad's, rust-minidump's and our own
// minidump_stackwalk read the result.
//
// Unreadable memory never fails a capture: the part that cannot be read is
// left out and a line is added to [Process.Notes].
package capture

import (
	"time"

	"github.com/gobreakpad/gobreakpad/arch"
	"github.com/gobreakpad/gobreakpad/capture/procfs"
)

// Context is a thread's register state in one of the minidump layouts of the
// arch subpackages: *amd64.Context, *x86.Context or *arm64.Context.
type Context interface {
	Encode() []byte
}

// Thread is one thread of the captured process.
type Thread struct {
	ID      uint32
	Name    string // the thread's name (/proc/PID/task/TID/comm); empty when unknown
	Context Context
	SP, PC  uint64 // stack pointer and program counter, from Context
	Stack   Region // the captured stack, from SP (less the red zone) upward; empty when unreadable
}

// Region is a range of the process's memory and its bytes.
type Region struct {
	Addr uint64
	Data []byte
}

// End returns the address just past the region.
func (r Region) End() uint64 { return r.Addr + uint64(len(r.Data)) }

// Module is an ELF file mapped into the process.
type Module struct {
	Base, Size uint64 // the address range from its first to the end of its last mapping
	Path       string
	BuildID    []byte // GNU build ID, or Breakpad's text hash; nil when neither could be read
}

// Crash is the fatal signal that stopped the process.
type Crash struct {
	ThreadID uint32 // the thread the signal was delivered to
	Signal   int32  // signal number (si_signo)
	Code     int32  // si_code: how the signal was raised
	Errno    int32  // si_errno
	Address  uint64 // si_addr: the faulting address, for SIGSEGV, SIGBUS, SIGILL, SIGFPE
}

// Process is everything a minidump records about one process.
type Process struct {
	CPU     arch.CPU // AMD64, X86 or ARM64
	PID     uint32
	Threads []Thread         // the crashing thread first
	Crash   *Crash           // nil when the process did not crash
	Modules []Module         // sorted by Base
	Memory  []Region         // sorted by address and disjoint; includes the stacks
	Maps    []procfs.Mapping // the process's mappings, sorted by address

	// DSODebug is the dynamic linker's state; nil for static programs or
	// when it could not be read.
	DSODebug *DSODebug

	// The raw Linux files, as their minidump streams hold them; nil when unknown.
	ProcMaps, ProcStatus, CmdLine, Environ, Auxv, CPUInfo, LSBRelease []byte

	Time                 time.Time // when the process was captured; zero when unknown
	StartTime            time.Time // when the process started; zero when unknown
	UserTime, SystemTime time.Duration
	NumCPU               int
	OSRelease, OSVersion string // uname's release and version; empty when unknown
	// OSMachine is uname's machine name (x86_64 for a 32-bit x86 program on
	// an x86-64 kernel too, as Breakpad's client records it); empty when
	// unknown, and not used for a CPU that does not run natively on it (a
	// qemu-user core converted on another machine).
	OSMachine string

	// Notes says what could not be captured and why (unreadable memory,
	// modules without identifiers). A capture with notes is still a valid dump.
	Notes []string
}

// thread returns the thread with the given id, or nil.
func (p *Process) thread(id uint32) *Thread {
	for i := range p.Threads {
		if p.Threads[i].ID == id {
			return &p.Threads[i]
		}
	}
	return nil
}
