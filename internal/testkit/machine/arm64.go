package machine

import (
	"regexp"
	"strconv"

	"golang.org/x/arch/arm64/arm64asm"
)

// The arm64 models' register indices: x0..x30 are 0..30, sp is A64SP,
// d0..d31 are A64D0..A64D0+31.
const (
	A64SP = 31
	A64D0 = 32
)

// A64Reg returns the model's index of an arm64 register operand: w and x
// registers alike, sp, and the d registers (A64D0 on).
func A64Reg(a arm64asm.Arg) (int, bool) {
	switch r := a.(type) {
	case arm64asm.Reg:
		switch {
		case r >= arm64asm.X0 && r <= arm64asm.X30:
			return int(r - arm64asm.X0), true
		case r >= arm64asm.W0 && r <= arm64asm.W30:
			return int(r - arm64asm.W0), true
		case r >= arm64asm.D0 && r <= arm64asm.D31:
			return A64D0 + int(r-arm64asm.D0), true
		}
	case arm64asm.RegSP:
		if r == arm64asm.RegSP(arm64asm.SP) {
			return A64SP, true
		}
		return A64Reg(arm64asm.Reg(r))
	}
	return 0, false
}

// A64GPR is A64Reg for the general registers and sp alone (d registers
// and others: false).
func A64GPR(a arm64asm.Arg) (int, bool) {
	r, ok := A64Reg(a)
	if !ok || r >= A64D0 {
		return 0, false
	}
	return r, true
}

// A64Wide reports whether a is an x register (a whole 64-bit one).
func A64Wide(a arm64asm.Arg) bool {
	r, ok := a.(arm64asm.Reg)
	return ok && r >= arm64asm.X0 && r <= arm64asm.X30
}

// A64Args returns an instruction's operands, those before the first nil.
func A64Args(in arm64asm.Inst) []arm64asm.Arg {
	n := 0
	for n < len(in.Args) && in.Args[n] != nil {
		n++
	}
	return in.Args[:n]
}

// A64Mem is an immediate-offset memory operand: [base], [base,#imm],
// [base,#imm]! (pre-index) or [base],#imm (post-index).
type A64Mem struct {
	Base      int // the base register's index (A64Reg)
	Imm       int64
	Pre, Post bool
}

var a64MemRe = regexp.MustCompile(`^\[(\w+)(?:,#(-?(?:0x)?[0-9a-fA-F]+))?\](!)?(?:,#(-?(?:0x)?[0-9a-fA-F]+))?$`)

// ParseA64Mem returns the memory operand a, false when it is not an
// immediate-offset one of those forms.
func ParseA64Mem(a arm64asm.Arg) (A64Mem, bool) {
	mi, ok := a.(arm64asm.MemImmediate)
	if !ok {
		return A64Mem{}, false
	}
	base, ok := A64GPR(mi.Base)
	mm := a64MemRe.FindStringSubmatch(mi.String())
	if !ok || mm == nil || mm[2] != "" && mm[4] != "" {
		return A64Mem{}, false
	}
	parse := func(s string) (int64, bool) {
		if s == "" {
			return 0, true
		}
		v, err := strconv.ParseInt(s, 0, 64)
		return v, err == nil
	}
	m := A64Mem{Base: base, Pre: mm[3] != "", Post: mm[4] != ""}
	imm := mm[2]
	if m.Post {
		imm = mm[4]
	}
	if m.Imm, ok = parse(imm); !ok {
		return A64Mem{}, false
	}
	return m, true
}

// Addr returns the address the operand accesses, given its base
// register's value (a post-index access is at the base itself).
func (m A64Mem) Addr(base uint64) uint64 {
	if m.Post {
		return base
	}
	return base + uint64(m.Imm)
}

// Writeback returns the base register's value after the access: moved by
// the immediate for pre- and post-index, unchanged otherwise.
func (m A64Mem) Writeback(base uint64) uint64 {
	if m.Pre || m.Post {
		return base + uint64(m.Imm)
	}
	return base
}

var a64ImmRe = regexp.MustCompile(`^#(0x[0-9a-fA-F]+|\d+)(, LSL #12)?$`)

// A64Imm returns the value of an add/sub immediate operand (#imm or
// #imm, LSL #12), false for other operands.
func A64Imm(a arm64asm.Arg) (uint64, bool) {
	if a == nil {
		return 0, false
	}
	im := a64ImmRe.FindStringSubmatch(a.String())
	if im == nil {
		return 0, false
	}
	v, err := strconv.ParseUint(im[1], 0, 64)
	if err != nil {
		return 0, false
	}
	if im[2] != "" {
		v <<= 12
	}
	return v, true
}

// A64Move returns what an add or sub of an immediate (add xd, xn, #imm)
// or a move between registers (mov xd, xn) writes to its destination:
// form reports whether in is one of those, known whether regs (the
// model's values by A64Reg index) has the value of its source. Other
// instructions (and a mov of an immediate: form, not known) are the
// model's own to treat.
func A64Move(in arm64asm.Inst, regs []uint64) (v uint64, form, known bool) {
	args := A64Args(in)
	reg := func(a arm64asm.Arg) (uint64, bool) {
		r, ok := A64Reg(a)
		if !ok || r >= len(regs) {
			return 0, false
		}
		return regs[r], true
	}
	switch {
	case (in.Op == arm64asm.ADD || in.Op == arm64asm.SUB) && len(args) == 3:
		s, ok1 := reg(args[1])
		n, ok2 := A64Imm(args[2])
		if !ok1 || !ok2 {
			return 0, true, false
		}
		if in.Op == arm64asm.SUB {
			n = -n
		}
		return s + n, true, true
	case in.Op == arm64asm.MOV && len(args) == 2:
		s, ok := reg(args[1])
		return s, true, ok
	}
	return 0, false, false
}
