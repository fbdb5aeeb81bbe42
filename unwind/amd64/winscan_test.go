package amd64_test

import (
	"testing"

	"github.com/gobreakpad/gobreakpad/unwind"
	amd64unwind "github.com/gobreakpad/gobreakpad/unwind/amd64"
	"github.com/gobreakpad/gobreakpad/unwind/unwindtest"
)

// TestWindowsScanChecksCandidates: on Windows, a scanned candidate in a
// module with unwind rules is taken only when its function's rules give a
// plausible caller; one whose rules read junk is passed over (issue 28).
// Candidates in a module without rules are taken as Breakpad takes them,
// and other systems' scans are Breakpad's.
func TestWindowsScanChecksCandidates(t *testing.T) {
	const sysDLL = 0x500000 // a module without symbols, where the context is
	setup := func(windows bool, first uint64) (*unwindtest.Env, uint64) {
		env := newEnv()
		env.IsWindows = windows
		env.Modules = append(env.Modules, unwindtest.Module{Base: sysDLL, Size: 0x1000})
		env.CFIs = []unwindtest.CFIRange{
			{Start: 0x402000, Size: 0x100, Init: ".cfa: $rsp 16 + .ra: .cfa -8 + ^"},
			{Start: 0x403000, Size: 0x100, Init: ".cfa: $rsp 8 + .ra: .cfa -8 + ^"},
		}
		// junk, junk, a stale candidate (its rules read the return
		// address two words up: junk), junk, junk, the true return
		// address into 0x403000's function, whose caller's is right above.
		sp := env.Push(0x11, 0x22, first, 0x33, 0x44, 0x403050, 0x401050, 0)
		return env, sp
	}
	walk := func(env *unwindtest.Env, sp uint64) *unwind.Frame {
		f := contextFrame(t, env, sysDLL+0x100, sp, 1) // rbp 1: no frame chain
		c := (amd64unwind.Unwinder{}).Caller(env, []*unwind.Frame{f}, true)
		if c == nil {
			t.Fatal("no caller")
		}
		return c
	}
	env, sp := setup(true, 0x402050)
	check(t, walk(env, sp), unwind.TrustScan, 0x403050, sp+6*8)

	// Its caller by the rules: 0x401050, at the next word.
	env, sp = setup(true, 0x402050)
	frames := unwindtest.Walk(amd64unwind.Unwinder{}, env, contextFrame(t, env, sysDLL+0x100, sp, 1), 3)
	if len(frames) < 3 {
		t.Fatalf("%d frames", len(frames))
	}
	check(t, frames[2], unwind.TrustCFI, 0x401050, sp+7*8)

	// No rules for the candidate's module: taken, as Breakpad takes it.
	env, sp = setup(true, sysDLL+0x200)
	check(t, walk(env, sp), unwind.TrustScan, sysDLL+0x200, sp+3*8)

	// In a module with rules but no rule at it (0x401000's function: a
	// leaf on Windows x64): the return address is at its stack pointer,
	// 0x33, junk: passed over.
	env, sp = setup(true, 0x401050)
	check(t, walk(env, sp), unwind.TrustScan, 0x403050, sp+6*8)

	// Not Windows: Breakpad's scan.
	env, sp = setup(false, 0x402050)
	check(t, walk(env, sp), unwind.TrustScan, 0x402050, sp+3*8)
}
