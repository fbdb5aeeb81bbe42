package x86_test

import (
	"testing"

	"github.com/gobreakpad/gobreakpad/unwind"
	"github.com/gobreakpad/gobreakpad/unwind/unwindtest"
	x86unwind "github.com/gobreakpad/gobreakpad/unwind/x86"
)

// TestRealignedMain: gcc's i386 main realigns esp, copies the return
// address above its frame record and pushes the caller's esp (ecx); the
// caller's esp is that saved value, not ebp+8.
func TestRealignedMain(t *testing.T) {
	env := newEnv()
	// main's frame, from its esp up: saved ecx, frame record (caller ebp,
	// copied return address), 8 bytes of alignment padding, then the
	// caller's stack: the original return address and above.
	const cfa = stackBase + 32
	sp := env.Push(0x5, 0) // main's locals
	env.Push(cfa)          // saved ecx: the caller's esp
	fp := env.Push(0x777, 0x402050, 0xdead, 0xbeef)
	if orig := env.Push(0x402050); orig+4 != cfa { // the original return address
		t.Fatalf("layout: original return address at %#x", orig)
	}
	env.Push(0, 0, 0, 0) // the caller's frame
	frames := unwindtest.Walk(x86unwind.Unwinder{}, env, contextFrame(t, env, 0x401010, uint32(sp), uint32(fp)), 2)
	if len(frames) != 2 {
		t.Fatalf("got %d frames, want 2", len(frames))
	}
	check(t, frames[1], unwind.TrustFP, 0x402050, cfa, 0x777)

	// Without the original return address at the saved esp, the frame
	// record alone decides.
	env = newEnv()
	sp = env.Push(0x5, 0, cfa)
	fp = env.Push(0x777, 0x402050, 0xdead, 0xbeef, 0x402051, 0, 0, 0, 0)
	frames = unwindtest.Walk(x86unwind.Unwinder{}, env, contextFrame(t, env, 0x401010, uint32(sp), uint32(fp)), 2)
	check(t, frames[1], unwind.TrustFP, 0x402050, fp+8, 0x777)
}

// TestRealignedStaleCFI: STACK CFI of a realigned function as Breakpad's
// dump_syms writes it (the CFA expression left out: a rule of the
// epilogue, .cfa: $esp 4 +, still in force) gives no return address; the
// frame record and the saved CFA give the caller.
func TestRealignedStaleCFI(t *testing.T) {
	env := newEnv()
	env.IsWindows = false
	env.CFIs = []unwindtest.CFIRange{{Start: 0x401000, Size: 0x100,
		Init: ".cfa: $esp 4 + .ra: .cfa -4 + ^"}}
	const cfa = stackBase + 32
	sp := env.Push(0x5, 0) // main's locals: the word at esp is no return address
	env.Push(cfa)          // saved ecx: the caller's esp
	fp := env.Push(0x777, 0x402050, 0xdead, 0xbeef)
	env.Push(0x402050, 0, 0, 0, 0)
	frames := unwindtest.Walk(x86unwind.Unwinder{}, env, contextFrame(t, env, 0x401010, uint32(sp), uint32(fp)), 2)
	if len(frames) != 2 {
		t.Fatalf("got %d frames, want 2", len(frames))
	}
	check(t, frames[1], unwind.TrustFP, 0x402050, cfa, 0x777)
}
