package unwind

// Realigned frames. A function that realigns its stack pointer through a
// DRAP register (gcc's i386 main, and any x86 or x86-64 function with
// over-aligned locals and a variable-length array or incoming stack
// arguments: "lea ecx,[esp+4]; and esp,-16; push [ecx-4]; push ebp; mov
// ebp,esp; push ecx", on x86-64 with r10) builds its frame record below
// the alignment gap, with a copy of the return address above the saved
// frame pointer, and saves the caller's stack pointer (the CFA, held in
// the DRAP register) among the words it pushes next. Following the frame
// record alone gives the right return address but a stack pointer inside
// the gap; the CFI of such a function needs DWARF expressions, which
// Breakpad's dump_syms leaves out, so its STACK CFI (when any) is wrong
// past the prologue.

// RealignSearchWords is how many words below the frame pointer the saved
// CFA is looked for (the saved-register area of the prologue).
const RealignSearchWords = 8

// RealignedCFA recognizes a realigned frame from its frame record at fp
// (ret: the return address copy read just above the saved frame
// pointer; words of size bytes): a word saved a little below fp that
// points a little above the record, at a stack pointer whose word below
// holds the same return address (the original the prologue copied). It
// returns that stack pointer, the caller's. "A little above" is the
// record, the copy and an alignment gap of minGap to 64 bytes: on x86-64
// the ABI's 16-byte alignment at calls makes the gap at least 8 bytes
// (the stack pointer at entry is 8 modulo 16), which tells a realigned
// frame from an ordinary one over a stale copy of its return address.
func RealignedCFA(env Env, fp, ret uint64, size int, minGap uint64) (uint64, bool) {
	w := uint64(size)
	maxGap := 3*w + 64
	for i := uint64(1); i <= RealignSearchWords; i++ {
		if fp < w*i {
			break
		}
		v, ok := ReadWord(env, fp-w*i, size)
		if !ok {
			break
		}
		if v < fp+3*w+minGap || v-fp > maxGap {
			continue
		}
		if orig, ok := ReadWord(env, v-w, size); ok && orig == ret {
			return v, true
		}
	}
	return 0, false
}

// ImplausibleCaller reports whether a caller's pc, found by CFI, is no
// return address at all (outside every module): the rules were wrong for
// the frame, as the rules Breakpad's dump_syms writes for a realigned
// function are past its prologue (their expressions left out, a stale
// rule stays in force).
func ImplausibleCaller(env Env, pc uint64) bool { return pc < 1<<12 || !env.InModule(pc-1) }
