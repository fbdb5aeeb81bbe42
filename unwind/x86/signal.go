package x86

import (
	"github.com/gobreakpad/gobreakpad/arch/x86"
	"github.com/gobreakpad/gobreakpad/unwind"
)

// sigcontextRegs are the general registers' offsets in Linux i386's struct
// sigcontext (gs, fs, es, ds, edi, esi, ebp, esp, ebx, edx, ecx, eax,
// trapno, err, eip, cs, eflags, ...).
var sigcontextRegs = map[int]uint64{
	x86.EDI: 16, x86.ESI: 20, x86.EBP: 24, x86.ESP: 28, x86.EBX: 32, x86.EDX: 36,
	x86.ECX: 40, x86.EAX: 44, x86.EIP: 56, x86.EFL: 64,
}

// sigframe is the old-style frame: after the handler's return popped
// pretcode, the stack holds the signal number, then the sigcontext.
var sigframe = &unwind.SignalFrame{
	Regs:     func(_ unwind.Env, sp uint64) (uint64, bool) { return uint64(uint32(sp + 4)), true },
	Offsets:  sigcontextRegs,
	WordSize: 4,
	Check:    isSigframe,
}

// isSigframe recognises the old-style frame from the stack: a signal
// number, then a sigcontext whose esp and esp_at_signal (the kernel and
// qemu-user store the interrupted esp in both) agree, whose cs and ss are
// the user selectors of an i386 kernel (0x73, 0x7b) or of an x86-64 one
// (0x23, 0x2b: also qemu-user's), and whose fpstate pointer is null or
// points above the sigcontext, into the frame. (trapno is not looked at:
// qemu-user leaves it -1.)
func isSigframe(env unwind.Env, sp uint64) bool {
	sig, ok := read32(env, uint32(sp))
	if !ok || !unwind.SignalNumber(uint64(sig)) {
		return false
	}
	sc := uint32(sp + 4)
	var w [20]uint32
	for i := range w {
		if w[i], ok = read32(env, sc+uint32(4*i)); !ok {
			return false
		}
	}
	esp, cs, espAtSignal, ss, fpstate := w[7], w[15], w[17], w[18], w[19]
	cs, ss = cs&0xffff, ss&0xffff
	return esp == espAtSignal && (cs == 0x73 && ss == 0x7b || cs == 0x23 && ss == 0x2b) &&
		(fpstate == 0 || fpstate > sc && fpstate-sc < 1<<16)
}

// rtSigframe is the rt frame: signal number, pinfo, puc (the ucontext's
// address), then siginfo and the ucontext, whose mcontext starts 20 bytes
// in (uc_flags, uc_link, uc_stack).
var rtSigframe = &unwind.SignalFrame{
	Regs: func(env unwind.Env, sp uint64) (uint64, bool) {
		uc, ok := unwind.Read32(env, uint64(uint32(sp+8)))
		if !ok {
			return 0, false
		}
		return uint64(uc + 20), true
	},
	Offsets:  sigcontextRegs,
	WordSize: 4,
	Check:    isRtSigframe,
}

// siginfoSize is the size of i386's siginfo.
const siginfoSize = 128

// isRtSigframe recognises the rt frame from the stack: a signal number,
// then pinfo and puc pointing at the siginfo and the ucontext that follow
// them in the same frame, the siginfo's si_signo the same signal number
// (or zero: the kernel writes the siginfo for SA_SIGINFO handlers only,
// which are the ones given an rt frame).
func isRtSigframe(env unwind.Env, sp uint64) bool {
	s := uint32(sp)
	sig, ok1 := read32(env, s)
	pinfo, ok2 := read32(env, s+4)
	puc, ok3 := read32(env, s+8)
	if !ok1 || !ok2 || !ok3 || !unwind.SignalNumber(uint64(sig)) || pinfo != s+12 || puc != s+12+siginfoSize {
		return false
	}
	signo, ok := read32(env, pinfo)
	return ok && (signo == sig || signo == 0)
}

// trampolines: the vDSO's __kernel_sigreturn (pop eax; mov eax, 119;
// int 0x80) and __kernel_rt_sigreturn (mov eax, 173; int 0x80), which
// glibc's restorers share.
var trampolines = []unwind.Trampoline{{
	Code:  []byte{0x58, 0xb8, 0x77, 0x00, 0x00, 0x00, 0xcd, 0x80},
	Names: []string{"__kernel_sigreturn", "__restore"},
	Frame: sigframe,
}, {
	Code:  []byte{0xb8, 0xad, 0x00, 0x00, 0x00, 0xcd, 0x80},
	Names: []string{"__kernel_rt_sigreturn", "__restore_rt"},
	Frame: rtSigframe,
}}

// bySignalFrame returns the interrupted frame when last is a signal
// trampoline, or nil.
func bySignalFrame(env unwind.Env, last *unwind.Frame) *unwind.Frame {
	return unwind.CallerOfSignal(env, last, last.Regs[x86.EIP], x86.EIP, x86.ESP, trampolines)
}
