package symcache

import (
	"path/filepath"
	"strings"

	"github.com/gobreakpad/gobreakpad/dumpsyms"
	"github.com/gobreakpad/gobreakpad/symcache"
	"github.com/gobreakpad/gobreakpad/symfile"
)

// ReadFile reads the SymCache at path into the model: a FUNC per run of ranges
// whose outermost function is the same, a line record per run of ranges
// (the format keeps no line record starts: lookups count from the
// range's), an INLINE record per run of
// ranges inlined through the same call site, and a PUBLIC per run without
// any file or line that is not followed by an end of range (what
// Builder.AddSymbol writes). The MODULE record gets the cache's debug id and
// architecture, "unknown" as its operating system and the file's base name
// (without ".symc") as its name; the last range, open-ended in the format,
// is given one byte.
func ReadFile(path string, warn func(format string, args ...any)) (*dumpsyms.Model, error) {
	c, err := symcache.Open(path)
	if err != nil {
		return nil, err
	}
	defer c.Close()
	name := strings.TrimSuffix(filepath.Base(path), filepath.Ext(path))
	s := Read(c, name)
	if warn != nil {
		warn("%s: SymCache has no operating system, module name or unwind information; MODULE says %q %q", path, s.Module.OS, s.Module.Name)
	}
	return s, nil
}

// Read is ReadFile over an open cache, for a module named name.
func Read(c *symcache.Reader, name string) *dumpsyms.Model {
	s := &dumpsyms.Model{Module: symfile.Module{OS: "unknown", Arch: c.Arch.String(), ID: c.DebugID.String(), Name: name}}
	names := dumpsyms.NewNames(s)
	file, origin := names.File, names.Origin
	// An inlined call: its depth (0: called from the FUNC), the source
	// location it was inlined into (the call site, shared by every range
	// of the call) and its own function.
	type callKey struct {
		depth, into, fn uint32
	}
	var (
		cur     *dumpsyms.Function
		curRoot = symcache.None
		calls   map[callKey]int // index in cur.Inlines
		parents []int           // per cur.Inlines, the record it is inlined into (-1: the FUNC)
		lastEnd uint64
	)
	flush := func() {
		if cur != nil {
			cur.Inlines = treeOrder(cur.Inlines, parents)
			s.Funcs = append(s.Funcs, *cur)
		}
		cur, curRoot = nil, symcache.None
	}
	n := c.NumRanges
	// seen[i] == r+1: source location i is in range r's chain. Chains of
	// hostile files loop; the model gets each level once.
	seen := make([]uint32, c.NumSourceLocations)
	for r := uint32(0); r < n; r++ {
		start, _ := c.RangeStart(r)
		end := uint64(start) + 1
		next, hasNext := c.RangeStart(r + 1)
		if hasNext {
			end = uint64(next)
		}
		// Walk the chain from the range's source location up to the
		// root: locations innermost first.
		var idx []uint32
		var locs []symcache.SourceLocation
		for i, d := c.RangeLocation(r), 0; d < symcache.MaxInlineDepth; d++ {
			sl, ok := c.SourceLocation(i)
			if !ok || (d == 0 && sl == symcache.NoSourceLocation) || seen[i] == r+1 {
				break // a location seen in this chain: a cycle ends it
			}
			seen[i] = r + 1
			idx, locs = append(idx, i), append(locs, sl)
			i = sl.InlinedInto
		}
		if len(locs) == 0 {
			flush()
			continue
		}
		chain := make([]symcache.Location, len(locs))
		for k := range locs {
			chain[k] = c.Resolve(idx[k], locs[k])
		}
		root := locs[len(locs)-1]
		leaf := chain[0]
		noInfo := len(chain) == 1 && leaf.File == "" && leaf.Line == 0
		if noInfo && start != 0 && (cur == nil || curRoot != root.Function) { // Breakpad drops PUBLIC 0
			if nr, ok := rootFunction(c, r+1); !hasNext || (ok && nr != root.Function) {
				flush()
				s.Publics = append(s.Publics, symfile.Public{Address: uint64(start), Name: leaf.Function})
				continue
			}
		}
		if cur == nil || curRoot != root.Function || lastEnd != uint64(start) {
			flush()
			cur = &dumpsyms.Function{Name: chain[len(chain)-1].Function, Ranges: []symfile.Range{{Address: uint64(start)}}}
			curRoot, calls, parents = root.Function, map[callKey]int{}, parents[:0]
		}
		cur.Ranges[0].Size = end - cur.Ranges[0].Address
		lastEnd = end
		if leaf.File != "" || leaf.Line != 0 {
			// One line record per range: the format keeps no line
			// record starts, and its lookups count from the range's.
			cur.Lines = append(cur.Lines, symfile.Line{Address: uint64(start), Size: end - uint64(start), Line: int64(leaf.Line), File: file(leaf.File)})
		}
		// Inlined calls, outermost (depth 0) first: chain[k] for k from
		// len-2 down to 0, called from chain[k+1]'s position.
		outer := -1
		for k := len(chain) - 2; k >= 0; k-- {
			key := callKey{uint32(len(chain) - 2 - k), idx[k+1], locs[k].Function}
			if i, ok := calls[key]; ok {
				outer = i
				in := &cur.Inlines[i]
				last := &in.Ranges[len(in.Ranges)-1]
				if last.Address+last.Size == uint64(start) {
					last.Size = end - last.Address
				} else {
					in.Ranges = append(in.Ranges, symfile.Range{Address: uint64(start), Size: end - uint64(start)})
				}
				continue
			}
			in := symfile.Inline{Depth: key.depth, CallLine: chain[k+1].Line, CallFile: -1, HasCallFile: true,
				Origin: origin(chain[k].Function), Ranges: []symfile.Range{{Address: uint64(start), Size: end - uint64(start)}}}
			if chain[k+1].File != "" {
				in.CallFile = int32(file(chain[k+1].File))
			}
			calls[key] = len(cur.Inlines)
			parents = append(parents, outer)
			outer = len(cur.Inlines)
			cur.Inlines = append(cur.Inlines, in)
		}
	}
	flush()
	return s
}

// rootFunction returns the function of range r's outermost source
// location; false for a range without one (an end of range).
func rootFunction(c *symcache.Reader, r uint32) (uint32, bool) {
	if r >= c.NumRanges {
		return 0, false
	}
	i := c.RangeLocation(r)
	sl, ok := c.SourceLocation(i)
	if !ok || sl == symcache.NoSourceLocation {
		return 0, false
	}
	for d := 0; d < symcache.MaxInlineDepth; d++ {
		up, ok := c.SourceLocation(sl.InlinedInto)
		if !ok {
			break
		}
		sl = up
	}
	return sl.Function, true
}

// treeOrder orders INLINE records as Breakpad reads them: each right after
// the record it is inlined into (a record nests in the last one of the
// depth above).
func treeOrder(ins []symfile.Inline, parents []int) []symfile.Inline {
	kids := make([][]int, len(ins)+1) // kids[p+1]: the records inlined into p
	for i, p := range parents {
		kids[p+1] = append(kids[p+1], i)
	}
	out := make([]symfile.Inline, 0, len(ins))
	var walk func(p int)
	walk = func(p int) {
		for _, i := range kids[p+1] {
			out = append(out, ins[i])
			walk(i)
		}
	}
	walk(-1)
	return out
}
