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
	Check:    isRtSigframe,
}

// Offsets in the rt_sigframe: the ucontext's uc_link, the mcontext's
// pstate (after fault_address, x0-x30, sp and pc) and its __reserved area
// (aligned to 16), which starts with the FPSIMD record.
const (
	ucLink      = 128 + 8
	mcPstate    = 128 + 176 + 8 + 33*8
	mcReserved  = 128 + 176 + 288
	fpsimdMagic = 0x46508001
	fpsimdSize  = 528
)

// isRtSigframe recognises the rt frame from the stack: uc_link null,
// pstate at EL0 in AArch64 state (M[4:0] 0), and the FPSIMD record (magic
// 0x46508001, size 528) first in __reserved, as the kernel and qemu-user
// write it. (The siginfo is written only for SA_SIGINFO handlers.)
func isRtSigframe(env unwind.Env, sp uint64) bool {
	link, ok1 := unwind.Read64(env, sp+ucLink)
	pstate, ok2 := unwind.Read64(env, sp+mcPstate)
	magic, ok3 := unwind.Read32(env, sp+mcReserved)
	size, ok4 := unwind.Read32(env, sp+mcReserved+4)
	return ok1 && ok2 && ok3 && ok4 && link == 0 && pstate&0x1f == 0 && magic == fpsimdMagic && size == fpsimdSize
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
