package unwind

import "golang.org/x/arch/x86/x86asm"

// maxPrologueDecode is how many bytes of a function are decoded at most
// to learn its frame at an instruction.
const maxPrologueDecode = 1024

// FunctionCode returns the code of the function covering pc from its start
// (env's FunctionBase) up to pc, for decoding its prologue. For a caller's
// frame (innermost false) pc is a return address and the function is the
// one holding the call before it, looked up back bytes lower. ok is false
// when no function's symbol covers the address, pc is
// before its start or more than maxPrologueDecode bytes past it, or the
// code is not in the dump; code is empty (and not read) when pc is the
// function's start.
func FunctionCode(env Env, pc uint64, innermost bool, back uint64) (code []byte, ok bool) {
	at := pc
	if !innermost {
		at -= back
	}
	base, ok := env.FunctionBase(at)
	if !ok || pc < base || pc-base > maxPrologueDecode {
		return nil, false
	}
	if pc == base {
		return nil, true
	}
	code = ReadCode(env, base, int(pc-base))
	return code, code != nil
}

// FrameState is what decoding a function from its start up to an
// instruction tells about its frame there, when the function has not made
// a frame pointer of its own: the caller's stack pointer is sp + CFA, and
// the registers the function saved lie at CFA - offset.
type FrameState struct {
	// CFA is the distance from the stack pointer to the caller's stack
	// pointer (on x86, past the return address).
	CFA uint64
	// Saved maps a register slot the function pushed to its distance
	// below the caller's stack pointer.
	Saved map[int]uint64
	// Framed is set when the function made its frame pointer the usual
	// way before the pc (push rbp as its first push, then mov rbp, rsp):
	// the return address is at rbp + word and the caller's rbp at rbp,
	// whatever rbp's saved value looks like. CFA and Saved are then
	// those of the moment rbp was made.
	Framed bool
}

// X86FrameState decodes the x86 (mode 32) or x86-64 (mode 64) code of the
// function covering pc, from its start (env's FunctionBase) up to pc,
// and returns its frame state when the code shows where the return
// address is: every instruction decodes, only push, pop and adds and
// subtractions of constants move the stack pointer, nothing before pc
// leaves the straight path (ret, jmp) and the function has not made its
// frame pointer (mov ebp/rbp, esp/rsp), after which the frame pointer
// rule holds (FrameState.Framed when it made it the usual way). regSlot maps a pushed register to its slot (false: not
// tracked). The return address is then at sp + CFA - word. For a
// caller's frame (innermost false) pc is a return address: the function
// is the one holding the call before it.
func X86FrameState(env Env, pc uint64, innermost bool, mode int, regSlot func(x86asm.Reg) (int, bool)) (FrameState, bool) {
	code, ok := FunctionCode(env, pc, innermost, 1)
	if !ok {
		return FrameState{}, false
	}
	word := uint64(mode / 8)
	st := FrameState{CFA: word}
	sp, bp := x86asm.ESP, x86asm.EBP
	if mode == 64 {
		sp, bp = x86asm.RSP, x86asm.RBP
	}
	bpFirst := false // the first push was the frame pointer's
	for off := 0; off < len(code); {
		in, err := x86asm.Decode(code[off:], mode)
		// A cut instruction decodes as a bare prefix (no opcode).
		if err != nil || in.Len == 0 || in.Op == 0 {
			return FrameState{}, false
		}
		off += in.Len
		dst, _ := in.Args[0].(x86asm.Reg)
		switch in.Op {
		case x86asm.PUSH:
			st.CFA += word
			if dst == bp && st.CFA == 2*word {
				bpFirst = true
			}
			if dst != 0 && regSlot != nil {
				if slot, ok := regSlot(dst); ok {
					if st.Saved == nil {
						st.Saved = map[int]uint64{}
					}
					if _, seen := st.Saved[slot]; !seen {
						st.Saved[slot] = st.CFA
					}
				}
			}
			continue
		case x86asm.POP:
			if st.CFA < 2*word || dst == sp {
				return FrameState{}, false
			}
			st.CFA -= word
			continue
		case x86asm.SUB, x86asm.ADD:
			if dst != sp {
				break
			}
			imm, ok := in.Args[1].(x86asm.Imm)
			if !ok {
				return FrameState{}, false
			}
			d := uint64(int64(imm))
			if in.Op == x86asm.ADD {
				d = -d
			}
			st.CFA += d
			if st.CFA < word || st.CFA > 1<<20 {
				return FrameState{}, false
			}
			continue
		case x86asm.MOV:
			if src, ok := in.Args[1].(x86asm.Reg); ok && dst == bp && src == sp {
				if bpFirst && st.CFA == 2*word {
					st.Framed = true
					return st, true
				}
				return FrameState{}, false // the frame pointer rule holds
			}
		case x86asm.RET, x86asm.JMP, x86asm.LJMP, x86asm.LRET, x86asm.IRET, x86asm.IRETD, x86asm.IRETQ,
			x86asm.ENTER, x86asm.LEAVE, x86asm.HLT, x86asm.UD2, x86asm.INT:
			return FrameState{}, false
		case x86asm.CALL, x86asm.LCALL:
			continue
		}
		if writesReg(in, sp) {
			return FrameState{}, false
		}
	}
	return st, true
}

// CallerOfFrameState is the caller of last that its function's frame
// state st (X86FrameState) gives, cfa being the caller's stack pointer
// (last's plus st.CFA, wrapped to the CPU's width): the return address is
// the word below cfa, taken when accept takes it; the registers the
// function saved are read from below cfa, and last's registers in keep are
// kept otherwise. Slots pc and sp are the CPU's; words are size bytes.
func CallerOfFrameState(env Env, last *Frame, st FrameState, cfa uint64, pc, sp, size int, keep uint64, accept func(ra uint64) bool) *Frame {
	ra, ok := ReadWord(env, cfa-uint64(size), size)
	if !ok || !accept(ra) {
		return nil
	}
	f := NewCaller(env, last, TrustPrologue)
	f.Valid &= keep
	for slot, off := range st.Saved {
		if v, ok := ReadWord(env, cfa-off, size); ok {
			f.Set(slot, v)
		}
	}
	f.Set(pc, ra)
	f.Set(sp, cfa)
	return f
}

// writesReg reports whether an instruction names reg (or a part of it)
// as its first operand, which x86's two-operand forms write.
func writesReg(in x86asm.Inst, reg x86asm.Reg) bool {
	r, ok := in.Args[0].(x86asm.Reg)
	if !ok {
		return false
	}
	switch in.Op {
	case x86asm.CMP, x86asm.TEST, x86asm.BT:
		return false
	}
	return r == reg || (reg == x86asm.RSP && r == x86asm.ESP) || (reg == x86asm.ESP && r == x86asm.SP) || (reg == x86asm.RSP && r == x86asm.SP)
}
