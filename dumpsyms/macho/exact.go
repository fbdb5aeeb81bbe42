package macho

import (
	"fmt"

	"github.com/gobreakpad/gobreakpad/symfile"
	"golang.org/x/arch/x86/x86asm"
)

// The exact style of compact unwind rules (Options.Exact, dump_syms
// --cfi-style exact) for x86_64: the encoding states the rules of a
// function's body only; here the function's code is decoded from its
// entry with golang.org/x/arch's x86asm, and the frame state is followed
// through the prologue (pushes, mov rbp, rsp, sub rsp; the large-frame
// form mov eax, SIZE; call ___chkstk_darwin; sub rsp, rax) and every
// epilogue (pops, add rsp, lea rsp, [rbp+d], leave, ret or a tail jump),
// so that the rules are right at every instruction. After a ret or a jump
// the next instruction is reached from the body: its state is the body's.
// A function whose prologue does not end in the state its encoding states,
// or whose code moves the stack pointer in ways not followed, keeps the
// default rules (warned about). Decoding stops at bytes that are no
// instruction (a jump table in the code) when the state there is the
// body's: the rest keeps the body's rules.

// x86 registers by x86asm's numbering from RAX: RAX RCX RDX RBX RSP RBP RSI
// RDI R8..R15; the callee-saved ones have names.
var x86Names = [16]string{3: "$rbx", 5: "$rbp", 12: "$r12", 13: "$r13", 14: "$r14", 15: "$r15"}

// bodyRules returns the rules the unwind information states at an address
// (formatRules' text).
type bodyRules func(at uint64) string

// fixed is the bodyRules of a compact encoding: the same everywhere.
func fixed(rules string) bodyRules { return func(uint64) string { return rules } }

// x86Mode is what differs between x86_64 and i386 code: the decoding
// mode, the word, the registers (x86asm's, numbered from the first) and
// their names in rules.
type x86Mode struct {
	bits        int
	word        int64
	first, last x86asm.Reg
	sp, bp, ax  x86asm.Reg
	names       [16]string // the callee-saved ones
	spName      string
	bpName      string
}

var (
	amd64Mode = &x86Mode{bits: 64, word: 8, first: x86asm.RAX, last: x86asm.R15, sp: x86asm.RSP, bp: x86asm.RBP, ax: x86asm.RAX,
		names: x86Names, spName: "$rsp", bpName: "$rbp"}
	// i386: ebx, esi, edi and ebp are callee-saved (the compact encoding
	// can also name ecx and edx, which no compiler saves: a push of them
	// in a prologue makes room, as push eax does).
	i386Mode = &x86Mode{bits: 32, word: 4, first: x86asm.EAX, last: x86asm.EDI, sp: x86asm.ESP, bp: x86asm.EBP, ax: x86asm.EAX,
		names: [16]string{3: "$ebx", 5: "$ebp", 6: "$esi", 7: "$edi"}, spName: "$esp", bpName: "$ebp"}
)

// reg returns the number of a full-width register of the mode.
func (m *x86Mode) reg(a x86asm.Arg) (int, bool) {
	r, ok := a.(x86asm.Reg)
	if !ok || r < m.first || r > m.last {
		return 0, false
	}
	return int(r - m.first), true
}

// frame is the frame state at one instruction.
type frame struct {
	m      *x86Mode
	cfaRBP bool      // CFA = rbp + rbpOff, else rsp + rspOff
	rspOff int64     // CFA - rsp
	rbpOff int64     // CFA - rbp, when cfaRBP
	saved  [16]int64 // the caller's register's save slot, from the CFA; 0: in the register
}

func (f *frame) rules() map[string]string {
	r := map[string]string{".ra": fmt.Sprintf(".cfa %d + ^", -f.m.word)}
	if f.cfaRBP {
		r[".cfa"] = fmt.Sprintf("%s %d +", f.m.bpName, f.rbpOff)
	} else {
		r[".cfa"] = fmt.Sprintf("%s %d +", f.m.spName, f.rspOff)
	}
	for reg, off := range f.saved {
		if off != 0 {
			r[f.m.names[reg]] = fmt.Sprintf(".cfa %d + ^", off)
		}
	}
	return r
}

