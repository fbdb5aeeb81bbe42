package x86_test

import (
	"testing"

	"github.com/gobreakpad/gobreakpad/unwind"
	x86unwind "github.com/gobreakpad/gobreakpad/unwind/x86"
)

// TestFramePointerBelowSP: an ebp below esp is no frame record of a
// caller: the ebp chain yields to scanning, where Breakpad followed it to
// a caller whose esp is not above the callee's and ended the walk.
func TestFramePointerBelowSP(t *testing.T) {
	env := newEnv()
	env.IsWindows = false
	junk := env.Push(stackBase+24, 0x403050, 0, 0)
	sp := env.Push(0x402050, 0, 0, 0)
	c := (x86unwind.Unwinder{}).Caller(env, []*unwind.Frame{contextFrame(t, env, 0x401010, uint32(sp), uint32(junk))}, true)
	if c == nil {
		t.Fatal("no caller")
	}
	check(t, c, unwind.TrustScan, 0x402050, sp+4, uint64(junk))
}
