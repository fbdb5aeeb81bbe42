// Package gsym adapts LLVM's GSYM files (package gsym) to the symbol
// contract of package symbols: Dirs is a Source over symbol stores and
// directories of GSYM files, and Lookuper answers lookups from one file.
//
// GSYM holds lookups only: no call frame information and no Windows frame
// data, so a walk takes those from a later source of a symbols.Chain (a
// Breakpad .sym of the same module) or unwinds without them.
//
// Addresses: lookups take module-relative addresses and add the header's
// base address, which llvm-gsymutil --convert sets to the ELF's lowest
// PT_LOAD address, the address Breakpad's module-relative addresses are
// relative to (and which is 0 in GSYM files made from .sym files).
package gsym

import (
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/gobreakpad/gobreakpad/gsym"
	"github.com/gobreakpad/gobreakpad/symbols"
	"github.com/gobreakpad/gobreakpad/symstore"
)

// Lookuper is a symbols.Lookuper over one GSYM file.
type Lookuper struct {
	File *gsym.File
	// Absolute makes lookups take addresses as the file stores them
	// (llvm-gsymutil --address's), not module-relative ones; the results'
	// addresses are then absolute too, and an inlined call's Base is the
	// start of its first range, as llvm-gsymutil counts offsets, rather than
	// of the range holding the address (the symbols contract's).
	Absolute bool
}

// Lookup implements symbols.Lookuper.
func (l *Lookuper) Lookup(rel uint64, inlines bool) (symbols.Symbol, bool) {
	base := l.File.Header.BaseAddress
	if l.Absolute {
		base = 0
	}
	addr := rel + base
	if addr < rel {
		return symbols.Symbol{}, false
	}
	res, err := l.File.Lookup(addr)
	if err != nil {
		return symbols.Symbol{}, false
	}
	locs := res.Locations
	fn := locs[len(locs)-1]
	out := symbols.Symbol{Function: res.Name, FunctionBase: res.Start - base, HasLine: res.HasRow}
	if res.HasRow {
		out.LineBase = res.LineAddress - base
	}
	if !inlines || len(locs) == 1 {
		// The innermost location has the line row's file and line.
		out.File, out.Line = locs[0].Path(), int(locs[0].Line)
		return out, true
	}
	out.File, out.Line = fn.Path(), int(fn.Line)
	out.Inlines = make([]symbols.InlineFrame, len(locs)-1)
	for i, loc := range locs[:len(locs)-1] {
		b := loc.Start - base
		if l.Absolute {
			// llvm-gsymutil's offsets: from the call's first range.
			b = addr - loc.Offset
		}
		out.Inlines[i] = symbols.InlineFrame{Function: loc.Name, Base: b, File: loc.Path(), Line: int(loc.Line)}
	}
	return out, true
}

// Dirs is a symbols.Source over GSYM files in directories, each root
// searched in order for, first, the symbol store layout
// ROOT/DEBUG_FILE/DEBUG_ID/DEBUG_FILE.gsym (as Breakpad's stores lay out
// .sym files, a ".pdb" suffix of the debug file replaced), then the flat
// layout llvm-symbolizer --gsym-file-directory reads: ROOT/NAME.gsym with
// NAME the base name of the module's code file, and ROOT/BUILD_ID.gsym with
// the code id (an ELF build ID in hex). A flat file whose UUID is not the
// module's build ID is passed over. Each file is mapped once and shared by
// the modules naming it.
type Dirs struct {
	roots []string
	files symbols.Files[*gsym.File]
}

// NewDirs returns a Source searching roots in order.
func NewDirs(roots ...string) *Dirs {
	d := &Dirs{roots: roots}
	d.files.Open = func(p string) (*gsym.File, *symbols.Symbols, error) {
		f, err := gsym.Open(p)
		if err != nil {
			return nil, nil, err
		}
		return f, &symbols.Symbols{Lookup: &Lookuper{File: f}}, nil
	}
	d.files.CloseFile = (*gsym.File).Close
	return d
}

// storePath is the store-relative path of a module's GSYM file, or "".
func storePath(debugFile, debugID string) string {
	elems, err := symstore.BreakpadPath(debugFile, debugID, ".gsym")
	if err != nil {
		return ""
	}
	return filepath.Join(elems...)
}

func exists(p string) bool {
	st, err := os.Stat(p)
	return err == nil && !st.IsDir()
}

// find returns the path of the module's file and whether its UUID must be
// checked against the build ID.
func (d *Dirs) find(m symbols.Module) (string, bool) {
	rel := storePath(m.DebugFile, m.DebugID)
	buildID := strings.ToLower(m.CodeID)
	if _, err := hex.DecodeString(buildID); err != nil || len(buildID) < 2 {
		buildID = ""
	}
	code := symstore.BaseName(m.CodeFile)
	if symstore.CheckName(code) != nil {
		code = ""
	}
	for _, root := range d.roots {
		if rel != "" {
			if p := filepath.Join(root, rel); exists(p) {
				return p, false
			}
		}
		if code != "" {
			if p := filepath.Join(root, code+".gsym"); exists(p) {
				return p, true
			}
		}
		if buildID != "" {
			if p := filepath.Join(root, buildID+".gsym"); exists(p) {
				return p, true
			}
		}
	}
	return "", false
}

// Load implements symbols.Source.
func (d *Dirs) Load(m symbols.Module) (*symbols.Symbols, error) {
	p, check := d.find(m)
	if p == "" {
		return nil, fmt.Errorf("%s %s: %w", m.DebugFile, m.DebugID, symbols.ErrNotFound)
	}
	f, syms, err := d.files.Load(p)
	if err != nil {
		return nil, err
	}
	if check && m.CodeID != "" && len(f.Header.ID()) > 0 && !strings.EqualFold(hex.EncodeToString(f.Header.ID()), m.CodeID) {
		return nil, fmt.Errorf("%s: UUID %x is not the module's build ID %s: %w", p, f.Header.ID(), m.CodeID, symbols.ErrNotFound)
	}
	return syms, nil
}

// Close releases the files' mappings. The symbols loaded through d must not
// be used afterwards.
func (d *Dirs) Close() error { return d.files.Close() }
