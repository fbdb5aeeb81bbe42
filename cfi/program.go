package cfi

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math/bits"
	"strings"
)

// Errors of compiling and evaluating. Returned errors wrap one of these, so
// callers can test them with errors.Is.
var (
	// ErrSyntax reports malformed rule text: a STACK CFI rule set that
	// Breakpad's rule parser rejects.
	ErrSyntax = errors.New("malformed rules")
	// ErrTooComplex reports a program beyond this package's fixed limits
	// (MaxNames distinct names, MaxTokens tokens).
	ErrTooComplex = errors.New("program too complex")
	// ErrStackUnderflow reports an operator without enough operands.
	ErrStackUnderflow = errors.New("stack underflow")
	// ErrIncomplete reports a program that leaves values on the stack, or
	// an expression that does not leave exactly one.
	ErrIncomplete = errors.New("incomplete evaluation")
	// ErrUnbound reports a read of a name that has no value: a register the
	// frame does not have, a variable not yet assigned, or a misspelling.
	ErrUnbound = errors.New("unbound name")
	// ErrNotAssignable reports an assignment to a value or to a name not
	// starting with '$'.
	ErrNotAssignable = errors.New("not assignable")
	// ErrDivideByZero reports '/' or '%' by zero.
	ErrDivideByZero = errors.New("division by zero")
	// ErrMemory reports a dereference of memory the dump does not hold.
	ErrMemory = errors.New("memory read failed")
	// ErrUndefined reports that the rule for .cfa or .ra is .undef: the
	// caller cannot be recovered (the outermost frame, as DWARF marks it).
	ErrUndefined = errors.New("undefined")
	// ErrNoCFA and ErrNoRA report a rule set without a .cfa or .ra rule,
	// which Breakpad does not use for unwinding.
	ErrNoCFA = errors.New("no .cfa rule")
	ErrNoRA  = errors.New("no .ra rule")
)

// MaxNames is the most distinct names (registers, pseudo-values and
// $-variables) one program may mention. Real programs mention fewer than 16.
const MaxNames = 64

// MaxTokens is the most tokens one program may have. It bounds the
// evaluation stack; real programs have fewer than 100 tokens.
const MaxTokens = 1 << 16

// opcode is an instruction of a compiled program.
type opcode uint8

const (
	opLiteral opcode = iota // push arg
	opName                  // push a reference to name arg, resolved when popped
	opAdd
	opSub
	opMul
	opDiv
	opMod
	opAlign
	opDeref
	opAssign
)

var opcodes = map[string]opcode{
	"+": opAdd, "-": opSub, "*": opMul, "/": opDiv, "%": opMod, "@": opAlign,
	"^": opDeref, "=": opAssign,
}

type instr struct {
	op  opcode
	arg uint64 // literal value, or index into Program.names
}

// Special slots a name can bind to besides the Evaluator's registers.
const (
	slotNone = -1 // bound only by assignment within the program
	slotCFA  = -2 // .cfa, bound while evaluating .ra and register rules
)

// name is a distinct identifier of a program.
type name struct {
	text       string
	slot       int  // register index in the Evaluator, or slotNone/slotCFA
	assignable bool // begins with '$'
}

// A Program is a compiled postfix expression: a STACK WIN program string or
// the expression of one STACK CFI rule. It is immutable and safe for
// concurrent use.
type Program struct {
	text     string
	code     []instr
	names    []name
	depth    int    // the deepest the stack can grow
	size     int    // address size in bytes
	mask     uint64 // all ones of the address size
	regNames uint64 // bits of names bound to registers

	// What every evaluation meets whatever the names' values: the
	// first error, else the number of entries left on the stack.
	staticErr error
	final     int
}

// String returns the program's source text.
func (p *Program) String() string { return p.text }

