package arm

import (
	"github.com/gobreakpad/gobreakpad/arch/arm"
	"github.com/gobreakpad/gobreakpad/unwind"
)

// mcontextRegs are the registers' offsets in Linux arm's struct
// sigcontext (trap_no, error_code, oldmask, then r0-r10, fp, ip, sp, lr,
// pc, cpsr), which the ucontext holds 20 bytes in (uc_flags, uc_link,
// uc_stack).
var mcontextRegs = func() map[int]uint64 {
	m := map[int]uint64{}
	for i := 0; i <= 10; i++ {
		m[i] = uint64(12 + 4*i)
	}
	m[arm.SlotFP], m[arm.SlotR12], m[arm.SlotSP], m[arm.SlotLR], m[arm.SlotPC] = 56, 60, 64, 68, 72
	return m
}()

// sigframe: the ucontext is at the handler's stack pointer; rtSigframe:
// siginfo (128 bytes) comes first.
var (
	sigframe = &unwind.SignalFrame{
		Regs:     func(_ unwind.Env, sp uint64) (uint64, bool) { return uint64(uint32(sp + 20)), true },
		Offsets:  mcontextRegs,
		WordSize: 4,
		Check:    func(env unwind.Env, sp uint64) bool { return isUcontext(env, uint32(sp)) },
	}
	rtSigframe = &unwind.SignalFrame{
		Regs:     func(_ unwind.Env, sp uint64) (uint64, bool) { return uint64(uint32(sp + 128 + 20)), true },
		Offsets:  mcontextRegs,
		WordSize: 4,
		Check:    isRtSigframe,
	}
)

// isUcontext recognises a ucontext at uc from the stack: uc_flags 0 (rt
// frames, and qemu-user's) or 0x5ac3c35a (the kernel's old-style frames,
// "a value which sc.trap_no would never have"), uc_link null and the
// saved arm_cpsr in user mode (M[4:0] 0x10) with interrupts enabled (I
// and F clear), as the kernel saves every user context.
func isUcontext(env unwind.Env, uc uint32) bool {
	flags, ok0 := unwind.Read32(env, uint64(uc))
	link, ok1 := unwind.Read32(env, uint64(uc+4))
	cpsr, ok2 := unwind.Read32(env, uint64(uc+20+76))
	return ok0 && ok1 && ok2 && (flags == 0 || flags == 0x5ac3c35a) && link == 0 && cpsr&0x1f == 0x10 && cpsr&0xc0 == 0
}

// isRtSigframe recognises the rt frame: a signal number in the siginfo,
// then a ucontext (isUcontext).
func isRtSigframe(env unwind.Env, sp uint64) bool {
	signo, ok := unwind.Read32(env, sp)
	return ok && unwind.SignalNumber(uint64(signo)) && isUcontext(env, uint32(sp+128))
}

// trampolines: sigreturn (mov r7, #119; svc 0) and rt_sigreturn
// (mov r7, #173; svc 0) in ARM and Thumb code (glibc's
// __default_sa_restorer and __default_rt_sa_restorer, the kernel's
// sigpage), and the old ABI's swi 0x900077 / swi 0x9000ad.
var trampolines = []unwind.Trampoline{
	{Code: []byte{0x77, 0x70, 0xa0, 0xe3, 0x00, 0x00, 0x00, 0xef}, Names: []string{"__default_sa_restorer"}, Frame: sigframe},
	{Code: []byte{0xad, 0x70, 0xa0, 0xe3, 0x00, 0x00, 0x00, 0xef}, Names: []string{"__default_rt_sa_restorer"}, Frame: rtSigframe},
	{Code: []byte{0x77, 0x27, 0x00, 0xdf}, Frame: sigframe},
	{Code: []byte{0xad, 0x27, 0x00, 0xdf}, Frame: rtSigframe},
	{Code: []byte{0x77, 0x00, 0x90, 0xef}, Frame: sigframe},
	{Code: []byte{0xad, 0x00, 0x90, 0xef}, Frame: rtSigframe},
}

// bySignalFrame returns the interrupted frame when last is a signal
// trampoline (the Thumb bit of its pc cleared), or nil.
func bySignalFrame(env unwind.Env, last *unwind.Frame) *unwind.Frame {
	return unwind.CallerOfSignal(env, last, last.Regs[arm.SlotPC]&^1, arm.SlotPC, arm.SlotSP, trampolines)
}
