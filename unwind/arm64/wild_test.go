package arm64_test

import (
	"testing"

	"github.com/gobreakpad/gobreakpad/arch/arm64"
	"github.com/gobreakpad/gobreakpad/unwind"
	arm64unwind "github.com/gobreakpad/gobreakpad/unwind/arm64"
	"github.com/gobreakpad/gobreakpad/unwind/unwindtest"
)

// TestWildCall: a context pc outside every module (a call through a wild
// pointer) takes its caller from lr with sp unchanged, instead of the
// frame pointer.
func TestWildCall(t *testing.T) {
	u := &arm64unwind.Unwinder{}
	env := newEnv(u)
	sp := env.Push(0, 0)
	fp := env.Push(stackBase+0x20, 0x403050, 0, 0)
	f := contextFrame(t, u, env, 0x7f0000001234, sp, fp, 0x402054)
	c := u.Caller(env, []*unwind.Frame{f}, true)
	if c == nil {
		t.Fatal("no caller")
	}
	if c.Trust != unwind.TrustLeaf || c.Regs[arm64.RegPC] != 0x402054 || c.Regs[arm64.RegSP] != sp ||
		c.Regs[arm64.RegFP] != fp || c.Has(arm64.RegLR) {
		t.Errorf("caller: trust %v pc %#x sp %#x fp %#x, lr valid %v", c.Trust, c.Regs[arm64.RegPC],
			c.Regs[arm64.RegSP], c.Regs[arm64.RegFP], c.Has(arm64.RegLR))
	}
}

// TestWildCallIntoData: a context pc inside a module but in memory the
// dump's map says is not executable takes its caller from lr too.
func TestWildCallIntoData(t *testing.T) {
	u := &arm64unwind.Unwinder{}
	env := newEnv(u)
	env.Maps = []unwindtest.Mapping{{Start: modBase, End: modBase + 0x8000, Exec: true}, {Start: modBase + 0x8000, End: modBase + modSize}}
	sp := env.Push(0, 0)
	fp := env.Push(stackBase+0x20, 0x403050, 0, 0)
	f := contextFrame(t, u, env, modBase+0x8040, sp, fp, 0x402054)
	c := u.Caller(env, []*unwind.Frame{f}, true)
	if c == nil {
		t.Fatal("no caller")
	}
	if c.Trust != unwind.TrustLeaf || c.Regs[arm64.RegPC] != 0x402054 || c.Regs[arm64.RegSP] != sp || c.Regs[arm64.RegFP] != fp {
		t.Errorf("caller: trust %v pc %#x sp %#x fp %#x", c.Trust, c.Regs[arm64.RegPC], c.Regs[arm64.RegSP], c.Regs[arm64.RegFP])
	}
}

// TestWildCallFramePointers: without CFI, the function that called through
// the wild pointer (found from lr) has its own return address in its frame
// record at fp: the frame-pointer steps after it give each caller once
// (Breakpad's step would take the caller's pc from the stale lr and show
// the calling function twice).
func TestWildCallFramePointers(t *testing.T) {
	u := &arm64unwind.Unwinder{}
	env := newEnv(u)
	// Frame records, innermost first: the calling function's (at fp), its
	// caller's, and the outermost's (whose caller, with fp 0, ends the walk
	// in Breakpad's frame-pointer step).
	rec0 := env.Push(stackBase+0x20, 0x403050, 0, 0)
	rec1 := env.Push(stackBase+0x40, 0x401050, 0, 0)
	rec2 := env.Push(0, 0x402080, 0, 0)
	if rec1 != stackBase+0x20 || rec2 != stackBase+0x40 {
		t.Fatalf("records at %#x %#x", rec1, rec2)
	}
	frames := unwindtest.Walk(u, env, contextFrame(t, u, env, 0, rec0, rec0, 0x402054), 5)
	var pcs []uint64
	for _, f := range frames[1:] {
		pcs = append(pcs, f.Regs[arm64.RegPC])
	}
	want := []uint64{0x402054, 0x403050, 0x401050}
	if len(pcs) != len(want) {
		t.Fatalf("pcs %#x; want %#x", pcs, want)
	}
	for i := range want {
		if pcs[i] != want[i] {
			t.Fatalf("pcs %#x; want %#x", pcs, want)
		}
	}
	check(t, frames[2], unwind.TrustFP, 0x403050, rec1+16)
}
