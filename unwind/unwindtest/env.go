// Package unwindtest provides a hand-built unwind.Env for frame-by-frame
// tests of the per-CPU unwinders: a stack laid out word by word, modules
// with known functions, and STACK CFI / STACK WIN records given as text.
package unwindtest

import (
	"encoding/binary"
	"fmt"
	"sort"

	"github.com/gobreakpad/gobreakpad/cfi"
	"github.com/gobreakpad/gobreakpad/unwind"
)

// Module is a code range; when HasSymbols is set, only addresses inside
// Funcs count as plausible return addresses.
type Module struct {
	Base, Size uint64
	HasSymbols bool
	Funcs      [][2]uint64 // [start, end) ranges
	// VDSO marks the Linux vDSO (unwind.VDSOEnv).
	VDSO bool
}

// CFIRange is a STACK CFI INIT record with its deltas.
type CFIRange struct {
	Start, Size uint64
	Init        string
	Deltas      map[uint64]string
}

// Env is a test unwind.Env.
type Env struct {
	StackBase uint64
	Stack     []byte
	WordSize  int
	Modules   []Module
	CFIs      []CFIRange
	Wins      map[uint64]*unwind.WinInfo // by exact instruction address
	IsWindows bool
	Eval      *cfi.Evaluator
	// Code holds code bytes by start address, for ReadCode.
	Code map[uint64][]byte
	// FuncNames names functions by their start address, for FunctionName.
	FuncNames map[uint64]string
	// Maps is the process's memory map for Executable; nil: no map.
	Maps []Mapping
	// FuncStarts are the addresses where a symbol says a function
	// starts, for FunctionStart.
	FuncStarts map[uint64]bool
	// Vsyscall is __kernel_vsyscall's address (unwind.VsyscallEnv); 0:
	// not known.
	Vsyscall uint64
	// Exc is the exception record Exception gives; nil: none.
	Exc *unwind.ExceptionRecord
}

var _ unwind.Env = (*Env)(nil)

// FunctionStart implements unwind.Env over FuncStarts.
func (e *Env) FunctionStart(addr uint64) bool { return e.FuncStarts[addr] }

// FunctionBase implements unwind.Env over the Funcs of modules
// with symbols: the start of the range covering addr.
func (e *Env) FunctionBase(addr uint64) (uint64, bool) {
	m := e.module(addr)
	if m == nil || !m.HasSymbols {
		return 0, false
	}
	for _, f := range m.Funcs {
		if addr >= f[0] && addr < f[1] {
			return f[0], true
		}
	}
	return 0, false
}

// Mapping is one range of the process's memory map.
type Mapping struct {
	Start, End uint64 // [Start, End)
	Exec       bool
}

// Executable implements unwind.Env over Maps (nil: not available).
func (e *Env) Executable(addr uint64) (exec, known bool) {
	if e.Maps == nil {
		return false, false
	}
	for _, m := range e.Maps {
		if addr >= m.Start && addr < m.End {
			return m.Exec, true
		}
	}
	return false, true
}

// New returns an Env with an empty stack at base, for a CPU's rule names.
func New(cpu unwind.CPU, base uint64) *Env {
	ev, err := cfi.NewEvaluator(cpu.WordSize(), cpu.CFINames())
	if err != nil {
		panic(err)
	}
	return &Env{StackBase: base, WordSize: cpu.WordSize(), Eval: ev, Wins: map[uint64]*unwind.WinInfo{}}
}

// Push appends words to the stack, lowest address first, and returns the
// address of the first.
func (e *Env) Push(words ...uint64) uint64 {
	addr := e.StackBase + uint64(len(e.Stack))
	for _, w := range words {
		if e.WordSize == 4 {
			e.Stack = binary.LittleEndian.AppendUint32(e.Stack, uint32(w))
		} else {
			e.Stack = binary.LittleEndian.AppendUint64(e.Stack, w)
		}
	}
	return addr
}

// Put overwrites the stack's words from addr on (addr must be in the
// stack, the words too).
func (e *Env) Put(addr uint64, words ...uint64) {
	off := addr - e.StackBase
	for _, w := range words {
		if e.WordSize == 4 {
			binary.LittleEndian.PutUint32(e.Stack[off:], uint32(w))
		} else {
			binary.LittleEndian.PutUint64(e.Stack[off:], w)
		}
		off += uint64(e.WordSize)
	}
}

// Addr returns the address of stack word i.
func (e *Env) Addr(i int) uint64 { return e.StackBase + uint64(i*e.WordSize) }

