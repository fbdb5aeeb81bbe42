package amd64

import (
	"github.com/gobreakpad/gobreakpad/arch/amd64"
	"github.com/gobreakpad/gobreakpad/unwind"
)

// rtSigframe is Linux x86-64's rt_sigframe as the trampoline sees it:
// the handler's return popped pretcode, so the stack pointer is at the
// ucontext (uc_flags, uc_link, uc_stack: 40 bytes), whose mcontext's
// general registers follow in struct sigcontext's order (r8-r15, rdi, rsi,
// rbp, rbx, rdx, rax, rcx, rsp, rip).
var rtSigframe = &unwind.SignalFrame{
	Regs: func(_ unwind.Env, sp uint64) (uint64, bool) { return sp + 40, true },
	Offsets: map[int]uint64{
		amd64.R8: 0, amd64.R9: 8, amd64.R10: 16, amd64.R11: 24, amd64.R12: 32, amd64.R13: 40,
		amd64.R14: 48, amd64.R15: 56, amd64.RDI: 64, amd64.RSI: 72, amd64.RBP: 80, amd64.RBX: 88,
		amd64.RDX: 96, amd64.RAX: 104, amd64.RCX: 112, amd64.RSP: 120, amd64.RIP: 128,
	},
	WordSize: 8,
	Check:    isRtSigframe,
}

// Offsets in the rt_sigframe from the trampoline's stack pointer: the
// ucontext's uc_flags, uc_link, and in its mcontext (40 bytes in) csgsfs
// (cs in the low 16 bits, ss in the high 16 bits since Linux 4.6, zero
// before) and the fpstate pointer; the ucontext is 304 bytes (its
// mcontext 256, the kernel's sigset_t 8), the siginfo after it (written
// only for SA_SIGINFO handlers, so not looked at).
const (
	userCS   = 0x33 // __USER_CS
	userDS   = 0x2b // __USER_DS
	ucFlags  = 0
	ucLink   = 8
	mcCSGSFS = 40 + 144
	mcFPU    = 40 + 184
	ucSize   = 304
)

// isRtSigframe recognises the rt frame from the stack: uc_link null,
// uc_flags only the kernel's few flags (UC_FP_XSTATE, UC_SIGCONTEXT_SS,
// UC_STRICT_RESTORE_SS), csgsfs the 64-bit user code selector 0x33 with gs
// and fs 0 (as the kernel writes them) and ss the user data selector 0x2b
// or 0, and the fpstate pointer null or 64-byte aligned into the frame
// above the ucontext (the kernel puts the xsave area there).
func isRtSigframe(env unwind.Env, sp uint64) bool {
	var v [4]uint64
	for i, off := range []uint64{ucFlags, ucLink, mcCSGSFS, mcFPU} {
		w, ok := unwind.Read64(env, sp+off)
		if !ok {
			return false
		}
		v[i] = w
	}
	flags, link, csgsfs, fpstate := v[0], v[1], v[2], v[3]
	ss := csgsfs >> 48
	return flags < 1<<8 && link == 0 && csgsfs&(1<<48-1) == userCS && (ss == 0 || ss == userDS) &&
		(fpstate == 0 || fpstate >= sp+ucSize && fpstate-sp < 1<<16 && fpstate%64 == 0)
}

// trampolines: glibc's and musl's __restore_rt (mov rax, 15; syscall).
var trampolines = []unwind.Trampoline{{
	Code:  []byte{0x48, 0xc7, 0xc0, 0x0f, 0x00, 0x00, 0x00, 0x0f, 0x05},
	Names: []string{"__restore_rt"},
	Frame: rtSigframe,
}}

// bySignalFrame returns the interrupted frame when last is the signal
// trampoline, or nil.
func bySignalFrame(env unwind.Env, last *unwind.Frame) *unwind.Frame {
	return unwind.CallerOfSignal(env, last, last.Regs[amd64.RIP], amd64.RIP, amd64.RSP, trampolines)
}
