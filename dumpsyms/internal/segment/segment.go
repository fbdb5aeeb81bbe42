// Package segment cuts the model's functions into the runs of addresses
// the lookup formats store per range (one inline chain and one line record
// each), and resolves the model's FILE numbers and INLINE_ORIGIN ids to
// names: what the SymCache writer (dumpsyms/symcache) and the symbfile
// writer (dumpsyms/symbfile) share.
package segment

import (
	"cmp"
	"slices"
	"sort"

	"github.com/gobreakpad/gobreakpad/dumpsyms"
	"github.com/gobreakpad/gobreakpad/symfile"
)

// Segment is a run of a function's addresses with one inline chain and one
// line record: what the lookup formats (SymCache, symbfile) store per range.
type Segment struct {
	// Start and End bound the run: [Start, End).
	Start, End uint64
	// Inl[d] is the index in Function.Inlines of the call at nesting
	// level d (0 outermost) covering the run, as a lookup of the .sym file
	// nests them; Rng[d] the index of its range holding it.
	Inl, Rng []int
	// Line is the index in Function.Lines of the run's line record, -1 for
	// none.
	Line int
}

// Of cuts a function's ranges at every line record and inline range
// boundary. The inline chain of each run is the one a lookup of the .sym
// file the function writes gives (symfile.NestInlines: ranges nested by
// containment, equal ones by depth, records Breakpad's resolver drops left
// out), so that a conversion answers as the .sym file does.
func Of(f *dumpsyms.Function) []Segment {
	cuts := []uint64{}
	for _, in := range f.Inlines {
		for _, r := range in.Ranges {
			cuts = append(cuts, r.Address, r.Address+r.Size)
		}
	}
	var nest *symfile.InlineNesting
	if len(f.Inlines) > 0 {
		nest = symfile.NestInlines(f.Inlines)
	}
	var chain []symfile.InlineRange
	for _, l := range f.Lines {
		cuts = append(cuts, l.Address, l.Address+l.Size)
	}
	lines := f.Lines
	if !slices.IsSortedFunc(lines, func(a, b symfile.Line) int { return cmp.Compare(a.Address, b.Address) }) {
		lines = slices.Clone(lines)
		slices.SortStableFunc(lines, func(a, b symfile.Line) int { return cmp.Compare(a.Address, b.Address) })
	}
	var out []Segment
	for _, fr := range f.Ranges {
		lo, hi := fr.Address, fr.Address+fr.Size
		pts := []uint64{lo, hi}
		for _, c := range cuts {
			if c > lo && c < hi {
				pts = append(pts, c)
			}
		}
		slices.Sort(pts)
		pts = slices.Compact(pts)
		for k := 0; k+1 < len(pts); k++ {
			a := pts[k]
			s := Segment{Start: a, End: pts[k+1], Line: -1}
			if nest != nil {
				// Innermost first: the segment lists them outermost first.
				chain = nest.At(a, chain[:0])
				for d := len(chain) - 1; d >= 0; d-- {
					s.Inl, s.Rng = append(s.Inl, chain[d].Inline), append(s.Rng, chain[d].Range)
				}
			}
			j := sort.Search(len(lines), func(j int) bool { return lines[j].Address > a }) - 1
			if j >= 0 && a-lines[j].Address < lines[j].Size {
				s.Line = indexOfLine(f.Lines, lines, j)
			}
			out = append(out, s)
		}
	}
	return out
}

// indexOfLine maps index j of sorted back to f.Lines (the same slice unless
// the lines had to be sorted).
func indexOfLine(orig, sorted []symfile.Line, j int) int {
	if len(orig) > 0 && len(sorted) > 0 && &orig[0] == &sorted[0] {
		return j
	}
	for i := range orig {
		if orig[i] == sorted[j] {
			return i
		}
	}
	return -1
}

// Names resolves FILE numbers and INLINE_ORIGIN ids of a model.
type Names struct {
	// Files maps FILE numbers to names, Origins INLINE_ORIGIN ids.
	Files, Origins map[uint32]string
}

// NamesOf returns the names of s's FILE and INLINE_ORIGIN records.
func NamesOf(s *dumpsyms.Model) Names {
	n := Names{Files: map[uint32]string{}, Origins: map[uint32]string{}}
	for _, f := range s.Files {
		n.Files[f.Number] = f.Name
	}
	for _, o := range s.Origins {
		n.Origins[o.ID] = o.Name
	}
	return n
}

// CallFile is the call site file of an inline record in segment s of f:
// its file, or (old records without one) the line record's, as symfile
// shows them.
func (n Names) CallFile(in symfile.Inline, f *dumpsyms.Function, s Segment) string {
	if in.HasCallFile {
		if in.CallFile < 0 {
			return ""
		}
		return n.Files[uint32(in.CallFile)]
	}
	if s.Line >= 0 {
		return n.Files[f.Lines[s.Line].File]
	}
	return ""
}