// ReadMemory implements unwind.Memory over the stack only.
func (e *Env) ReadMemory(addr uint64, n int) ([]byte, error) {
	if addr < e.StackBase || addr-e.StackBase > uint64(len(e.Stack)) || uint64(len(e.Stack))-(addr-e.StackBase) < uint64(n) {
		return nil, fmt.Errorf("%d bytes at %#x outside the stack", n, addr)
	}
	off := addr - e.StackBase
	return e.Stack[off : off+uint64(n)], nil
}

// ReadCode implements unwind.Env over Code (elsewhere: not available).
func (e *Env) ReadCode(addr uint64, n int) ([]byte, error) {
	for start, b := range e.Code {
		if addr >= start && addr-start <= uint64(len(b)) && uint64(len(b))-(addr-start) >= uint64(n) {
			return b[addr-start : addr-start+uint64(n)], nil
		}
	}
	return nil, fmt.Errorf("no code at %#x", addr)
}

// FunctionName implements unwind.Env over FuncNames (exact starts).
func (e *Env) FunctionName(addr uint64) string { return e.FuncNames[addr] }

func (e *Env) module(addr uint64) *Module {
	for i := range e.Modules {
		m := &e.Modules[i]
		if addr >= m.Base && addr-m.Base < m.Size {
			return m
		}
	}
	return nil
}

// HasCFI implements unwind.Env: addr is in a module with symbols and a
// CFIRange lies in that module.
func (e *Env) HasCFI(addr uint64) bool {
	m := e.module(addr)
	if m == nil || !m.HasSymbols {
		return false
	}
	for _, c := range e.CFIs {
		if c.Start >= m.Base && c.Start-m.Base < m.Size {
			return true
		}
	}
	return false
}

// CFI implements unwind.Env.
func (e *Env) CFI(addr uint64) *cfi.RuleSet {
	for _, c := range e.CFIs {
		if addr < c.Start || addr-c.Start >= c.Size {
			continue
		}
		texts := []string{c.Init}
		var keys []uint64
		for a := range c.Deltas {
			if a <= addr {
				keys = append(keys, a)
			}
		}
		sort.Slice(keys, func(i, j int) bool { return keys[i] < keys[j] })
		for _, k := range keys {
			texts = append(texts, c.Deltas[k])
		}
		rs, err := e.Eval.RuleSet(texts...)
		if err != nil {
			return nil
		}
		return rs
	}
	return nil
}

// Win implements unwind.Env.
func (e *Env) Win(addr uint64) *unwind.WinInfo { return e.Wins[addr] }

// InVDSO implements unwind.VDSOEnv: addr is in a module marked VDSO.
func (e *Env) InVDSO(addr uint64) bool {
	m := e.module(addr)
	return m != nil && m.VDSO
}

// KernelVsyscall implements unwind.VsyscallEnv over Vsyscall.
func (e *Env) KernelVsyscall() (uint64, bool) { return e.Vsyscall, e.Vsyscall != 0 }

// InModule implements unwind.Env.
func (e *Env) InModule(addr uint64) bool { return e.module(addr) != nil }

// SeemsValid implements unwind.Env.
func (e *Env) SeemsValid(addr uint64) bool {
	m := e.module(addr)
	if m == nil {
		return false
	}
	if !m.HasSymbols {
		return true
	}
	for _, f := range m.Funcs {
		if addr >= f[0] && addr < f[1] {
			return true
		}
	}
	return false
}

// CheckCallSites implements unwind.Env: scans apply their call-site
// check, as they do in a walk with stackwalk.Options.CheckCallSites.
func (e *Env) CheckCallSites() bool { return true }

// Windows implements unwind.Env.
func (e *Env) Windows() bool { return e.IsWindows }

// Exception implements unwind.Env over Exc.
func (e *Env) Exception() *unwind.ExceptionRecord { return e.Exc }

// Evaluator implements unwind.Env.
func (e *Env) Evaluator() *cfi.Evaluator { return e.Eval }

// Walk unwinds from first until the unwinder stops or max frames, returning
// every physical frame.
func Walk(cpu unwind.CPU, env unwind.Env, first *unwind.Frame, max int) []*unwind.Frame {
	frames := []*unwind.Frame{first}
	for len(frames) < max {
		f := cpu.Caller(env, frames, true)
		if f == nil {
			break
		}
		frames = append(frames, f)
	}
	return frames
}
