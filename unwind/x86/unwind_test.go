package x86_test

import (
	x86unwind "github.com/gobreakpad/gobreakpad/unwind/x86"
	"testing"

	"github.com/gobreakpad/gobreakpad/arch/x86"
	"github.com/gobreakpad/gobreakpad/unwind"
	"github.com/gobreakpad/gobreakpad/unwind/unwindtest"
)

const stackBase = 0x00120000

func newEnv() *unwindtest.Env {
	env := unwindtest.New(x86unwind.Unwinder{}, stackBase)
	env.IsWindows = true
	env.Modules = []unwindtest.Module{unwindtest.ThreeFuncs(0x400000)}
	return env
}

func contextFrame(t *testing.T, env *unwindtest.Env, eip, esp, ebp uint32) *unwind.Frame {
	t.Helper()
	f, err := x86unwind.Unwinder{}.ContextFrame(&x86.Context{Eip: eip, Esp: esp, Ebp: ebp, Ebx: 0xb0b, Esi: 0x51, Edi: 0xd1}, env)
	if err != nil {
		t.Fatal(err)
	}
	return f
}

func check(t *testing.T, f *unwind.Frame, trust unwind.Trust, eip, esp, ebp uint64) {
	t.Helper()
	if f.Trust != trust || f.Regs[x86.EIP] != eip || f.Regs[x86.ESP] != esp || f.Regs[x86.EBP] != ebp {
		t.Errorf("frame: trust %v eip %#x esp %#x ebp %#x; want %v %#x %#x %#x", f.Trust,
			f.Regs[x86.EIP], f.Regs[x86.ESP], f.Regs[x86.EBP], trust, eip, esp, ebp)
	}
}

func TestFramePointer(t *testing.T) {
	env := newEnv()
	sp := env.Push(0, 0)
	fp := env.Push(stackBase+0x18, 0x402050, 0, 0)
	env.Push(0, 0x403050)
	frames := unwindtest.Walk(x86unwind.Unwinder{}, env, contextFrame(t, env, 0x401010, uint32(sp), uint32(fp)), 10)
	if len(frames) != 3 {
		t.Fatalf("got %d frames, want 3", len(frames))
	}
	check(t, frames[1], unwind.TrustFP, 0x402050, fp+8, stackBase+0x18)
	check(t, frames[2], unwind.TrustFP, 0x403050, stackBase+0x20, 0)
}

func TestScanRestoresEBPChain(t *testing.T) {
	env := newEnv()
	// ebp points outside the stack: scan for the return address, then take
	// the word below it as the caller's ebp when it points a little higher.
	sp := env.Push(0x999, stackBase+0x20, 0x402050, 0, 0, 0, 0, 0)
	frames := unwindtest.Walk(x86unwind.Unwinder{}, env, contextFrame(t, env, 0x401010, uint32(sp), 0x10), 2)
	if len(frames) != 2 {
		t.Fatalf("got %d frames", len(frames))
	}
	check(t, frames[1], unwind.TrustScan, 0x402050, sp+12, stackBase+0x20)
}

func TestStackWinProgram(t *testing.T) {
	env := newEnv()
	// FrameData for the context frame: ebp-based, program string recovers
	// eip, esp, ebp and ebx.
	env.Wins[0x401010] = &unwind.WinInfo{Type: unwind.WinFrameData, ValidAll: true, LocalSize: 4, SavedRegisterSize: 4,
		ProgramString: "$T0 $ebp = $eip $T0 4 + ^ = $ebx $T0 8 - ^ = $ebp $T0 ^ = $esp $T0 8 + ="}
	sp := env.Push(0, 0)
	fp := env.Push(stackBase+0x20, 0x402050, 0, 0)
	env.Push(0, 0x10)
	env.Stack[0], env.Stack[1] = 0x44, 0x33 // the saved ebx at ebp-8 (word 0)
	frames := unwindtest.Walk(x86unwind.Unwinder{}, env, contextFrame(t, env, 0x401010, uint32(sp), uint32(fp+0)), 2)
	if len(frames) != 2 {
		t.Fatalf("got %d frames", len(frames))
	}
	f := frames[1]
	check(t, f, unwind.TrustCFI, 0x402050, fp+8, stackBase+0x20)
	if !f.Has(x86.EBX) || f.Regs[x86.EBX] != 0x3344 {
		t.Errorf("ebx = %#x (valid %v), want 0x3344", f.Regs[x86.EBX], f.Has(x86.EBX))
	}
	if f.Has(x86.ESI) {
		t.Errorf("esi was not recovered and must be invalid")
	}
}

