// Package machine holds the instruction semantics that the project's test
// models of machine code share: the register and stack models that run
// real x86_64 and arm64 instructions (decoded with golang.org/x/arch) to
// check unwind rules (dumpsyms/macho's exact-rule sweeps) and to build
// truth dumps (cmd/minidump_stackwalk's macOS programs,
// cmd/dump_syms/testdata/winprogs/mkx64). It has the parts that are the
// same in every model: which register an operand names, the address a
// memory operand computes, the stack memory with its supply of distinct
// junk words for values a model cannot know, push and pop. Each model
// keeps what is its own: how it treats an unknown value, which registers
// a call clobbers, which instructions it refuses, what it checks.
//
// It is test support (the test-kit floor of docs/design.md): no
// production package imports it.
package machine

import (
	"golang.org/x/arch/x86/x86asm"
)

// Memory is a model's stack memory, one 8-byte word at each address
// written, and the supply of junk words for the values the model cannot
// know: JunkBase + 0x10, JunkBase + 0x20, ... in the order asked.
type Memory struct {
	Words    map[uint64]uint64
	JunkBase uint64
	junk     uint64
}

// NewMemory returns an empty memory whose junk words start above base.
func NewMemory(base uint64) Memory {
	return Memory{Words: map[uint64]uint64{}, JunkBase: base}
}

// Next returns the next junk word.
func (m *Memory) Next() uint64 { m.junk++; return m.JunkBase + m.junk*0x10 }

// Load returns the word at p, or the next junk word when p was never
// written.
func (m *Memory) Load(p uint64) uint64 {
	if v, ok := m.Words[p]; ok {
		return v
	}
	return m.Next()
}

// Store writes n bytes of v at p: an aligned whole word as it is, other
// writes as junk over every word they touch.
func (m *Memory) Store(p uint64, n int, v uint64) {
	if n == 8 && p%8 == 0 {
		m.Words[p] = v
		return
	}
	for a := p &^ 7; a < p+uint64(max(n, 1)); a += 8 {
		m.Words[a] = m.Next()
	}
}

// X64 is a model x86_64 machine: the sixteen general registers by their
// 64-bit x86asm names and the memory.
type X64 struct {
	Memory
	Regs map[x86asm.Reg]uint64
}

// NewX64 returns a model with no register set and junk words above
// junkBase.
func NewX64(junkBase uint64) X64 {
	return X64{Memory: NewMemory(junkBase), Regs: map[x86asm.Reg]uint64{}}
}

// GPRs are the general registers in x86asm's 64-bit names, in encoding
// order (rax, rcx, rdx, rbx, rsp, rbp, rsi, rdi, r8-r15).
var GPRs = []x86asm.Reg{x86asm.RAX, x86asm.RCX, x86asm.RDX, x86asm.RBX, x86asm.RSP, x86asm.RBP, x86asm.RSI, x86asm.RDI,
	x86asm.R8, x86asm.R9, x86asm.R10, x86asm.R11, x86asm.R12, x86asm.R13, x86asm.R14, x86asm.R15}

// Full64 returns the 64-bit register that holds a general register of
// any width (eax, ax, al, ah, sil, r8b: rax, rax, rax, rax, rsi, r8),
// whether r is that 64-bit register itself, and false for registers that
// are not general ones.
func Full64(r x86asm.Reg) (full x86asm.Reg, whole, ok bool) {
	switch {
	case r >= x86asm.RAX && r <= x86asm.R15:
		return r, true, true
	case r >= x86asm.EAX && r <= x86asm.R15L:
		return GPRs[r-x86asm.EAX], false, true
	case r >= x86asm.AX && r <= x86asm.R15W:
		return GPRs[r-x86asm.AX], false, true
	// x86asm's 8-bit registers: al..bl, ah..bh, spl..dil, r8b..r15b.
	case r >= x86asm.AL && r <= x86asm.BL:
		return GPRs[r-x86asm.AL], false, true
	case r >= x86asm.AH && r <= x86asm.BH:
		return GPRs[r-x86asm.AH], false, true
	case r >= x86asm.SPB && r <= x86asm.DIB:
		return GPRs[4+r-x86asm.SPB], false, true
	case r >= x86asm.R8B && r <= x86asm.R15B:
		return GPRs[8+r-x86asm.R8B], false, true
	}
	return 0, false, false
}

