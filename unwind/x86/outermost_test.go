package x86_test

import (
	"testing"

	"github.com/gobreakpad/gobreakpad/unwind"
	"github.com/gobreakpad/gobreakpad/unwind/unwindtest"
	x86unwind "github.com/gobreakpad/gobreakpad/unwind/x86"
)

// TestUndefinedReturnAddress: CFI marking .ra undefined (_start, clone)
// ends the walk; neither the ebp chain nor a scan goes on.
func TestUndefinedReturnAddress(t *testing.T) {
	env := newEnv()
	env.IsWindows = false
	env.CFIs = []unwindtest.CFIRange{{Start: 0x401000, Size: 0x100, Init: ".cfa: $esp 4 + .ra: .undef"}}
	sp := env.Push(0x402050, 0x402060)
	fp := env.Push(stackBase+0x20, 0x403050, 0, 0)
	f := contextFrame(t, env, 0x401010, uint32(sp), uint32(fp))
	if c := (x86unwind.Unwinder{}).Caller(env, []*unwind.Frame{f}, true); c != nil {
		t.Errorf("caller at %#x; want none", c.Regs[0])
	}
}
