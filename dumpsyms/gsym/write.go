// Package gsym converts between the project's symbol model (package
// dumpsyms) and LLVM's GSYM files (package gsym): Write makes a GSYM file of
// a model, so of a Breakpad .sym file or of an ELF file's DWARF; Read makes
// a model of a GSYM file, so that one converts back to a .sym.
//
// Addresses: GSYM stores absolute addresses with the header's base address
// at or below them, and llvm-gsymutil --convert sets that base to the ELF's
// lowest PT_LOAD address, the one Breakpad's module-relative addresses are
// relative to. Write stores model address + Symbols.LoadAddress and sets the
// base to LoadAddress; a model read from a .sym has no load address (0), so
// its GSYM file holds the .sym's module-relative addresses with base 0 and
// is looked up with the same addresses as the .sym. Read subtracts the base.
package gsym

import (
	"cmp"
	"encoding/hex"
	"io"
	"slices"

	"github.com/gobreakpad/gobreakpad/dumpsyms"
	"github.com/gobreakpad/gobreakpad/gsym"
	"github.com/gobreakpad/gobreakpad/symfile"
)

// unnamed stands for empty names, which GSYM cannot store.
const unnamed = "<unknown>"

// Write writes s as a GSYM file. Breakpad's lookup rules decide what is
// kept where the two formats differ: of overlapping functions and of line
// records overlapping an earlier one only the first is written; PUBLIC
// records become size-0 entries (which cover up to the next entry, as a
// PUBLIC does) unless a function covers them; INLINE records nest by their
// depth, and a range not inside its parent's, or partly overlapping an
// earlier sibling's, is left out. warn, when set, receives what
// was left out.
func Write(w io.Writer, s *dumpsyms.Model, warn func(string, ...any)) error {
	if warn == nil {
		warn = func(string, ...any) {}
	}
	gw := gsym.NewWriter()
	gw.BaseAddress = s.LoadAddress
	if id, err := hex.DecodeString(s.CodeID.ID); err == nil && len(id) > 0 && len(id) <= gsym.MaxUUIDSize {
		gw.UUID = id
	}
	c := conv{gw: gw, s: s, warn: warn, files: map[uint32]uint32{}, origins: map[uint32]string{}}
	for _, f := range s.Files {
		c.files[f.Number] = gw.FilePath(f.Name)
	}
	for _, o := range s.Origins {
		c.origins[o.ID] = o.Name
	}
	if err := c.funcs(); err != nil {
		return err
	}
	_, err := gw.WriteTo(w)
	return err
}

type conv struct {
	gw      *gsym.Writer
	s       *dumpsyms.Model
	warn    func(string, ...any)
	files   map[uint32]uint32 // FILE number → file table index
	origins map[uint32]string
}

// span is one range of one function.
type span struct {
	r symfile.Range
	f int
}

func (c *conv) name(n string) uint32 {
	if n == "" {
		n = unnamed
	}
	return c.gw.String(n)
}

func (c *conv) funcs() error {
	var spans []span
	var buf dumpsyms.Function
	for i := range c.s.NumFuncs() {
		f := c.s.Func(i, &buf, false)
		for _, r := range f.Ranges {
			if r.Size == 0 || r.Address+r.Size < r.Address || r.Size > 1<<32-1 {
				c.warn("FUNC %s at %#x: range of %#x bytes left out", f.Name, r.Address, r.Size)
				continue
			}
			spans = append(spans, span{r, i})
		}
	}
	slices.SortStableFunc(spans, func(a, b span) int { return cmp.Compare(a.r.Address, b.r.Address) })
	// Breakpad's exclusive range map: a function overlapping one kept
	// before it is dropped.
	kept := spans[:0]
	for _, sp := range spans {
		if k := len(kept) - 1; k >= 0 && sp.r.Address < kept[k].r.Address+kept[k].r.Size {
			name := c.s.Func(sp.f, &buf, false).Name
			c.warn("FUNC %s at %#x overlaps %s: left out", name, sp.r.Address, c.s.Func(kept[k].f, &buf, false).Name)
			continue
		}
		kept = append(kept, sp)
	}
	load := c.s.LoadAddress
	for _, sp := range kept {
		f := c.s.Func(sp.f, &buf, true)
		fi := gsym.FunctionInfo{Start: load + sp.r.Address, Size: uint32(sp.r.Size), Name: c.name(f.Name)}
		fi.LineTable = c.lines(f, sp.r)
		fi.Inline = c.inlines(f, sp.r, fi.LineTable)
		if err := c.gw.Add(&fi); err != nil {
			return err
		}
	}
	// PUBLIC records outside every function, first at an address wins.
	seen := map[uint64]bool{}
	for _, sp := range kept {
		seen[sp.r.Address] = true
	}
	for i := range c.s.NumPublics() {
		p := c.s.Public(i)
		if p.Address == 0 || seen[p.Address] {
			continue
		}
		i, _ := slices.BinarySearchFunc(kept, p.Address, func(sp span, a uint64) int { return cmp.Compare(sp.r.Address, a) })
		if i > 0 && p.Address-kept[i-1].r.Address < kept[i-1].r.Size {
			continue
		}
		seen[p.Address] = true
		if err := c.gw.Add(&gsym.FunctionInfo{Start: load + p.Address, Name: c.name(p.Name)}); err != nil {
			return err
		}
	}
	return nil
}

