package symbfile

import (
	"bytes"
	"cmp"
	"fmt"
	"io/fs"
	"math/rand/v2"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/gobreakpad/gobreakpad/dumpsyms"
	dsbreakpad "github.com/gobreakpad/gobreakpad/dumpsyms/breakpad"
	"github.com/gobreakpad/gobreakpad/internal/testkit/corpus"
	"github.com/gobreakpad/gobreakpad/symbfile"
	"github.com/gobreakpad/gobreakpad/symfile"
)

// canonSymbols prints a model with FILE numbers and INLINE_ORIGIN ids
// replaced by their names: the old conversion numbered the files of line
// records in a map's (random) order, the sweep in the functions' order.
func canonSymbols(s *dumpsyms.Model) string {
	files := map[uint32]string{}
	for _, f := range s.Files {
		files[f.Number] = f.Name
	}
	origins := map[uint32]string{}
	for _, o := range s.Origins {
		origins[o.ID] = o.Name
	}
	var b strings.Builder
	fmt.Fprintf(&b, "%+v %d files %d origins\n", s.Module, len(s.Files), len(s.Origins))
	for _, f := range s.Funcs {
		fmt.Fprintf(&b, "FUNC %q %v\n", f.Name, f.Ranges)
		for _, in := range f.Inlines {
			cf := "-"
			if in.HasCallFile && in.CallFile >= 0 {
				cf = files[uint32(in.CallFile)]
			}
			fmt.Fprintf(&b, " INLINE %d %d %q %q %v\n", in.Depth, in.CallLine, cf, origins[in.Origin], in.Ranges)
		}
		for _, l := range f.Lines {
			fmt.Fprintf(&b, " %x %x %d %q\n", l.Address, l.Size, l.Line, files[l.File])
		}
	}
	for _, p := range s.Publics {
		fmt.Fprintf(&b, "PUBLIC %x %q\n", p.Address, p.Name)
	}
	return b.String()
}

// checkSweepAgrees fails when Read's model of tab differs
// from the old conversion's.
func checkSweepAgrees(t *testing.T, what string, tab *symbfile.Table) {
	t.Helper()
	got, want := canonSymbols(Read(tab, "x")), canonSymbols(symbolsFromSymbfileOld(tab, "x"))
	if got != want {
		g, w := strings.Split(got, "\n"), strings.Split(want, "\n")
		for i := range min(len(g), len(w)) {
			if g[i] != w[i] {
				t.Errorf("%s: line %d: sweep %q, old %q", what, i+1, g[i], w[i])
				return
			}
		}
		t.Errorf("%s: sweep %d lines, old %d", what, len(g), len(w))
	}
}

// TestSymbfileSweepAgreesOnCorpus: the sweep's model is the old one's for
// every symbfile of the corpus and every .sym of it converted to symbfile.
func TestSymbfileSweepAgreesOnCorpus(t *testing.T) {
	root := corpus.Dir(t)
	n, seen := 0, 0
	filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return nil
		}
		rel, _ := filepath.Rel(root, p)
		switch {
		case strings.HasSuffix(p, ".symbfile") || strings.HasSuffix(p, ".symbfile.zst"):
			tab, err := symbfile.Open(p)
			if err != nil {
				t.Errorf("%s: %v", rel, err)
				return nil
			}
			checkSweepAgrees(t, rel, tab)
			n++
		case strings.HasSuffix(p, ".sym"):
			if fi, _ := d.Info(); fi != nil && fi.Size() > 8<<20 && (testing.Short() || raceBuild) {
				return nil // the 65 MB perf .sym: only in full runs
			}
			if seen++; raceBuild && seen%10 != 1 {
				return nil // a sample under -race (27 s for all)
			}
			model, err := dsbreakpad.ReadFile(p, nil)
			if err != nil {
				return nil // the corpus's broken .sym files
			}
			var buf bytes.Buffer
			if err := Write(&buf, model, WriteOptions{}); err != nil {
				t.Errorf("%s: %v", rel, err)
				return nil
			}
			tab, err := symbfile.Parse(buf.Bytes())
			if err != nil {
				t.Errorf("%s: %v", rel, err)
				return nil
			}
			checkSweepAgrees(t, rel, tab)
			n++
		}
		return nil
	})
	if n == 0 {
		t.Fatal("no symbfile or .sym in the corpus")
	}
	t.Logf("%d files", n)
}

