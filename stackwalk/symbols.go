package stackwalk

import (
	"sync"

	"github.com/gobreakpad/gobreakpad/cfi"
	"github.com/gobreakpad/gobreakpad/unwind"
)

// SymbolSource finds the symbol file of a module. Load returns (nil, nil)
// when the module has no symbol file; an error means the file exists but
// could not be read.
type SymbolSource interface {
	Load(m *Module) (ModuleSymbols, error)
}

// ModuleSymbols answers lookups in one module's symbols. Addresses are
// module-relative.
type ModuleSymbols interface {
	// Lookup describes the code at rel. With inlines set it also returns the
	// inlined calls covering rel.
	Lookup(rel uint64, inlines bool) (Symbol, bool)
	// CFI returns the STACK CFI rules in force at rel compiled by ev, or nil.
	CFI(rel uint64, ev *cfi.Evaluator) *cfi.RuleSet
	// Win returns the STACK WIN record covering rel, or, failing that, a
	// parameter-size-only record from the FUNC covering rel; nil if neither.
	Win(rel uint64) *unwind.WinInfo
	// Corrupt reports whether the symbol file had lines that did not parse.
	Corrupt() bool
}

// Symbol is what a symbol file says about one address.
type Symbol struct {
	// Function is the FUNC (or PUBLIC) name and FunctionBase its start.
	Function     string
	FunctionBase uint64
	// File, Line and LineBase come from the LINE record; HasLine is false
	// without one. With inlined calls, File and Line are the call site of the
	// outermost inlined call (and may be set without a LINE record).
	File     string
	Line     int
	LineBase uint64
	HasLine  bool
	// Inlines are the inlined calls covering the address, innermost first.
	Inlines []InlineFrame
}

// InlineFrame is one inlined call as a frame: the inlined function, the start
// of the inlined range holding the address, and the source position within
// the inlined function (for the innermost, the LINE record's; for the
// others, the call site of the next inner call).
type InlineFrame struct {
	Function string
	Base     uint64
	File     string
	Line     int
}

// symbolState is what is known about a module's symbols, loaded once.
type symbolState struct {
	once    sync.Once
	syms    ModuleSymbols
	missing bool
}

// symbolizer resolves frames against the modules and their symbols, loading
// each module's symbols once. It is safe for concurrent use by the walks of
// several threads.
type symbolizer struct {
	source SymbolSource
	mods   *moduleMap
	// quiet leaves the modules' symbol flags alone (for lookups that are
	// not frames of a walk, such as stack contents).
	quiet bool

	mu    sync.Mutex // guards state and the modules' symbol flags
	state map[*Module]*symbolState
}

func newSymbolizer(source SymbolSource, mods *moduleMap) *symbolizer {
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
		syms, err := s.source.Load(m)
		if err != nil || syms == nil {
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
		return nil
	}
	f.Module = m
	if s.source == nil {
		return nil
	}
	st := s.symbols(m)
	if st.missing {
		s.flag(m, true, false)
		return nil
	}
	if st.syms.Corrupt() {
		s.flag(m, false, true)
	}
	sym, ok := st.syms.Lookup(f.Instruction-m.Base, wantInlines)
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
		out[i] = &StackFrame{
			Instruction:    f.Instruction,
			Module:         m,
			Function:       in.Function,
			FunctionBase:   m.Base + in.Base,
			SourceFile:     in.File,
			SourceLine:     in.Line,
			SourceLineBase: f.SourceLineBase,
			Trust:          unwind.TrustInline,
			cpu:            f.cpu,
		}
	}
	return out
}

// seemsValid is Breakpad's InstructionAddressSeemsValid: addr is inside a
// module and, if that module has symbols, inside a function.
func (s *symbolizer) seemsValid(addr uint64) bool {
	m := s.mods.at(addr)
	if m == nil {
		return false
	}
	if s.source == nil {
		return true
	}
	st := s.symbols(m)
	if st.missing {
		return true
	}
	sym, ok := st.syms.Lookup(addr-m.Base, false)
	return ok && sym.Function != ""
}

// cfi returns the STACK CFI rules for an instruction address.
func (s *symbolizer) cfi(addr uint64, ev *cfi.Evaluator) *cfi.RuleSet {
	m := s.mods.at(addr)
	if m == nil || s.source == nil || ev == nil {
		return nil
	}
	st := s.symbols(m)
	if st.syms == nil {
		return nil
	}
	return st.syms.CFI(addr-m.Base, ev)
}

// win returns the STACK WIN information for an instruction address.
func (s *symbolizer) win(addr uint64) *unwind.WinInfo {
	m := s.mods.at(addr)
	if m == nil || s.source == nil {
		return nil
	}
	st := s.symbols(m)
	if st.syms == nil {
		return nil
	}
	return st.syms.Win(addr - m.Base)
}
