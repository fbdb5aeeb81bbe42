package arm64_test

import (
	"testing"

	"github.com/gobreakpad/gobreakpad/unwind"
	arm64unwind "github.com/gobreakpad/gobreakpad/unwind/arm64"
)

// TestFramePointerBelowSP: an fp below sp is no frame record of a
// caller: the frame-pointer rule yields to scanning, where Breakpad
// followed it to a caller whose sp is not above the callee's and ended
// the walk.
func TestFramePointerBelowSP(t *testing.T) {
	u := &arm64unwind.Unwinder{}
	env := newEnv(u)
	junk := env.Push(stackBase+48, 0x403050, 0, 0)
	sp := env.Push(0x402054, 0, 0, 0)
	c := u.Caller(env, []*unwind.Frame{contextFrame(t, u, env, 0x401010, sp, junk, 0x402054)}, true)
	if c == nil {
		t.Fatal("no caller")
	}
	check(t, c, unwind.TrustScan, 0x402054, sp+8)
}
