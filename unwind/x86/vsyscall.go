package x86

import (
	"bytes"

	"github.com/gobreakpad/gobreakpad/arch/x86"
	"github.com/gobreakpad/gobreakpad/unwind"
)

// vsyscallTail is the code of Linux i386's __kernel_vsyscall at the
// instruction a system call returns to: pop ebp; pop edx; pop ecx; ret.
var vsyscallTail = []byte{0x5d, 0x5a, 0x59, 0xc3}

// byVsyscall unwinds a frame interrupted inside Linux i386's
// __kernel_vsyscall (a thread in a system call, or a signal that arrived
// there: raise → pthread_kill → syscall) when no rule covers it, as
// happens when the dump lacks the vDSO's code and so its CFI. For years the
// function has had one shape: push ecx; push edx; push ebp; mov ebp, esp;
// sysenter or int 0x80; pop ebp; pop edx; pop ecx; ret (since Linux 4.2
// "mov ecx, esp" instead of "mov ebp, esp"). In the system call the stack
// holds ebp, edx, ecx and the return address. That is the kernel's code,
// not an ABI, so the rule applies only behind a guard: last's pc is in the
// vDSO (unwind.VDSOEnv) and is the pc itself (the context frame or a frame
// a signal interrupted), the registers edx, ecx and ebp equal the words
// saved for them (ebp may instead equal esp, the old shape), the vDSO's
// code at the pc, when the dump holds it, is that tail, and the word
// where the return address would be is a plausible caller: in a module
// other than the vDSO, accepted by the symbols, after a call instruction
// where the dump holds the caller's code. Without it, the ebp chain reads
// the saved edx as a return address (and a scan may take a stale word).
func byVsyscall(env unwind.Env, last *unwind.Frame) *unwind.Frame {
	if !unwind.Innermost(last) || !last.Has(x86.EIP) || !last.Has(x86.ESP) || !last.Has(x86.EBP) {
		return nil
	}
	pc, esp, ebp := uint32(last.Regs[x86.EIP]), uint32(last.Regs[x86.ESP]), uint32(last.Regs[x86.EBP])
	if !unwind.InVDSO(env, uint64(pc)) {
		return nil
	}
	if code, err := env.ReadCode(uint64(pc), len(vsyscallTail)); err == nil && !bytes.Equal(code, vsyscallTail) {
		return nil
	}
	var w [4]uint32 // ebp, edx, ecx, return address
	for i := range w {
		v, ok := read32(env, esp+uint32(4*i))
		if !ok {
			return nil
		}
		w[i] = v
	}
	// The registers the function saved are still in place: edx and ecx
	// (the kernel restores them), ebp (or, in the old shape, ebp = esp).
	if !last.Has(x86.EDX) || !last.Has(x86.ECX) || uint32(last.Regs[x86.EDX]) != w[1] ||
		uint32(last.Regs[x86.ECX]) != w[2] || ebp != w[0] && ebp != esp {
		return nil
	}
	ra := uint64(w[3])
	if !env.InModule(ra) || unwind.InVDSO(env, ra) || !env.SeemsValid(ra-1) ||
		unwind.X86CallBefore(32)(env, ra) == unwind.NoCallBefore {
		return nil
	}
	f := unwind.NewCaller(env, last, unwind.TrustFP)
	f.Regs[x86.EIP], f.Regs[x86.ESP], f.Regs[x86.EBP] = ra, uint64(esp+16), uint64(w[0])
	f.Regs[x86.EDX], f.Regs[x86.ECX] = uint64(w[1]), uint64(w[2])
	f.Valid = 1<<x86.EIP | 1<<x86.ESP | 1<<x86.EBP | 1<<x86.EDX | 1<<x86.ECX
	for _, r := range []int{x86.EBX, x86.ESI, x86.EDI} { // untouched by the function
		if last.Has(r) {
			f.Valid |= 1 << r
		}
	}
	return f
}
