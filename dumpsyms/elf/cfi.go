package elf

import (
	"cmp"
	"debug/elf"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/gobreakpad/gobreakpad/dumpsyms"
	"github.com/gobreakpad/gobreakpad/dumpsyms/dwarfcfi"
	"github.com/gobreakpad/gobreakpad/internal/dwarfbuf"
	"github.com/gobreakpad/gobreakpad/symfile"
)

// registerNames returns the DWARF register names Breakpad's walkers use for
// machine m, indexed by DWARF register number; "" marks an unnamed number.
func registerNames(m elf.Machine) []string {
	switch m {
	case elf.EM_386:
		return []string{
			"$eax", "$ecx", "$edx", "$ebx", "$esp", "$ebp", "$esi", "$edi",
			"$eip", "$eflags", "$unused1",
			"$st0", "$st1", "$st2", "$st3", "$st4", "$st5", "$st6", "$st7",
			"$unused2", "$unused3",
			"$xmm0", "$xmm1", "$xmm2", "$xmm3", "$xmm4", "$xmm5", "$xmm6", "$xmm7",
			"$mm0", "$mm1", "$mm2", "$mm3", "$mm4", "$mm5", "$mm6", "$mm7",
			"$fcw", "$fsw", "$mxcsr",
			"$es", "$cs", "$ss", "$ds", "$fs", "$gs", "$unused4", "$unused5",
			"$tr", "$ldtr",
		}
	case elf.EM_X86_64:
		return []string{
			"$rax", "$rdx", "$rcx", "$rbx", "$rsi", "$rdi", "$rbp", "$rsp",
			"$r8", "$r9", "$r10", "$r11", "$r12", "$r13", "$r14", "$r15",
			"$rip",
			"$xmm0", "$xmm1", "$xmm2", "$xmm3", "$xmm4", "$xmm5", "$xmm6", "$xmm7",
			"$xmm8", "$xmm9", "$xmm10", "$xmm11", "$xmm12", "$xmm13", "$xmm14", "$xmm15",
			"$st0", "$st1", "$st2", "$st3", "$st4", "$st5", "$st6", "$st7",
			"$mm0", "$mm1", "$mm2", "$mm3", "$mm4", "$mm5", "$mm6", "$mm7",
			"$rflags",
			"$es", "$cs", "$ss", "$ds", "$fs", "$gs", "$unused1", "$unused2",
			"$fs.base", "$gs.base", "$unused3", "$unused4",
			"$tr", "$ldtr",
			"$mxcsr", "$fcw", "$fsw",
		}
	case elf.EM_ARM:
		n := make([]string, 104)
		copy(n, []string{"r0", "r1", "r2", "r3", "r4", "r5", "r6", "r7",
			"r8", "r9", "r10", "r11", "r12", "sp", "lr", "pc",
			"f0", "f1", "f2", "f3", "f4", "f5", "f6", "f7", "fps", "cpsr"})
		for i := 0; i < 32; i++ {
			n[64+i] = "s" + strconv.Itoa(i)
		}
		for i := 0; i < 8; i++ {
			n[96+i] = "f" + strconv.Itoa(i)
		}
		return n
	case elf.EM_AARCH64:
		n := make([]string, 96)
		for i := 0; i < 31; i++ {
			n[i] = "x" + strconv.Itoa(i)
		}
		n[31] = "sp"
		for i := 0; i < 32; i++ {
			n[64+i] = "v" + strconv.Itoa(i)
		}
		return n
	}
	return nil
}

// cfiConverter turns the rows of DWARF CFI into Breakpad STACK CFI records,
// the way Breakpad's dump_syms does: a rule is recorded at every address an
// instruction establishes it, .ra names the return address column, and rules
// the postfix language cannot express (undefined registers other than the
// return address, some DWARF expressions) are left out. An undefined return
// address is written ".ra: .undef" (the outermost frame).
type cfiConverter struct {
	names   []string
	raCol   uint64
	warn    func(format string, args ...any)
	skipped map[string]int // reasons for rules left out, counted

	// per-entry state
	begin   uint64
	initial []regRule
	changes []addrRule
}

type regRule struct{ reg, rule string }

type addrRule struct {
	addr uint64
	regRule
}

func (c *cfiConverter) regName(col int) string {
	if col == dwarfcfi.CFA {
		return ".cfa"
	}
	if uint64(col) == c.raCol {
		return ".ra"
	}
	if col < len(c.names) && c.names[col] != "" {
		return c.names[col]
	}
	return "unnamed_register" + strconv.Itoa(col)
}

func (c *cfiConverter) skip(reason string) {
	if c.skipped == nil {
		c.skipped = make(map[string]int)
	}
	c.skipped[reason]++
}

