package arm64

import (
	"github.com/gobreakpad/gobreakpad/arch/arm64"
	"github.com/gobreakpad/gobreakpad/unwind"
)

// rtSigframe is Linux arm64's rt_sigframe, at the stack pointer the
// handler was entered with: siginfo (128 bytes), then the ucontext, whose
// uc_mcontext starts 176 bytes in (uc_flags, uc_link, uc_stack, the
// 128-byte uc_sigmask, aligned to 16); struct sigcontext holds
// fault_address, then x0-x30, sp and pc: the unwinder's slot order.
var rtSigframe = &unwind.SignalFrame{
	Regs:     func(_ unwind.Env, sp uint64) (uint64, bool) { return sp + 128 + 176 + 8, true },
	Offsets:  slots(),
	WordSize: 8,
}

func slots() map[int]uint64 {
	m := map[int]uint64{}
	for i := 0; i < arm64.NumRegs; i++ {
		m[i] = uint64(8 * i)
	}
	return m
}

// trampolines: the vDSO's __kernel_rt_sigreturn (mov x8, #139; svc #0),
// also glibc's and musl's restorer where they have one.
var trampolines = []unwind.Trampoline{{
	Code:  []byte{0x68, 0x11, 0x80, 0xd2, 0x01, 0x00, 0x00, 0xd4},
	Names: []string{"__kernel_rt_sigreturn", "__restore_rt"},
	Frame: rtSigframe,
}}

// bySignalFrame returns the interrupted frame when last is the signal
// trampoline, or nil.
func (u *Unwinder) bySignalFrame(env unwind.Env, last *unwind.Frame) *unwind.Frame {
	f := unwind.CallerOfSignal(env, last, last.Regs[arm64.RegPC], arm64.RegPC, arm64.RegSP, trampolines)
	if f != nil {
		f.Regs[arm64.RegLR] = u.strip(env, f.Regs[arm64.RegLR])
	}
	return f
}
