package arm64_test

import (
	arm64unwind "github.com/gobreakpad/gobreakpad/unwind/arm64"
	"testing"

	"github.com/gobreakpad/gobreakpad/arch/arm64"
	"github.com/gobreakpad/gobreakpad/unwind"
	"github.com/gobreakpad/gobreakpad/unwind/unwindtest"
)

const (
	stackBase = 0x7fff0000
	modBase   = 0x400000
	modSize   = 0x10000
	pacBits   = 0x002a000000000000 // pointer-authentication code in the high bits
)

func newEnv(u *arm64unwind.Unwinder) *unwindtest.Env {
	env := unwindtest.New(u, stackBase)
	env.Modules = []unwindtest.Module{unwindtest.ThreeFuncs(modBase)}
	return env
}

func contextFrame(t *testing.T, u *arm64unwind.Unwinder, env *unwindtest.Env, pc, sp, fp, lr uint64) *unwind.Frame {
	t.Helper()
	c := &arm64.Context{}
	c.Iregs[arm64.RegPC], c.Iregs[arm64.RegSP], c.Iregs[arm64.RegFP], c.Iregs[arm64.RegLR] = pc, sp, fp, lr
	c.Iregs[19] = 0x1919
	f, err := u.ContextFrame(c, env)
	if err != nil {
		t.Fatal(err)
	}
	return f
}

func check(t *testing.T, f *unwind.Frame, trust unwind.Trust, pc, sp uint64) {
	t.Helper()
	unwindtest.Check(t, &arm64unwind.Unwinder{}, f, trust, pc, sp)
}

func TestCFI(t *testing.T) {
	u := arm64unwind.NewUnwinder(modBase + modSize)
	env := newEnv(u)
	env.CFIs = []unwindtest.CFIRange{{Start: 0x401000, Size: 0x100,
		Init: ".cfa: sp 0 + .ra: x30", Deltas: map[uint64]string{0x401008: ".cfa: sp 16 + x29: .cfa -16 + ^ .ra: .cfa -8 + ^"}}}
	sp := env.Push(stackBase+0x40, 0x402050|pacBits, 0)
	frames := unwindtest.Walk(u, env, contextFrame(t, u, env, 0x401010, sp, sp, 0), 2)
	if len(frames) != 2 {
		t.Fatalf("got %d frames", len(frames))
	}
	f := frames[1]
	check(t, f, unwind.TrustCFI, 0x402050, sp+16)
	if f.Regs[arm64.RegFP] != stackBase+0x40 || !f.Has(arm64.RegFP) {
		t.Errorf("fp = %#x", f.Regs[arm64.RegFP])
	}
	if f.Regs[19] != 0x1919 || !f.Has(19) {
		t.Errorf("callee-saved x19 not carried")
	}
	if f.Has(0) {
		t.Errorf("x0 must not be valid in the caller")
	}
}

func TestLeafInLR(t *testing.T) {
	u := arm64unwind.NewUnwinder(modBase + modSize)
	env := newEnv(u)
	// A leaf function: its CFI says the return address is still in lr and
	// the stack pointer did not move; the first unwind allows equal sp.
	env.CFIs = []unwindtest.CFIRange{{Start: 0x401000, Size: 0x100, Init: ".cfa: sp 0 + .ra: x30"}}
	sp := env.Push(0, 0)
	frames := unwindtest.Walk(u, env, contextFrame(t, u, env, 0x401010, sp, 0, 0x402050|pacBits), 2)
	if len(frames) != 2 {
		t.Fatalf("got %d frames", len(frames))
	}
	check(t, frames[1], unwind.TrustCFI, 0x402050, sp)
}

func TestFramePointerAndPAC(t *testing.T) {
	u := arm64unwind.NewUnwinder(modBase + modSize)
	env := newEnv(u)
	sp := env.Push(0, 0)
	fp0 := env.Push(stackBase+0x20, 0x403050|pacBits)
	env.Push(0, 0)
	env.Push(0, 0x10)
	frames := unwindtest.Walk(u, env, contextFrame(t, u, env, 0x401010, sp, fp0, 0x402050|pacBits), 10)
	if len(frames) != 3 {
		t.Fatalf("got %d frames, want 3", len(frames))
	}
	// The context frame's lr is stripped, and so is the saved lr.
	check(t, frames[1], unwind.TrustFP, 0x402050, fp0+16)
	if frames[1].Regs[arm64.RegLR] != 0x403050 {
		t.Errorf("caller lr = %#x, want the stripped 0x403050", frames[1].Regs[arm64.RegLR])
	}
	check(t, frames[2], unwind.TrustFP, 0x403050, stackBase+0x30)
}

func TestScan(t *testing.T) {
	u := arm64unwind.NewUnwinder(modBase + modSize)
	env := newEnv(u)
	// No CFI and a frame pointer outside the stack: scan.
	sp := env.Push(0x401500, 0x403010, 0)
	frames := unwindtest.Walk(u, env, contextFrame(t, u, env, 0x401010, sp, 0x10, 0), 2)
	if len(frames) != 2 {
		t.Fatalf("got %d frames", len(frames))
	}
	check(t, frames[1], unwind.TrustScan, 0x403010, sp+16)
}

func TestNoMaskKeepsPointer(t *testing.T) {
	u := arm64unwind.NewUnwinder(0)
	env := newEnv(u)
	f := contextFrame(t, u, env, 0x401010, stackBase, 0, 0x402050|pacBits)
	if f.Regs[arm64.RegLR] != 0x402050|pacBits {
		t.Errorf("lr = %#x: without modules nothing is stripped", f.Regs[arm64.RegLR])
	}
}

// TestFramePointerAfterCFI: a frame found by CFI without lr (its rules
// recover x29 and the return address, not x30), in a function without
// unwind information that set up its own frame record, is left by that
// record (pc = [fp+8]); Breakpad takes the return address into it from its
// callee's record and repeats the frame (docs/stackwalk.md). The frame
// after it, found the same way, ends the walk at its zero record.
func TestFramePointerAfterCFI(t *testing.T) {
	u := arm64unwind.NewUnwinder(modBase + modSize)
	env := newEnv(u)
	env.CFIs = []unwindtest.CFIRange{{Start: 0x401000, Size: 0x100, Init: ".cfa: sp 0 + .ra: x30",
		Deltas: map[uint64]string{0x401008: ".cfa: x29 16 + .ra: .cfa -8 + ^ x29: .cfa -16 + ^"}}}
	sp0 := env.Push(0, 0)
	fp0 := sp0 + 16
	env.Push(fp0+32, 0x402050|pacBits) // frame 0's record
	env.Push(0, 0)                     // frame 1's locals
	env.Push(fp0+48, 0x403050)         // frame 1's record
	env.Push(0, 0)                     // frame 2's record: the end
	frames := unwindtest.Walk(u, env, contextFrame(t, u, env, 0x401010, sp0, fp0, 0x401004), 10)
	if len(frames) != 3 {
		t.Fatalf("got %d frames, want 3", len(frames))
	}
	check(t, frames[1], unwind.TrustCFI, 0x402050, fp0+16)
	check(t, frames[2], unwind.TrustFP, 0x403050, fp0+48)
	if frames[2].Regs[arm64.RegFP] != fp0+48 || frames[2].Has(arm64.RegLR) {
		t.Errorf("frame 2: fp %#x (want %#x), lr known %v", frames[2].Regs[arm64.RegFP], fp0+48, frames[2].Has(arm64.RegLR))
	}
}