// rule renders r as a Breakpad postfix expression, or reports false.
func (c *cfiConverter) rule(col int, r dwarfcfi.Rule) (string, bool) {
	switch r.Kind {
	case dwarfcfi.SameValue:
		return c.regName(col), true
	case dwarfcfi.Offset:
		return ".cfa " + strconv.FormatInt(r.Offset, 10) + " + ^", true
	case dwarfcfi.ValOffset:
		base := ".cfa"
		if col == dwarfcfi.CFA {
			base = c.regName(int(min(r.Reg, 1<<16)))
		}
		return base + " " + strconv.FormatInt(r.Offset, 10) + " +", true
	case dwarfcfi.Register:
		return c.regName(int(min(r.Reg, 1<<16))), true
	case dwarfcfi.Expression, dwarfcfi.ValExpression:
		pushCFA := col != dwarfcfi.CFA
		s, err := c.postfix(r.Expr, pushCFA)
		if err != nil {
			c.skip("DWARF expression: " + err.Error())
			return "", false
		}
		if r.Kind == dwarfcfi.Expression {
			s += " ^"
		}
		return s, true
	case dwarfcfi.Undefined:
		if uint64(col) == c.raCol {
			// An undefined return address marks the outermost frame
			// (_start, clone, thread start routines): written as
			// Breakpad's format spells it, where Breakpad's dump_syms
			// leaves the rule out.
			return ".undef", true
		}
		c.skip("undefined rule (not expressible)")
		return "", false
	}
	return "", false
}

// maxExprStack bounds the translation stack of a DWARF expression.
const maxExprStack = 64

// postfix translates a DWARF expression into Breakpad's postfix notation
// when it uses only operations the notation has. The translation keeps a
// stack of postfix texts, one per DWARF stack entry, and yields the top's:
// for register rules the CFA is pushed first (DW_CFA_expression semantics)
// and appears in the result only if the expression uses it.
func (c *cfiConverter) postfix(expr []byte, pushCFA bool) (string, error) {
	var stack []string
	if pushCFA {
		stack = append(stack, ".cfa")
	}
	i := 0
	uleb := func() (uint64, error) {
		v, ok := dwarfbuf.Uleb(expr, &i)
		if !ok {
			return 0, dwarfcfi.ErrTruncated
		}
		return v, nil
	}
	sleb := func() (int64, error) {
		v, ok := dwarfbuf.Sleb(expr, &i)
		if !ok {
			return 0, dwarfcfi.ErrTruncated
		}
		return v, nil
	}
	errUnderflow := fmt.Errorf("stack underflow")
	push := func(s string) error {
		if len(stack) >= maxExprStack {
			return fmt.Errorf("stack deeper than %d", maxExprStack)
		}
		stack = append(stack, s)
		return nil
	}
	pop := func() (string, error) {
		if len(stack) == 0 {
			return "", errUnderflow
		}
		s := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		return s, nil
	}
	binop := func(tok string) error {
		b, err := pop()
		if err != nil {
			return err
		}
		a, err := pop()
		if err != nil {
			return err
		}
		return push(a + " " + b + " " + tok)
	}
	for i < len(expr) {
		op := expr[i]
		i++
		var err error
		switch {
		case op >= 0x30 && op <= 0x4f: // DW_OP_lit0..31
			err = push(strconv.Itoa(int(op - 0x30)))
		case op >= 0x70 && op <= 0x8f: // DW_OP_breg0..31
			var off int64
			if off, err = sleb(); err == nil {
				err = push(c.regName(int(op-0x70)) + " " + strconv.FormatInt(off, 10) + " +")
			}
		case op == 0x92: // DW_OP_bregx
			var reg uint64
			var off int64
			if reg, err = uleb(); err == nil {
				if off, err = sleb(); err == nil {
					err = push(c.regName(int(min(reg, 1<<16))) + " " + strconv.FormatInt(off, 10) + " +")
				}
			}
		case op == 0x10: // DW_OP_constu
			var v uint64
			if v, err = uleb(); err == nil {
				err = push(strconv.FormatUint(v, 10))
			}
		case op == 0x11: // DW_OP_consts
			var v int64
			if v, err = sleb(); err == nil {
				err = push(strconv.FormatInt(v, 10))
			}
		case op >= 0x08 && op <= 0x0f: // DW_OP_const1u..const8s
			n := 1 << ((op - 0x08) / 2)
			if i+n > len(expr) {
				return "", dwarfcfi.ErrTruncated
			}
			var v uint64
			for k := n - 1; k >= 0; k-- {
				v = v<<8 | uint64(expr[i+k])
			}
			i += n
			if (op-0x08)%2 == 1 { // signed
				shift := 64 - 8*uint(n)
				err = push(strconv.FormatInt(int64(v<<shift)>>shift, 10))
			} else {
				err = push(strconv.FormatUint(v, 10))
			}
		case op == 0x23: // DW_OP_plus_uconst
			var v uint64
			if v, err = uleb(); err == nil {
				if err = push(strconv.FormatUint(v, 10)); err == nil {
					err = binop("+")
				}
			}
		case op == 0x06: // DW_OP_deref
			var a string
			if a, err = pop(); err == nil {
				err = push(a + " ^")
			}
		case op == 0x12: // DW_OP_dup
			if len(stack) == 0 {
				return "", errUnderflow
			}
			err = push(stack[len(stack)-1])
		case op == 0x13: // DW_OP_drop
			_, err = pop()
		case op == 0x14: // DW_OP_over
			if len(stack) < 2 {
				return "", errUnderflow
			}
			err = push(stack[len(stack)-2])
		case op == 0x16: // DW_OP_swap
			if len(stack) < 2 {
				return "", errUnderflow
			}
			stack[len(stack)-1], stack[len(stack)-2] = stack[len(stack)-2], stack[len(stack)-1]
		case op == 0x22: // DW_OP_plus
			err = binop("+")
		case op == 0x1c: // DW_OP_minus
			err = binop("-")
		case op == 0x1e: // DW_OP_mul
			err = binop("*")
		default:
			return "", fmt.Errorf("operation %#x has no postfix equivalent", op)
		}
		if err != nil {
			return "", err
		}
		if len(stack) > 0 && len(stack[len(stack)-1]) > 4096 {
			return "", fmt.Errorf("expression too long")
		}
	}
	if len(stack) == 0 {
		return "", errUnderflow
	}
	return stack[len(stack)-1], nil
}

