package x86

import "github.com/gobreakpad/gobreakpad/unwind"

// Realigned frames. A function that realigns its stack (gcc's i386 main:
// "lea ecx,[esp+4]; and esp,-16; push [ecx-4]; push ebp; mov ebp,esp;
// push ecx ...") builds its ebp frame record below the alignment gap, with
// a copy of the return address above the saved ebp, and keeps the
// caller's stack pointer (the CFA, ecx) among the registers it pushes next.
// Following the frame record alone gives the right return address but a
// stack pointer inside the gap, which derails the caller's CFI.

// realignSearchWords is how many words below ebp the saved CFA is looked
// for (the saved-register area of the prologue).
const realignSearchWords = 8

// realignMaxGap bounds the distance from the frame record to the CFA:
// the record's 8 bytes, the return-address copy and up to 64 bytes of
// alignment padding.
const realignMaxGap = 8 + 4 + 64

// realignedCFA recognizes a realigned frame from its ebp frame record
// (ret, the return address read at ebp+4): a word saved just below ebp
// that points a little above the record, at a stack pointer whose word
// below holds the same return address (the original the prologue
// copied). It returns that stack pointer, the caller's.
func realignedCFA(env unwind.Env, ebp, ret uint32) (uint32, bool) {
	for i := uint32(1); i <= realignSearchWords; i++ {
		if ebp < 4*i {
			break
		}
		v, ok := read32(env, ebp-4*i)
		if !ok {
			break
		}
		if v <= ebp+8 || v-ebp > realignMaxGap {
			continue
		}
		if orig, ok := read32(env, v-4); ok && orig == ret {
			return v, true
		}
	}
	return 0, false
}
