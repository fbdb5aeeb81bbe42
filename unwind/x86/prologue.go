package x86

import (
	"github.com/gobreakpad/gobreakpad/arch/x86"
	"github.com/gobreakpad/gobreakpad/unwind"
	"golang.org/x/arch/x86/x86asm"
)

// regSlot maps a pushed i386 register to its slot.
func regSlot(r x86asm.Reg) (int, bool) {
	switch r {
	case x86asm.EBX:
		return x86.EBX, true
	case x86asm.ESI:
		return x86.ESI, true
	case x86asm.EDI:
		return x86.EDI, true
	case x86asm.EBP:
		return x86.EBP, true
	}
	return 0, false
}

// byFrameState finds the caller of the context frame (or of a frame a
// signal frame restored) whose function has not made its frame pointer
// yet at the pc, from the function's code decoded from its start
// (unwind.X86FrameState): the return address is at esp plus what the
// function pushed and subtracted so far, and ebp still holds the caller's
// (or lies where the function pushed it). The ebp chain would skip the
// caller.
func byFrameState(env unwind.Env, last *unwind.Frame) *unwind.Frame {
	if !last.Has(x86.ESP) {
		return nil
	}
	st, ok := unwind.X86FrameState(env, last.Regs[x86.EIP], unwind.Innermost(last), 32, regSlot)
	if !ok || st.Framed {
		return nil // the ebp chain (Breakpad's rules, realignment included)
	}
	return unwind.CallerOfFrameState(env, last, st, uint64(uint32(last.Regs[x86.ESP]+st.CFA)), x86.EIP, x86.ESP, 4, calleeSaved, func(eip uint64) bool {
		return env.SeemsValid(eip-1) && callBefore(env, eip) != unwind.NoCallBefore
	})
}
