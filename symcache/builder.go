package symcache

import (
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
	ranges    map[uint32]SourceLocation
	fileIndex map[string]uint32
	// Dropped counts ranges not added because they lie above 4 GiB.
	Dropped int
}

func (b *Builder) init() {
	if b.ranges != nil {
		return
	}
	if b.Version == 0 {
		b.Version = LatestVersion
	}
	b.strings = NewStringTable(b.Version)
	b.files, b.funcs, b.calls = map[File]uint32{}, map[Function]uint32{}, map[SourceLocation]uint32{}
	b.ranges, b.fileIndex = map[uint32]SourceLocation{}, map[string]uint32{}
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
	leaf := b.location(chain[len(chain)-1], into)
	if old, ok := b.ranges[uint32(start)]; !ok || old == NoSourceLocation {
		b.ranges[uint32(start)] = leaf
	}
	if _, ok := b.ranges[uint32(end)]; !ok {
		b.ranges[uint32(end)] = NoSourceLocation
	}
}

// AddSymbol maps a symbol without debug information (a PUBLIC record) from
// addr up to the next range, unless something already starts there.
func (b *Builder) AddSymbol(name string, addr uint64) {
	b.init()
	if addr >= uint64(None) {
		b.Dropped++
		return
	}
	if old, ok := b.ranges[uint32(addr)]; ok && old != NoSourceLocation {
		return
	}
	b.ranges[uint32(addr)] = SourceLocation{File: None, Line: 0, Function: b.function(name, uint32(addr), 0), InlinedInto: None}
}

// Raw returns the SymCache built so far.
func (b *Builder) Raw() *Raw {
	b.init()
	starts := make([]uint32, 0, len(b.ranges))
	for a := range b.ranges {
		starts = append(starts, a)
	}
	slices.Sort(starts)
	r := &Raw{
		Header:    Header{Version: b.Version, DebugID: b.DebugID, Arch: b.Arch},
		Files:     b.fileList,
		Functions: b.funcList,
		Ranges:    starts,
		Strings:   b.strings.Bytes(),
	}
	r.SourceLocations = append(make([]SourceLocation, 0, len(b.callList)+len(starts)), b.callList...)
	for _, a := range starts {
		r.SourceLocations = append(r.SourceLocations, b.ranges[a])
	}
	return r
}

// WriteTo writes the SymCache built so far.
func (b *Builder) WriteTo(w io.Writer) (int64, error) {
	n, err := b.Raw().WriteTo(w)
	if err != nil {
		return n, fmt.Errorf("symcache: %w", err)
	}
	return n, nil
}
