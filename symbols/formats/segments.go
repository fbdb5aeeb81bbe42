package formats

import (
	"cmp"
	"slices"
	"sort"

	"github.com/gobreakpad/gobreakpad/dumpsyms"
	"github.com/gobreakpad/gobreakpad/symfile"
)

// segment is a run of a function's addresses with one inline chain and one
// line record: what the lookup formats (SymCache, symbfile) store per range.
type segment struct {
	start, end uint64
	// inl[d] is the index in Function.Inlines of the call at depth d
	// covering the run, rng[d] the index of its range holding it.
	inl, rng []int
	line     int // index in Function.Lines, -1 for none
}

type inlRange struct {
	start, end uint64
	inl, rng   int
}

// segments cuts a function's ranges at every line record and inline range
// boundary.
func segments(f *dumpsyms.Function) []segment {
	var byDepth [][]inlRange
	cuts := []uint64{}
	for i, in := range f.Inlines {
		for ri, r := range in.Ranges {
			for int(in.Depth) >= len(byDepth) {
				byDepth = append(byDepth, nil)
			}
			byDepth[in.Depth] = append(byDepth[in.Depth], inlRange{r.Address, r.Address + r.Size, i, ri})
			cuts = append(cuts, r.Address, r.Address+r.Size)
		}
	}
	for _, rs := range byDepth {
		slices.SortFunc(rs, func(a, b inlRange) int { return cmp.Compare(a.start, b.start) })
	}
	for _, l := range f.Lines {
		cuts = append(cuts, l.Address, l.Address+l.Size)
	}
	lines := f.Lines
	if !slices.IsSortedFunc(lines, func(a, b symfile.Line) int { return cmp.Compare(a.Address, b.Address) }) {
		lines = slices.Clone(lines)
		slices.SortStableFunc(lines, func(a, b symfile.Line) int { return cmp.Compare(a.Address, b.Address) })
	}
	var out []segment
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
			s := segment{start: a, end: pts[k+1], line: -1}
			for _, rs := range byDepth {
				j := sort.Search(len(rs), func(j int) bool { return rs[j].start > a }) - 1
				// Several calls may start at or below a; take the nearest
				// one holding it.
				for steps := 0; j >= 0 && !(a < rs[j].end); j-- {
					if steps++; steps > 64 {
						j = -1
					}
				}
				if j < 0 {
					break
				}
				s.inl, s.rng = append(s.inl, rs[j].inl), append(s.rng, rs[j].rng)
			}
			j := sort.Search(len(lines), func(j int) bool { return lines[j].Address > a }) - 1
			if j >= 0 && a-lines[j].Address < lines[j].Size {
				s.line = indexOfLine(f.Lines, lines, j)
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

// names resolves FILE numbers and INLINE_ORIGIN ids of a model.
type symNames struct {
	files   map[uint32]string
	origins map[uint32]string
}

func modelNames(s *dumpsyms.Symbols) symNames {
	n := symNames{files: map[uint32]string{}, origins: map[uint32]string{}}
	for _, f := range s.Files {
		n.files[f.Number] = f.Name
	}
	for _, o := range s.Origins {
		n.origins[o.ID] = o.Name
	}
	return n
}

// callFile is the call site file of an inline record: its file, or (old
// records without one) the line record's, as symfile shows them.
func (n symNames) callFile(in symfile.Inline, f *dumpsyms.Function, s segment) string {
	if in.HasCallFile {
		if in.CallFile < 0 {
			return ""
		}
		return n.files[uint32(in.CallFile)]
	}
	if s.line >= 0 {
		return n.files[f.Lines[s.line].File]
	}
	return ""
}