// compileTokens compiles tokens for an address size whose all-ones value
// is mask, binding names through index.
func compileTokens(text string, toks []token, size int, mask uint64, index map[string]int) (*Program, error) {
	if len(toks) > MaxTokens {
		return nil, fmt.Errorf("%w: %d tokens, limit %d", ErrTooComplex, len(toks), MaxTokens)
	}
	p := &Program{text: text, code: make([]instr, 0, len(toks)), size: size, mask: mask}
	depth := 0
	for _, t := range toks {
		in := instr{}
		switch t.kind {
		case wordOp:
			in.op = opcodes[t.text]
		case wordNumber:
			if v, ok := parseLiteral(t.text, mask); ok {
				in = instr{op: opLiteral, arg: v}
				break
			}
			// Too large for the address size: Breakpad takes it for
			// an identifier (that nothing binds).
			fallthrough
		case wordIdent:
			i, err := p.nameIndex(t.text, index)
			if err != nil {
				return nil, err
			}
			in = instr{op: opName, arg: uint64(i)}
		}
		switch in.op {
		case opLiteral, opName:
			depth++
		case opDeref:
		case opAssign:
			depth -= 2
		default:
			depth--
		}
		p.depth = max(p.depth, depth)
		p.code = append(p.code, in)
	}
	p.analyze()
	return p, nil
}

// analyze runs the program over the kinds of stack entries (a value or a
// name) rather than their values, finding the errors that do not depend on
// the names' values: stack underflow and assignment to what cannot be
// assigned.
func (p *Program) analyze() {
	stack := make([]int64, 0, p.depth) // -1 for a value, else a name index
	fail := func(pc int, err error) { p.staticErr = p.errAt(pc, err) }
	for pc, in := range p.code {
		switch in.op {
		case opLiteral:
			stack = append(stack, -1)
		case opName:
			stack = append(stack, int64(in.arg))
		case opDeref:
			if len(stack) < 1 {
				fail(pc, ErrStackUnderflow)
				return
			}
			stack[len(stack)-1] = -1
		case opAssign:
			if len(stack) < 2 {
				fail(pc, ErrStackUnderflow)
				return
			}
			target := stack[len(stack)-2]
			stack = stack[:len(stack)-2]
			if target < 0 {
				fail(pc, fmt.Errorf("%w: a value", ErrNotAssignable))
				return
			}
			if !p.names[target].assignable {
				fail(pc, fmt.Errorf("%w: %s", ErrNotAssignable, p.names[target].text))
				return
			}
		default:
			if len(stack) < 2 {
				fail(pc, ErrStackUnderflow)
				return
			}
			stack = stack[:len(stack)-1]
			stack[len(stack)-1] = -1
		}
	}
	p.final = len(stack)
}

// Check reports the errors that every Run of the program meets, whatever
// the registers and memory: an operator without operands, an assignment to
// a value or to a name without '$', or values left on the stack. A
// program that passes may still fail at run time on an unbound name, a
// failed memory read or a division by zero.
func (p *Program) Check() error {
	if p.staticErr != nil {
		return p.staticErr
	}
	if p.final != 0 {
		return fmt.Errorf("%q: %w: %d values left on the stack", p.text, ErrIncomplete, p.final)
	}
	return nil
}

// CheckValue is Check for Value: the expression must leave one value.
func (p *Program) CheckValue() error {
	if p.staticErr != nil {
		return p.staticErr
	}
	if p.final != 1 {
		return fmt.Errorf("%q: %w: %d values on the stack, want 1", p.text, ErrIncomplete, p.final)
	}
	return nil
}

func (p *Program) nameIndex(s string, index map[string]int) (int, error) {
	for i := range p.names {
		if p.names[i].text == s {
			return i, nil
		}
	}
	if len(p.names) == MaxNames {
		return 0, fmt.Errorf("%w: more than %d distinct names", ErrTooComplex, MaxNames)
	}
	n := name{text: s, slot: slotNone, assignable: strings.HasPrefix(s, "$")}
	if s == ".cfa" {
		n.slot = slotCFA
	} else if r, ok := index[s]; ok {
		n.slot = r
		p.regNames |= 1 << len(p.names)
	}
	p.names = append(p.names, n)
	return len(p.names) - 1, nil
}

// entry is a stack element: a value, or a reference to a name that is
// resolved when an operator pops it, as Breakpad's evaluator keeps
// identifiers on its stack as strings until then.
type entry struct {
	v    uint64
	name int32 // -1 for a value
}

// machine is the state of one evaluation: the values of the program's names.
type machine struct {
	vals     []uint64
	bound    uint64 // bits of names that have a value
	assigned uint64 // bits of names assigned by the program
}

// smallNames is how many names a program's values can have without a heap
// allocation; real programs have fewer.
const smallNames = 16

