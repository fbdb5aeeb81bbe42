package macho

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/gobreakpad/gobreakpad/symfile"
	"golang.org/x/arch/arm64/arm64asm"
)

// The exact style for arm64 compact unwind: as exact.go for x86_64, the
// frame state followed from the function's entry through the prologue
// (stp pairs, pre-indexed or at an offset, sub sp, add x29, sp / mov x29,
// sp; pacibsp) and each epilogue (ldp pairs, post-indexed or at an offset,
// add sp, ret or a tail branch).

// a64Frame is the frame state at one arm64 instruction.
type a64Frame struct {
	cfaFP  bool      // CFA = x29 + fpOff, else sp + spOff
	spOff  int64     // CFA - sp
	fpOff  int64     // CFA - x29
	saved  [31]int64 // x0..x30's save slot from the CFA; 0: in the register
	dsaved [8]int64  // d8..d15's, the same way
	spGone bool      // sp moved in a way not followed (the CFA is x29's)
}

func (f *a64Frame) rules() map[string]string {
	r := map[string]string{".ra": "x30"}
	if f.cfaFP {
		r[".cfa"] = fmt.Sprintf("x29 %d +", f.fpOff)
	} else {
		r[".cfa"] = fmt.Sprintf("sp %d +", f.spOff)
	}
	for reg, off := range f.saved {
		if off == 0 || reg < 19 {
			continue
		}
		if reg == 30 {
			r[".ra"] = fmt.Sprintf(".cfa %d + ^", off)
		} else {
			r[fmt.Sprintf("x%d", reg)] = fmt.Sprintf(".cfa %d + ^", off)
		}
	}
	for i, off := range f.dsaved {
		if off != 0 {
			r[fmt.Sprintf("v%d", 8+i)] = fmt.Sprintf(".cfa %d + ^", off)
		}
	}
	return r
}

// slot returns the save slot (from the CFA) in f of the register an
// operand names, x0..x30 or d8..d15, and whether it names one of them.
func (f *a64Frame) slot(a arm64asm.Arg) (*int64, bool) {
	if r, ok := xReg(a); ok {
		return &f.saved[r], true
	}
	if r, ok := a.(arm64asm.Reg); ok && r >= arm64asm.D8 && r <= arm64asm.D15 {
		return &f.dsaved[r-arm64asm.D8], true
	}
	return nil, false
}

// a64Mem is a memory operand: base register, offset and addressing mode.
type a64Mem struct {
	sp        bool // the base is sp
	imm       int64
	pre, post bool
}

func parseMem(a arm64asm.Arg) (a64Mem, bool) {
	m, ok := a.(arm64asm.MemImmediate)
	if !ok {
		return a64Mem{}, false
	}
	s := m.String() // [SP,#-32]!  [SP,#16]  [SP],#32  [SP]
	out := a64Mem{sp: m.Base == arm64asm.RegSP(arm64asm.SP), pre: strings.HasSuffix(s, "!"), post: strings.Contains(s, "],")}
	if i := strings.IndexByte(s, '#'); i >= 0 {
		n, err := strconv.ParseInt(strings.TrimRight(s[i+1:], "]!"), 0, 64)
		if err != nil {
			return a64Mem{}, false
		}
		out.imm = n
	}
	return out, true
}

// immArg returns an immediate operand's value (#imm, #imm, LSL #12).
func immArg(a arm64asm.Arg) (int64, bool) {
	if a == nil {
		return 0, false
	}
	s := a.String()
	if !strings.HasPrefix(s, "#") {
		return 0, false
	}
	shift := int64(0)
	if i := strings.Index(s, ", LSL #"); i >= 0 {
		n, err := strconv.ParseInt(s[i+7:], 0, 64)
		if err != nil {
			return 0, false
		}
		shift, s = n, s[:i]
	}
	n, err := strconv.ParseInt(s[1:], 0, 64)
	if err != nil {
		return 0, false
	}
	return n << shift, true
}

func xReg(a arm64asm.Arg) (int, bool) {
	r, ok := a.(arm64asm.Reg)
	if !ok || r < arm64asm.X0 || r > arm64asm.X30 {
		return 0, false
	}
	return int(r - arm64asm.X0), true
}

func isSP(a arm64asm.Arg) bool {
	r, ok := a.(arm64asm.RegSP)
	return ok && r == arm64asm.RegSP(arm64asm.SP)
}

func isX29(a arm64asm.Arg) bool {
	if r, ok := a.(arm64asm.Reg); ok {
		return r == arm64asm.X29
	}
	if r, ok := a.(arm64asm.RegSP); ok {
		return arm64asm.Reg(r) == arm64asm.X29
	}
	return false
}

// a64Prologue reports whether in is one of the instructions a prologue is
// made of.
func a64Prologue(in arm64asm.Inst) bool {
	switch in.Op {
	case arm64asm.STP, arm64asm.STR:
		m, ok := parseMem(in.Args[len(argsOf(in))-1])
		return ok && m.sp
	case arm64asm.SUB:
		return isSP(in.Args[0]) && isSP(in.Args[1])
	case arm64asm.ADD, arm64asm.MOV:
		return isX29(in.Args[0]) && isSP(in.Args[1])
	case arm64asm.HINT, arm64asm.NOP:
		return true
	}
	return false
}

