package mips_test

import (
	"testing"

	"github.com/gobreakpad/gobreakpad/arch/mips"
	"github.com/gobreakpad/gobreakpad/unwind"
	mipsunwind "github.com/gobreakpad/gobreakpad/unwind/mips"
	"github.com/gobreakpad/gobreakpad/unwind/unwindtest"
)

const (
	stackBase = 0x7f900000
	modBase   = 0x400000
)

func newEnv(u mipsunwind.Unwinder) *unwindtest.Env {
	env := unwindtest.New(u, stackBase)
	env.Modules = []unwindtest.Module{unwindtest.ThreeFuncs(modBase)}
	return env
}

func contextFrame(t *testing.T, u mipsunwind.Unwinder, env *unwindtest.Env, pc, sp, fp, ra uint64) *unwind.Frame {
	t.Helper()
	c := &mips.Context{ContextFlags: mips.ContextMIPS | mips.ContextFull, EPC: pc}
	if u.Is64 {
		c.ContextFlags = mips.ContextMIPS64 | mips.ContextFull
	}
	c.Iregs[mips.IregSP], c.Iregs[mips.IregFP], c.Iregs[mips.IregRA] = sp, fp, ra
	c.Iregs[mips.IregGP] = 0x4480f0
	c.Iregs[mips.IregS0+1] = 0x1717
	c.Iregs[4] = 0xa0a0 // $a0
	if got := mipsunwind.NewUnwinder(c); got != u {
		t.Fatalf("NewUnwinder = %+v, want %+v", got, u)
	}
	f, err := u.ContextFrame(c, env)
	if err != nil {
		t.Fatal(err)
	}
	return f
}

func check(t *testing.T, f *unwind.Frame, trust unwind.Trust, pc, sp uint64) {
	t.Helper()
	unwindtest.Check(t, mipsunwind.Unwinder{}, f, trust, pc, sp)
}

func TestContextFrame(t *testing.T) {
	u := mipsunwind.Unwinder{}
	env := newEnv(u)
	f := contextFrame(t, u, env, 0x401010, stackBase, 0, 0x402008)
	check(t, f, unwind.TrustContext, 0x401010, stackBase)
	if f.Valid != 1<<mips.NumPrinted-1 {
		t.Errorf("valid %#x: want the printed registers", f.Valid)
	}
	if f.Regs[mips.Slot(4)] != 0xa0a0 || f.Has(mips.Slot(4)) {
		t.Errorf("$a0 must be stored but not known")
	}
	if _, err := u.ContextFrame(&struct{}{}, env); err == nil {
		t.Error("foreign context accepted")
	}
}

// CFI on mips: pc is ra less 8, s-registers, sp and fp carried, gp not (o32).
func TestCFI32(t *testing.T) {
	u := mipsunwind.Unwinder{}
	env := newEnv(u)
	env.CFIs = []unwindtest.CFIRange{{Start: 0x401000, Size: 0x100,
		Init: ".cfa: $sp 0 + .ra: $ra", Deltas: map[uint64]string{0x401008: ".cfa: $sp 16 + .ra: .cfa -4 + ^ $s0: .cfa -8 + ^ $a0: $a0 1 +"}}}
	sp := env.Push(0, 0, 0x5050, 0x402010)
	frames := unwindtest.Walk(u, env, contextFrame(t, u, env, 0x401010, sp, sp+64, 0), 2)
	if len(frames) != 2 {
		t.Fatalf("got %d frames", len(frames))
	}
	f := frames[1]
	check(t, f, unwind.TrustCFI, 0x402008, sp+16)
	if f.Regs[mips.RegRA] != 0x402010 || !f.Has(mips.RegRA) {
		t.Errorf("ra = %#x", f.Regs[mips.RegRA])
	}
	if f.Regs[mips.RegS0] != 0x5050 || f.Regs[mips.RegS0+1] != 0x1717 || f.Regs[mips.RegFP] != sp+64 || !f.Has(mips.RegFP) {
		t.Errorf("s0 %#x s1 %#x fp %#x", f.Regs[mips.RegS0], f.Regs[mips.RegS0+1], f.Regs[mips.RegFP])
	}
	if f.Has(mips.RegGP) {
		t.Error("gp is not callee-saved on mips")
	}
	if a0 := mips.Slot(4); f.Regs[a0] != 0xa0a1 || f.Has(a0) {
		t.Errorf("$a0 = %#x (known %v): recovered but never known", f.Regs[a0], f.Has(a0))
	}
}

// CFI on mips64: pc is ra less 16, gp carried.
func TestCFI64(t *testing.T) {
	u := mipsunwind.Unwinder{Is64: true}
	env := newEnv(u)
	env.CFIs = []unwindtest.CFIRange{{Start: 0x401000, Size: 0x100, Init: ".cfa: $sp 16 + .ra: .cfa -8 + ^"}}
	sp := env.Push(0, 0x402020)
	frames := unwindtest.Walk(u, env, contextFrame(t, u, env, 0x401010, sp, 0, 0), 2)
	if len(frames) != 2 {
		t.Fatalf("got %d frames", len(frames))
	}
	f := frames[1]
	check(t, f, unwind.TrustCFI, 0x402010, sp+16)
	if f.Regs[mips.RegGP] != 0x4480f0 || !f.Has(mips.RegGP) {
		t.Error("gp is callee-saved on mips64")
	}
}

// Scanning: the first caller may be anywhere in a kilobyte of stack; a
// mips caller's scan skips its four argument words, and a candidate whose
// saved fp is a kilobyte or more above it is passed over.
func TestScan(t *testing.T) {
	u := mipsunwind.Unwinder{}
	env := newEnv(u)
	sp := env.Push(0, 0, 0x7f9000a0, 0x401050, // frame 0: fp, then ra
		0x402060, 0, 0, 0, // argument words of frame 1: skipped
		0x7fa00000, 0x402070, // fp far above: passed over
		0x7f900100, 0x403080) // the caller of frame 1
	frames := unwindtest.Walk(u, env, contextFrame(t, u, env, 0x401010, sp, 0, 0), 3)
	if len(frames) != 3 {
		t.Fatalf("got %d frames", len(frames))
	}
	check(t, frames[1], unwind.TrustScan, 0x401048, env.Addr(4))
	if f := frames[1]; f.Regs[mips.RegFP] != 0x7f9000a0 || f.Regs[mips.RegRA] != 0x401050 || f.Valid != 1<<mips.RegPC|1<<mips.RegSP|1<<mips.RegFP|1<<mips.RegRA {
		t.Errorf("fp %#x ra %#x valid %#x", f.Regs[mips.RegFP], f.Regs[mips.RegRA], f.Valid)
	}
	if f := frames[1]; f.Regs[mips.RegS0+1] != 0x1717 {
		t.Error("a scanned frame keeps the callee's register values")
	}
	check(t, frames[2], unwind.TrustScan, 0x403078, env.Addr(12))
}

// The walk ends when the caller's pc is in the first page.
func TestTerminate(t *testing.T) {
	u := mipsunwind.Unwinder{Is64: true}
	env := newEnv(u)
	env.CFIs = []unwindtest.CFIRange{{Start: 0x401000, Size: 0x100, Init: ".cfa: $sp 16 + .ra: .cfa -8 + ^"}}
	sp := env.Push(0, 0x10)
	if frames := unwindtest.Walk(u, env, contextFrame(t, u, env, 0x401010, sp, 0, 0), 2); len(frames) != 1 {
		t.Errorf("got %d frames", len(frames))
	}
}
