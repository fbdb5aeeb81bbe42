package cfi

import (
	"encoding/binary"
	"fmt"
	"math/bits"
	"strings"
	"sync"
)

// An Evaluator compiles rule text for one CPU: its address size and the
// names its registers and pseudo-values have in rule text. It memoizes what
// it compiles by text, so each distinct text is parsed once however many
// frames use it. An Evaluator is safe for concurrent use; create one per
// CPU and keep it for the life of the process (each memo holds up to
// MemoLimit entries).
type Evaluator struct {
	size  int
	mask  uint64
	names []string
	index map[string]int

	mu    sync.RWMutex
	limit int                             // entries per memo before it is emptied
	progs map[string]compiled[*Program]   // STACK WIN programs
	exprs map[string]*Program             // STACK CFI rule expressions
	lines map[string]compiled[[]lineRule] // STACK CFI rule texts
	sets  map[string]compiled[*RuleSet]   // combined STACK CFI rule texts
}

// MemoLimit is how many entries each of an Evaluator's memos holds
// before it is emptied and refilled with what is met next. Walks meet a few
// dozen distinct texts; the limit only bounds the memory of a long-lived
// process that walks dumps of ever new modules.
const MemoLimit = 1 << 16

// store adds an entry to a memo, emptying the memo first when it is full.
// Compiled values stay valid after they leave the memo.
func store[V any](m map[string]V, key string, v V, limit int) {
	if len(m) >= limit {
		clear(m)
	}
	m[key] = v
}

// compiled is a memoized compilation result, errors included, so that bad
// text is not parsed again on every frame that meets it.
type compiled[T any] struct {
	v   T
	err error
}

// lineRule is one compiled rule of a STACK CFI rule text.
type lineRule struct {
	name string
	prog *Program // nil for .undef
}

// NewEvaluator returns an Evaluator for a CPU with the given address size
// (4 or 8 bytes) and register names. A register's index in Registers is its
// position in names. Names are as rule text spells them ("$rsp", "x29",
// "sp"); include the pseudo-values the walker supplies to STACK WIN
// programs (".cbSavedRegs", ".raSearch", ...). ".cfa" and ".ra" are
// reserved: RuleSet.FindCallerRegs returns them separately.
func NewEvaluator(addrSize int, names []string) (*Evaluator, error) {
	if addrSize != 4 && addrSize != 8 {
		return nil, fmt.Errorf("cfi: address size %d, want 4 or 8", addrSize)
	}
	if len(names) > MaxRegisters {
		return nil, fmt.Errorf("cfi: %d register names, limit %d", len(names), MaxRegisters)
	}
	e := &Evaluator{
		size:  addrSize,
		limit: MemoLimit,
		mask:  ^uint64(0) >> (64 - 8*addrSize),
		names: append([]string(nil), names...),
		index: make(map[string]int, len(names)),
		progs: make(map[string]compiled[*Program]),
		exprs: make(map[string]*Program),
		lines: make(map[string]compiled[[]lineRule]),
		sets:  make(map[string]compiled[*RuleSet]),
	}
	for i, n := range names {
		switch {
		case n == "" || strings.ContainsAny(n, " \t\n\v\f\r"):
			return nil, fmt.Errorf("cfi: register %d: bad name %q", i, n)
		case n == ".cfa" || n == ".ra":
			return nil, fmt.Errorf("cfi: register %d: %s is reserved", i, n)
		}
		if _, dup := e.index[n]; dup {
			return nil, fmt.Errorf("cfi: register %d: duplicate name %q", i, n)
		}
		e.index[n] = i
	}
	return e, nil
}

// AddrSize returns the address size in bytes: the width of arithmetic and
// of dereferences.
func (e *Evaluator) AddrSize() int { return e.size }

// Index returns the register index of name.
func (e *Evaluator) Index(name string) (int, bool) {
	i, ok := e.index[name]
	return i, ok
}

// Name returns the name of register i, which must be in [0, NumRegisters()).
func (e *Evaluator) Name(i int) string { return e.names[i] }

// NumRegisters returns the number of register names.
func (e *Evaluator) NumRegisters() int { return len(e.names) }

// Program compiles a STACK WIN program string (memoized by its text).
func (e *Evaluator) Program(text string) (*Program, error) {
	e.mu.RLock()
	c, ok := e.progs[text]
	e.mu.RUnlock()
	if ok {
		return c.v, c.err
	}
	c.v, c.err = e.compile(text)
	if c.err != nil {
		c.v, c.err = nil, fmt.Errorf("cfi: STACK WIN program: %w", c.err)
	}
	e.mu.Lock()
	store(e.progs, text, c, e.limit)
	e.mu.Unlock()
	return c.v, c.err
}

