package stackwalk

import (
	"os"
	"path/filepath"
	"strings"
	"sync"

	"github.com/gobreakpad/gobreakpad/arch/unwind"
	"github.com/gobreakpad/gobreakpad/cfi"
	"github.com/gobreakpad/gobreakpad/symfile"
)

// SymbolDirs is a SymbolSource over Breakpad symbol directories, laid out as
// Breakpad's SimpleSymbolSupplier expects:
// ROOT/DEBUG_FILE/DEBUG_ID/DEBUG_FILE.sym, with a ".pdb" suffix of the debug
// file replaced by ".sym". Roots are searched in order. Each symbol file is
// loaded once and shared by the modules naming it.
type SymbolDirs struct {
	Roots []string

	mu     sync.Mutex
	loaded map[string]*TableSymbols
}

// NewSymbolDirs returns a SymbolSource searching roots in order.
func NewSymbolDirs(roots ...string) *SymbolDirs {
	return &SymbolDirs{Roots: roots, loaded: map[string]*TableSymbols{}}
}

// SymbolPath returns the file name of a module's symbols under root, or ""
// when the module lacks a debug file name or identifier.
func SymbolPath(root string, m *Module) string {
	name := baseName(m.DebugFile)
	if name == "" || m.DebugID == "" {
		return ""
	}
	file := name
	if len(name) > 4 && strings.EqualFold(name[len(name)-4:], ".pdb") {
		file = name[:len(name)-4]
	}
	return filepath.Join(root, name, m.DebugID, file+".sym")
}

// Load implements SymbolSource: the first existing symbol file among the
// roots, or (nil, nil) when there is none.
func (d *SymbolDirs) Load(m *Module) (ModuleSymbols, error) {
	for _, root := range d.Roots {
		p := SymbolPath(root, m)
		if p == "" {
			return nil, nil
		}
		st, err := os.Stat(p)
		if err != nil || !st.Mode().IsRegular() {
			continue
		}
		d.mu.Lock()
		defer d.mu.Unlock()
		if d.loaded == nil {
			d.loaded = map[string]*TableSymbols{}
		}
		if s, ok := d.loaded[p]; ok {
			return s, nil
		}
		data, err := os.ReadFile(p)
		if err != nil {
			return nil, err
		}
		t, err := symfile.Parse(data)
		if err != nil {
			return nil, err
		}
		s := &TableSymbols{Table: t}
		d.loaded[p] = s
		return s, nil
	}
	return nil, nil
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
	frames := sym.Frames()
	// INLINE records of the old form name no call-site file; Breakpad then
	// shows the file of the function's line record.
	file := func(f string) string {
		if f == "" {
			return out.File
		}
		return f
	}
	outer := frames[len(frames)-1]
	out.Inlines = make([]InlineFrame, len(frames)-1)
	for i, f := range frames[:len(frames)-1] {
		out.Inlines[i] = InlineFrame{Function: f.Name, Base: f.Address, File: file(f.File), Line: int(f.Line)}
	}
	out.File, out.Line = file(outer.File), int(outer.Line)
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
