package stackwalk

import (
	"sync"

	"github.com/gobreakpad/gobreakpad/cfi"
	"github.com/gobreakpad/gobreakpad/symfile"
	"github.com/gobreakpad/gobreakpad/unwind"
)

// SymbolDirs is a SymbolSource over Breakpad symbol directories, laid out as
// Breakpad's SimpleSymbolSupplier expects (see symfile.Store):
// ROOT/DEBUG_FILE/DEBUG_ID/DEBUG_FILE.sym, with a ".pdb" suffix of the debug
// file replaced by ".sym". Roots are searched in order. Each symbol file is
// memory-mapped and indexed once, and shared by the modules naming it.
type SymbolDirs struct {
	store *symfile.Store

	mu     sync.Mutex
	loaded map[string]*loadedFile
}

// loadedFile is one symbol file, opened once however many modules and
// goroutines ask for it.
type loadedFile struct {
	once sync.Once
	syms *TableSymbols
	err  error
}

// NewSymbolDirs returns a SymbolSource searching roots in order.
func NewSymbolDirs(roots ...string) *SymbolDirs {
	return &SymbolDirs{store: symfile.NewStore(roots...), loaded: map[string]*loadedFile{}}
}

// Load implements SymbolSource: the first existing symbol file among the
// roots, or (nil, nil) when there is none.
func (d *SymbolDirs) Load(m *Module) (ModuleSymbols, error) {
	p, err := d.store.Find(m.DebugFile, m.DebugID)
	if err != nil {
		return nil, nil
	}
	d.mu.Lock()
	lf := d.loaded[p]
	if lf == nil {
		lf = &loadedFile{}
		d.loaded[p] = lf
	}
	d.mu.Unlock()
	// Different files load concurrently; each is opened once.
	lf.once.Do(func() {
		t, err := symfile.Open(p)
		if err != nil {
			lf.err = err
			return
		}
		lf.syms = &TableSymbols{Table: t}
	})
	if lf.err != nil {
		return nil, lf.err
	}
	return lf.syms, nil
}

// Close releases the symbol files' mappings. The symbols loaded through d
// must not be used afterwards.
func (d *SymbolDirs) Close() error {
	d.mu.Lock()
	defer d.mu.Unlock()
	var first error
	for p, lf := range d.loaded {
		if lf.syms != nil {
			if err := lf.syms.Table.Close(); err != nil && first == nil {
				first = err
			}
		}
		delete(d.loaded, p)
	}
	return first
}

// TableSymbols adapts a parsed symbol file to ModuleSymbols.
type TableSymbols struct {
	Table *symfile.Table
}

// Lookup implements ModuleSymbols.
func (s *TableSymbols) Lookup(rel uint64, inlines bool) (Symbol, bool) {
	sym, ok := s.Table.Lookup(rel)
	if !ok {
		return Symbol{}, false
	}
	out := Symbol{Function: sym.Name, FunctionBase: sym.Address, HasLine: sym.HasLine}
	if sym.HasLine {
		out.File, out.Line, out.LineBase = sym.File, int(sym.Line), sym.LineAddress
	}
	if !inlines || len(sym.Inlines) == 0 {
		return out, true
	}
	// Frames already gives call sites of old-form INLINE records (no
	// call-site file) the line record's file, as Breakpad shows them.
	frames := sym.Frames()
	outer := frames[len(frames)-1]
	out.Inlines = make([]InlineFrame, len(frames)-1)
	for i, f := range frames[:len(frames)-1] {
		out.Inlines[i] = InlineFrame{Function: f.Name, Base: f.Address, File: f.File, Line: int(f.Line)}
	}
	out.File, out.Line = outer.File, int(outer.Line)
	return out, true
}

// CFI implements ModuleSymbols.
func (s *TableSymbols) CFI(rel uint64, ev *cfi.Evaluator) *cfi.RuleSet {
	r, ok := s.Table.CFIRules(rel)
	if !ok {
		return nil
	}
	var buf [8]string
	texts := append(buf[:0], r.Init)
	for _, d := range r.Deltas {
		texts = append(texts, d.Rules)
	}
	rs, err := ev.RuleSet(texts...)
	if err != nil {
		return nil
	}
	return rs
}

// Win implements ModuleSymbols.
func (s *TableSymbols) Win(rel uint64) *unwind.WinInfo {
	if w, ok := s.Table.StackWin(rel); ok {
		return &unwind.WinInfo{
			Type:                 int(w.Type),
			ValidAll:             true,
			ParameterSize:        w.ParamSize,
			SavedRegisterSize:    w.SavedRegisterSize,
			LocalSize:            w.LocalSize,
			AllocatesBasePointer: w.AllocatesBasePointer,
			ProgramString:        w.ProgramString,
		}
	}
	if sym, ok := s.Table.Lookup(rel); ok && !sym.Public {
		return &unwind.WinInfo{ParameterSize: uint32(sym.ParamSize)}
	}
	return nil
}

// Corrupt implements ModuleSymbols.
func (s *TableSymbols) Corrupt() bool { return s.Table.Corrupt() }