// Expr compiles a postfix expression such as a STACK CFI rule's right-hand
// side, for Program.Value. It is not memoized.
func (e *Evaluator) Expr(text string) (*Program, error) {
	p, err := e.compile(text)
	if err != nil {
		return nil, fmt.Errorf("cfi: expression: %w", err)
	}
	return p, nil
}

func (e *Evaluator) compile(text string) (*Program, error) {
	if err := checkSize(text); err != nil {
		return nil, err
	}
	toks, err := parseExpr(text)
	if err != nil {
		return nil, fmt.Errorf("%q: %w", text, err)
	}
	return compileTokens(text, toks, e.size, e.mask, e.index)
}

// rules compiles one STACK CFI rule text (memoized by its text).
func (e *Evaluator) rules(text string) ([]lineRule, error) {
	e.mu.RLock()
	c, ok := e.lines[text]
	e.mu.RUnlock()
	if ok {
		return c.v, c.err
	}
	c.v, c.err = e.compileRules(text)
	e.mu.Lock()
	store(e.lines, text, c, e.limit)
	e.mu.Unlock()
	return c.v, c.err
}

func (e *Evaluator) compileRules(text string) ([]lineRule, error) {
	if err := checkSize(text); err != nil {
		return nil, err
	}
	parsed, err := parseRuleSet(text)
	if err != nil {
		return nil, fmt.Errorf("%q: %w", text, err)
	}
	out := make([]lineRule, 0, len(parsed))
	for _, r := range parsed {
		lr := lineRule{name: r.name}
		if r.text != ".undef" {
			e.mu.RLock()
			p, ok := e.exprs[r.text]
			e.mu.RUnlock()
			if !ok {
				p, err = compileTokens(r.text, r.expr, e.size, e.mask, e.index)
				if err != nil {
					return nil, fmt.Errorf("%q: rule %s: %w", text, r.name, err)
				}
				e.mu.Lock()
				store(e.exprs, r.text, p, e.limit)
				e.mu.Unlock()
			}
			lr.prog = p
		}
		out = append(out, lr)
	}
	return out, nil
}

// RuleSet returns the STACK CFI rules in force at an address: texts are
// the rule text of the STACK CFI INIT record covering the address followed
// by those of its delta records up to the address, in order; a later rule
// for a register replaces an earlier one. The result is memoized by the
// sequence of texts. It is an error, as in Breakpad, for any text to be
// malformed (ErrSyntax). Rules in force that cannot unwind, such as a set
// without .ra, compile; RuleSet.Err says why they are unusable.
func (e *Evaluator) RuleSet(texts ...string) (*RuleSet, error) {
	for i, t := range texts {
		// Refused before a key as long as all texts is made.
		if len(t) > MaxTextLen {
			return nil, fmt.Errorf("cfi: STACK CFI: text %d: %w", i, checkSize(t))
		}
	}
	var buf [512]byte
	key := buf[:0]
	for _, t := range texts {
		key = binary.AppendUvarint(key, uint64(len(t)))
		key = append(key, t...)
	}
	e.mu.RLock()
	c, ok := e.sets[string(key)]
	e.mu.RUnlock()
	if ok {
		return c.v, c.err
	}
	c.v, c.err = e.ruleSet(texts)
	if c.err != nil {
		c.v, c.err = nil, fmt.Errorf("cfi: STACK CFI: %w", c.err)
	}
	e.mu.Lock()
	store(e.sets, string(key), c, e.limit)
	e.mu.Unlock()
	return c.v, c.err
}

func (e *Evaluator) ruleSet(texts []string) (*RuleSet, error) {
	rs := &RuleSet{}
	var regs [MaxRegisters]*Program
	var have uint64 // registers with a rule (a nil Program is .undef)
	for i, t := range texts {
		lrs, err := e.rules(t)
		if err != nil {
			return nil, fmt.Errorf("text %d: %w", i, err)
		}
		for _, lr := range lrs {
			switch lr.name {
			case ".cfa":
				rs.cfa, rs.hasCFA = lr.prog, true
			case ".ra":
				rs.ra, rs.hasRA = lr.prog, true
			default:
				// Rules for registers the CPU's walker does not
				// know are of no use to it; Breakpad computes and
				// then ignores them.
				if r, ok := e.index[lr.name]; ok {
					regs[r] = lr.prog
					have |= 1 << r
				}
			}
		}
	}
	rs.err = rs.check()
	rs.regs = make([]regRule, 0, bits.OnesCount64(have))
	for ; have != 0; have &= have - 1 {
		r := bits.TrailingZeros64(have)
		rs.regs = append(rs.regs, regRule{reg: r, name: e.names[r], prog: regs[r]})
	}
	return rs, nil
}

