package symbfile

import (
	"cmp"
	"path/filepath"
	"slices"
	"sort"
	"strings"

	"github.com/gobreakpad/gobreakpad/dumpsyms"
	"github.com/gobreakpad/gobreakpad/symbfile"
	"github.com/gobreakpad/gobreakpad/symfile"
)

// ReadFile reads the symbfile at path (zstd-compressed or not) into the
// model: a FUNC per depth-0 range
// (a PUBLIC for one without lines or inlined calls that reaches the next
// range, as the writer makes PUBLIC records), an INLINE
// record per deeper range at its depth minus one inside the FUNC holding it,
// and line records from the line table of the deepest range at each address
// (line 0 entries give none). A symbfile has no identity: the MODULE record
// says "unknown" operating system and architecture, a zero debug id and the
// file's base name (without ".symbfile" or ".zst"). Return pads are dropped,
// and so are ranges deeper than symbfile.MaxInlineDepth (as lookups do).
func ReadFile(path string, warn func(format string, args ...any)) (*dumpsyms.Model, error) {
	t, err := symbfile.Open(path)
	if err != nil {
		return nil, err
	}
	name := filepath.Base(path)
	name = strings.TrimSuffix(strings.TrimSuffix(name, ".zst"), ".symbfile")
	s := Read(t, name)
	if warn != nil {
		warn("%s: a symbfile has no module identity or unwind information; MODULE says %q %q %q", path, s.Module.OS, s.Module.ID, s.Module.Name)
		if len(t.Pads) > 0 {
			warn("%s: %d return pads dropped (the model has none)", path, len(t.Pads))
		}
	}
	return s, nil
}

