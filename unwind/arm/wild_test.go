package arm_test

import (
	"testing"

	"github.com/gobreakpad/gobreakpad/arch/arm"
	"github.com/gobreakpad/gobreakpad/unwind"
	armunwind "github.com/gobreakpad/gobreakpad/unwind/arm"
	"github.com/gobreakpad/gobreakpad/unwind/unwindtest"
)

// TestWildCall: a context pc outside every module takes its caller from
// lr with sp unchanged, where Breakpad would scan.
func TestWildCall(t *testing.T) {
	u := armunwind.Unwinder{}
	env := newEnv(u)
	sp := env.Push(0x13050, 0)
	f := contextFrame(t, u, env, 0x7f001234, uint32(sp), 0x12054, 0, 0)
	c := u.Caller(env, []*unwind.Frame{f}, true)
	if c == nil {
		t.Fatal("no caller")
	}
	if c.Trust != unwind.TrustLeaf || c.Regs[arm.SlotPC] != 0x12054 || c.Regs[arm.SlotSP] != sp {
		t.Errorf("caller: trust %v pc %#x sp %#x", c.Trust, c.Regs[arm.SlotPC], c.Regs[arm.SlotSP])
	}
}

// TestWildCallIntoData: a context pc inside a module but in memory the
// dump's map says is not executable takes its caller from lr too.
func TestWildCallIntoData(t *testing.T) {
	u := armunwind.Unwinder{}
	env := newEnv(u)
	env.Maps = []unwindtest.Mapping{{Start: 0x10000, End: 0x18000, Exec: true}, {Start: 0x18000, End: 0x20000}}
	sp := env.Push(0x13050, 0)
	f := contextFrame(t, u, env, 0x18040, uint32(sp), 0x12054, 0, 0)
	c := u.Caller(env, []*unwind.Frame{f}, true)
	if c == nil {
		t.Fatal("no caller")
	}
	if c.Trust != unwind.TrustLeaf || c.Regs[arm.SlotPC] != 0x12054 || c.Regs[arm.SlotSP] != sp {
		t.Errorf("caller: trust %v pc %#x sp %#x", c.Trust, c.Regs[arm.SlotPC], c.Regs[arm.SlotSP])
	}
}
