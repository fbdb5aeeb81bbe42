package amd64_test

import (
	"testing"

	"github.com/gobreakpad/gobreakpad/unwind"
	amd64unwind "github.com/gobreakpad/gobreakpad/unwind/amd64"
)

// TestFramePointerBelowSP: an rbp below rsp is no frame record of a
// caller (the stack grows down): the frame-pointer rule yields to
// scanning, where Breakpad followed it to a caller whose rsp is not above
// the callee's and ended the walk.
func TestFramePointerBelowSP(t *testing.T) {
	env := newEnv()
	junk := env.Push(stackBase+48, 0x403050, 0, 0) // a stale record below sp
	sp := env.Push(0x402050, 0, 0, 0)
	c := (amd64unwind.Unwinder{}).Caller(env, []*unwind.Frame{contextFrame(t, env, 0x401010, sp, junk)}, true)
	if c == nil {
		t.Fatal("no caller")
	}
	check(t, c, unwind.TrustScan, 0x402050, sp+8)
}
