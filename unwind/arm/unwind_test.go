package arm_test

import (
	armunwind "github.com/gobreakpad/gobreakpad/unwind/arm"
	"testing"

	"github.com/gobreakpad/gobreakpad/arch/arm"
	"github.com/gobreakpad/gobreakpad/unwind"
	"github.com/gobreakpad/gobreakpad/unwind/unwindtest"
)

const stackBase = 0xbe000000

func newEnv(u armunwind.Unwinder) *unwindtest.Env {
	env := unwindtest.New(u, stackBase)
	env.Modules = []unwindtest.Module{unwindtest.ThreeFuncs(0x10000)}
	return env
}

func contextFrame(t *testing.T, u armunwind.Unwinder, env *unwindtest.Env, pc, sp, lr, r7, r11 uint32) *unwind.Frame {
	t.Helper()
	c := &arm.Context{}
	c.Iregs[arm.RegPC], c.Iregs[arm.RegSP], c.Iregs[arm.RegLR] = pc, sp, lr
	c.Iregs[7], c.Iregs[11], c.Iregs[4] = r7, r11, 0x44
	f, err := u.ContextFrame(c, env)
	if err != nil {
		t.Fatal(err)
	}
	return f
}

func check(t *testing.T, f *unwind.Frame, trust unwind.Trust, pc, sp uint64) {
	t.Helper()
	unwindtest.Check(t, armunwind.Unwinder{}, f, trust, pc, sp)
}

func TestCFI(t *testing.T) {
	u := armunwind.Unwinder{}
	env := newEnv(u)
	env.CFIs = []unwindtest.CFIRange{{Start: 0x11000, Size: 0x100,
		Init: ".cfa: sp 0 + .ra: lr", Deltas: map[uint64]string{0x11004: ".cfa: sp 8 + .ra: .cfa -4 + ^ r11: .cfa -8 + ^"}}}
	sp := env.Push(stackBase+0x40, 0x12051, 0)
	frames := unwindtest.Walk(u, env, contextFrame(t, u, env, 0x11010, uint32(sp), 0, 0, 0x99), 2)
	if len(frames) != 2 {
		t.Fatalf("got %d frames", len(frames))
	}
	f := frames[1]
	check(t, f, unwind.TrustCFI, 0x12051, sp+8)
	if f.Regs[arm.SlotFP] != stackBase+0x40 || !f.Has(arm.SlotFP) {
		t.Errorf("fp (r11) = %#x, want the saved value", f.Regs[arm.SlotFP])
	}
	if f.Regs[4] != 0x44 || !f.Has(4) {
		t.Errorf("callee-saved r4 not carried")
	}
	if f.Has(0) {
		t.Errorf("r0 must not be valid in the caller")
	}
}

func TestScan(t *testing.T) {
	u := armunwind.Unwinder{}
	env := newEnv(u)
	sp := env.Push(0x11500, 0x13011, 0)
	frames := unwindtest.Walk(u, env, contextFrame(t, u, env, 0x11010, uint32(sp), 0, 0, 0), 2)
	if len(frames) != 2 {
		t.Fatalf("got %d frames", len(frames))
	}
	check(t, frames[1], unwind.TrustScan, 0x13011, sp+8)
}

func TestIOSFramePointer(t *testing.T) {
	u := armunwind.Unwinder{IOS: true}
	env := newEnv(u)
	sp := env.Push(0, 0)
	r7 := env.Push(stackBase+0x10, 0x13021)
	env.Push(0, 0x5)
	frames := unwindtest.Walk(u, env, contextFrame(t, u, env, 0x11010, uint32(sp), 0x12041, uint32(r7), 0), 10)
	if len(frames) != 3 {
		t.Fatalf("got %d frames, want 3", len(frames))
	}
	check(t, frames[1], unwind.TrustFP, 0x12041, r7+8)
	check(t, frames[2], unwind.TrustFP, 0x13021, stackBase+0x18)
}