// delta returns the rules of cur that differ from prev, and "$reg: $reg"
// for a register prev had saved and cur no longer has ("" when none).
func delta(prev, cur map[string]string) string {
	d := map[string]string{}
	for n, v := range cur {
		if prev[n] != v {
			d[n] = v
		}
	}
	for n := range prev {
		if _, ok := cur[n]; !ok {
			d[n] = n
		}
	}
	if len(d) == 0 {
		return ""
	}
	return formatRules(d)
}

func reg64(a x86asm.Arg) (int, bool) {
	r, ok := a.(x86asm.Reg)
	if !ok || r < x86asm.RAX || r > x86asm.R15 {
		return 0, false
	}
	return int(r - x86asm.RAX), true
}

const (
	rAX = 0
	rSP = 4
	rBP = 5
)

// exactX86 returns the STACK CFI INIT rules at the entry of the x86_64
// function whose code is code (its whole size), with one record per
// instruction where they change; body gives the rules the function's
// unwind information states at the first instruction after the prologue
// (its compact encoding's, or its FDE's there). err is set when the code
// does not follow them.
func exactX86(code []byte, addr uint64, body bodyRules) (init string, changes []symfile.CFI, err error) {
	return exactX86Mode(amd64Mode, code, addr, body)
}

// exactI386 is exactX86 for i386 code (the same prologues and epilogues
// in 4-byte words: push, mov ebp, esp, sub esp, pop, add esp, leave, ret).
func exactI386(code []byte, addr uint64, body bodyRules) (init string, changes []symfile.CFI, err error) {
	return exactX86Mode(i386Mode, code, addr, body)
}

func exactX86Mode(m *x86Mode, code []byte, addr uint64, body bodyRules) (init string, changes []symfile.CFI, err error) {
	st := frame{m: m, rspOff: m.word}
	var bodyState *frame
	prologue := true
	var rax int64 = -1 // mov eax, SIZE before ___chkstk_darwin
	var prev map[string]string
	for off := 0; off < len(code); {
		in, derr := x86asm.Decode(code[off:], m.bits)
		if derr != nil {
			// Data in the code (a jump table), reached by no path
			// from the code before it: the rest of the function keeps
			// the body's rules, right unless an epilogue follows.
			if bodyState != nil && st == *bodyState {
				break
			}
			return "", nil, fmt.Errorf("%#x: %v", addr+uint64(off), derr)
		}
		if prologue && !m.inPrologue(in) {
			prologue = false
			b := st
			bodyState = &b
			if r, want := formatRules(b.rules()), body(addr+uint64(off)); r != want {
				return "", nil, fmt.Errorf("%#x: the prologue ends with %q, the unwind information states %q", addr+uint64(off), r, want)
			}
		}
		cur := st.rules()
		if prev == nil {
			init = formatRules(cur)
		} else if d := delta(prev, cur); d != "" {
			changes = append(changes, symfile.CFI{Address: addr + uint64(off), Rules: d})
		}
		prev = cur
		at := addr + uint64(off)
		off += in.Len
		switch in.Op {
		case x86asm.PUSH:
			st.rspOff += m.word
			if r, ok := m.reg(in.Args[0]); ok && prologue && m.names[r] != "" && st.saved[r] == 0 {
				st.saved[r] = -st.rspOff
			}
		case x86asm.POP:
			st.rspOff -= m.word
			if r, ok := m.reg(in.Args[0]); ok {
				if r == rBP && st.cfaRBP {
					st.cfaRBP = false
				}
				if r == rSP {
					return "", nil, fmt.Errorf("%#x: %v", at, in)
				}
				st.saved[r] = 0
			}
		case x86asm.LEAVE:
			if !st.cfaRBP {
				return "", nil, fmt.Errorf("%#x: %v without a frame", at, in)
			}
			st.rspOff, st.cfaRBP, st.saved[rBP] = st.rbpOff-m.word, false, 0
		case x86asm.RET, x86asm.JMP, x86asm.UD2:
			if bodyState == nil {
				return "", nil, fmt.Errorf("%#x: %v in the prologue", at, in)
			}
			st = *bodyState
		case x86asm.CALL:
			if !prologue {
				rax = -1
			}
		default:
			if !writes(in) {
				break
			}
			r, isReg := m.reg(in.Args[0])
			switch {
			case in.Args[0] == x86asm.EAX || isReg && r == rAX:
				rax = -1
				if imm, ok := in.Args[1].(x86asm.Imm); ok && in.Op == x86asm.MOV {
					rax = int64(imm)
				}
			case isReg && r == rSP:
				if !st.moveRSP(in, rax) {
					return "", nil, fmt.Errorf("%#x: %v: a stack pointer change not followed", at, in)
				}
			case isReg && r == rBP:
				if in.Op == x86asm.MOV && in.Args[1] == m.sp {
					st.cfaRBP, st.rbpOff = true, st.rspOff
				} else if st.cfaRBP {
					return "", nil, fmt.Errorf("%#x: %v: the frame pointer changed", at, in)
				}
			}
		}
	}
	if bodyState == nil {
		return "", nil, fmt.Errorf("%#x: no body after the prologue", addr)
	}
	return init, changes, nil
}

