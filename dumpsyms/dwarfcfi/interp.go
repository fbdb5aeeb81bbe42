package dwarfcfi

import (
	"errors"
	"fmt"

	"github.com/gobreakpad/gobreakpad/internal/dwarfbuf"
)

// CFA is the column number under which Run reports the canonical frame
// address rule; register columns are DWARF register numbers (>= 0).
const CFA = -1

// RuleKind is the kind of a register rule (DWARF 6.4.1).
type RuleKind uint8

// Register rule kinds. For the CFA column only ValOffset (CFA = Reg + Offset)
// and ValExpression (CFA = value of Expr) occur.
const (
	Undefined     RuleKind = iota // the register cannot be recovered
	SameValue                     // the register has its value from the younger frame
	Offset                        // saved at address CFA+Offset
	ValOffset                     // the value is Base+Offset (CFA for registers, Reg for the CFA)
	Register                      // saved in register Reg
	Expression                    // saved at the address computed by Expr (CFA pushed first)
	ValExpression                 // the value is computed by Expr
)

// Rule is one register rule.
type Rule struct {
	Kind   RuleKind
	Reg    uint64 // Register rules and the CFA's ValOffset base register
	Offset int64  // Offset and ValOffset rules
	Expr   []byte // Expression and ValExpression rules: a DWARF expression
}

func (r Rule) equal(o Rule) bool {
	return r.Kind == o.Kind && r.Reg == o.Reg && r.Offset == o.Offset && string(r.Expr) == string(o.Expr)
}

// maxStateDepth bounds DW_CFA_remember_state nesting so that hostile input
// cannot make the interpreter allocate without limit.
const maxStateDepth = 64

// ErrStateStack reports DW_CFA_restore_state without a remembered state, or
// nesting beyond the supported depth.
var ErrStateStack = errors.New("remember/restore state stack misuse")

type state struct {
	cfa   Rule
	rules map[int]Rule
}

func (s state) clone() state {
	m := make(map[int]Rule, len(s.rules))
	for k, v := range s.rules {
		m[k] = v
	}
	return state{cfa: s.cfa, rules: m}
}

// Run interprets the CIE's initial instructions and then the FDE's
// instructions, calling emit for every rule they establish, at the address
// where it takes effect (the CIE's rules and those before the first advance
// at f.Begin). Columns are DWARF register numbers, or CFA. A register restored
// (DW_CFA_restore, DW_CFA_restore_state) to a column the CIE left unspecified
// is reported as SameValue. Run stops at the end of the FDE's range.
func (s *Section) Run(f *FDE, emit func(addr uint64, col int, r Rule)) error {
	in := &interp{s: s, f: f, emit: emit, loc: f.Begin, end: f.Begin + f.Length}
	in.cur = state{rules: make(map[int]Rule)}
	if err := in.exec(f.CIE.Instructions, f.CIE.instrOffset, true); err != nil {
		return fmt.Errorf("CIE at %#x: %w", f.CIE.Offset, err)
	}
	in.initial = in.cur.clone()
	if err := in.exec(f.Instructions, f.instrOffset, false); err != nil {
		return fmt.Errorf("FDE at %#x: %w", f.Offset, err)
	}
	return nil
}

type interp struct {
	s       *Section
	f       *FDE
	emit    func(addr uint64, col int, r Rule)
	loc     uint64
	end     uint64
	cur     state
	initial state
	stack   []state
	done    bool
}

func (in *interp) set(col int, r Rule) {
	if col == CFA {
		in.cur.cfa = r
	} else {
		in.cur.rules[col] = r
	}
	in.emit(in.loc, col, r)
}

func (in *interp) restore(col int) {
	if r, ok := in.initial.rules[col]; ok {
		in.set(col, r)
	} else {
		in.set(col, Rule{Kind: SameValue})
	}
}

func (in *interp) advance(delta uint64) {
	n := delta * in.f.CIE.CodeAlign
	if in.f.CIE.CodeAlign != 0 && n/in.f.CIE.CodeAlign != delta || in.loc+n < in.loc {
		in.done = true
		return
	}
	in.loc += n
	if in.loc >= in.end {
		in.done = true
	}
}

