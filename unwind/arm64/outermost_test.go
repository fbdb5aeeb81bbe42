package arm64_test

import (
	"testing"

	"github.com/gobreakpad/gobreakpad/unwind"
	arm64unwind "github.com/gobreakpad/gobreakpad/unwind/arm64"
	"github.com/gobreakpad/gobreakpad/unwind/unwindtest"
)

// TestUndefinedReturnAddress: CFI marking .ra undefined (_start, thread
// start routines) ends the walk; neither fp, lr nor a scan goes on.
func TestUndefinedReturnAddress(t *testing.T) {
	u := &arm64unwind.Unwinder{}
	env := newEnv(u)
	env.CFIs = []unwindtest.CFIRange{{Start: 0x401000, Size: 0x100, Init: ".cfa: sp 0 + .ra: x30",
		Deltas: map[uint64]string{0x401004: ".ra: .undef"}}}
	sp := env.Push(0x402050, 0x402060)
	fp := env.Push(stackBase+0x20, 0x403050, 0, 0)
	f := contextFrame(t, u, env, 0x401010, sp, fp, 0x402040)
	if c := u.Caller(env, []*unwind.Frame{f}, true); c != nil {
		t.Errorf("caller at %#x; want none", c.Regs[32])
	}
}
