package unwindtest

import (
	"testing"

	"github.com/gobreakpad/gobreakpad/unwind"
)

// Check reports an error unless frame f has the trust, program counter and
// stack pointer given (in cpu's PC and SP slots).
func Check(t testing.TB, cpu unwind.CPU, f *unwind.Frame, trust unwind.Trust, pc, sp uint64) {
	t.Helper()
	if f.Trust != trust || f.Regs[cpu.PC()] != pc || f.Regs[cpu.SP()] != sp {
		t.Errorf("frame: trust %v pc %#x sp %#x; want %v %#x %#x", f.Trust, f.Regs[cpu.PC()], f.Regs[cpu.SP()], trust, pc, sp)
	}
}

// ThreeFuncs returns the module the unwinder tests walk through: 0x10000
// bytes at base, with symbols, its functions the first 0x100 bytes at
// base+0x1000, base+0x2000 and base+0x3000.
func ThreeFuncs(base uint64) Module {
	return Module{Base: base, Size: 0x10000, HasSymbols: true,
		Funcs: [][2]uint64{{base + 0x1000, base + 0x1100}, {base + 0x2000, base + 0x2100}, {base + 0x3000, base + 0x3100}}}
}

// CheckSignal reports an error unless frames[1] is a signal trampoline's
// frame and frames[2] the frame the kernel's signal frame restores
// (TrustSignal, interrupted) with the registers of want, by slot. label
// starts each message ("" or the case's name and ": ").
func CheckSignal(t testing.TB, cpu unwind.CPU, label string, frames []*unwind.Frame, want map[int]uint64) {
	t.Helper()
	if !frames[1].Trampoline {
		t.Errorf("%strampoline frame not marked", label)
	}
	s := frames[2]
	if s.Trust != unwind.TrustSignal || !s.Interrupted {
		t.Errorf("%ssignal frame: trust %v interrupted %v", label, s.Trust, s.Interrupted)
	}
	for r, v := range want {
		if !s.Has(r) || s.Regs[r] != v {
			t.Errorf("%ssignal frame %s = %#x (known %v), want %#x", label, cpu.CFINames()[r], s.Regs[r], s.Has(r), v)
		}
	}
}