// moveRSP follows an instruction writing rsp; false when it cannot.
func (st *frame) moveRSP(in x86asm.Inst, rax int64) bool {
	switch in.Op {
	case x86asm.SUB, x86asm.ADD:
		var n int64
		switch a := in.Args[1].(type) {
		case x86asm.Imm:
			n = int64(a)
		case x86asm.Reg:
			if a != st.m.ax || rax < 0 {
				return false
			}
			n = rax
		default:
			return false
		}
		if in.Op == x86asm.ADD {
			n = -n
		}
		st.rspOff += n
		return true
	case x86asm.LEA:
		m, ok := in.Args[1].(x86asm.Mem)
		if !ok || m.Base != st.m.bp || m.Index != 0 || !st.cfaRBP {
			return false
		}
		st.rspOff = st.rbpOff - m.Disp
		return true
	case x86asm.MOV:
		if in.Args[1] == st.m.bp && st.cfaRBP {
			st.rspOff = st.rbpOff
			return true
		}
	}
	return false
}

// inPrologue reports whether in is one of the instructions a prologue is
// made of.
func (m *x86Mode) inPrologue(in x86asm.Inst) bool {
	switch in.Op {
	case x86asm.PUSH:
		_, ok := m.reg(in.Args[0])
		return ok
	case x86asm.MOV:
		if in.Args[0] == m.bp && in.Args[1] == m.sp {
			return true
		}
		_, imm := in.Args[1].(x86asm.Imm)
		return in.Args[0] == x86asm.EAX && imm
	case x86asm.SUB:
		_, imm := in.Args[1].(x86asm.Imm)
		return in.Args[0] == m.sp && (imm || in.Args[1] == m.ax)
	case x86asm.CALL:
		return true // ___chkstk_darwin, between mov eax, SIZE and sub rsp, rax
	}
	return false
}

// writes reports whether in writes its first operand (Intel order).
func writes(in x86asm.Inst) bool {
	switch in.Op {
	case x86asm.CMP, x86asm.TEST, x86asm.PUSH, x86asm.BT, x86asm.NOP, x86asm.UCOMISS, x86asm.UCOMISD, x86asm.COMISS, x86asm.COMISD:
		return false
	}
	if len(in.Op.String()) > 0 && in.Op.String()[0] == 'J' {
		return false
	}
	return in.Args[0] != nil
}
