package amd64_test

import (
	"testing"

	"github.com/gobreakpad/gobreakpad/unwind"
	amd64unwind "github.com/gobreakpad/gobreakpad/unwind/amd64"
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