// newMachine returns a machine whose values live in small when they fit.
func (p *Program) newMachine(small *[smallNames]uint64) machine {
	if len(p.names) <= smallNames {
		return machine{vals: small[:len(p.names)]}
	}
	return machine{vals: make([]uint64, len(p.names))}
}

// load binds the program's register names from regs and .cfa from cfa.
func (p *Program) load(m *machine, regs *Registers, cfa uint64, hasCFA bool) {
	for i := range p.names {
		switch s := p.names[i].slot; {
		case s >= 0:
			if regs.Valid&(1<<s) != 0 {
				m.vals[i] = regs.Values[s] & p.mask
				m.bound |= 1 << i
			}
		case s == slotCFA && hasCFA:
			m.vals[i] = cfa & p.mask
			m.bound |= 1 << i
		}
	}
}

// fault describes a failed evaluation cheaply, as a value: most faults
// are discarded (a register rule that fails only leaves its register
// unrecovered), so the error text is built only when an error is returned.
type fault struct {
	err   error  // the sentinel (ErrUnbound, ...); nil when there is no fault
	pc    int    // the failing token, or len(code) for the end of the program
	name  int32  // the name involved, or -1
	val   uint64 // the address of ErrMemory, the value of ErrNotAssignable, the count of ErrIncomplete
	cause error  // the memory's own error
}

// error turns a fault into the error returned to callers.
func (p *Program) error(f fault) error {
	var detail string
	switch {
	case f.err == ErrIncomplete:
		detail = fmt.Sprintf(": %d values on the stack", f.val)
	case f.err == ErrMemory && f.cause != nil:
		return fmt.Errorf("%q: token %d: %w: %#x: %w", p.text, f.pc, f.err, f.val, f.cause)
	case f.err == ErrMemory:
		detail = fmt.Sprintf(": %#x", f.val)
	case f.name >= 0:
		detail = ": " + p.names[f.name].text
	case f.err == ErrNotAssignable:
		detail = fmt.Sprintf(": value %#x", f.val)
	}
	return fmt.Errorf("%q: token %d: %w%s", p.text, f.pc, f.err, detail)
}

// exec runs the program and returns how many entries remain on the stack
// and the top one, unresolved. On failure it sets *f and returns -1.
func (p *Program) exec(m *machine, mem Memory, f *fault) (n int, top entry) {
	var small [8]entry
	var stack []entry
	if p.depth <= len(small) {
		stack = small[:0]
	} else {
		stack = make([]entry, 0, p.depth)
	}
	// pop pops a value, resolving a name; unbound is the index of a name
	// without a value, else -1.
	pop := func() (v uint64, unbound int32) {
		e := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		if e.name < 0 {
			return e.v, -1
		}
		if m.bound&(1<<e.name) == 0 {
			return 0, e.name
		}
		return m.vals[e.name], -1
	}
	fail := func(pc int, err error, name int32, val uint64) (int, entry) {
		*f = fault{err: err, pc: pc, name: name, val: val}
		return -1, entry{}
	}
	for pc, in := range p.code {
		switch in.op {
		case opLiteral:
			stack = append(stack, entry{v: in.arg, name: -1})
		case opName:
			stack = append(stack, entry{name: int32(in.arg)})
		case opDeref:
			if len(stack) < 1 {
				return fail(pc, ErrStackUnderflow, -1, 0)
			}
			addr, u := pop()
			if u >= 0 {
				return fail(pc, ErrUnbound, u, 0)
			}
			v, cause, ok := p.read(mem, addr)
			if !ok {
				*f = fault{err: ErrMemory, pc: pc, name: -1, val: addr, cause: cause}
				return -1, entry{}
			}
			stack = append(stack, entry{v: v, name: -1})
		case opAssign:
			if len(stack) < 2 {
				return fail(pc, ErrStackUnderflow, -1, 0)
			}
			v, u := pop()
			if u >= 0 {
				return fail(pc, ErrUnbound, u, 0)
			}
			e := stack[len(stack)-1]
			stack = stack[:len(stack)-1]
			if e.name < 0 {
				return fail(pc, ErrNotAssignable, -1, e.v)
			}
			if !p.names[e.name].assignable {
				return fail(pc, ErrNotAssignable, e.name, 0)
			}
			m.vals[e.name] = v
			m.bound |= 1 << e.name
			m.assigned |= 1 << e.name
		default: // binary operators
			if len(stack) < 2 {
				return fail(pc, ErrStackUnderflow, -1, 0)
			}
			b, u := pop()
			if u >= 0 {
				return fail(pc, ErrUnbound, u, 0)
			}
			a, u := pop()
			if u >= 0 {
				return fail(pc, ErrUnbound, u, 0)
			}
			var r uint64
			switch in.op {
			case opAdd:
				r = a + b
			case opSub:
				r = a - b
			case opMul:
				r = a * b
			case opDiv:
				if b == 0 {
					return fail(pc, ErrDivideByZero, -1, 0)
				}
				r = a / b
			case opMod:
				if b == 0 {
					return fail(pc, ErrDivideByZero, -1, 0)
				}
				r = a % b
			case opAlign:
				// Breakpad: a & (~0 ^ (b - 1)); b == 0 gives 0.
				r = a &^ (b - 1)
			}
			stack = append(stack, entry{v: r & p.mask, name: -1})
		}
	}
	if len(stack) > 0 {
		top = stack[len(stack)-1]
	}
	return len(stack), top
}