// randomRanges makes n ranges in [0, span): well-nested (each inside the
// last range open at the depth above, none overlapping its depth's
// neighbours) or placed anywhere at random depths.
func randomRanges(rng *rand.Rand, n int, span uint64, nested bool) []symbfile.Range {
	files := []string{"a.c", "b.c", "c.h", ""}
	line := func() uint32 { return uint32(rng.IntN(4)) } // 0: no line
	mk := func(start, length uint64, depth uint32) symbfile.Range {
		r := symbfile.Range{Start: start, Length: length, Depth: depth, Func: fmt.Sprintf("f%d", rng.IntN(8)),
			File: files[rng.IntN(len(files))], CallLine: line(), CallFile: files[rng.IntN(len(files))]}
		for range rng.IntN(4) {
			a := start
			if length > 0 {
				a += rng.Uint64N(length + 2)
			}
			r.Lines = append(r.Lines, symbfile.LineEntry{Addr: a - uint64(rng.IntN(2)), Line: line()})
		}
		slices.SortFunc(r.Lines, func(a, b symbfile.LineEntry) int { return cmp.Compare(a.Addr, b.Addr) })
		return r
	}
	var out []symbfile.Range
	if !nested {
		for range n {
			start := rng.Uint64N(span)
			out = append(out, mk(start, rng.Uint64N(span/4+1), uint32(rng.IntN(5))))
		}
		return out
	}
	// Split [lo, hi) into siblings at depth, each holding children.
	var split func(lo, hi uint64, depth uint32)
	split = func(lo, hi uint64, depth uint32) {
		for a := lo; a < hi && len(out) < n; {
			a += rng.Uint64N(3) // gaps
			if a >= hi {
				break
			}
			end := min(hi, a+1+rng.Uint64N((hi-a)))
			out = append(out, mk(a, end-a, depth))
			if depth < 6 && rng.IntN(3) > 0 {
				split(a, end, depth+1)
			}
			a = end
		}
	}
	split(0, span, 0)
	return out
}

// TestSymbfileSweepAgreesOnRandomRanges: the sweep's model is the old one's
// on random well-nested and random overlapping range sets.
func TestSymbfileSweepAgreesOnRandomRanges(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for i := range 3000 {
		nested := i%2 == 0
		rs := randomRanges(rng, 1+rng.IntN(40), 1+rng.Uint64N(200), nested)
		tab := symbfile.NewTable(rs, nil)
		checkSweepAgrees(t, fmt.Sprintf("set %d (nested %v)", i, nested), tab)
		if t.Failed() {
			for _, r := range rs {
				t.Logf("%+v", r)
			}
			return
		}
	}
}

// symbolsFromSymbfileOld is Read before the sweep: each
// nested range and line cut looked up from depth 0 (quadratic in the
// depth). The reference the sweep is checked against.
func symbolsFromSymbfileOld(t *symbfile.Table, name string) *dumpsyms.Model {
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
	inner := make([][]int, len(s.Funcs)) // per function, its nested ranges
	for _, i := range nested {
		r := &t.Ranges[i]
		if r.Depth > symbfile.MaxInlineDepth {
			continue // not indexed: lookups never reach it
		}
		cov := t.Covering(r.Start)
		d := int(r.Depth)
		if len(cov) <= d || cov[d] != i {
			continue // not nested in a range of each depth above: lookups never reach it
		}
		fi, ok := funcOf[cov[0]]
		if !ok {
			continue
		}
		parent := &t.Ranges[cov[d-1]]
		in := symfile.Inline{Depth: r.Depth - 1, CallLine: r.CallLine, CallFile: -1, HasCallFile: true,
			Origin: origin(r.Func), Ranges: []symfile.Range{{Address: r.Start, Size: r.Length}}}
		if cf := cmp.Or(r.CallFile, parent.File); cf != "" {
			in.CallFile = int32(file(cf))
		}
		s.Funcs[fi].Inlines = append(s.Funcs[fi].Inlines, in)
		inner[fi] = append(inner[fi], i)
	}
	// Line records: cut each function at every line table entry and range
	// boundary inside it; each piece takes the deepest range's entry.
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
		type at struct {
			rng, entry int
		}
		prev := at{-1, -1}
		for k, a := range cuts {
			end := hi
			if k+1 < len(cuts) {
				end = cuts[k+1]
			}
			cov := t.Covering(a)
			if len(cov) == 0 {
				continue
			}
			deep := cov[len(cov)-1]
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

// TestSymbfileSweepStaircase: a function holding a chain MaxInlineDepth
// deep, a line at each byte, and as many functions starting with it and
// ending one at each byte inside it (hostile: overlapping functions). Their
// ends change no chain (the longer function, written last, is the one
// found), so the sweep looks none up again; its model is the old one's.
func TestSymbfileSweepStaircase(t *testing.T) {
	const n = 4096
	var rs []symbfile.Range
	for k := 1; k < n; k++ {
		rs = append(rs, symbfile.Range{Start: 0, Length: uint64(k), Func: "x"})
	}
	for d := range symbfile.MaxInlineDepth + 1 {
		r := symbfile.Range{Start: 0, Length: n, Func: "f", File: "a.c", Depth: uint32(d)}
		if d == symbfile.MaxInlineDepth {
			for a := range n {
				r.Lines = append(r.Lines, symbfile.LineEntry{Addr: uint64(a), Line: uint32(a%7 + 1)})
			}
		}
		rs = append(rs, r)
	}
	tab := symbfile.NewTable(rs, nil)
	checkSweepAgrees(t, "staircase", tab)
	s := Read(tab, "x")
	if len(s.Funcs) != n || len(s.Funcs[n-1].Lines) != n || len(s.Funcs[n-1].Inlines) != symbfile.MaxInlineDepth {
		t.Errorf("%d functions; want %d, the last with %d lines and %d inlines", len(s.Funcs), n, n, symbfile.MaxInlineDepth)
	}
}
