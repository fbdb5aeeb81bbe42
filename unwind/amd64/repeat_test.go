package amd64_test

import (
	"testing"

	"github.com/gobreakpad/gobreakpad/arch/amd64"
	"github.com/gobreakpad/gobreakpad/unwind"
	amd64unwind "github.com/gobreakpad/gobreakpad/unwind/amd64"
	"github.com/gobreakpad/gobreakpad/unwind/unwindtest"
)

// dyldTop lays out the top of a macOS main thread's stack as dyld 421-852
// (macOS 10.12 to 11) leaves it (simple-crashpad.dmp): the context frame
// in 0x401010 with its frame record, main (0x402050) called by libdyld's
// start (0x403050), whose frame pointer is dyld's end-of-frames marker (a
// 0 word), and between them, at start's rsp, __dyld_start's startGlue
// variable: a copy of start's return address. above are words pushed
// after the marker. It returns the context frame.
func dyldTop(t *testing.T, above ...uint64) (*unwindtest.Env, *unwind.Frame) {
	env := newEnv()
	sp := env.Push(0x5eed)
	rec1 := env.Push(0, 0x402050)
	rec2 := env.Push(0, 0x403050)
	env.Push(0x403050) // startGlue, at start's rsp
	marker := env.Push(0)
	env.Push(above...)
	env.Put(rec1, rec2)
	env.Put(rec2, marker)
	return env, contextFrame(t, env, 0x401010, sp, rec1)
}

// TestRepeatedReturnAddress: a scan candidate at the stack pointer of a
// frame whose pc is a return address, equal to that pc, is a copy (the
// function's own return address lies a word above at least: x86-64 calls
// are 16-aligned and its entry rsp is 8 modulo 16), not the frame's
// caller: the scan goes on past it as from the copy's frame. Breakpad and
// rust-minidump show one frame more, the copy, on every macOS 10.12-11
// main thread laid out as simple-crashpad.dmp's.
func TestRepeatedReturnAddress(t *testing.T) {
	u := amd64unwind.Unwinder{}
	env, f := dyldTop(t)
	frames := unwindtest.Walk(u, env, f, 10)
	if len(frames) != 3 {
		t.Fatalf("%d frames, want 3 (the copy of start's return address is no frame)", len(frames))
	}
	check(t, frames[2], unwind.TrustFP, 0x403050, frames[1].Regs[amd64.RSP]+16)

	// A return address further up is found as the scan from the copy's
	// frame would find it.
	env, f = dyldTop(t, 0x401050)
	frames = unwindtest.Walk(u, env, f, 10)
	if len(frames) != 4 {
		t.Fatalf("%d frames, want 4", len(frames))
	}
	check(t, frames[3], unwind.TrustScan, 0x401050, frames[2].Regs[amd64.RSP]+24)

	// The context frame's rsp may hold its return address whatever its
	// pc: the rule is for frames whose pc is a return address.
	env = newEnv()
	sp := env.Push(0x401010, 0, 0)
	c := u.Caller(env, []*unwind.Frame{contextFrame(t, env, 0x401010, sp, 0)}, true)
	if c == nil {
		t.Fatal("context frame: no caller")
	}
	check(t, c, unwind.TrustScan, 0x401010, sp+8)
}

// TestRepeatedReturnAddressAbove: a copy a word above the frame's rsp
// may be the return address of a function that pushed one word and
// called itself at the same call site (recursion): it is taken.
func TestRepeatedReturnAddressAbove(t *testing.T) {
	env := newEnv()
	sp := env.Push(0x5eed)
	rec := env.Push(0, 0x402050)
	env.Push(0x1234, 0x402050)
	env.Put(rec, 0) // the chain ends: the caller of 0x402050 is scanned
	frames := unwindtest.Walk(amd64unwind.Unwinder{}, env, contextFrame(t, env, 0x401010, sp, rec), 10)
	if len(frames) < 3 {
		t.Fatalf("%d frames, want 3", len(frames))
	}
	check(t, frames[2], unwind.TrustScan, 0x402050, rec+32)
}