func TestStackWinFPO(t *testing.T) {
	env := newEnv()
	// FPO data without a program string and without a frame pointer: the
	// return address sits above the locals and saved registers; ebp and ebx
	// pass through unchanged.
	env.Wins[0x401010] = &unwind.WinInfo{Type: unwind.WinFPO, ValidAll: true, LocalSize: 8, SavedRegisterSize: 4}
	sp := env.Push(1, 2, 3, 0x402050, 0, 0)
	frames := unwindtest.Walk(x86unwind.Unwinder{}, env, contextFrame(t, env, 0x401010, uint32(sp), 0xe0), 2)
	if len(frames) != 2 {
		t.Fatalf("got %d frames", len(frames))
	}
	f := frames[1]
	check(t, f, unwind.TrustCFI, 0x402050, sp+16, 0xe0)
	if !f.Has(x86.EBX) || f.Regs[x86.EBX] != 0xb0b {
		t.Errorf("ebx = %#x, want it carried (0xb0b)", f.Regs[x86.EBX])
	}
}

func TestStackWinScansPastBadReturnAddress(t *testing.T) {
	env := newEnv()
	// The computed return address is not in a module: look further up.
	env.Wins[0x401010] = &unwind.WinInfo{Type: unwind.WinFPO, ValidAll: true}
	// (The first, 3-word scan for alignment padding does not reach it.)
	sp := env.Push(0x999999, 7, 7, 7, 7, 0x403010, 0)
	frames := unwindtest.Walk(x86unwind.Unwinder{}, env, contextFrame(t, env, 0x401010, uint32(sp), 0xe0), 2)
	if len(frames) != 2 {
		t.Fatalf("got %d frames", len(frames))
	}
	check(t, frames[1], unwind.TrustCFIScan, 0x403010, sp+24, 0xe0)
}

func TestCFI(t *testing.T) {
	env := newEnv()
	env.IsWindows = false
	env.CFIs = []unwindtest.CFIRange{{Start: 0x401000, Size: 0x100,
		Init: ".cfa: $esp 4 + .ra: .cfa -4 + ^", Deltas: map[uint64]string{0x401001: ".cfa: $esp 8 + $ebp: .cfa -8 + ^"}}}
	sp := env.Push(stackBase+0x40, 0x402050, 0)
	frames := unwindtest.Walk(x86unwind.Unwinder{}, env, contextFrame(t, env, 0x401010, uint32(sp), 0x1), 2)
	if len(frames) != 2 {
		t.Fatalf("got %d frames", len(frames))
	}
	f := frames[1]
	check(t, f, unwind.TrustCFI, 0x402050, sp+8, stackBase+0x40)
	if f.Regs[x86.ESI] != 0x51 || !f.Has(x86.ESI) {
		t.Errorf("callee-saved esi not carried")
	}
}

// TestCallThroughNull: the caller of a call through a null pointer is found
// from the return address on top of the stack, not skipped by the ebp chain.
func TestCallThroughNull(t *testing.T) {
	env := newEnv()
	env.IsWindows = false
	sp := env.Push(0x402050)
	fp := env.Push(stackBase+0xc, 0x403050)
	env.Push(0, 0x10)
	frames := unwindtest.Walk(x86unwind.Unwinder{}, env, contextFrame(t, env, 0, uint32(sp), uint32(fp)), 10)
	if len(frames) != 3 {
		t.Fatalf("got %d frames, want 3", len(frames))
	}
	check(t, frames[1], unwind.TrustScan, 0x402050, sp+4, fp)
	check(t, frames[2], unwind.TrustFP, 0x403050, fp+8, stackBase+0xc)
}

func TestStackWinCalleeParamsOfTheCalleeOnly(t *testing.T) {
	env := newEnv()
	// Three FPO frames: the context frame's function takes 12 bytes of
	// parameters, its caller's 4, the next one has 8 bytes of locals. The
	// third frame's return address lies past the 4 bytes its callee (the
	// second frame) popped, not past the context frame's 12 (which an
	// earlier walker used, skipping the frame).
	env.Wins[0x401010] = &unwind.WinInfo{Type: unwind.WinFPO, ValidAll: true, ParameterSize: 12}
	env.Wins[0x40204f] = &unwind.WinInfo{Type: unwind.WinFPO, ValidAll: true, ParameterSize: 4}
	env.Wins[0x40304f] = &unwind.WinInfo{Type: unwind.WinFPO, ValidAll: true, LocalSize: 8}
	sp := env.Push(0x402050, 1, 2, 3, 0x403050, 9, 7, 7, 0x401080, 0, 0x402090, 0, 0)
	frames := unwindtest.Walk(x86unwind.Unwinder{}, env, contextFrame(t, env, 0x401010, uint32(sp), 0xe0), 4)
	if len(frames) != 4 {
		t.Fatalf("got %d frames, want 4", len(frames))
	}
	check(t, frames[1], unwind.TrustCFI, 0x402050, sp+4, 0xe0)
	check(t, frames[2], unwind.TrustCFI, 0x403050, sp+20, 0xe0)
	check(t, frames[3], unwind.TrustCFI, 0x401080, sp+36, 0xe0)
}