// read dereferences addr: an unsigned little-endian word of the address
// size. ok is false when the memory cannot give it; cause is the memory's
// error, if it gave one.
func (p *Program) read(mem Memory, addr uint64) (v uint64, cause error, ok bool) {
	if mem == nil {
		return 0, nil, false
	}
	b, err := mem.ReadMemory(addr, p.size)
	if err != nil || len(b) < p.size {
		return 0, err, false
	}
	if p.size == 4 {
		return uint64(binary.LittleEndian.Uint32(b)), nil, true
	}
	return binary.LittleEndian.Uint64(b), nil, true
}

// errAt gives err the context of the program text and the failing token.
func (p *Program) errAt(pc int, err error) error {
	return fmt.Errorf("%q: token %d: %w", p.text, pc, err)
}

// Value evaluates the program as an expression: it must leave exactly one
// value on the stack, as Breakpad's EvaluateForValue requires. Names bind
// to the valid registers of regs; regs is not modified.
func (p *Program) Value(regs *Registers, mem Memory) (uint64, error) {
	var f fault
	v, ok := p.value(regs, 0, false, mem, &f)
	if !ok {
		return 0, p.error(f)
	}
	return v, nil
}

// value is Value with .cfa bound when hasCFA; on failure it sets *f.
func (p *Program) value(regs *Registers, cfa uint64, hasCFA bool, mem Memory, f *fault) (uint64, bool) {
	var small [smallNames]uint64
	m := p.newMachine(&small)
	p.load(&m, regs, cfa, hasCFA)
	n, top := p.exec(&m, mem, f)
	switch {
	case n < 0:
		return 0, false
	case n != 1:
		*f = fault{err: ErrIncomplete, pc: len(p.code), name: -1, val: uint64(n)}
		return 0, false
	case top.name < 0:
		return top.v, true
	case m.bound&(1<<top.name) == 0:
		*f = fault{err: ErrUnbound, pc: len(p.code), name: top.name}
		return 0, false
	}
	return m.vals[top.name], true
}

// Run executes the program as a STACK WIN program string, as Breakpad's
// Evaluate does: names bind to the valid registers of regs, assignments
// update them as the program runs (later tokens see the new values), and
// the stack must be empty at the end. Run stores the final value of every
// register the program assigned into regs, marks it valid, and returns the
// bit set of those registers (bit i for register index i). Assignments to
// $-variables that are not registers (such as $T0) stay local to the run.
//
// On error, the assignments made before the failure are still stored and
// reported, as Breakpad's x86 walker goes on with them.
func (p *Program) Run(regs *Registers, mem Memory) (assigned uint64, err error) {
	var small [smallNames]uint64
	m := p.newMachine(&small)
	p.load(&m, regs, 0, false)
	var f fault
	if n, _ := p.exec(&m, mem, &f); n > 0 {
		f = fault{err: ErrIncomplete, pc: len(p.code), name: -1, val: uint64(n)}
	}
	for set := m.assigned & p.regNames; set != 0; set &= set - 1 {
		i := bits.TrailingZeros64(set)
		s := p.names[i].slot
		regs.Values[s] = m.vals[i]
		regs.Valid |= 1 << s
		assigned |= 1 << s
	}
	if f.err != nil {
		err = p.error(f)
	}
	return assigned, err
}
