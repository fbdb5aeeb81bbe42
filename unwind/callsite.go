package unwind

import "golang.org/x/arch/x86/x86asm"

// maxX86Call is the longest x86 call instruction looked for before a
// return address (a REX or segment prefix, opcode, ModRM, SIB, disp32).
const maxX86Call = 9

// X86CallBefore is the CallCheck of x86 (mode 32) and x86-64 (mode 64):
// an instruction decoded from some byte before ra that ends exactly at ra
// and is a call (direct, or indirect through a register or memory).
func X86CallBefore(mode int) CallCheck {
	return func(env Env, ra uint64) CallSite {
		seen := false
		for k := 2; k <= maxX86Call; k++ {
			b := ReadCode(env, ra-uint64(k), k)
			if b == nil {
				continue
			}
			seen = true
			inst, err := x86asm.Decode(b, mode)
			if err == nil && inst.Len == k && inst.Op == x86asm.CALL {
				return CallBefore
			}
		}
		// Only the bytes up to the longest call answer "no".
		if !seen || ReadCode(env, ra-maxX86Call, maxX86Call) == nil {
			return CallUnknown
		}
		return NoCallBefore
	}
}
