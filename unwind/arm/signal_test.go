package arm_test

import (
	"fmt"
	"testing"

	"github.com/gobreakpad/gobreakpad/arch/arm"
	"github.com/gobreakpad/gobreakpad/unwind"
	armunwind "github.com/gobreakpad/gobreakpad/unwind/arm"
	"github.com/gobreakpad/gobreakpad/unwind/unwindtest"
)

const rtTramp, thumbTramp = 0xffff0500, 0xffff0520

// signalCase is a leaf handler (context at 0x11010) whose lr is a
// sigreturn trampoline: rt_sigreturn in ARM code (siginfo, then the
// ucontext) or sigreturn in Thumb code (lr with its Thumb bit; the
// ucontext at the stack pointer), the frame laid out as the kernel does
// (si_signo 11, arm_cpsr in user mode); the trampolines' code is not in
// env.
type signalCase struct {
	env         *unwindtest.Env
	ctx         *unwind.Frame
	sp, lr, isp uint64
	uc          uint64 // the ucontext
	want        map[int]uint64
}

func newSignalCase(t *testing.T, rt bool) *signalCase {
	u := armunwind.Unwinder{}
	env := newEnv(u)
	env.Modules = append(env.Modules, unwindtest.Module{Base: 0xffff0000, Size: 0x1000})
	env.CFIs = []unwindtest.CFIRange{
		{Start: 0x11000, Size: 0x100, Init: ".cfa: sp 0 + .ra: lr"},
		{Start: 0x12010, Size: 0x10, Init: ".cfa: sp 0 + .ra: lr"},
	}
	c := &signalCase{env: env, lr: thumbTramp | 1, sp: env.Addr(0), want: map[int]uint64{}}
	if rt {
		c.lr = rtTramp
		env.Push(11)                    // si_signo
		env.Push(make([]uint64, 31)...) // the rest of siginfo
	}
	c.uc = env.Push(0, 0, 0, 0, 0) // uc_flags, uc_link, uc_stack
	env.Push(14, 0, 0)             // trap_no, error_code, oldmask
	c.isp = env.Addr(len(env.Stack)/4 + 20)
	for _, r := range []int{0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, arm.SlotFP, arm.SlotR12, arm.SlotSP, arm.SlotLR, arm.SlotPC} {
		v := uint64(0x100 + r)
		switch r {
		case arm.SlotSP:
			v = c.isp
		case arm.SlotPC:
			v = 0x12010
		case arm.SlotLR:
			v = 0x13020
		}
		c.want[r] = v
		env.Push(v)
	}
	env.Push(0x60000010)           // arm_cpsr: user mode
	env.Push(make([]uint64, 5)...) // fault_address, uc_sigmask, ...
	c.ctx = contextFrame(t, u, env, 0x11010, uint32(c.sp), uint32(c.lr), 0, 0)
	return c
}

func (c *signalCase) check(t *testing.T, label string) {
	t.Helper()
	u := armunwind.Unwinder{}
	frames := unwindtest.Walk(u, c.env, c.ctx, 10)
	if len(frames) < 4 {
		t.Fatalf("%s%d frames, want 4", label, len(frames))
	}
	check(t, frames[1], unwind.TrustCFI, c.lr, c.sp)
	unwindtest.CheckSignal(t, u, label, frames, c.want)
	check(t, frames[3], unwind.TrustCFI, 0x13020, c.isp)
}

// TestSignalFrame: the trampolines recognised by their code bytes, and
// from the stack (no code given).
func TestSignalFrame(t *testing.T) {
	for _, code := range []bool{true, false} {
		for _, rt := range []bool{false, true} {
			c := newSignalCase(t, rt)
			if code {
				c.env.Code = map[uint64][]byte{
					rtTramp:    {0xad, 0x70, 0xa0, 0xe3, 0x00, 0x00, 0x00, 0xef},
					thumbTramp: {0x77, 0x27, 0x00, 0xdf},
				}
			}
			c.check(t, fmt.Sprintf("code %v rt %v: ", code, rt))
		}
	}
}

// TestSignalFrameFromStackRejected: a frame that fails one of the checks is
// not taken for a signal frame.
func TestSignalFrameFromStackRejected(t *testing.T) {
	for _, tc := range []struct {
		name string
		rt   bool
		off  uint64 // from the ucontext
		v    uint64
	}{
		{"uc_link set", false, 4, 0x7fff0000},
		{"uc_flags junk", false, 0, 0x11010},
		{"cpsr in svc mode", false, 20 + 76, 0x60000013},
		{"cpsr with irqs masked", true, 20 + 76, 0x600000d0},
		{"pc in no module", false, 20 + 72, 0x9000000},
		{"sp below the frame", true, 20 + 64, 0},
	} {
		c := newSignalCase(t, tc.rt)
		v := tc.v
		if tc.name == "sp below the frame" {
			v = c.uc
		}
		c.env.Put(c.uc+tc.off, v)
		for _, f := range unwindtest.Walk(armunwind.Unwinder{}, c.env, c.ctx, 10) {
			if f.Trust == unwind.TrustSignal || f.Trampoline {
				t.Errorf("%s: signal frame found at %#x", tc.name, f.Regs[arm.SlotPC])
			}
		}
	}
	c := newSignalCase(t, true)
	c.env.Put(c.sp, 0) // no signal number in the rt frame's siginfo
	for _, f := range unwindtest.Walk(armunwind.Unwinder{}, c.env, c.ctx, 10) {
		if f.Trust == unwind.TrustSignal {
			t.Errorf("rt frame without a signal number: signal frame found at %#x", f.Regs[arm.SlotPC])
		}
	}
}
