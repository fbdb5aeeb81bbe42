package x86_test

import (
	"testing"

	"github.com/gobreakpad/gobreakpad/unwind"
	"github.com/gobreakpad/gobreakpad/unwind/unwindtest"
	x86unwind "github.com/gobreakpad/gobreakpad/unwind/x86"
)

// TestWildCall: a context eip outside every module and outside the stack
// takes its caller from the top of the stack, with esp past it.
func TestWildCall(t *testing.T) {
	env := newEnv()
	env.IsWindows = false
	sp := env.Push(0x402050, 0)
	fp := env.Push(stackBase+0x20, 0x403050, 0, 0)
	f := contextFrame(t, env, 0x7f001234, uint32(sp), uint32(fp))
	c := (x86unwind.Unwinder{}).Caller(env, []*unwind.Frame{f}, true)
	if c == nil {
		t.Fatal("no caller")
	}
	check(t, c, unwind.TrustScan, 0x402050, sp+4, fp)
}

// TestWildCallIntoData: a context eip inside a module but in memory the
// dump's map says is not executable takes its caller from the top of the
// stack too.
func TestWildCallIntoData(t *testing.T) {
	env := newEnv()
	env.IsWindows = false
	env.Maps = []unwindtest.Mapping{{Start: 0x400000, End: 0x408000, Exec: true}, {Start: 0x408000, End: 0x410000}}
	sp := env.Push(0x402050, 0)
	fp := env.Push(stackBase+0x20, 0x403050, 0, 0)
	f := contextFrame(t, env, 0x408040, uint32(sp), uint32(fp))
	c := (x86unwind.Unwinder{}).Caller(env, []*unwind.Frame{f}, true)
	if c == nil {
		t.Fatal("no caller")
	}
	check(t, c, unwind.TrustScan, 0x402050, sp+4, fp)
}
