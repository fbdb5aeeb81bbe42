package symcache

import (
	"cmp"
	"fmt"
	"io"
	"slices"
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
	ranges     []rangeMap
	pending    uint32
	hasPending bool
	// ranges[:sorted] are sorted by start; tail holds the starts mapped
	// (not to NoSourceLocation) in ranges[sorted:].
	sorted   int
	tail     map[uint32]bool
	resolved bool // ranges sorted by start, one per start
	// Dropped counts ranges not added because they lie above 4 GiB.
	Dropped int
}

// rangeMap maps a range start to a source location.
type rangeMap struct {
	start uint32
	loc   SourceLocation
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
	n := len(b.ranges)
	if n > 0 && b.ranges[n-1].start >= m.start {
		b.resolved = false
	}
	if b.sorted == n && (n == 0 || b.ranges[n-1].start <= m.start) {
		b.sorted++
	} else if m.loc != NoSourceLocation {
		if b.tail == nil {
			b.tail = map[uint32]bool{}
		}
		b.tail[m.start] = true
	}
	b.ranges = append(b.ranges, m)
}

// mapped reports whether start is mapped to a source location (not an end
// sentinel).
func (b *Builder) mapped(start uint32) bool {
	if b.tail[start] {
		return true
	}
	s := b.ranges[:b.sorted]
	i, _ := slices.BinarySearchFunc(s, start, func(m rangeMap, a uint32) int { return cmp.Compare(m.start, a) })
	for ; i < len(s) && s[i].start == start; i++ {
		if s[i].loc != NoSourceLocation {
			return true
		}
	}
	return false
}

// resolve sorts the mappings by start and keeps the one that holds per
// start.
func (b *Builder) resolve() {
	if b.hasPending {
		b.add(rangeMap{b.pending, NoSourceLocation})
		b.hasPending = false
	}
	if b.resolved {
		return
	}
	byStart := func(a, b rangeMap) int { return cmp.Compare(a.start, b.start) }
	if !slices.IsSortedFunc(b.ranges, byStart) {
		slices.SortStableFunc(b.ranges, byStart)
	}
	out := b.ranges[:0]
	for i := 0; i < len(b.ranges); {
		m := b.ranges[i]
		for i++; i < len(b.ranges) && b.ranges[i].start == m.start; i++ {
			if m.loc == NoSourceLocation {
				m.loc = b.ranges[i].loc
			}
		}
		out = append(out, m)
	}
	b.ranges, b.resolved = out, true
	b.sorted, b.tail = len(out), nil
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
func (b *Builder) Raw() *Raw {
	b.init()
	b.resolve()
	r := &Raw{
		Header:    Header{Version: b.Version, DebugID: b.DebugID, Arch: b.Arch},
		Files:     b.fileList,
		Functions: b.funcList,
		Ranges:    make([]uint32, 0, len(b.ranges)),
		Strings:   b.strings.Bytes(),
	}
	r.SourceLocations = append(make([]SourceLocation, 0, len(b.callList)+len(b.ranges)), b.callList...)
	for _, m := range b.ranges {
		r.Ranges = append(r.Ranges, m.start)
		r.SourceLocations = append(r.SourceLocations, m.loc)
	}
	return r
}

// WriteTo writes the SymCache built so far, encoding it as it goes (the
// file is not held in memory).
func (b *Builder) WriteTo(w io.Writer) (int64, error) {
	b.init()
	b.resolve()
	h := Header{Version: b.Version, DebugID: b.DebugID, Arch: b.Arch}
	nc := len(b.callList)
	loc := func(i int) SourceLocation {
		if i < nc {
			return b.callList[i]
		}
		return b.ranges[i-nc].loc
	}
	n, err := writeSections(w, &h, b.fileList, b.funcList, nc+len(b.ranges), loc, len(b.ranges), func(i int) uint32 { return b.ranges[i].start }, b.strings.Bytes())
	if err != nil {
		return n, fmt.Errorf("symcache: %w", err)
	}
	return n, nil
}