// Read is ReadFile over an indexed symbfile, for a module named name. The chains
// of ranges covering the nested ranges' starts and the line cuts are found
// by two symbfile.Sweep passes in address order, so that a well-nested file
// costs about one lookup per range and cut whatever its depth.
func Read(t *symbfile.Table, name string) *dumpsyms.Model {
	s := &dumpsyms.Model{Module: symfile.Module{OS: "unknown", Arch: "unknown", ID: strings.Repeat("0", 33), Name: name}}
	names := dumpsyms.NewNames(s)
	file, origin := names.File, names.Origin
	// Ranges are sorted by depth, then start: the depth-0 ones first.
	funcOf := map[int]int{} // index in t.Ranges of a depth-0 range -> index in s.Funcs
	var nested []int        // deeper ranges
	for i := range t.Ranges {
		r := &t.Ranges[i]
		if r.Depth > 0 {
			nested = append(nested, i)
			continue
		}
		if r.Length == 0 {
			continue
		}
		funcOf[i] = len(s.Funcs)
		s.Funcs = append(s.Funcs, dumpsyms.Function{Name: r.Func, Ranges: []symfile.Range{{Address: r.Start, Size: r.Length}}})
	}
	// Each nested range's chain at its start, in address order (one sweep);
	// the records in the table's order.
	type chainAt struct{ top, parent int } // cov[0], cov[d-1]; top -1 when not reached
	byStart := make([]int, len(nested))
	for k := range byStart {
		byStart[k] = k
	}
	slices.SortStableFunc(byStart, func(a, b int) int { return cmp.Compare(t.Ranges[nested[a]].Start, t.Ranges[nested[b]].Start) })
	chains := make([]chainAt, len(nested))
	sw := t.NewSweep()
	for _, k := range byStart {
		i := nested[k]
		r := &t.Ranges[i]
		chains[k] = chainAt{-1, -1}
		if r.Depth > symbfile.MaxInlineDepth {
			continue // not indexed: lookups never reach it
		}
		cov := sw.Covering(r.Start)
		d := int(r.Depth)
		if len(cov) <= d || cov[d] != i {
			continue // not nested in a range of each depth above: lookups never reach it
		}
		chains[k] = chainAt{cov[0], cov[d-1]}
	}
	inner := make([][]int, len(s.Funcs)) // per function, its nested ranges
	for k, i := range nested {
		fi, ok := funcOf[chains[k].top]
		if chains[k].top < 0 || !ok {
			continue
		}
		r := &t.Ranges[i]
		parent := &t.Ranges[chains[k].parent]
		in := symfile.Inline{Depth: r.Depth - 1, CallLine: r.CallLine, CallFile: -1, HasCallFile: true,
			Origin: origin(r.Func), Ranges: []symfile.Range{{Address: r.Start, Size: r.Length}}}
		if cf := cmp.Or(r.CallFile, parent.File); cf != "" {
			in.CallFile = int32(file(cf))
		}
		s.Funcs[fi].Inlines = append(s.Funcs[fi].Inlines, in)
		inner[fi] = append(inner[fi], i)
	}
	// Line records: cut each function at every line table entry and range
	// boundary inside it; each piece takes the deepest range's entry (the
	// deepest ranges at all cuts found in one sweep).
	cutsOf := make([][]uint64, len(s.Funcs))
	deepest := make([][]int, len(s.Funcs))
	type cutAt struct{ fi, k int }
	for i, fi := range funcOf {
		f := &s.Funcs[fi]
		lo, hi := t.Ranges[i].Start, t.Ranges[i].End()
		cuts := []uint64{lo}
		for _, e := range t.Ranges[i].Lines {
			cuts = append(cuts, e.Addr)
		}
		for _, in := range f.Inlines {
			cuts = append(cuts, in.Ranges[0].Address, in.Ranges[0].Address+in.Ranges[0].Size)
		}
		for _, j := range inner[fi] {
			for _, e := range t.Ranges[j].Lines {
				cuts = append(cuts, e.Addr)
			}
		}
		cuts = slices.DeleteFunc(cuts, func(a uint64) bool { return a < lo || a >= hi })
		slices.Sort(cuts)
		cuts = slices.Compact(cuts)
		cutsOf[fi] = cuts
		deepest[fi] = make([]int, len(cuts))
	}
	n := 0
	for _, cuts := range cutsOf {
		n += len(cuts)
	}
	all := make([]cutAt, 0, n)
	for fi, cuts := range cutsOf {
		for k := range cuts {
			all = append(all, cutAt{fi, k})
		}
	}
	slices.SortFunc(all, func(a, b cutAt) int { return cmp.Compare(cutsOf[a.fi][a.k], cutsOf[b.fi][b.k]) })
	sw = t.NewSweep()
	for _, c := range all {
		deepest[c.fi][c.k] = -1
		if cov := sw.Covering(cutsOf[c.fi][c.k]); len(cov) > 0 {
			deepest[c.fi][c.k] = cov[len(cov)-1]
		}
	}
	for fi := range s.Funcs {
		f := &s.Funcs[fi]
		cuts := cutsOf[fi]
		if len(cuts) == 0 {
			continue
		}
		hi := f.Ranges[0].Address + f.Ranges[0].Size
		if hi < f.Ranges[0].Address {
			hi = ^uint64(0)
		}
		type at struct {
			rng, entry int
		}
		prev := at{-1, -1}
		for k, a := range cuts {
			end := hi
			if k+1 < len(cuts) {
				end = cuts[k+1]
			}
			deep := deepest[fi][k]
			if deep < 0 {
				continue
			}
			r := &t.Ranges[deep]
			j := sort.Search(len(r.Lines), func(j int) bool { return r.Lines[j].Addr > a }) - 1
			if j < 0 || r.Lines[j].Line == 0 {
				prev = at{-1, -1}
				continue
			}
			if cur := (at{deep, j}); cur == prev && len(f.Lines) > 0 {
				f.Lines[len(f.Lines)-1].Size = end - f.Lines[len(f.Lines)-1].Address
				continue
			} else {
				prev = cur
			}
			f.Lines = append(f.Lines, symfile.Line{Address: a, Size: end - a, Line: int64(r.Lines[j].Line), File: file(r.File)})
		}
	}
	// A range without lines or inlined calls reaching the next range is
	// what a PUBLIC record becomes: make it one again (the last PUBLIC,
	// written one byte long, stays a FUNC of that byte).
	slices.SortStableFunc(s.Funcs, func(a, b dumpsyms.Function) int { return cmp.Compare(a.Ranges[0].Address, b.Ranges[0].Address) })
	funcs := s.Funcs[:0]
	for k, f := range s.Funcs {
		r := f.Ranges[0]
		reaches := (k+1 < len(s.Funcs) && r.Address+r.Size == s.Funcs[k+1].Ranges[0].Address)
		if len(f.Lines) == 0 && len(f.Inlines) == 0 && reaches && r.Address != 0 { // Breakpad drops PUBLIC 0
			s.Publics = append(s.Publics, symfile.Public{Address: r.Address, Name: f.Name})
			continue
		}
		funcs = append(funcs, f)
	}
	s.Funcs = funcs
	slices.SortStableFunc(s.Publics, func(a, b symfile.Public) int { return cmp.Compare(a.Address, b.Address) })
	return s
}
