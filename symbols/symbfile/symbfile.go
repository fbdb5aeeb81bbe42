// Package symbfile adapts symbfiles (package symbfile) to the symbol
// contract of package symbols: Dirs is a Source over symbol stores holding
// NAME.symbfile or NAME.symbfile.zst in Breakpad's layout (a symbfile has no
// identity of its own: the store path names the module), and Table answers
// lookups. Symbfiles carry no unwind information: chain a Breakpad source
// after this one for CFI and STACK WIN.
package symbfile

import (
	"bytes"
	"fmt"
	"os"

	"github.com/gobreakpad/gobreakpad/symstore"

	"github.com/gobreakpad/gobreakpad/symbfile"
	"github.com/gobreakpad/gobreakpad/symbols"
)

// Exts are the store file extensions tried, in order.
var Exts = []string{".symbfile", ".symbfile.zst"}

// IsZstd reports whether head starts a zstd frame.
func IsZstd(head []byte) bool { return bytes.HasPrefix(head, []byte("\x28\xb5\x2f\xfd")) }

// Table adapts an indexed symbfile to symbols.Lookuper. Addresses are the
// file's (ELF virtual addresses, which are module-relative for shared
// objects and position-independent executables).
type Table struct {
	Table *symbfile.Table
}

// Lookup implements symbols.Lookuper: the depth-0 range's function, the
// deepest range's line, and the deeper ranges as inlined frames.
func (t *Table) Lookup(rel uint64, inlines bool) (symbols.Symbol, bool) {
	fs := t.Table.Lookup(rel)
	if len(fs) == 0 {
		return symbols.Symbol{}, false
	}
	root, leaf := fs[len(fs)-1], fs[0]
	out := symbols.Symbol{Function: root.Func, FunctionBase: root.Base}
	if leaf.Line != 0 {
		out.HasLine = true
		out.File, out.Line, out.LineBase = leaf.File, int(leaf.Line), leaf.LineBase
	}
	if !inlines || len(fs) == 1 {
		return out, true
	}
	out.File, out.Line = root.File, int(root.Line)
	out.Inlines = make([]symbols.InlineFrame, len(fs)-1)
	for i, f := range fs[:len(fs)-1] {
		in := symbols.InlineFrame{Function: f.Func, Base: f.Base, File: f.File, Line: int(f.Line)}
		if i == 0 && f.Line == 0 {
			in.File = "" // no line at the address: no position, as without inlines
		}
		out.Inlines[i] = in
	}
	return out, true
}

// Dirs is a symbols.Source over symbol store directories holding symbfiles.
// Each file is read and indexed once.
type Dirs struct {
	roots []string
	files symbols.Files[*symbfile.Table] // read into memory: nothing to release
}

// NewDirs returns a Source searching roots in order.
func NewDirs(roots ...string) *Dirs {
	d := &Dirs{roots: roots}
	d.files.Open = func(p string) (*symbfile.Table, *symbols.Symbols, error) {
		t, err := symbfile.Open(p)
		if err != nil {
			return nil, nil, err
		}
		return t, &symbols.Symbols{Lookup: &Table{Table: t}}, nil
	}
	return d
}

// Load implements symbols.Source.
func (d *Dirs) Load(m symbols.Module) (*symbols.Symbols, error) {
	for _, root := range d.roots {
		for _, ext := range Exts {
			p, err := symstore.BreakpadFile(root, m.DebugFile, m.DebugID, ext)
			if err != nil {
				return nil, fmt.Errorf("%s %s: %w", m.DebugFile, m.DebugID, symbols.ErrNotFound)
			}
			if _, err := os.Stat(p); err != nil {
				continue
			}
			_, syms, err := d.files.Load(p)
			return syms, err
		}
	}
	return nil, fmt.Errorf("%s %s: %w", m.DebugFile, m.DebugID, symbols.ErrNotFound)
}

// Close drops the loaded files.
func (d *Dirs) Close() error { return d.files.Close() }
