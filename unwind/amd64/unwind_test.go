package amd64_test

import (
	amd64unwind "github.com/gobreakpad/gobreakpad/unwind/amd64"
	"testing"

	"github.com/gobreakpad/gobreakpad/arch/amd64"
	"github.com/gobreakpad/gobreakpad/unwind"
	"github.com/gobreakpad/gobreakpad/unwind/unwindtest"
)

const (
	stackBase = 0x7fff0000
	modBase   = 0x400000
)

// contextFrame is a context frame at pc with the given rsp and rbp.
func contextFrame(t *testing.T, env *unwindtest.Env, pc, rsp, rbp uint64) *unwind.Frame {
	t.Helper()
	f, err := amd64unwind.Unwinder{}.ContextFrame(&amd64.Context{Rip: pc, Rsp: rsp, Rbp: rbp, Rbx: 0xb0b}, env)
	if err != nil {
		t.Fatal(err)
	}
	return f
}

func check(t *testing.T, f *unwind.Frame, trust unwind.Trust, rip, rsp uint64) {
	t.Helper()
	unwindtest.Check(t, amd64unwind.Unwinder{}, f, trust, rip, rsp)
}

func newEnv() *unwindtest.Env {
	env := unwindtest.New(amd64unwind.Unwinder{}, stackBase)
	env.Modules = []unwindtest.Module{unwindtest.ThreeFuncs(modBase)}
	return env
}

func TestCFI(t *testing.T) {
	env := newEnv()
	// callee at 0x401010: pushed rbx, so the return address is at rsp+8.
	env.CFIs = []unwindtest.CFIRange{{Start: 0x401000, Size: 0x100,
		Init:   ".cfa: $rsp 8 + .ra: .cfa -8 + ^",
		Deltas: map[uint64]string{0x401004: ".cfa: $rsp 16 + $rbx: .cfa -16 + ^"}}}
	sp := env.Push(0x5eed, 0x402050, 0, 0)
	frames := unwindtest.Walk(amd64unwind.Unwinder{}, env, contextFrame(t, env, 0x401010, sp, 0), 10)
	if len(frames) < 2 {
		t.Fatalf("got %d frames", len(frames))
	}
	f := frames[1]
	check(t, f, unwind.TrustCFI, 0x402050, sp+16)
	if !f.Has(amd64.RBX) || f.Regs[amd64.RBX] != 0x5eed {
		t.Errorf("rbx = %#x (valid %v), want 0x5eed from the CFI rule", f.Regs[amd64.RBX], f.Has(amd64.RBX))
	}
	if f.Has(amd64.RAX) {
		t.Errorf("rax is caller-saved and must not be valid in the caller")
	}
}

func TestCFIKeepsCalleeSaved(t *testing.T) {
	env := newEnv()
	env.CFIs = []unwindtest.CFIRange{{Start: 0x401000, Size: 0x100, Init: ".cfa: $rsp 8 + .ra: .cfa -8 + ^"}}
	sp := env.Push(0x402050, 0, 0)
	frames := unwindtest.Walk(amd64unwind.Unwinder{}, env, contextFrame(t, env, 0x401010, sp, 0x1234), 2)
	f := frames[1]
	check(t, f, unwind.TrustCFI, 0x402050, sp+8)
	if f.Regs[amd64.RBX] != 0xb0b || f.Regs[amd64.RBP] != 0x1234 || !f.Has(amd64.RBX) || !f.Has(amd64.RBP) {
		t.Errorf("callee-saved rbx/rbp not carried: %#x %#x", f.Regs[amd64.RBX], f.Regs[amd64.RBP])
	}
}

func TestFramePointer(t *testing.T) {
	env := newEnv()
	// [sp] locals, [fp0] -> fp1, ret 0x402050; [fp1] -> fp2(=0 end), ret 0x403050
	sp := env.Push(0, 0)
	fp0 := env.Push(stackBase+0x30, 0x402050, 0, 0)
	fp1 := env.Push(stackBase+0x50, 0x403050, 0, 0)
	_ = fp1
	env.Push(0, 0x10) // fp2: return address below 4096 ends the walk
	frames := unwindtest.Walk(amd64unwind.Unwinder{}, env, contextFrame(t, env, 0x401010, sp, fp0), 10)
	if len(frames) != 3 {
		t.Fatalf("got %d frames, want 3", len(frames))
	}
	check(t, frames[1], unwind.TrustFP, 0x402050, fp0+16)
	check(t, frames[2], unwind.TrustFP, 0x403050, stackBase+0x40)
	if frames[1].Valid != 1<<amd64.RIP|1<<amd64.RSP|1<<amd64.RBP {
		t.Errorf("frame-pointer frame validity %#x", frames[1].Valid)
	}
}

func TestScan(t *testing.T) {
	env := newEnv()
	// rbp is misaligned, so no frame pointer; the scan skips a value outside
	// any function (0x401500) and one outside any module.
	sp := env.Push(0x401500, 0x999999, 0x403010, 0)
	frames := unwindtest.Walk(amd64unwind.Unwinder{}, env, contextFrame(t, env, 0x401010, sp, 3), 2)
	if len(frames) != 2 {
		t.Fatalf("got %d frames", len(frames))
	}
	check(t, frames[1], unwind.TrustScan, 0x403010, sp+24)
	if frames[1].Has(amd64.RBP) {
		t.Errorf("rbp below the return address must not be carried")
	}
}

func TestWindowsLeaf(t *testing.T) {
	env := newEnv()
	env.IsWindows = true
	sp := env.Push(0x402050, 0x403050)
	frames := unwindtest.Walk(amd64unwind.Unwinder{}, env, contextFrame(t, env, 0x401010, sp, 0), 2)
	check(t, frames[1], unwind.TrustLeaf, 0x402050, sp+8)
}

func TestEndsWhenStackDoesNotGrow(t *testing.T) {
	env := newEnv()
	// A CFI rule that leaves rsp unchanged after the first frame.
	env.CFIs = []unwindtest.CFIRange{{Start: 0x402000, Size: 0x100, Init: ".cfa: $rsp .ra: $rsp ^"}}
	sp := env.Push(0x402050)
	first := contextFrame(t, env, 0x402050, sp, 0)
	frames := unwindtest.Walk(amd64unwind.Unwinder{}, env, first, 10)
	// First unwind may keep rsp (leaf), the second may not.
	if len(frames) != 2 {
		t.Fatalf("got %d frames, want 2", len(frames))
	}
}

// TestCallThroughNull: the caller of a call through a null pointer is found
// from the return address on top of the stack, not skipped by the rbp chain.
func TestCallThroughNull(t *testing.T) {
	env := newEnv()
	sp := env.Push(0x402050) // pushed by the bad call
	fp := env.Push(stackBase+0x18, 0x403050)
	env.Push(0, 0x10)
	frames := unwindtest.Walk(amd64unwind.Unwinder{}, env, contextFrame(t, env, 0, sp, fp), 10)
	if len(frames) != 3 {
		t.Fatalf("got %d frames, want 3", len(frames))
	}
	check(t, frames[1], unwind.TrustScan, 0x402050, sp+8)
	check(t, frames[2], unwind.TrustFP, 0x403050, fp+16)
}