func (c *cfiConverter) record(addr uint64, col int, r dwarfcfi.Rule) {
	s, ok := c.rule(col, r)
	if !ok {
		return
	}
	rr := regRule{c.regName(col), s}
	if addr == c.begin {
		for i := range c.initial {
			if c.initial[i].reg == rr.reg {
				c.initial[i].rule = s
				return
			}
		}
		c.initial = append(c.initial, rr)
		return
	}
	c.changes = append(c.changes, addrRule{addr, rr})
}

// formatRules writes "reg: rule" pairs sorted by register name, as
// Breakpad's map-ordered output does.
func formatRules(rs []regRule) string {
	slices.SortFunc(rs, func(a, b regRule) int { return strings.Compare(a.reg, b.reg) })
	var b strings.Builder
	for i, r := range rs {
		if i > 0 {
			b.WriteByte(' ')
		}
		b.WriteString(r.reg)
		b.WriteString(": ")
		b.WriteString(r.rule)
	}
	return b.String()
}

// convertFDE interprets one FDE into a CFIEntry with addresses relative to
// load.
func (c *cfiConverter) convertFDE(sec *dwarfcfi.Section, f *dwarfcfi.FDE, load uint64) (dumpsyms.CFIEntry, error) {
	c.begin = f.Begin
	c.raCol = f.CIE.RAColumn
	c.initial = c.initial[:0]
	c.changes = c.changes[:0]
	// Breakpad's walkers need a .ra rule; when the CFI establishes none, the
	// return address is in its column's register on entry (AArch64's x30).
	if f.CIE.RAColumn < uint64(len(c.names)) && c.names[f.CIE.RAColumn] != "" {
		c.initial = append(c.initial, regRule{".ra", c.names[f.CIE.RAColumn]})
	}
	err := sec.Run(f, c.record)
	e := dumpsyms.CFIEntry{Init: symfile.CFIInit{Address: f.Begin - load, Size: f.Length, Rules: formatRules(c.initial)}}
	// Group the changes by address, last rule for a register winning.
	slices.SortStableFunc(c.changes, func(a, b addrRule) int { return cmp.Compare(a.addr, b.addr) })
	for i := 0; i < len(c.changes); {
		j := i
		var rs []regRule
		for ; j < len(c.changes) && c.changes[j].addr == c.changes[i].addr; j++ {
			rr := c.changes[j].regRule
			found := false
			for k := range rs {
				if rs[k].reg == rr.reg {
					rs[k].rule = rr.rule
					found = true
				}
			}
			if !found {
				rs = append(rs, rr)
			}
		}
		e.Changes = append(e.Changes, symfile.CFI{Address: c.changes[i].addr - load, Rules: formatRules(rs)})
		i = j
	}
	return e, err
}

// RegisterNames returns a copy of the DWARF register names Breakpad's
// walkers use for machine m, indexed by DWARF register number ("" marks an
// unnamed number; nil for machines without names).
func RegisterNames(m elf.Machine) []string { return slices.Clone(registerNames(m)) }
