package x86

import (
	"bytes"

	"github.com/gobreakpad/gobreakpad/arch/x86"
	"github.com/gobreakpad/gobreakpad/unwind"
)

// vsyscallTail is the code of Linux i386's __kernel_vsyscall at the
// instruction a system call returns to: pop ebp; pop edx; pop ecx; ret.
var vsyscallTail = []byte{0x5d, 0x5a, 0x59, 0xc3}

// maxVsyscallReturn is how far past __kernel_vsyscall's entry a system
// call returns to the tail in the longest of its shapes: 16 before Linux
// 4.2 (the 7-byte nop pad after sysenter and the restart's jump or int
// 0x80, the "0xffffe410 in __kernel_vsyscall" of old backtraces), 9 since.
const maxVsyscallReturn = 16

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
// where the dump holds the caller's code. Where the environment knows
// __kernel_vsyscall's address (unwind.VsyscallEnv: the auxiliary vector's
// AT_SYSINFO), the pc must also lie within maxVsyscallReturn bytes after
// it; the caller is then marked CalleeVsyscall, so that the walker can name
// the frame. Without the rule, the ebp chain reads the saved edx as a
// return address (and a scan may take a stale word).
func byVsyscall(env unwind.Env, last *unwind.Frame) *unwind.Frame {
	if !unwind.Innermost(last) || !last.Has(x86.EIP) || !last.Has(x86.ESP) || !last.Has(x86.EBP) {
		return nil
	}
	pc, esp, ebp := uint32(last.Regs[x86.EIP]), uint32(last.Regs[x86.ESP]), uint32(last.Regs[x86.EBP])
	if !unwind.InVDSO(env, uint64(pc)) {
		return nil
	}
	// An AT_SYSINFO outside the vDSO says nothing of it.
	entry, inVsyscall := unwind.KernelVsyscall(env)
	inVsyscall = inVsyscall && unwind.InVDSO(env, entry)
	if inVsyscall && (uint64(pc) < entry || uint64(pc)-entry > maxVsyscallReturn) {
		return nil // in the vDSO, but not in __kernel_vsyscall
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
	f.CalleeVsyscall = inVsyscall
	for _, r := range []int{x86.EBX, x86.ESI, x86.EDI} { // untouched by the function
		if last.Has(r) {
			f.Valid |= 1 << r
		}
	}
	return f
}
