package amd64_test

import (
	"testing"

	"github.com/gobreakpad/gobreakpad/unwind"
	amd64unwind "github.com/gobreakpad/gobreakpad/unwind/amd64"
	"github.com/gobreakpad/gobreakpad/unwind/unwindtest"
)

// TestUndefinedReturnAddress: CFI marking .ra undefined (_start, clone)
// ends the walk; neither the frame pointer nor a scan goes on.
func TestUndefinedReturnAddress(t *testing.T) {
	env := newEnv()
	env.CFIs = []unwindtest.CFIRange{{Start: 0x401000, Size: 0x100, Init: ".cfa: $rsp 8 + .ra: .undef"}}
	sp := env.Push(0x402050, 0x402060)
	fp := env.Push(stackBase+0x20, 0x403050, 0, 0)
	f := contextFrame(t, env, 0x401010, sp, fp)
	if c := (amd64unwind.Unwinder{}).Caller(env, []*unwind.Frame{f}, true); c != nil {
		t.Errorf("caller at %#x; want none", c.Regs[0])
	}
}