// Addr returns the address a memory operand computes (disp + base +
// index*scale, with the 64-bit registers' values), false for rip-relative
// operands and those through registers that are not general ones.
func (m *X64) Addr(a x86asm.Mem) (uint64, bool) {
	v := uint64(a.Disp)
	if a.Base == x86asm.RIP {
		return 0, false
	}
	if a.Base != 0 {
		r, _, ok := Full64(a.Base)
		if !ok {
			return 0, false
		}
		v += m.Regs[r]
	}
	if a.Index != 0 {
		r, _, ok := Full64(a.Index)
		if !ok {
			return 0, false
		}
		v += m.Regs[r] * uint64(a.Scale)
	}
	return v, true
}

// Operand returns what every model knows of a source operand of the
// given size in bytes: an immediate's value, a whole 64-bit register's, a
// whole word of memory written before; false otherwise (the model's own
// to treat).
func (m *X64) Operand(a x86asm.Arg, bytes int) (uint64, bool) {
	switch a := a.(type) {
	case x86asm.Reg:
		if r, whole, ok := Full64(a); ok && whole {
			return m.Regs[r], true
		}
	case x86asm.Imm:
		return uint64(a), true
	case x86asm.Mem:
		if p, ok := m.Addr(a); ok && bytes == 8 {
			v, ok := m.Words[p]
			return v, ok
		}
	}
	return 0, false
}

// Push is push of the word v: rsp down by 8, v written there.
func (m *X64) Push(v uint64) {
	m.Regs[x86asm.RSP] -= 8
	m.Words[m.Regs[x86asm.RSP]] = v
}

// Pop is pop: the word at rsp (junk when never written), rsp up by 8.
func (m *X64) Pop() uint64 {
	v := m.Load(m.Regs[x86asm.RSP])
	m.Regs[x86asm.RSP] += 8
	return v
}

// Lea returns the value lea of the memory operand a gives: its address,
// or junk when that is unknown or the destination is not a whole 64-bit
// register (whole, from Full64).
func (m *X64) Lea(a x86asm.Mem, whole bool) uint64 {
	if p, ok := m.Addr(a); ok && whole {
		return p
	}
	return m.Next()
}

// Dest returns the 64-bit register that holds an instruction's first
// operand when that is a general register (0 otherwise) and whether the
// operand is that whole register.
func Dest(in x86asm.Inst) (dst x86asm.Reg, whole bool) {
	if r, ok := in.Args[0].(x86asm.Reg); ok {
		dst, whole, _ = Full64(r)
	}
	return dst, whole
}

// Step runs in when it is one of the instructions every model treats
// alike (push, pop, a mov to memory, lea, and cmp, test and nop, which
// write nothing the models keep) and reports whether it was; value is
// the model's own reading of a source operand of the given size in bytes
// (what it gives for values it cannot know).
func (m *X64) Step(in x86asm.Inst, value func(a x86asm.Arg, bytes int) uint64) bool {
	dst, whole := Dest(in)
	switch in.Op {
	case x86asm.PUSH:
		m.Push(value(in.Args[0], 8))
	case x86asm.POP:
		v := m.Pop()
		if dst != 0 {
			m.Regs[dst] = v
		}
	case x86asm.MOV:
		mem, ok := in.Args[0].(x86asm.Mem)
		if !ok {
			return false
		}
		if p, ok := m.Addr(mem); ok {
			m.Store(p, in.MemBytes, value(in.Args[1], in.MemBytes))
		}
	case x86asm.LEA:
		m.Regs[dst] = m.Lea(in.Args[1].(x86asm.Mem), whole)
	case x86asm.CMP, x86asm.TEST, x86asm.NOP:
	default:
		return false
	}
	return true
}

// Clobber is an instruction the model knows no more of than that it
// writes its first operand: that register (its whole 64-bit register) or
// the memory it addresses becomes junk.
func (m *X64) Clobber(in x86asm.Inst) {
	if dst, _ := Dest(in); dst != 0 {
		m.Regs[dst] = m.Next()
	} else if mem, ok := in.Args[0].(x86asm.Mem); ok {
		if p, ok := m.Addr(mem); ok {
			m.Store(p, in.MemBytes, m.Next())
		}
	}
}
