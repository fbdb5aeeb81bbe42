// Package breakpad adapts Breakpad text symbol files (package symfile) to
// the symbol contract of package symbols: Dirs is a Source over Breakpad
// symbol stores, and Table answers lookups, STACK CFI and STACK WIN queries
// from one parsed file.
package breakpad

import (
	"fmt"
	"sync"

	"github.com/gobreakpad/gobreakpad/symbols"
	"github.com/gobreakpad/gobreakpad/symfile"
)

// Dirs is a symbols.Source over Breakpad symbol directories, laid out as
// Breakpad's SimpleSymbolSupplier expects (see symfile.Store):
// ROOT/DEBUG_FILE/DEBUG_ID/DEBUG_FILE.sym, with a ".pdb" suffix of the debug
// file replaced by ".sym". Roots are searched in order. Each symbol file is
// memory-mapped and indexed once, and shared by the modules naming it.
type Dirs struct {
	store *symfile.Store
	files Files
}

// NewDirs returns a Source searching roots in order.
func NewDirs(roots ...string) *Dirs {
	return &Dirs{store: symfile.NewStore(roots...)}
}

// Load implements symbols.Source: the first existing symbol file among the
// roots.
func (d *Dirs) Load(m symbols.Module) (*symbols.Symbols, error) {
	p, err := d.store.Find(m.DebugFile, m.DebugID)
	if err != nil {
		// Missing, or a name that cannot be a path inside the roots.
		return nil, fmt.Errorf("%w: %v", symbols.ErrNotFound, err)
	}
	return d.files.Open(p)
}

// Close releases the symbol files' mappings. The symbols loaded through d
// must not be used afterwards.
func (d *Dirs) Close() error { return d.files.Close() }

// Files opens .sym files once each, however many modules and goroutines
// ask (symbols.Files over symfile.Open): what every source of .sym files
// shares, Dirs and the sources converting other files into .sym files in a
// cache (symbols/elfsyms, symbols/pdbsyms, symbols/remote). The zero value
// is ready to use.
type Files struct {
	once  sync.Once
	files symbols.Files[*symfile.Table]
}

// Open returns the symbols of the .sym file at path, mapping and indexing
// it on first use.
func (s *Files) Open(path string) (*symbols.Symbols, error) {
	s.once.Do(func() {
		s.files.Open = func(p string) (*symfile.Table, *symbols.Symbols, error) {
			t, err := symfile.Open(p)
			if err != nil {
				return nil, nil, err
			}
			return t, Symbols(t), nil
		}
		s.files.CloseFile = (*symfile.Table).Close
	})
	_, syms, err := s.files.Load(path)
	return syms, err
}

// Close unmaps the files; the symbols loaded through s must not be used
// afterwards.
func (s *Files) Close() error { return s.files.Close() }

// Symbols returns what a parsed symbol file holds: lookups (even when it
// has no FUNC or PUBLIC record: Breakpad counts the module's symbols as
// loaded; a chain that pairs lookup-only formats with .sym files asks them
// first), STACK WIN (with FUNC parameter sizes as the fallback) and, when
// the file has STACK CFI records, CFI.
func Symbols(t *symfile.Table) *symbols.Symbols {
	tab := &Table{Table: t}
	s := &symbols.Symbols{Lookup: tab, Win: tab, Corrupt: t.Corrupt()}
	if t.HasCFI() {
		s.CFI = tab
	}
	return s
}

// Table adapts a parsed symbol file to symbols.Lookuper, symbols.CFIRuler
// and symbols.WinRuler.
type Table struct {
	Table *symfile.Table
}

// Lookup implements symbols.Lookuper.
func (s *Table) Lookup(rel uint64, inlines bool) (symbols.Symbol, bool) {
	sym, ok := s.Table.Lookup(rel)
	if !ok {
		return symbols.Symbol{}, false
	}
	out := symbols.Symbol{Function: sym.Name, FunctionBase: sym.Address, HasLine: sym.HasLine}
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
	out.Inlines = make([]symbols.InlineFrame, len(frames)-1)
	for i, f := range frames[:len(frames)-1] {
		out.Inlines[i] = symbols.InlineFrame{Function: f.Name, Base: f.Address, File: f.File, Line: int(f.Line)}
	}
	out.File, out.Line = outer.File, int(outer.Line)
	return out, true
}

// CFIRules implements symbols.CFIRuler.
func (s *Table) CFIRules(rel uint64, dst []string) ([]string, bool) {
	r, ok := s.Table.CFIRules(rel)
	if !ok {
		return dst, false
	}
	dst = append(dst, r.Init)
	for _, d := range r.Deltas {
		dst = append(dst, d.Rules)
	}
	return dst, true
}

// StackWin implements symbols.WinRuler.
func (s *Table) StackWin(rel uint64) (symbols.StackWin, bool) {
	if w, ok := s.Table.StackWin(rel); ok {
		return symbols.StackWin{
			Type:                 int(w.Type),
			ParameterSize:        w.ParamSize,
			SavedRegisterSize:    w.SavedRegisterSize,
			LocalSize:            w.LocalSize,
			AllocatesBasePointer: w.AllocatesBasePointer,
			ProgramString:        w.ProgramString,
		}, true
	}
	if sym, ok := s.Table.Lookup(rel); ok && !sym.Public {
		return symbols.StackWin{ParamSizeOnly: true, ParameterSize: uint32(sym.ParamSize)}, true
	}
	return symbols.StackWin{}, false
}