// A RuleSet is the compiled STACK CFI rules in force at an address. It is
// immutable and safe for concurrent use.
type RuleSet struct {
	cfa, ra       *Program // nil for .undef
	hasCFA, hasRA bool
	regs          []regRule // by register index
	err           error     // why no frame can be unwound, or nil
}

// check finds what makes every FindCallerRegs fail: a missing .cfa or
// .ra rule, as Breakpad requires both, or a .cfa or .ra rule that fails
// whatever the frame. A register rule that always fails just never
// recovers its register.
func (rs *RuleSet) check() error {
	switch {
	case !rs.hasCFA:
		return ErrNoCFA
	case !rs.hasRA:
		return ErrNoRA
	}
	if rs.cfa != nil {
		if err := rs.cfa.CheckValue(); err != nil {
			return fmt.Errorf(".cfa: %w", err)
		}
	}
	if rs.ra != nil {
		if err := rs.ra.CheckValue(); err != nil {
			return fmt.Errorf(".ra: %w", err)
		}
	}
	return nil
}

// Outermost reports whether the rules mark the return address undefined
// (".ra: .undef"): the frame is the outermost of its thread, as DWARF CFI
// says of _start, clone and thread start routines.
func (rs *RuleSet) Outermost() bool { return rs.hasRA && rs.ra == nil }

// Err reports why the rule set cannot unwind any frame, or nil when it
// may: the rules lack .cfa (ErrNoCFA) or .ra (ErrNoRA), as the STACK CFI
// INIT records of signal trampolines and of _start do, or the .cfa or .ra
// rule fails whatever the registers (see Program.CheckValue).
// FindCallerRegs returns this error without evaluating anything.
func (rs *RuleSet) Err() error { return rs.err }

type regRule struct {
	reg  int
	name string
	prog *Program // nil for .undef
}

// FindCallerRegs computes the caller's registers from the callee's, as
// Breakpad's CFIFrameInfo::FindCallerRegs does. It evaluates the .cfa rule
// in terms of the callee's registers, then the .ra rule and every register
// rule in terms of the callee's registers and .cfa, and returns the CFA and
// the return address. It resets caller and stores into it each register
// whose rule evaluates; a register whose rule is .undef or fails (an
// unbound name, unreadable memory, ...) is left invalid, as Breakpad skips
// it. An error means the rules cannot unwind this frame: the .cfa or .ra
// rule is .undef (ErrUndefined) or fails. callee is not modified; caller
// may not be callee.
func (rs *RuleSet) FindCallerRegs(callee *Registers, mem Memory, caller *Registers) (cfa, ra uint64, err error) {
	caller.Valid = 0
	if rs.err != nil {
		return 0, 0, fmt.Errorf("cfi: %w", rs.err)
	}
	if rs.cfa == nil {
		return 0, 0, fmt.Errorf("cfi: .cfa: %w", ErrUndefined)
	}
	var f fault
	cfa, ok := rs.cfa.value(callee, 0, false, mem, &f)
	if !ok {
		return 0, 0, fmt.Errorf("cfi: .cfa: %w", rs.cfa.error(f))
	}
	if rs.ra == nil {
		return 0, 0, fmt.Errorf("cfi: .ra: %w", ErrUndefined)
	}
	ra, ok = rs.ra.value(callee, cfa, true, mem, &f)
	if !ok {
		return 0, 0, fmt.Errorf("cfi: .ra: %w", rs.ra.error(f))
	}
	for _, r := range rs.regs {
		if r.prog == nil {
			continue
		}
		if v, ok := r.prog.value(callee, cfa, true, mem, &f); ok {
			caller.Values[r.reg] = v
			caller.Valid |= 1 << r.reg
		}
	}
	return cfa, ra, nil
}

// String returns the rules in Breakpad's serialized form: .cfa, .ra, then
// the registers the Evaluator knows, by index.
func (rs *RuleSet) String() string {
	var b strings.Builder
	rule := func(name string, p *Program) {
		if b.Len() > 0 {
			b.WriteByte(' ')
		}
		b.WriteString(name)
		b.WriteString(": ")
		if p == nil {
			b.WriteString(".undef")
		} else {
			b.WriteString(p.text)
		}
	}
	rule(".cfa", rs.cfa)
	rule(".ra", rs.ra)
	for _, r := range rs.regs {
		rule(r.name, r.prog)
	}
	return b.String()
}
