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
		// The longest call's bytes hold every shorter one's: read once.
		if b := ReadCode(env, ra-maxX86Call, maxX86Call); b != nil {
			for k := 2; k <= maxX86Call; k++ {
				if x86CallIs(b[maxX86Call-k:], mode) {
					return CallBefore
				}
			}
			return NoCallBefore
		}
		// Only the bytes up to the longest call answer "no"; shorter
		// calls may still be in the dump.
		for k := 2; k < maxX86Call; k++ {
			if b := ReadCode(env, ra-uint64(k), k); b != nil && x86CallIs(b, mode) {
				return CallBefore
			}
		}
		return CallUnknown
	}
}

// x86CallIs reports whether b decodes as one call instruction, all of b.
func x86CallIs(b []byte, mode int) bool {
	inst, err := x86asm.Decode(b, mode)
	return err == nil && inst.Len == len(b) && inst.Op == x86asm.CALL
}

// X86CallTarget is CallTarget for x86 (mode 32) and x86-64 (mode 64): a
// call rel32 (E8) ending at ra.
func X86CallTarget(env Env, ra uint64, mode int) (uint64, bool) {
	b := ReadCode(env, ra-5, 5)
	if b == nil || b[0] != 0xe8 {
		return 0, false
	}
	inst, err := x86asm.Decode(b, mode)
	if err != nil || inst.Len != 5 || inst.Op != x86asm.CALL {
		return 0, false
	}
	rel, ok := inst.Args[0].(x86asm.Rel)
	if !ok {
		return 0, false
	}
	t := ra + uint64(int64(rel))
	if mode == 32 {
		t &= 0xffffffff
	}
	return t, true
}
