package stackwalk

import (
	"errors"
	"fmt"

	"github.com/gobreakpad/gobreakpad/arch"
	"github.com/gobreakpad/gobreakpad/microdump"
	"github.com/gobreakpad/gobreakpad/minidump"
)

// ErrNoContext is returned by ReadMicrodump when the microdump has no CPU
// context the walk can start from.
var ErrNoContext = errors.New("microdump: no usable CPU context (C record)")

// ReadMicrodump makes the state of a Breakpad microdump, as Breakpad's
// MicrodumpProcessor does: the system from the O and G records (OS and CPU
// names as the record gives them), a crash in every case (reason and
// address from the R record, empty without one), one thread (the crashing
// one, index 0) with the C record's context and the S records' stack, and
// the M records' modules, none of them the main module. Walk then walks it
// like a minidump's state.
//
// It returns ErrNoContext (with the state) when there is no context to walk
// from, and an error naming the CPU when there is no unwinder for it (mips):
// Breakpad's tool fails there too.
func ReadMicrodump(md *microdump.Microdump) (*ProcessState, error) {
	if md == nil {
		return nil, fmt.Errorf("process: no microdump")
	}
	p := &ProcessState{RequestingThread: 0, MainModule: -1, Crashed: true}
	p.System = SystemInfo{
		OS: md.OS.Name(), OSShort: md.OS.Short(), OSVersion: md.OS.Version,
		CPU: md.OS.Arch, CPUCount: md.OS.CPUCount,
		GLVersion: md.GPU.Version, GLVendor: md.GPU.Vendor, GLRenderer: md.GPU.Renderer,
	}
	if md.Crash != nil {
		p.CrashReason, p.CrashAddress = md.Crash.Reason, md.Crash.Address
	}
	if md.OS.Short() == "android" {
		// Breakpad shrinks overlapping modules of Android microdumps
		// rather than dropping the later one.
		p.moduleMerge = mergeTruncateUpper
	}
	for _, m := range md.Modules {
		p.Modules = append(p.Modules, &Module{Base: m.Base, Size: m.Size,
			CodeFile: m.Name, CodeID: m.ID, DebugFile: m.Name, DebugID: m.ID,
			RustCodeID: m.ID, RustDebugID: m.ID})
	}
	cs := &CallStack{}
	if len(md.Stack.Data) > 0 {
		cs.Memory = &region{base: md.Stack.Base, data: md.Stack.Data}
	}
	p.Threads = []*CallStack{cs}
	c := md.Context
	if c == nil {
		return p, ErrNoContext
	}
	switch {
	case c.ARM != nil:
		cs.context = &minidump.Context{CPU: arch.ARM, ARM: c.ARM}
	case c.ARM64 != nil:
		cs.context = &minidump.Context{CPU: arch.ARM64, ARM64: c.ARM64, ARM64Old: c.ARM64Old}
	case c.X86 != nil:
		cs.context = &minidump.Context{CPU: arch.X86, X86: c.X86}
	case c.AMD64 != nil:
		cs.context = &minidump.Context{CPU: arch.AMD64, AMD64: c.AMD64}
	case c.MIPS != nil:
		cpu := arch.MIPS
		if c.Arch == "mips64" {
			cpu = arch.MIPS64
		}
		cs.context = &minidump.Context{CPU: cpu, MIPS: c.MIPS}
	default:
		return p, fmt.Errorf("microdump: no unwinder for %s contexts", c.Arch)
	}
	return p, nil
}
