package amd64_test

import (
	"testing"

	"github.com/gobreakpad/gobreakpad/unwind"
	amd64unwind "github.com/gobreakpad/gobreakpad/unwind/amd64"
	"github.com/gobreakpad/gobreakpad/unwind/unwindtest"
)

// drapFrame lays out a realigned x86-64 frame (gcc's DRAP prologue:
// "lea r10,[rsp+8]; and rsp,-64; push [r10-8]; push rbp; mov rbp,rsp;
// push r10") with a gap of 24 bytes: it returns the frame's rsp and rbp
// and the caller's rsp (the CFA).
func drapFrame(env *unwindtest.Env) (sp, fp, cfa uint64) {
	sp = env.Push(0x5)                      // locals
	env.Push(stackBase + 8*8)               // saved r10: the caller's rsp
	fp = env.Push(stackBase+10*8, 0x402050) // frame record: caller rbp, return address copy
	env.Push(0xdead, 0xbeef, 0xf00d)        // alignment gap
	orig := env.Push(0x402050, 0, 0, 0, 0)  // the original return address, then the caller's frame
	return sp, fp, orig + 8
}

// TestRealignedFramePointer: the caller of a realigned frame found by its
// frame record has the stack pointer the prologue saved, not rbp+16.
func TestRealignedFramePointer(t *testing.T) {
	env := newEnv()
	sp, fp, cfa := drapFrame(env)
	if cfa != stackBase+8*8 {
		t.Fatalf("layout: cfa %#x", cfa)
	}
	frames := unwindtest.Walk(amd64unwind.Unwinder{}, env, contextFrame(t, env, 0x401010, sp, fp), 2)
	if len(frames) != 2 {
		t.Fatalf("got %d frames, want 2", len(frames))
	}
	check(t, frames[1], unwind.TrustFP, 0x402050, cfa)

	// A stale copy of the return address right above an ordinary frame
	// record (no gap: impossible for a realigned x86-64 frame) keeps
	// rbp+16.
	env = newEnv()
	sp = env.Push(0x5, stackBase+8+4*8)
	fp = env.Push(stackBase+6*8, 0x402050, 0x402050, 0, 0, 0)
	frames = unwindtest.Walk(amd64unwind.Unwinder{}, env, contextFrame(t, env, 0x401010, sp, fp), 2)
	check(t, frames[1], unwind.TrustFP, 0x402050, fp+16)
}

// TestRealignedStaleCFI: STACK CFI of a realigned function as Breakpad's
// dump_syms writes it (the CFA expression left out, the DRAP register's
// rule still in force) gives no return address; the frame record and the
// saved CFA give the caller.
func TestRealignedStaleCFI(t *testing.T) {
	env := newEnv()
	env.CFIs = []unwindtest.CFIRange{{Start: 0x401000, Size: 0x100,
		Init: ".cfa: $rsp 8 + .ra: .cfa -8 + ^", Deltas: map[uint64]string{0x401004: ".cfa: $rsp 16 +"}}}
	sp, fp, cfa := drapFrame(env)
	frames := unwindtest.Walk(amd64unwind.Unwinder{}, env, contextFrame(t, env, 0x401010, sp, fp), 2)
	if len(frames) != 2 {
		t.Fatalf("got %d frames, want 2", len(frames))
	}
	check(t, frames[1], unwind.TrustFP, 0x402050, cfa)
}
