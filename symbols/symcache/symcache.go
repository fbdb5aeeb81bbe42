// Package symcache adapts Sentry's SymCache files (package symcache) to the
// symbol contract of package symbols: Dirs is a Source over symbol stores
// holding NAME.symc files in Breakpad's layout, matched by debug id, and
// Cache answers lookups. SymCaches carry no unwind information: chain a
// Breakpad source after this one for CFI and STACK WIN.
package symcache

import (
	"fmt"
	"os"
	"strings"

	"github.com/gobreakpad/gobreakpad/symstore"

	"github.com/gobreakpad/gobreakpad/symbols"
	"github.com/gobreakpad/gobreakpad/symcache"
)

// Ext is the file name extension of SymCaches in a store.
const Ext = ".symc"

// Table adapts a parsed SymCache to symbols.Lookuper.
type Table struct {
	Cache *symcache.Reader
}

// maxBack bounds the ranges walked back to find where a line or an inlined
// call starts.
const maxBack = 4096

// Lookup implements symbols.Lookuper. FunctionBase is the function's entry
// address; LineBase and inlined frames' Base are where the run of ranges with
// the same source location (for inlined calls, within the same call) starts,
// as the format keeps no line record or inlined range starts.
func (c *Table) Lookup(rel uint64, inlines bool) (symbols.Symbol, bool) {
	r, ok := c.Cache.FindRange(rel)
	if !ok {
		return symbols.Symbol{}, false
	}
	chain := c.Cache.Chain(c.Cache.RangeLocation(r))
	if len(chain) == 0 {
		return symbols.Symbol{}, false
	}
	root, leaf := chain[len(chain)-1], chain[0]
	out := symbols.Symbol{Function: root.Function, FunctionBase: uint64(root.EntryPC)}
	if root.EntryPC == symcache.None {
		start, _ := c.Cache.RangeStart(r)
		out.FunctionBase = uint64(start)
	}
	if leaf.File != "" || leaf.Line != 0 {
		out.HasLine = true
		out.File, out.Line = leaf.File, int(leaf.Line)
		out.LineBase = uint64(c.runStart(r, leaf.Index, 0))
	}
	if !inlines || len(chain) == 1 {
		return out, true
	}
	out.File, out.Line = root.File, int(root.Line)
	out.Inlines = make([]symbols.InlineFrame, len(chain)-1)
	for k, l := range chain[:len(chain)-1] {
		// The inlined call is identified by the call location it was
		// inlined into, at its distance from the leaf.
		out.Inlines[k] = symbols.InlineFrame{Function: l.Function, File: l.File, Line: int(l.Line), Base: uint64(c.runStart(r, chain[k+1].Index, k+1))}
	}
	return out, true
}

// runStart returns the start of the earliest range before (and including)
// r whose chain has source location idx at the given distance from its
// leaf, without a gap.
func (c *Table) runStart(r, idx uint32, depth int) uint32 {
	start, _ := c.Cache.RangeStart(r)
	for j, n := r, 0; j > 0 && n < maxBack; n++ {
		j--
		if !c.hasAt(c.Cache.RangeLocation(j), idx, depth) {
			break
		}
		start, _ = c.Cache.RangeStart(j)
	}
	return start
}

// hasAt reports whether the chain from source location i has idx at depth.
func (c *Table) hasAt(i, idx uint32, depth int) bool {
	for d := 0; d < depth; d++ {
		sl, ok := c.Cache.SourceLocation(i)
		if !ok {
			return false
		}
		i = sl.InlinedInto
	}
	return i == idx
}

// Dirs is a symbols.Source over symbol store directories holding SymCaches
// as ROOT/DEBUG_FILE/DEBUG_ID/DEBUG_FILE.symc (with a ".pdb" suffix of the
// debug file dropped, as for .sym files). A cache whose debug id differs
// from the module's is not used. Each file is mapped once.
type Dirs struct {
	roots []string
	files symbols.Files[*symcache.Reader]
}

// NewDirs returns a Source searching roots in order.
func NewDirs(roots ...string) *Dirs {
	d := &Dirs{roots: roots}
	d.files.Open = func(p string) (*symcache.Reader, *symbols.Symbols, error) {
		c, err := symcache.Open(p)
		if err != nil {
			return nil, nil, err
		}
		return c, &symbols.Symbols{Lookup: &Table{Cache: c}}, nil
	}
	d.files.CloseFile = (*symcache.Reader).Close
	return d
}

// Load implements symbols.Source.
func (d *Dirs) Load(m symbols.Module) (*symbols.Symbols, error) {
	for _, root := range d.roots {
		p, err := symstore.BreakpadFile(root, m.DebugFile, m.DebugID, Ext)
		if err != nil {
			break
		}
		if _, err := os.Stat(p); err != nil {
			continue
		}
		c, syms, err := d.files.Load(p)
		if err != nil {
			return nil, err
		}
		if !strings.EqualFold(c.DebugID.String(), m.DebugID) {
			return nil, fmt.Errorf("%w: %s has debug id %s, not %s", symbols.ErrNotFound, p, c.DebugID, m.DebugID)
		}
		return syms, nil
	}
	return nil, fmt.Errorf("%s %s: %w", m.DebugFile, m.DebugID, symbols.ErrNotFound)
}

// Close unmaps the files. The symbols loaded through d must not be used
// afterwards.
func (d *Dirs) Close() error { return d.files.Close() }
