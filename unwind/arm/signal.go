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
	}
	rtSigframe = &unwind.SignalFrame{
		Regs:     func(_ unwind.Env, sp uint64) (uint64, bool) { return uint64(uint32(sp + 128 + 20)), true },
		Offsets:  mcontextRegs,
		WordSize: 4,
	}
)

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
