package stackwalk

import (
	"github.com/gobreakpad/gobreakpad/arch/amd64"
	"github.com/gobreakpad/gobreakpad/arch/arm"
	"github.com/gobreakpad/gobreakpad/arch/arm64"
	"github.com/gobreakpad/gobreakpad/arch/mips"
	"github.com/gobreakpad/gobreakpad/arch/x86"
)

// printLayout is how Breakpad's outputs print the frames of one CPU (what
// its StackFrame* class and minidump_stackwalk's printers decide): which
// registers, how wide, and which address stands for a frame. It is the
// outputs' concern, kept here beside the printers; the unwinders
// (unwind.CPU) know only unwinding. The walk gives each frame its CPU's
// layout (unwinderFor), and the printers and StackFrame's ReturnAddress
// and Registers read it.
type printLayout struct {
	// names are the printed names of the register slots, in slot order,
	// which is Breakpad's print order (arch/<cpu>.RegisterNames).
	names []string
	// always is the mask of registers printed whenever they are known;
	// the others are printed only when every register is known.
	always uint64
	// reportsPC says a physical frame's printed address is its program
	// counter (x86, amd64, mips: for callers, the return address itself)
	// rather than the adjusted instruction address (arm, arm64), as
	// Breakpad's StackFrame*::ReturnAddress differ.
	reportsPC bool
	// registerBytes is the width registers are printed in (4 or 8): the
	// CPU's word size, but 8 on mips too.
	registerBytes int
	// stackWordBytes is the word size of the stack contents printed with
	// -s; 0 when none are printed (mips).
	stackWordBytes int
}

// The layouts of the CPUs the walk unwinds, one per unwinder.
var (
	// x86: eax, ecx, edx and eflags are printed only for frames with
	// every register known.
	layoutX86 = &printLayout{
		names:     x86.RegisterNames,
		always:    1<<x86.EIP | 1<<x86.ESP | 1<<x86.EBP | 1<<x86.EBX | 1<<x86.ESI | 1<<x86.EDI,
		reportsPC: true, registerBytes: 4, stackWordBytes: 4,
	}
	layoutAMD64 = &printLayout{
		names:     amd64.RegisterNames,
		always:    1<<amd64.NumRegs - 1,
		reportsPC: true, registerBytes: 8, stackWordBytes: 8,
	}
	// arm: frames print their instruction address.
	layoutARM = &printLayout{
		names:     arm.RegisterNames,
		always:    1<<arm.NumRegs - 1,
		reportsPC: false, registerBytes: 4, stackWordBytes: 4,
	}
	layoutARM64 = &printLayout{
		names:     arm64.RegisterNames,
		always:    1<<arm64.NumRegs - 1,
		reportsPC: false, registerBytes: 8, stackWordBytes: 8,
	}
	// mips and mips64: gp, sp, fp, ra, pc and s0-s7 are printed when
	// known, never the others; registers 8 bytes wide (on mips too); no
	// stack contents.
	layoutMIPS = &printLayout{
		names:     mips.RegisterNames,
		always:    1<<mips.NumPrinted - 1,
		reportsPC: true, registerBytes: 8, stackWordBytes: 0,
	}
)