func argsOf(in arm64asm.Inst) []arm64asm.Arg {
	n := 0
	for n < len(in.Args) && in.Args[n] != nil {
		n++
	}
	return in.Args[:n]
}

// exactARM64 is exactX86 for arm64 code.
func exactARM64(code []byte, addr uint64, body bodyRules) (init string, changes []symfile.CFI, err error) {
	st := a64Frame{}
	var bodyState *a64Frame
	prologue := true
	var prev map[string]string
	for off := 0; off+4 <= len(code); off += 4 {
		at := addr + uint64(off)
		in, derr := arm64asm.Decode(code[off:])
		if derr != nil {
			if bodyState != nil && st == *bodyState {
				break
			}
			return "", nil, fmt.Errorf("%#x: %v", at, derr)
		}
		if prologue && !a64Prologue(in) {
			prologue = false
			b := st
			bodyState = &b
			if r, want := formatRules(b.rules()), body(at); r != want {
				return "", nil, fmt.Errorf("%#x: the prologue ends with %q, the unwind information states %q", at, r, want)
			}
		}
		cur := st.rules()
		if prev == nil {
			init = formatRules(cur)
		} else if d := delta(prev, cur); d != "" {
			changes = append(changes, symfile.CFI{Address: at, Rules: d})
		}
		prev = cur
		args := argsOf(in)
		switch in.Op {
		case arm64asm.STP, arm64asm.STR:
			m, ok := parseMem(args[len(args)-1])
			if !ok || !m.sp {
				break
			}
			if st.spGone {
				return "", nil, fmt.Errorf("%#x: %v after sp was lost", at, in)
			}
			slot := m.imm
			if m.pre {
				st.spOff -= m.imm
				slot = 0
			} else if m.post {
				slot = 0
			}
			if prologue {
				for i, a := range args[:len(args)-1] {
					p, ok := st.slot(a)
					if r, x := xReg(a); ok && (!x || r >= 19 || r == 29 || r == 30) && *p == 0 {
						*p = -(st.spOff - slot - int64(8*i))
					}
				}
			}
			if m.post {
				st.spOff -= m.imm
			}
		case arm64asm.LDP, arm64asm.LDR:
			m, ok := parseMem(args[len(args)-1])
			if !ok || !m.sp {
				for _, a := range args[:1] {
					if isX29(a) && st.cfaFP {
						return "", nil, fmt.Errorf("%#x: %v: the frame pointer changed", at, in)
					}
				}
				break
			}
			// A register is restored by a load from its save slot; a
			// load from elsewhere (a local) leaves the caller's value
			// where it was saved.
			from := -st.spOff + m.imm
			if m.post {
				from = -st.spOff
			}
			for i, a := range args[:len(args)-1] {
				p, ok := st.slot(a)
				if !ok {
					continue
				}
				restored := *p != 0 && *p == from+int64(8*i) && !st.spGone
				if r, _ := xReg(a); r == 29 && st.cfaFP {
					if !restored {
						return "", nil, fmt.Errorf("%#x: %v: the frame pointer changed", at, in)
					}
					st.cfaFP = false
				}
				if restored {
					*p = 0
				}
			}
			if m.pre || m.post {
				st.spOff -= m.imm
			}
		case arm64asm.RET, arm64asm.BR:
			if bodyState == nil {
				return "", nil, fmt.Errorf("%#x: %v in the prologue", at, in)
			}
			st = *bodyState
		case arm64asm.B:
			if _, cond := args[0].(arm64asm.Cond); cond {
				break
			}
			if bodyState == nil {
				return "", nil, fmt.Errorf("%#x: %v in the prologue", at, in)
			}
			st = *bodyState
		default:
			if len(args) == 0 {
				break
			}
			switch {
			case isSP(args[0]):
				n, imm := int64(0), false
				if len(args) == 3 {
					n, imm = immArg(args[2])
				} else if in.Op == arm64asm.MOV {
					imm = true
				}
				switch {
				case imm && isSP(args[1]) && in.Op == arm64asm.SUB:
					st.spOff += n
				case imm && isSP(args[1]) && in.Op == arm64asm.ADD:
					st.spOff -= n
				case imm && isX29(args[1]) && st.cfaFP && (in.Op == arm64asm.SUB || in.Op == arm64asm.ADD || in.Op == arm64asm.MOV):
					if in.Op == arm64asm.ADD {
						n = -n
					}
					st.spOff, st.spGone = st.fpOff+n, false
				case st.cfaFP:
					st.spGone = true
				default:
					return "", nil, fmt.Errorf("%#x: %v: a stack pointer change not followed", at, in)
				}
			case isX29(args[0]):
				n, imm := int64(0), in.Op == arm64asm.MOV
				if len(args) == 3 {
					n, imm = immArg(args[2])
				}
				if imm && isSP(args[1]) && (in.Op == arm64asm.ADD || in.Op == arm64asm.MOV) && !st.cfaFP {
					st.cfaFP, st.fpOff = true, st.spOff-n
				} else if st.cfaFP {
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
