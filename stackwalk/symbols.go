package stackwalk

import (
	"sync"

	"github.com/gobreakpad/gobreakpad/cfi"
	"github.com/gobreakpad/gobreakpad/symbols"
	"github.com/gobreakpad/gobreakpad/unwind"
)

// symbolState is what is known about a module's symbols, loaded once.
type symbolState struct {
	once    sync.Once
	syms    *symbols.Symbols
	missing bool // nothing found; syms is nil
}

// symbolizer resolves frames against the modules and their symbols, loading
// each module's symbols once. It is safe for concurrent use by the walks of
// several threads.
type symbolizer struct {
	source symbols.Source
	mods   *moduleMap
	// unloaded finds the unloaded module of an address outside every
	// module; nil when there are none.
	unloaded *moduleMap
	// quiet leaves the modules' symbol flags alone (for lookups that are
	// not frames of a walk, such as stack contents).
	quiet bool
	// dumped are the stack ranges the -d output printed (printStackPointers).
	dumped []dumpedRange

	mu    sync.Mutex // guards state and the modules' symbol flags
	state map[*Module]*symbolState

	// image reads the symbols of a module from its image in memory, the
	// dump's whole memory, when source has none (Options.ImageSymbols).
	image  func(image []byte, m symbols.Module) (*symbols.Symbols, error)
	memory unwind.Memory
}

// symbolsKey is the module as a symbols.Source knows it: the key the
// symbolizer loads it under and Prefetch loads it ahead under.
func (m *Module) symbolsKey() symbols.Module {
	return symbols.Module{CodeFile: m.CodeFile, CodeID: m.CodeID, DebugFile: m.DebugFile, DebugID: m.DebugID}
}

// maxImage bounds the module images read from the dump for their symbols.
const maxImage = 1 << 20

func newSymbolizer(source symbols.Source, mods *moduleMap) *symbolizer {
	return &symbolizer{source: source, mods: mods, state: map[*Module]*symbolState{}}
}

// symbols returns the module's symbols, loading them on first use.
func (s *symbolizer) symbols(m *Module) *symbolState {
	s.mu.Lock()
	st := s.state[m]
	if st == nil {
		st = &symbolState{}
		s.state[m] = st
	}
	s.mu.Unlock()
	st.once.Do(func() {
		if s.source == nil {
			return
		}
		// A source that found something it could not read counts as
		// missing, as Breakpad's walker reports an unloadable file.
		sm := m.symbolsKey()
		syms, err := s.source.Load(sm)
		if err != nil || syms.Empty() {
			syms, err = s.fromImage(m, sm)
		}
		if err != nil || syms.Empty() {
			st.missing = true
			return
		}
		st.syms = syms
		if !s.quiet {
			s.mu.Lock()
			m.SymbolsLoaded = true
			s.mu.Unlock()
		}
	})
	return st
}

// flag sets a module's missing or corrupt mark.
func (s *symbolizer) flag(m *Module, missing, corrupt bool) {
	if s.quiet {
		return
	}
	s.mu.Lock()
	m.MissingSymbols = m.MissingSymbols || missing
	m.CorruptSymbols = m.CorruptSymbols || corrupt
	s.mu.Unlock()
}

// fill sets the frame's module and symbol information and returns the frames
// of inlined calls at its address, innermost first. It marks modules without
// symbols or with corrupt symbols.
func (s *symbolizer) fill(f *StackFrame, wantInlines bool) []*StackFrame {
	m := s.mods.at(f.Instruction)
	if m == nil {
		if u := s.unloadedAt(f.Instruction); u != nil {
			f.UnloadedModule = u
			// Breakpad looks for its symbols under an empty debug file
			// name, finds none, and counts it among the modules
			// without symbols.
			if s.source != nil {
				s.flag(u, true, false)
			}
		}
		return nil
	}
	f.Module = m
	if s.source == nil {
		return nil
	}
	st := s.symbols(m)
	if st.missing || st.syms.Lookup == nil {
		s.flag(m, true, false)
		return nil
	}
	if st.syms.Corrupt {
		s.flag(m, false, true)
	}
	sym, ok := st.syms.Lookup.Lookup(f.Instruction-m.Base, wantInlines)
	if !ok {
		return nil
	}
	f.Function = sym.Function
	f.FunctionBase = m.Base + sym.FunctionBase
	if sym.HasLine || sym.File != "" {
		f.SourceFile = sym.File
		f.SourceLine = sym.Line
	}
	if sym.HasLine {
		f.SourceLineBase = m.Base + sym.LineBase
	}
	if !wantInlines || len(sym.Inlines) == 0 {
		return nil
	}
	out := make([]*StackFrame, len(sym.Inlines))
	for i, in := range sym.Inlines {
		out[i] = f.thr.add(StackFrame{
			Instruction:    f.Instruction,
			Module:         m,
			Function:       in.Function,
			FunctionBase:   m.Base + in.Base,
			SourceFile:     in.File,
			SourceLine:     in.Line,
			SourceLineBase: f.SourceLineBase,
			Trust:          unwind.TrustInline,
			thr:            f.thr,
		})
	}
	return out
}