// lines returns the rows of f's lines within r: one per line record, those
// starting inside an earlier kept one dropped, as Breakpad drops them.
func (c *conv) lines(f *dumpsyms.Function, r symfile.Range) gsym.LineTable {
	var rows gsym.LineTable
	var end uint64
	for _, l := range f.Lines {
		if l.Size == 0 || l.Address-r.Address >= r.Size {
			continue
		}
		if len(rows) > 0 && l.Address < end {
			continue
		}
		line := l.Line
		if line < 0 || line > 1<<32-1 {
			line = 0
		}
		rows = append(rows, gsym.LineEntry{Address: c.s.LoadAddress + l.Address, File: c.files[l.File], Line: uint32(line)})
		end = l.Address + l.Size
	}
	return rows
}

// node is an inline tree node being built, with its ranges module-relative.
type node struct {
	ii       gsym.InlineInfo
	children []*node
}

// inlines builds f's inline tree within r: each INLINE record is a child of
// the last record one level less deep (records deeper than that are
// dropped, as Breakpad drops them), keeping the ranges Breakpad keeps.
func (c *conv) inlines(f *dumpsyms.Function, r symfile.Range, rows gsym.LineTable) *gsym.InlineInfo {
	if len(f.Inlines) == 0 {
		return nil
	}
	load := c.s.LoadAddress
	root := &node{ii: gsym.InlineInfo{Ranges: []gsym.Range{{Start: load + r.Address, End: load + r.Address + r.Size}}, Name: c.name(f.Name)}}
	stack := []*node{root}
	for _, in := range f.Inlines {
		d := int(in.Depth) + 1
		if d > len(stack) {
			continue
		}
		stack = stack[:d]
		parent := stack[d-1]
		// Breakpad's contained range map keeps a range only inside its
		// parent's and not partly overlapping an earlier sibling's.
		var rs []gsym.Range
		for _, x := range in.Ranges {
			r := gsym.Range{Start: load + x.Address, End: load + x.Address + x.Size}
			if r.End <= r.Start || !within(r, parent.ii.Ranges) || overlapsPartly(r, parent.children) {
				continue
			}
			rs = append(rs, r)
		}
		rs = normalize(rs)
		if len(rs) == 0 {
			// Keep the level so that deeper records still find their
			// parent, but write nothing for it.
			stack = append(stack, &node{})
			continue
		}
		n := &node{ii: gsym.InlineInfo{Ranges: rs, Name: c.name(c.origins[in.Origin]), CallLine: in.CallLine}}
		if in.HasCallFile && in.CallFile >= 0 {
			n.ii.CallFile = c.files[uint32(in.CallFile)]
		} else {
			// Old-form records: Breakpad shows the call in the file of the
			// line record; take the row's at the call's start.
			i, _ := slices.BinarySearchFunc(rows, rs[0].Start+1, func(e gsym.LineEntry, a uint64) int { return cmp.Compare(e.Address, a) })
			if i > 0 {
				n.ii.CallFile = rows[i-1].File
			}
		}
		if parent.ii.Ranges != nil {
			parent.children = append(parent.children, n)
		}
		stack = append(stack, n)
	}
	if len(root.children) == 0 {
		return nil
	}
	ii := build(root)
	return &ii
}

func build(n *node) gsym.InlineInfo {
	ii := n.ii
	for _, c := range n.children {
		ii.Children = append(ii.Children, build(c))
	}
	return ii
}

// within reports whether r lies inside one of the ranges ps.
func within(r gsym.Range, ps []gsym.Range) bool {
	for _, p := range ps {
		if r.Start >= p.Start && r.End <= p.End {
			return true
		}
	}
	return false
}

// overlapsPartly reports whether r overlaps a range of one of nodes
// without either holding the other.
func overlapsPartly(r gsym.Range, nodes []*node) bool {
	for _, n := range nodes {
		for _, s := range n.ii.Ranges {
			if r.Start < s.End && s.Start < r.End && !(r.Start <= s.Start && s.End <= r.End) && !(s.Start <= r.Start && r.End <= s.End) {
				return true
			}
		}
	}
	return false
}

// normalize sorts ranges and merges overlapping ones. Adjacent ones stay
// apart (LLVM 14 writes them so too): lookups then give the start of the
// one holding an address, as Breakpad does.
func normalize(rs []gsym.Range) []gsym.Range {
	slices.SortFunc(rs, func(a, b gsym.Range) int { return cmp.Compare(a.Start, b.Start) })
	out := rs[:0]
	for _, r := range rs {
		if k := len(out) - 1; k >= 0 && r.Start < out[k].End {
			out[k].End = max(out[k].End, r.End)
			continue
		}
		out = append(out, r)
	}
	return out
}
