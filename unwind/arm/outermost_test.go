package arm_test

import (
	"testing"

	"github.com/gobreakpad/gobreakpad/unwind"
	armunwind "github.com/gobreakpad/gobreakpad/unwind/arm"
	"github.com/gobreakpad/gobreakpad/unwind/unwindtest"
)

// TestUndefinedReturnAddress: CFI marking .ra undefined (_start, clone)
// ends the walk; no scan goes on.
func TestUndefinedReturnAddress(t *testing.T) {
	u := armunwind.Unwinder{}
	env := newEnv(u)
	env.CFIs = []unwindtest.CFIRange{{Start: 0x11000, Size: 0x100, Init: ".cfa: sp 0 + .ra: .undef"}}
	sp := env.Push(0x12050, 0x12060, 0x13050)
	f := contextFrame(t, u, env, 0x11010, uint32(sp), 0x12040, 0, 0)
	if c := u.Caller(env, []*unwind.Frame{f}, true); c != nil {
		t.Errorf("caller at %#x; want none", c.Regs[15])
	}
}
