package symcache

import (
	"cmp"
	"fmt"
	"io"
	"slices"
	"sort"
)

// Loc is one level of an inline chain given to [Builder.Add]: a function
// (its name, its entry address or None for a function seen only inlined,
// its language) and a source position (the file's full path, "" for none;
// the line, 0 when unknown).
type Loc struct {
	Function string
	EntryPC  uint32
	Lang     Language
	File     string
	Line     uint32
}

// Builder makes a SymCache from address ranges and their inline chains, as
// symbolic's SymCacheConverter does: call locations (the outer levels of the
// chains) are shared, each range start maps to its innermost location, and
// ranges end at the next start or at a sentinel. Addresses above 4 GiB are
// dropped (the format has 32 bits).
type Builder struct {
	Version uint32 // LatestVersion when 0
	DebugID DebugID
	Arch    Arch

	strings   *StringTable
	files     map[File]uint32
	fileList  []File
	funcs     map[Function]uint32
	funcList  []Function
	calls     map[SourceLocation]uint32
	callList  []SourceLocation
	fileIndex map[string]uint32
	// ranges are the mappings of range starts in the order made: the
	// first one not NoSourceLocation at a start wins, else the start is
	// an end sentinel (what a map updated as Add and AddSymbol say would
	// hold). An end is kept in pending until the next mapping: when that
	// starts there, the sentinel would lose anyway and is not stored.
	ranges     rangeMaps
	pending    uint32
	hasPending bool
	// ranges[:sorted] are sorted by start; tail holds the starts mapped
	// (not to NoSourceLocation) in ranges[sorted:].
	sorted int
	tail   map[uint32]bool
	// Dropped counts ranges not added because they lie above 4 GiB.
	Dropped int
}

// rangeMap maps a range start to a source location.
type rangeMap struct {
	start uint32
	loc   SourceLocation
}

// rangeBlock is how many mappings a block of rangeMaps holds.
const rangeBlock = 1 << 16

// rangeMaps is a list of mappings in blocks: growing it never copies it
// (a big module has millions).
type rangeMaps struct {
	bs [][]rangeMap
	n  int
}

func (r *rangeMaps) at(i int) *rangeMap { return &r.bs[i/rangeBlock][i%rangeBlock] }

func (r *rangeMaps) add(m rangeMap) {
	if r.n == len(r.bs)*rangeBlock {
		r.bs = append(r.bs, make([]rangeMap, rangeBlock))
	}
	*r.at(r.n) = m
	r.n++
}

func (b *Builder) init() {
	if b.strings != nil {
		return
	}
	if b.Version == 0 {
		b.Version = LatestVersion
	}
	b.strings = NewStringTable(b.Version)
	b.files, b.funcs, b.calls = map[File]uint32{}, map[Function]uint32{}, map[SourceLocation]uint32{}
	b.fileIndex = map[string]uint32{}
}

// mapStart records a mapping of start to loc (NoSourceLocation: an end
// sentinel, kept pending).
func (b *Builder) mapStart(start uint32, loc SourceLocation) {
	if b.hasPending && !(b.pending == start && loc != NoSourceLocation) {
		b.add(rangeMap{b.pending, NoSourceLocation})
	}
	b.hasPending = false
	if loc == NoSourceLocation {
		b.pending, b.hasPending = start, true
		return
	}
	b.add(rangeMap{start, loc})
}

func (b *Builder) add(m rangeMap) {
	n := b.ranges.n
	if b.sorted == n && (n == 0 || b.ranges.at(n-1).start <= m.start) {
		b.sorted++
	} else if m.loc != NoSourceLocation {
		if b.tail == nil {
			b.tail = map[uint32]bool{}
		}
		b.tail[m.start] = true
	}
	b.ranges.add(m)
}

// mapped reports whether start is mapped to a source location (not an end
// sentinel).
func (b *Builder) mapped(start uint32) bool {
	if b.tail[start] {
		return true
	}
	i := sort.Search(b.sorted, func(i int) bool { return b.ranges.at(i).start >= start })
	for ; i < b.sorted && b.ranges.at(i).start == start; i++ {
		if b.ranges.at(i).loc != NoSourceLocation {
			return true
		}
	}
	return false
}

// finish stores the pending end sentinel and sorts the mappings after the
// sorted ones (by start, stably).
func (b *Builder) finish() {
	if b.hasPending {
		b.add(rangeMap{b.pending, NoSourceLocation})
		b.hasPending = false
	}
	if b.sorted == b.ranges.n {
		return
	}
	tail := make([]rangeMap, 0, b.ranges.n-b.sorted)
	for i := b.sorted; i < b.ranges.n; i++ {
		tail = append(tail, *b.ranges.at(i))
	}
	byStart := func(a, b rangeMap) int { return cmp.Compare(a.start, b.start) }
	if !slices.IsSortedFunc(tail, byStart) {
		slices.SortStableFunc(tail, byStart)
		for k, m := range tail {
			*b.ranges.at(b.sorted + k) = m
		}
	}
}