// seemsValid is Breakpad's InstructionAddressSeemsValid: addr is inside a
// module and, if that module has symbols, inside a function. (Breakpad's
// also takes addresses in unloaded modules, but its only caller, the stack
// scan, asks only about addresses in loaded ones.)
func (s *symbolizer) seemsValid(addr uint64) bool {
	m := s.mods.at(addr)
	if m == nil {
		return false
	}
	if s.source == nil {
		return true
	}
	st := s.symbols(m)
	if st.missing || st.syms.Lookup == nil {
		return true
	}
	sym, ok := st.syms.Lookup.Lookup(addr-m.Base, false)
	return ok && sym.Function != ""
}

// unloadedAt returns the unloaded module Breakpad finds at addr, or nil.
func (s *symbolizer) unloadedAt(addr uint64) *Module {
	if s.unloaded == nil {
		return nil
	}
	return s.unloaded.at(addr)
}

// functionAt looks addr up, without inlines, in its module's symbols: the
// module and Lookup's answer, or ok false when the module or its symbols
// are not there.
func (s *symbolizer) functionAt(addr uint64) (m *Module, sym symbols.Symbol, ok bool) {
	m = s.mods.at(addr)
	if m == nil || s.source == nil {
		return nil, sym, false
	}
	st := s.symbols(m)
	if st.missing || st.syms.Lookup == nil {
		return nil, sym, false
	}
	sym, ok = st.syms.Lookup.Lookup(addr-m.Base, false)
	return m, sym, ok
}

// functionStart reports whether the module's symbols put the start of a
// function (FUNC or PUBLIC) exactly at addr.
func (s *symbolizer) functionStart(addr uint64) bool {
	m, sym, ok := s.functionAt(addr)
	return ok && sym.Function != "" && sym.FunctionBase == addr-m.Base
}

// functionBase returns the start of the FUNC or PUBLIC record covering
// addr, when the module has symbols.
func (s *symbolizer) functionBase(addr uint64) (uint64, bool) {
	m, sym, ok := s.functionAt(addr)
	if !ok || sym.Function == "" {
		return 0, false
	}
	return m.Base + sym.FunctionBase, true
}

// fromImage reads a module's symbols from its whole image in the dump.
func (s *symbolizer) fromImage(m *Module, sm symbols.Module) (*symbols.Symbols, error) {
	if s.image == nil || s.memory == nil || m.Size == 0 || m.Size > maxImage {
		return nil, symbols.ErrNotFound
	}
	b, err := s.memory.ReadMemory(m.Base, int(m.Size))
	if err != nil {
		return nil, err
	}
	return s.image(b, sm)
}

// functionName returns the name of the function covering addr, or "".
func (s *symbolizer) functionName(addr uint64) string {
	_, sym, _ := s.functionAt(addr)
	return sym.Function
}

// hasCFI reports whether the module holding addr has STACK CFI rules.
func (s *symbolizer) hasCFI(addr uint64) bool {
	m := s.mods.at(addr)
	if m == nil || s.source == nil {
		return false
	}
	st := s.symbols(m)
	return st.syms != nil && st.syms.CFI != nil
}

// cfi returns the STACK CFI rules for an instruction address, compiled by
// ev (which caches them by their text).
func (s *symbolizer) cfi(addr uint64, ev *cfi.Evaluator) *cfi.RuleSet {
	m := s.mods.at(addr)
	if m == nil || s.source == nil || ev == nil {
		return nil
	}
	st := s.symbols(m)
	if st.syms == nil || st.syms.CFI == nil {
		return nil
	}
	buf := ruleTexts.Get().(*[8]string)
	defer ruleTexts.Put(buf)
	defer clear(buf[:]) // no texts kept alive by the pool
	texts, ok := st.syms.CFI.CFIRules(addr-m.Base, buf[:0])
	if !ok {
		return nil
	}
	rs, err := ev.RuleSet(texts...)
	if err != nil {
		return nil
	}
	return rs
}

// ruleTexts recycles cfi's buffers of rule texts: the buffer reaches
// CFIRules through an interface, so a local array escaped to the heap on
// every frame (a tenth of a 401-thread walk's allocations).
var ruleTexts = sync.Pool{New: func() any { return new([8]string) }}

// win returns the STACK WIN information for an instruction address.
func (s *symbolizer) win(addr uint64) *unwind.WinInfo {
	m := s.mods.at(addr)
	if m == nil || s.source == nil {
		return nil
	}
	st := s.symbols(m)
	if st.syms == nil || st.syms.Win == nil {
		return nil
	}
	w, ok := st.syms.Win.StackWin(addr - m.Base)
	if !ok {
		return nil
	}
	return &unwind.WinInfo{
		Type:                 w.Type,
		ValidAll:             !w.ParamSizeOnly,
		ParameterSize:        w.ParameterSize,
		SavedRegisterSize:    w.SavedRegisterSize,
		LocalSize:            w.LocalSize,
		AllocatesBasePointer: w.AllocatesBasePointer,
		ProgramString:        w.ProgramString,
	}
}
