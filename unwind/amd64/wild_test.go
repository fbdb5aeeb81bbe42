package amd64_test

import (
	"testing"

	"github.com/gobreakpad/gobreakpad/unwind"
	amd64unwind "github.com/gobreakpad/gobreakpad/unwind/amd64"
	"github.com/gobreakpad/gobreakpad/unwind/unwindtest"
)

// TestWildCall: a context pc outside every module and outside the stack
// (a call through a wild pointer) takes its caller from the top of the
// stack, with sp past it, instead of the frame pointer (which would skip
// the calling function).
func TestWildCall(t *testing.T) {
	env := newEnv()
	sp := env.Push(0x402050, 0)
	fp := env.Push(stackBase+0x20, 0x403050, 0, 0)
	f := contextFrame(t, env, 0x7f0000001234, sp, fp)
	c := (amd64unwind.Unwinder{}).Caller(env, []*unwind.Frame{f}, true)
	if c == nil {
		t.Fatal("no caller")
	}
	check(t, c, unwind.TrustScan, 0x402050, sp+8)
}

// TestWildCallIntoData: a context pc inside a module but in memory the
// dump's map says is not executable (a call through a pointer to the
// module's data) is wild too; a pc the map says is executable keeps
// Breakpad's strategies (here the frame pointer).
func TestWildCallIntoData(t *testing.T) {
	for _, exec := range []bool{false, true} {
		env := newEnv()
		env.Maps = []unwindtest.Mapping{{Start: 0x400000, End: 0x408000, Exec: true}, {Start: 0x408000, End: 0x410000, Exec: exec}}
		sp := env.Push(0x402050, 0)
		fp := env.Push(stackBase+0x20, 0x403050, 0, 0)
		f := contextFrame(t, env, 0x408040, sp, fp)
		c := (amd64unwind.Unwinder{}).Caller(env, []*unwind.Frame{f}, true)
		if c == nil {
			t.Fatal("no caller")
		}
		if exec {
			check(t, c, unwind.TrustFP, 0x403050, fp+16)
		} else {
			check(t, c, unwind.TrustScan, 0x402050, sp+8)
		}
	}
}
