package arm_test

import (
	"fmt"
	"testing"

	"github.com/gobreakpad/gobreakpad/arch/arm"
	"github.com/gobreakpad/gobreakpad/unwind"
	armunwind "github.com/gobreakpad/gobreakpad/unwind/arm"
	"github.com/gobreakpad/gobreakpad/unwind/unwindtest"
)

// TestSignalFrame: a leaf handler (context at 0x11010) whose lr is a
// sigreturn trampoline: rt_sigreturn in ARM code (siginfo, then the
// ucontext) or sigreturn in Thumb code (lr with its Thumb bit; the
// ucontext at the stack pointer).
func TestSignalFrame(t *testing.T) {
	const rtTramp, thumbTramp = 0xffff0500, 0xffff0520
	for _, rt := range []bool{false, true} {
		u := armunwind.Unwinder{}
		env := newEnv(u)
		env.Modules = append(env.Modules, unwindtest.Module{Base: 0xffff0000, Size: 0x1000})
		env.Code = map[uint64][]byte{
			rtTramp:    {0xad, 0x70, 0xa0, 0xe3, 0x00, 0x00, 0x00, 0xef},
			thumbTramp: {0x77, 0x27, 0x00, 0xdf},
		}
		env.CFIs = []unwindtest.CFIRange{
			{Start: 0x11000, Size: 0x100, Init: ".cfa: sp 0 + .ra: lr"},
			{Start: 0x12010, Size: 0x10, Init: ".cfa: sp 0 + .ra: lr"},
		}
		lr := uint64(thumbTramp | 1)
		sp := env.Addr(0)
		if rt {
			lr = rtTramp
			env.Push(make([]uint64, 32)...) // siginfo
		}
		env.Push(0, 0, 0, 0, 0) // uc_flags, uc_link, uc_stack
		env.Push(14, 0, 0)      // trap_no, error_code, oldmask
		interruptedSP := env.Addr(len(env.Stack)/4 + 20)
		want := map[int]uint64{}
		for _, r := range []int{0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, arm.SlotFP, arm.SlotR12, arm.SlotSP, arm.SlotLR, arm.SlotPC} {
			v := uint64(0x100 + r)
			switch r {
			case arm.SlotSP:
				v = interruptedSP
			case arm.SlotPC:
				v = 0x12010
			case arm.SlotLR:
				v = 0x13020
			}
			want[r] = v
			env.Push(v)
		}
		env.Push(make([]uint64, 6)...)
		ctx := contextFrame(t, u, env, 0x11010, uint32(sp), uint32(lr), 0, 0)
		frames := unwindtest.Walk(u, env, ctx, 10)
		if len(frames) < 4 {
			t.Fatalf("rt %v: %d frames, want 4", rt, len(frames))
		}
		check(t, frames[1], unwind.TrustCFI, lr, sp)
		unwindtest.CheckSignal(t, u, fmt.Sprintf("rt %v: ", rt), frames, want)
		check(t, frames[3], unwind.TrustCFI, 0x13020, interruptedSP)
	}
}