func toCol(reg uint64) (int, error) {
	if reg > 1<<16 {
		return 0, fmt.Errorf("register number %d out of range", reg)
	}
	return int(reg), nil
}

// exec runs one instruction stream; codeOffset is its offset in the section
// (for pc-relative DW_CFA_set_loc). cieMode rejects the instructions a CIE
// must not hold.
func (in *interp) exec(code []byte, codeOffset uint64, cieMode bool) error {
	c := in.f.CIE
	r := dwarfbuf.New(code, in.s.ByteOrder, ErrTruncated)
	for r.Off() < len(r.Data()) && !in.done {
		op := r.U8()
		var err error
		switch op & 0xc0 {
		case 0x40: // DW_CFA_advance_loc
			in.advance(uint64(op & 0x3f))
			continue
		case 0x80: // DW_CFA_offset
			off := r.Uleb()
			in.set(int(op&0x3f), Rule{Kind: Offset, Offset: int64(off) * c.DataAlign})
			continue
		case 0xc0: // DW_CFA_restore
			if cieMode {
				return errors.New("DW_CFA_restore in CIE")
			}
			in.restore(int(op & 0x3f))
			continue
		}
		var col int
		switch op {
		case 0x00: // DW_CFA_nop
		case 0x01: // DW_CFA_set_loc
			enc := c.FDEEncoding
			if in.s.Kind == DebugFrame && !c.HasAugData {
				enc = peAbsptr
			}
			var v uint64
			v, err = in.s.pointer(r, enc, codeOffset, c.AddrSize, in.f.Begin)
			if err == nil {
				if v < in.loc {
					return fmt.Errorf("DW_CFA_set_loc %#x moves backwards from %#x", v, in.loc)
				}
				in.loc = v
				if in.loc >= in.end {
					in.done = true
				}
			}
		case 0x02: // DW_CFA_advance_loc1
			in.advance(uint64(r.U8()))
		case 0x03: // DW_CFA_advance_loc2
			in.advance(uint64(r.U16()))
		case 0x04: // DW_CFA_advance_loc4
			in.advance(uint64(r.U32()))
		case 0x1d: // DW_CFA_MIPS_advance_loc8
			in.advance(r.U64())
		case 0x05: // DW_CFA_offset_extended
			reg, off := r.Uleb(), r.Uleb()
			if col, err = toCol(reg); err == nil {
				in.set(col, Rule{Kind: Offset, Offset: int64(off) * c.DataAlign})
			}
		case 0x06: // DW_CFA_restore_extended
			reg := r.Uleb()
			if col, err = toCol(reg); err == nil && r.Err() == nil {
				if cieMode {
					return errors.New("DW_CFA_restore_extended in CIE")
				}
				in.restore(col)
			}
		case 0x07: // DW_CFA_undefined
			if col, err = toCol(r.Uleb()); err == nil && r.Err() == nil {
				in.set(col, Rule{Kind: Undefined})
			}
		case 0x08: // DW_CFA_same_value
			if col, err = toCol(r.Uleb()); err == nil && r.Err() == nil {
				in.set(col, Rule{Kind: SameValue})
			}
		case 0x09: // DW_CFA_register
			reg, reg2 := r.Uleb(), r.Uleb()
			if col, err = toCol(reg); err == nil && r.Err() == nil {
				in.set(col, Rule{Kind: Register, Reg: reg2})
			}
		case 0x0a: // DW_CFA_remember_state
			if len(in.stack) >= maxStateDepth {
				return ErrStateStack
			}
			in.stack = append(in.stack, in.cur.clone())
		case 0x0b: // DW_CFA_restore_state
			if len(in.stack) == 0 {
				return ErrStateStack
			}
			old := in.stack[len(in.stack)-1]
			in.stack = in.stack[:len(in.stack)-1]
			in.transition(old)
		case 0x0c: // DW_CFA_def_cfa
			reg, off := r.Uleb(), r.Uleb()
			in.set(CFA, Rule{Kind: ValOffset, Reg: reg, Offset: int64(off)})
		case 0x0d: // DW_CFA_def_cfa_register
			reg := r.Uleb()
			nr := in.cur.cfa
			if nr.Kind != ValOffset {
				nr = Rule{Kind: ValOffset}
			}
			nr.Reg = reg
			in.set(CFA, nr)
		case 0x0e: // DW_CFA_def_cfa_offset
			off := r.Uleb()
			nr := in.cur.cfa
			if nr.Kind != ValOffset {
				return errors.New("DW_CFA_def_cfa_offset without a register CFA rule")
			}
			nr.Offset = int64(off)
			in.set(CFA, nr)
		case 0x0f: // DW_CFA_def_cfa_expression
			e := r.Bytes(r.Uleb())
			if r.Err() == nil {
				in.set(CFA, Rule{Kind: ValExpression, Expr: e})
			}
		case 0x10: // DW_CFA_expression
			reg := r.Uleb()
			e := r.Bytes(r.Uleb())
			if col, err = toCol(reg); err == nil && r.Err() == nil {
				in.set(col, Rule{Kind: Expression, Expr: e})
			}
		case 0x11: // DW_CFA_offset_extended_sf
			reg, off := r.Uleb(), r.Sleb()
			if col, err = toCol(reg); err == nil && r.Err() == nil {
				in.set(col, Rule{Kind: Offset, Offset: off * c.DataAlign})
			}
		case 0x12: // DW_CFA_def_cfa_sf
			reg, off := r.Uleb(), r.Sleb()
			if r.Err() == nil {
				in.set(CFA, Rule{Kind: ValOffset, Reg: reg, Offset: off * c.DataAlign})
			}
		case 0x13: // DW_CFA_def_cfa_offset_sf
			off := r.Sleb()
			nr := in.cur.cfa
			if nr.Kind != ValOffset {
				return errors.New("DW_CFA_def_cfa_offset_sf without a register CFA rule")
			}
			nr.Offset = off * c.DataAlign
			if r.Err() == nil {
				in.set(CFA, nr)
			}
		case 0x14: // DW_CFA_val_offset
			reg, off := r.Uleb(), r.Uleb()
			if col, err = toCol(reg); err == nil && r.Err() == nil {
				in.set(col, Rule{Kind: ValOffset, Offset: int64(off) * c.DataAlign})
			}
		case 0x15: // DW_CFA_val_offset_sf
			reg, off := r.Uleb(), r.Sleb()
			if col, err = toCol(reg); err == nil && r.Err() == nil {
				in.set(col, Rule{Kind: ValOffset, Offset: off * c.DataAlign})
			}
		case 0x16: // DW_CFA_val_expression
			reg := r.Uleb()
			e := r.Bytes(r.Uleb())
			if col, err = toCol(reg); err == nil && r.Err() == nil {
				in.set(col, Rule{Kind: ValExpression, Expr: e})
			}
		case 0x2d:
			// DW_CFA_GNU_window_save (SPARC) / DW_CFA_AARCH64_negate_ra_state:
			// on AArch64 it toggles return-address signing, which changes no
			// rule; SPARC register windows are out of scope.
		case 0x2e: // DW_CFA_GNU_args_size
			r.Uleb()
		case 0x2f: // DW_CFA_GNU_negative_offset_extended
			reg, off := r.Uleb(), r.Uleb()
			if col, err = toCol(reg); err == nil && r.Err() == nil {
				in.set(col, Rule{Kind: Offset, Offset: -int64(off) * c.DataAlign})
			}
		default:
			return fmt.Errorf("unknown CFA instruction %#x at offset %d", op, r.Off()-1)
		}
		if err != nil {
			return err
		}
		if r.Err() != nil {
			return fmt.Errorf("instruction %#x: %w", op, r.Err())
		}
	}
	if r.Err() != nil {
		return r.Err()
	}
	return nil
}

// transition makes old the current state, reporting every column whose rule
// differs.
func (in *interp) transition(old state) {
	if !old.cfa.equal(in.cur.cfa) {
		in.emit(in.loc, CFA, old.cfa)
	}
	for col, r := range old.rules {
		if cr, ok := in.cur.rules[col]; !ok || !cr.equal(r) {
			in.emit(in.loc, col, r)
		}
	}
	for col := range in.cur.rules {
		if _, ok := old.rules[col]; !ok {
			in.emit(in.loc, col, Rule{Kind: SameValue})
		}
	}
	in.cur = old
}