// eachRange calls f for every range start, in order, with the mapping that
// holds there: the sorted mappings and the sorted rest merged (the sorted
// ones were made first), the first not NoSourceLocation at a start winning.
// finish must have been called.
func (b *Builder) eachRange(f func(start uint32, loc SourceLocation)) {
	i, j, n := 0, b.sorted, b.ranges.n
	next := func() (rangeMap, bool) {
		switch {
		case i < b.sorted && (j == n || b.ranges.at(i).start <= b.ranges.at(j).start):
			i++
			return *b.ranges.at(i - 1), true
		case j < n:
			j++
			return *b.ranges.at(j - 1), true
		}
		return rangeMap{}, false
	}
	cur, ok := next()
	for ok {
		m, more := next()
		if more && m.start == cur.start {
			if cur.loc == NoSourceLocation {
				cur.loc = m.loc
			}
			continue
		}
		f(cur.start, cur.loc)
		cur, ok = m, more
	}
}

func (b *Builder) file(path string) uint32 {
	if path == "" {
		return None
	}
	if i, ok := b.fileIndex[path]; ok {
		return i
	}
	f := File{CompDir: None, Directory: None, Name: b.strings.Insert(path), SrcSrvName: None, SrcSrvDir: None, SrcSrvRevision: None}
	i, ok := b.files[f]
	if !ok {
		i = uint32(len(b.fileList))
		b.files[f] = i
		b.fileList = append(b.fileList, f)
	}
	b.fileIndex[path] = i
	return i
}

func (b *Builder) function(name string, entry uint32, lang Language) uint32 {
	f := Function{Name: b.strings.Insert(name), CompDir: None, EntryPC: entry, Lang: lang}
	i, ok := b.funcs[f]
	if !ok {
		i = uint32(len(b.funcList))
		b.funcs[f] = i
		b.funcList = append(b.funcList, f)
	}
	return i
}

func (b *Builder) location(l Loc, into uint32) SourceLocation {
	return SourceLocation{File: b.file(l.File), Line: l.Line, Function: b.function(l.Function, l.EntryPC, l.Lang), InlinedInto: into}
}

// Add maps [start, end) to an inline chain, outermost (the function the
// code belongs to) first. A start already mapped keeps its first mapping
// (unless that is an end sentinel); end gets a sentinel when nothing starts
// there.
func (b *Builder) Add(start, end uint64, chain []Loc) {
	b.init()
	if len(chain) == 0 || start >= end {
		return
	}
	if end > uint64(None) {
		b.Dropped++
		return
	}
	into := None
	for _, l := range chain[:len(chain)-1] {
		sl := b.location(l, into)
		i, ok := b.calls[sl]
		if !ok {
			i = uint32(len(b.callList))
			b.calls[sl] = i
			b.callList = append(b.callList, sl)
		}
		into = i
	}
	b.mapStart(uint32(start), b.location(chain[len(chain)-1], into))
	b.mapStart(uint32(end), NoSourceLocation)
}

// AddSymbol maps a symbol without debug information (a PUBLIC record) from
// addr up to the next range, unless something already starts there.
func (b *Builder) AddSymbol(name string, addr uint64) {
	b.init()
	if addr >= uint64(None) {
		b.Dropped++
		return
	}
	if b.mapped(uint32(addr)) {
		return
	}
	b.mapStart(uint32(addr), SourceLocation{File: None, Line: 0, Function: b.function(name, uint32(addr), 0), InlinedInto: None})
}

// Raw returns the SymCache built so far.
// Raw returns the SymCache built so far.
func (b *Builder) Raw() *Raw {
	b.init()
	b.finish()
	r := &Raw{
		Header:    Header{Version: b.Version, DebugID: b.DebugID, Arch: b.Arch},
		Files:     b.fileList,
		Functions: b.funcList,
		Strings:   b.strings.Bytes(),
	}
	r.SourceLocations = append([]SourceLocation(nil), b.callList...)
	b.eachRange(func(start uint32, loc SourceLocation) {
		r.Ranges = append(r.Ranges, start)
		r.SourceLocations = append(r.SourceLocations, loc)
	})
	return r
}

// WriteTo writes the SymCache built so far, encoding it as it goes (the
// file is not held in memory).
func (b *Builder) WriteTo(w io.Writer) (int64, error) {
	b.init()
	b.finish()
	h := Header{Version: b.Version, DebugID: b.DebugID, Arch: b.Arch}
	nr := 0
	b.eachRange(func(uint32, SourceLocation) { nr++ })
	locs := func(f func(SourceLocation)) {
		for _, l := range b.callList {
			f(l)
		}
		b.eachRange(func(_ uint32, l SourceLocation) { f(l) })
	}
	starts := func(f func(uint32)) { b.eachRange(func(a uint32, _ SourceLocation) { f(a) }) }
	n, err := writeSections(w, &h, b.fileList, b.funcList, len(b.callList)+nr, locs, nr, starts, b.strings.Bytes())
	if err != nil {
		return n, fmt.Errorf("symcache: %w", err)
	}
	return n, nil
}
