package elf

import (
	"cmp"
	"debug/dwarf"
	"encoding/binary"
	"errors"
	"io"
	"slices"
	"sort"
	"strings"
	"unicode/utf8"

	"github.com/gobreakpad/gobreakpad/symfile"
	"github.com/ianlancetaylor/demangle"
)

// DWARF language codes that change how names are demangled.
const (
	langRust = 0x1c
)

// isC reports whether lang is a C dialect (DW_LANG_C89, C, C99, C11, C17),
// whose structures and unions hold no functions, so the walk steps over
// them (they name nothing; in C++ they name methods).
func isC(lang int64) bool {
	switch lang {
	case 0x1, 0x2, 0xc, 0x1d, 0x2c:
		return true
	}
	return false
}

// attrMIPSLinkageName is DW_AT_MIPS_linkage_name, which older GCCs write
// for DW_AT_linkage_name.
const attrMIPSLinkageName dwarf.Attr = 0x2007

// dwarfSource is one file's DWARF data, with the alternate (dwz -m) file its
// DW_FORM_GNU_ref_alt and DW_FORM_GNU_strp_alt forms point into.
type dwarfSource struct {
	// data reads all of .debug_info; nil when units is set (use
	// fullData).
	data *dwarf.Data
	// units, when set, holds the sections to read a unit at a time
	// (unitData), info and abbrev being checked by unitsReadable.
	units *unitSections
	// Raw sections for the line table headers (see lineFileNames).
	line, lineStr, str, addr []byte
	order                    binary.ByteOrder
	// Raw .debug_info and .debug_abbrev for dieReader (nil: walk with
	// dwarf.Reader).
	info, abbrev []byte

	altStr []byte       // .debug_str of the alternate file
	alt    *dwarfSource // the alternate file's DWARF, indexed for names
}

// node is a DIE that takes part in naming functions: a subprogram, or a
// namespace, class, structure, union or module enclosing others.
type node struct {
	tag         dwarf.Tag
	parent      *node
	name        string
	linkage     string
	lang        int64
	spec        *nodeRef // DW_AT_specification
	origin      *nodeRef // DW_AT_abstract_origin
	qualified   string
	resolved    bool
	resolving   bool
	declaration bool
	cut         bool // the enclosing function's name was cut (maxNestedName)
}

// nodeRef is a reference to a DIE, resolved after the whole file is read
// (references may point forward or into another unit).
type nodeRef struct {
	src *dieIndex
	off dwarf.Offset
}

// dieIndex holds the naming DIEs of one dwarfSource by offset.
type dieIndex struct {
	nodes map[dwarf.Offset]*node
	alt   *dieIndex
}

// inlineRec is a DW_TAG_inlined_subroutine with a non-empty range.
type inlineRec struct {
	origin   *nodeRef
	depth    uint32
	callLine uint32
	callFile int32 // module file index, -1 if unknown
	ranges   []addrRange
}

type addrRange struct{ lo, hi uint64 }

// funcRec is a function with code: a subprogram with a non-empty range.
type funcRec struct {
	node    *node
	ranges  []addrRange // in DWARF order, non-empty
	inlines []inlineRec
	// lines are the function's line records as the model holds them
	// (assignLines): sorted by address, addresses relative to the load
	// address, files numbered by the module's fileTable (renumbered by
	// buildFunctions).
	lines []symfile.Line
}

type lineRec struct {
	addr uint64
	size uint32
	line uint32
	file int32
}

// dwarfReader walks DWARF into functions, lines and inlines.
type dwarfReader struct {
	warn    func(format string, args ...any)
	inlines bool
	// blockInlines also collects inlined calls nested in lexical blocks,
	// which Breakpad's dump_syms never looks into.
	blockInlines bool
	// zeroIsCode keeps functions and lines at address 0 (a Mach-O object
	// file's first section starts there); otherwise they are debugging
	// data of code the linker discarded, left out.
	zeroIsCode bool
	files      *fileTable
	// lineChunks collect a unit's line records before they are copied to
	// an array of their size: growing one array by appending cost more
	// than reading the rows (a Go binary's units have up to 500 000
	// lines). Reused from unit to unit.
	lineChunks [][]lineRec
	// scratch holds a function's pieces of line records while
	// assignLines cuts them (reused from function to function).
	scratch []lineRec
	// load is subtracted from the line records' addresses (the module's
	// load address).
	load  uint64
	funcs []*funcRec
	split *splitLoader // nil: skeleton units are not followed
}

// fileTable numbers the source file names of the module.
type fileTable struct {
	index map[string]int32
	names []string
	used  []bool
}

func (t *fileTable) id(name string) int32 {
	if i, ok := t.index[name]; ok {
		return i
	}
	i := int32(len(t.names))
	t.index[name] = i
	t.names = append(t.names, name)
	t.used = append(t.used, false)
	return i
}

func newIndex() *dieIndex {
	return &dieIndex{nodes: make(map[dwarf.Offset]*node)}
}

// indexNames records the naming DIEs of a source without collecting
// functions: used for dwz alternate files.
func (dr *dwarfReader) indexNames(src *dwarfSource, ix *dieIndex) {
	dr.walk(src, ix, false, nil)
}

// read walks src, collecting functions and their lines and inlines.
func (dr *dwarfReader) read(src *dwarfSource) {
	ix := newIndex()
	if src.alt != nil {
		ix.alt = newIndex()
		dr.indexNames(src.alt, ix.alt)
	}
	dr.walk(src, ix, true, nil)
}

type frameKind uint8

const (
	frameScope frameKind = iota
	frameFunc
	frameInline
	frameBlock // a lexical block inside a function: transparent for inlines
)

type frame struct {
	kind   frameKind
	node   *node
	fn     *funcRec
	depth  uint32 // for frameInline: depth of children
	parent *node  // naming parent for children
}

type unitState struct {
	lang      int64
	fileNames []int32 // line table file number -> module file index
	callFiles []int32 // the same for DW_AT_call_file when it differs (split units)
	funcs     []*funcRec
	lines     []lineRec
}

// walk reads the DIE trees of src. With split set, src is the .dwo file of
// a skeleton unit whose state (lines, functions) is split.
func (dr *dwarfReader) walk(src *dwarfSource, ix *dieIndex, collect bool, split *unitState) {
	var r entryReader
	// data returns the Data the last entry came from (for its ranges and
	// line table).
	data := func() *dwarf.Data { return src.data }
	wantInlines := collect && dr.inlines
	var cu *unitState
	if d := newDIEReader(src, func(t dwarf.Tag) bool {
		switch t {
		case dwarf.TagCompileUnit, dwarf.TagPartialUnit, dwarf.TagSkeletonUnit,
			dwarf.TagNamespace, dwarf.TagModule, dwarf.TagInterfaceType, dwarf.TagSubprogram:
			return true
		case dwarf.TagClassType, dwarf.TagStructType, dwarf.TagUnionType:
			return cu == nil || !isC(cu.lang)
		case dwarf.TagInlinedSubroutine:
			return wantInlines
		}
		return false
	}); d != nil {
		r, data = d, d.data
	} else {
		full, err := src.fullData()
		if err != nil {
			dr.warn("DWARF: %v (no FUNC records)", err)
			return
		}
		r = full.Reader()
		data = func() *dwarf.Data { return full }
	}
	var stack []frame
	finish := func() {
		if cu != nil && collect && split == nil {
			dr.assignLines(cu)
			dr.funcs = append(dr.funcs, cu.funcs...)
		}
		cu = nil
	}
	// debug/dwarf's Reader returns a null entry without moving on, forever,
	// when the rest of a unit is an unterminated LEB128 abbreviation code
	// (its varint reads 0 and consumes nothing). A real null entry takes a
	// byte of .debug_info, so more of them in a row than it has bytes is
	// that loop (without the section at hand, 1<<20: a megabyte of padding).
	maxNulls, nulls := len(src.info), 0
	if maxNulls == 0 {
		maxNulls = 1 << 20
	}
	// debug/dwarf may panic on corrupt entries: a panic skips the rest of
	// its unit, with a warning, and the walk goes on from the next unit
	// (read by a plain dwarf.Reader) with what was collected kept.
	var last dwarf.Offset // the last entry read, or where the walk resumed
	var starts []dwarf.Offset
	resume := func(p any) bool {
		dr.warn("DWARF: entry at or after %#x: debug/dwarf panicked (%v): the rest of its unit is skipped", last, p)
		finish()
		stack = stack[:0]
		// (fullData first: it reads .debug_info again if the walk gave
		// its pages back.)
		full, err := src.fullData()
		if err != nil {
			dr.warn("DWARF: %v (the rest of .debug_info is skipped)", err)
			return false
		}
		if starts == nil {
			starts = unitStarts(src.info, src.abbrev, src.order)
		}
		i := sort.Search(len(starts), func(i int) bool { return starts[i] > last })
		if i == len(starts) {
			return false
		}
		fresh := full.Reader()
		fresh.Seek(starts[i])
		r, last, nulls = fresh, starts[i], 0
		data = func() *dwarf.Data { return full }
		return true
	}
	step := func() (more bool) {
		defer func() {
			if p := recover(); p != nil {
				more = resume(p)
			}
		}()
		e, err := r.Next()
		if err != nil {
			dr.warn("DWARF: %v (the rest of .debug_info is skipped)", err)
			return false
		}
		if e == nil {
			return false
		}
		last = e.Offset
		if dieHook != nil {
			dieHook(e)
		}
		if e.Tag == 0 {
			if nulls++; nulls > maxNulls {
				dr.warn("DWARF: unterminated abbreviation code (the rest of .debug_info is skipped)")
				return false
			}
			if len(stack) > 0 {
				stack = stack[:len(stack)-1]
			}
			return true
		}
		nulls = 0
		var top *frame
		if len(stack) > 0 {
			top = &stack[len(stack)-1]
		}
		switch e.Tag {
		case dwarf.TagCompileUnit, dwarf.TagPartialUnit, dwarf.TagSkeletonUnit:
			finish()
			stack = stack[:0]
			if split != nil {
				cu = split
				dr.splitCallFiles(src, e, cu)
			} else {
				cu = &unitState{}
			}
			if l, ok := e.Val(dwarf.AttrLanguage).(int64); ok {
				cu.lang = l
			}
			if collect && split == nil && e.Tag != dwarf.TagPartialUnit {
				dr.readLines(src, data(), e, cu)
				if dr.split != nil && (e.Tag == dwarf.TagSkeletonUnit || e.AttrField(dwarf.AttrDwoName) != nil || e.AttrField(attrGNUDwoName) != nil) {
					if dwo := dr.split.open(e); dwo != nil {
						dr.walk(dwo, newIndex(), true, cu)
					}
				}
			}
			if e.Children {
				stack = append(stack, frame{kind: frameScope})
			}
			return true
		}
		if cu == nil || top == nil {
			if e.Children {
				r.SkipChildren()
			}
			return true
		}
		switch e.Tag {
		case dwarf.TagNamespace, dwarf.TagClassType, dwarf.TagStructType, dwarf.TagUnionType,
			dwarf.TagModule, dwarf.TagInterfaceType:
			if top.kind == frameInline || top.kind == frameBlock || isC(cu.lang) && e.Tag != dwarf.TagNamespace {
				// Breakpad names nothing inside inlined code; C types
				// hold no functions.
				if e.Children {
					r.SkipChildren()
				}
				return true
			}
			n := dr.newNode(src, ix, e, top.parent, cu.lang)
			if e.Children {
				stack = append(stack, frame{kind: frameScope, node: n, parent: n})
			}
		case dwarf.TagSubprogram:
			if top.kind == frameInline || top.kind == frameBlock {
				if e.Children {
					r.SkipChildren()
				}
				return true
			}
			n := dr.newNode(src, ix, e, top.parent, cu.lang)
			var fn *funcRec
			if collect {
				fn = dr.function(data(), e, n)
				if fn != nil {
					cu.funcs = append(cu.funcs, fn)
				}
			}
			if e.Children {
				stack = append(stack, frame{kind: frameFunc, node: n, fn: fn, parent: n})
			}
		case dwarf.TagInlinedSubroutine:
			if !collect || !dr.inlines || top.fn == nil || top.kind == frameScope {
				if e.Children {
					r.SkipChildren()
				}
				return true
			}
			depth := top.depth
			in := dr.inline(data(), ix, e, depth, cu)
			if in != nil {
				top.fn.inlines = append(top.fn.inlines, *in)
			}
			if e.Children {
				if in == nil {
					// Breakpad drops the children of an empty inline.
					r.SkipChildren()
					return true
				}
				stack = append(stack, frame{kind: frameInline, fn: top.fn, depth: depth + 1, parent: top.parent})
			}
		case dwarf.TagLexDwarfBlock:
			if top.fn == nil || !collect || !dr.inlines || !dr.blockInlines {
				if e.Children {
					r.SkipChildren()
				}
				return true
			}
			if e.Children {
				stack = append(stack, frame{kind: frameBlock, fn: top.fn, depth: top.depth, parent: top.parent})
			}
		default:
			if e.Children {
				r.SkipChildren()
			}
		}
		return true
	}
	for step() {
	}
	finish()
}

// dieHook, when set (by tests), sees each entry the walk reads.
var dieHook func(*dwarf.Entry)

// unitStarts returns the offsets of the first entries of the units of info,
// as far as their headers read: where a walk may resume.
func unitStarts(info, abbrev []byte, order binary.ByteOrder) []dwarf.Offset {
	d := &dieReader{info: info, abbrev: abbrev, order: order}
	var s []dwarf.Offset
	for off := 0; off < len(info) && d.unit(off); off = d.end {
		s = append(s, dwarf.Offset(d.off))
	}
	return s
}

// attrString returns a string attribute, following DW_FORM_GNU_strp_alt.
func attrString(src *dwarfSource, e *dwarf.Entry, a dwarf.Attr) string {
	f := e.AttrField(a)
	if f == nil {
		return ""
	}
	switch v := f.Val.(type) {
	case string:
		return v
	case int64:
		if f.Class == dwarf.ClassStringAlt && v >= 0 && v < int64(len(src.altStr)) {
			s := src.altStr[v:]
			if i := strings.IndexByte(string(s[:min(len(s), 4096)]), 0); i >= 0 {
				return string(s[:i])
			}
		}
	}
	return ""
}

// attrRef returns a reference attribute, following DW_FORM_GNU_ref_alt.
func attrRef(ix *dieIndex, e *dwarf.Entry, a dwarf.Attr) *nodeRef {
	f := e.AttrField(a)
	if f == nil {
		return nil
	}
	switch v := f.Val.(type) {
	case dwarf.Offset:
		return &nodeRef{src: ix, off: v}
	case int64:
		if f.Class == dwarf.ClassReferenceAlt && ix.alt != nil {
			return &nodeRef{src: ix.alt, off: dwarf.Offset(v)}
		}
	}
	return nil
}

func (dr *dwarfReader) newNode(src *dwarfSource, ix *dieIndex, e *dwarf.Entry, parent *node, lang int64) *node {
	n := &node{tag: e.Tag, parent: parent, lang: lang}
	n.name = attrString(src, e, dwarf.AttrName)
	n.linkage = attrString(src, e, dwarf.AttrLinkageName)
	if n.linkage == "" {
		n.linkage = attrString(src, e, attrMIPSLinkageName)
	}
	n.spec = attrRef(ix, e, dwarf.AttrSpecification)
	n.origin = attrRef(ix, e, dwarf.AttrAbstractOrigin)
	if d, ok := e.Val(dwarf.AttrDeclaration).(bool); ok {
		n.declaration = d
	}
	ix.nodes[e.Offset] = n
	return n
}

// ranges returns the DIE's address ranges, or nil when they cover no byte.
// keepEmpty keeps an empty DW_AT_low_pc/DW_AT_high_pc range, as Breakpad
// does for inlined subroutines.
func (dr *dwarfReader) ranges(data *dwarf.Data, e *dwarf.Entry, keepEmpty bool) []addrRange {
	rs, err := data.Ranges(e)
	if err != nil {
		dr.warn("DWARF: DIE at %#x: ranges: %v", e.Offset, err)
		return nil
	}
	// Breakpad keeps empty ranges of a DIE that covers some code.
	var out []addrRange
	nonEmpty := false
	for _, r := range rs {
		if r[1] >= r[0] {
			out = append(out, addrRange{r[0], r[1]})
			nonEmpty = nonEmpty || r[1] > r[0]
		}
	}
	if !nonEmpty && !(keepEmpty && len(out) == 1 && e.AttrField(dwarf.AttrRanges) == nil && out[0].lo != 0) {
		return nil
	}
	return out
}

func (dr *dwarfReader) function(data *dwarf.Data, e *dwarf.Entry, n *node) *funcRec {
	if e.AttrField(dwarf.AttrLowpc) == nil && e.AttrField(dwarf.AttrRanges) == nil {
		return nil
	}
	rs := dr.ranges(data, e, false)
	if len(rs) == 0 || rs[0].lo == 0 && !dr.zeroIsCode {
		// A function at address zero is debug data the linker discarded.
		return nil
	}
	return &funcRec{node: n, ranges: rs}
}

func (dr *dwarfReader) inline(data *dwarf.Data, ix *dieIndex, e *dwarf.Entry, depth uint32, cu *unitState) *inlineRec {
	rs := dr.ranges(data, e, true)
	if len(rs) == 0 {
		return nil
	}
	in := &inlineRec{origin: attrRef(ix, e, dwarf.AttrAbstractOrigin), depth: depth, callFile: -1, ranges: rs}
	if v, ok := e.Val(dwarf.AttrCallLine).(int64); ok && v >= 0 && v <= 1<<31 {
		in.callLine = uint32(v)
	}
	files := cu.fileNames
	if cu.callFiles != nil {
		files = cu.callFiles
	}
	if v, ok := e.Val(dwarf.AttrCallFile).(int64); ok && v >= 0 && v < int64(len(files)) {
		in.callFile = files[v]
	}
	return in
}

// splitCallFiles numbers the files of a split unit's .debug_line.dwo
// header, which DW_AT_call_file in the .dwo refers to.
func (dr *dwarfReader) splitCallFiles(src *dwarfSource, e *dwarf.Entry, cu *unitState) {
	off, ok := e.Val(dwarf.AttrStmtList).(int64)
	if !ok || src.line == nil {
		return
	}
	compDir, _ := e.Val(dwarf.AttrCompDir).(string)
	raw, err := lineFileNames(src.line, uint64(off), src.order, compDir, nil, src.str)
	if err != nil {
		dr.warn("split DWARF: unit at %#x: line table header: %v", e.Offset, err)
		return
	}
	cu.callFiles = make([]int32, len(raw))
	for i, n := range raw {
		cu.callFiles[i] = dr.files.id(n)
	}
}

// readLines reads the unit's line table into cu.lines, the way Breakpad's
// line reader cuts it: one line from each row to the next, skipping empty
// ones and those at address zero (code the linker discarded) with the rows
// that continue them.
func (dr *dwarfReader) readLines(src *dwarfSource, data *dwarf.Data, e *dwarf.Entry, cu *unitState) {
	off, ok := e.Val(dwarf.AttrStmtList).(int64)
	if !ok {
		return
	}
	// Our own bounded reading of the header first: debug/dwarf's may
	// allocate what the header claims, or panic, on a corrupt one.
	compDir, _ := e.Val(dwarf.AttrCompDir).(string)
	raw, err := lineFileNames(src.line, uint64(off), src.order, compDir, src.lineStr, src.str)
	if err != nil {
		dr.warn("DWARF: unit at %#x: line table header: %v (no lines for this unit)", e.Offset, err)
		return
	}
	// debug/dwarf's line program interpreter indexes its file table with
	// numbers from the program (DW_LNS_set_file, DW_LNE_define_file) and
	// can panic on corrupt ones: what was read before is kept.
	defer func() {
		if p := recover(); p != nil {
			dr.warn("DWARF: unit at %#x: line table: corrupt line program (debug/dwarf: %v): the rest of the unit's lines skipped", e.Offset, p)
		}
	}()
	lr, err := data.LineReader(e)
	if err != nil {
		dr.warn("DWARF: unit at %#x: line table: %v", e.Offset, err)
		return
	}
	if lr == nil {
		return
	}
	lfiles := lr.Files()
	cu.fileNames = make([]int32, len(lfiles))
	for i, f := range lfiles {
		switch {
		case f == nil:
			cu.fileNames[i] = -1
		case len(raw) == len(lfiles):
			cu.fileNames[i] = dr.files.id(raw[i])
		default:
			cu.fileNames[i] = dr.files.id(f.Name)
		}
	}
	fileIndex := make(map[*dwarf.LineFile]int32, len(lfiles))
	for i, f := range lfiles {
		if f != nil {
			fileIndex[f] = cu.fileNames[i]
		}
	}
	var prev dwarf.LineEntry
	have := false
	var omittedEnd uint64
	const chunk = 1 << 14
	nchunk := 0 // chunks in use; the last one is lines
	var lines []lineRec
	defer func() {
		n := 0
		for _, c := range dr.lineChunks[:nchunk] {
			n += len(c)
		}
		if n == 0 {
			return
		}
		all := make([]lineRec, 0, len(cu.lines)+n)
		all = append(all, cu.lines...)
		for i, c := range dr.lineChunks[:nchunk] {
			all = append(all, c...)
			dr.lineChunks[i] = c[:0]
		}
		cu.lines = all
	}()
	for {
		var le dwarf.LineEntry
		err := lr.Next(&le)
		if err != nil {
			if !errors.Is(err, io.EOF) {
				dr.warn("DWARF: unit at %#x: line table: %v", e.Offset, err)
			}
			break
		}
		if have && le.Address > prev.Address {
			size := le.Address - prev.Address
			if !dr.zeroIsCode && (prev.Address == 0 || prev.Address == omittedEnd) {
				omittedEnd = prev.Address + size
			} else {
				omittedEnd = 0
				fi, ok := fileIndex[prev.File]
				if !ok {
					fi = -1
					if prev.File != nil {
						fi = dr.files.id(prev.File.Name)
					}
				}
				if fi >= 0 && size < 1<<32 {
					if len(lines) == cap(lines) {
						if nchunk == len(dr.lineChunks) {
							dr.lineChunks = append(dr.lineChunks, make([]lineRec, 0, chunk))
						}
						nchunk++
					}
					lines = append(dr.lineChunks[nchunk-1], lineRec{addr: prev.Address, size: uint32(size), line: uint32(max(prev.Line, 0)), file: fi})
					dr.lineChunks[nchunk-1] = lines
				}
			}
		}
		if le.EndSequence {
			have = false
			continue
		}
		prev = le
		have = true
	}
}

// assignLines gives each function of the unit the pieces of line records
// that fall inside its ranges, in the model's form, in an array of their
// own: the unit's records are dropped after it (those outside every
// function with them), and the model takes the functions' arrays as they
// are (buildFunctions).
func (dr *dwarfReader) assignLines(cu *unitState) {
	if len(cu.funcs) == 0 || len(cu.lines) == 0 {
		cu.lines = nil
		return
	}
	lines := cu.lines
	slices.SortStableFunc(lines, func(a, b lineRec) int { return cmp.Compare(a.addr, b.addr) })
	for _, fn := range cu.funcs {
		pieces := dr.pieces(fn, lines)
		// By address (the pieces of a function of several ranges follow its
		// ranges' order), then in the model's form.
		slices.SortStableFunc(pieces, func(a, b lineRec) int { return cmp.Compare(a.addr, b.addr) })
		out := make([]symfile.Line, len(pieces))
		for i, l := range pieces {
			out[i] = symfile.Line{Address: l.addr - dr.load, Size: uint64(l.size), Line: int64(l.line), File: uint32(l.file)}
		}
		fn.lines = out
	}
	cu.lines = nil
}

// pieces returns the pieces of the unit's line records (sorted by address)
// that fall inside fn's ranges, in its ranges' order: a part of lines, or
// dr.scratch.
func (dr *dwarfReader) pieces(fn *funcRec, lines []lineRec) []lineRec {
	out := dr.scratch[:0]
	defer func() { dr.scratch = out[:0] }()
	for k, r := range fn.ranges {
		// First line ending after r.lo.
		i, _ := slices.BinarySearchFunc(lines, r.lo, func(l lineRec, a uint64) int {
			if l.addr+uint64(l.size) <= a {
				return -1
			}
			return 1
		})
		j := i
		for j < len(lines) && lines[j].addr < r.hi {
			j++
		}
		// The usual case, a function of one range whose lines lie inside
		// it: a part of the unit's array.
		if k == 0 && len(fn.ranges) == 1 && j > i && lines[i].addr >= r.lo && lines[j-1].addr+uint64(lines[j-1].size) <= r.hi {
			return lines[i:j:j]
		}
		for ; i < j; i++ {
			l := lines[i]
			lo, hi := max(l.addr, r.lo), min(l.addr+uint64(l.size), r.hi)
			if hi > lo {
				l.addr, l.size = lo, uint32(hi-lo)
				out = append(out, l)
			}
		}
	}
	return out
}

// demangled returns the demangled form of a linkage name, or "" when it is
// not a mangled name this CU's language demangles.
func demangled(linkage string, lang int64) string {
	if !strings.HasPrefix(linkage, "_Z") && !strings.HasPrefix(linkage, "_R") {
		return ""
	}
	if strings.HasPrefix(linkage, "_R") && lang != langRust {
		return ""
	}
	s, err := demangle.ToString(linkage)
	if err != nil {
		return ""
	}
	return s
}

// qualifiedName composes a DIE's name the way Breakpad does: the demangled
// linkage name when there is one (it carries the parameter list), else the
// specification's name, else the enclosing scopes' names joined with "::"
// and the DIE's own name; for a DIE that has none of these, its abstract
// origin's name.
func qualifiedName(n *node) string {
	if n == nil {
		return ""
	}
	if n.resolved {
		return n.qualified
	}
	if n.resolving { // a reference cycle in hostile input
		return ""
	}
	n.resolving = true
	q := demangled(n.linkage, n.lang)
	if q == "" && n.spec != nil {
		if s := n.spec.src.nodes[n.spec.off]; s != nil {
			q = qualifiedName(s)
			if q != "" && n.name != "" && s.name != n.name {
				e, cut := enclosingName(s)
				q, n.cut = joinName(e, n.name), cut
			}
		}
	}
	if q == "" {
		unq := n.name
		if unq == "" {
			unq = n.linkage
		}
		if unq != "" {
			e, cut := enclosingName(n)
			q, n.cut = joinName(e, unq), cut
		}
	}
	if q == "" && n.origin != nil {
		if o := n.origin.src.nodes[n.origin.off]; o != nil {
			q = qualifiedName(o)
		}
	}
	n.qualified, n.resolved, n.resolving = q, true, false
	return q
}

// plainScope reports whether n's qualified name is its enclosing scope's
// name joined with its own (no linkage name, specification or origin, not
// a function): such scopes are not given a string of their own, so that a
// scope nested D deep costs O(D) once for the function that needs it
// rather than a name per level (O(D^2)).
func plainScope(n *node) bool {
	return n.tag != dwarf.TagSubprogram && n.linkage == "" && n.spec == nil && n.origin == nil
}

// maxNestedName bounds the enclosing part of the name of a function nested
// in a function (DW_TAG_subprogram inside DW_TAG_subprogram, with the scopes
// between them): a longer one keeps its last maxNestedName bytes after
// "...". Each function's name holds its enclosing functions' names, so D
// nested functions would otherwise make O(D^2) output and memory (30,000
// of them: gigabytes, as in Breakpad); real nested functions (GCC's nested
// C functions, Ada, Fortran, Pascal) are a few levels deep with names far
// shorter.
const maxNestedName = 1 << 10

// enclosingName returns the qualified name of n's parent: the names of the
// plain scopes above it, joined once, under the first scope that has a
// name of its own. When that scope is a function and the name is longer
// than maxNestedName, its head is cut (and cut is set).
func enclosingName(n *node) (name string, cut bool) {
	var parts []string
	size := 0
	base := ""
	fn := false
	for p := n.parent; p != nil; p = p.parent {
		if !plainScope(p) {
			base = qualifiedName(p)
			fn = p.tag == dwarf.TagSubprogram
			break
		}
		if p.name == "" {
			// An unnamed plain scope has an empty qualified name:
			// what it encloses starts afresh.
			break
		}
		parts = append(parts, p.name)
		size += len(p.name) + 2
	}
	if len(parts) > 0 {
		var b strings.Builder
		b.Grow(len(base) + size)
		b.WriteString(base)
		for i := len(parts) - 1; i >= 0; i-- {
			if b.Len() > 0 {
				b.WriteString("::")
			}
			b.WriteString(parts[i])
		}
		name = b.String()
	} else {
		name = base
	}
	if fn && len(name) > maxNestedName {
		i := len(name) - maxNestedName
		for i < len(name) && !utf8.RuneStart(name[i]) {
			i++
		}
		return "..." + name[i:], true
	}
	return name, false
}

func joinName(enclosing, name string) string {
	if enclosing == "" {
		return name
	}
	return enclosing + "::" + name
}

// nameOf returns the name for a function or inline origin.
func nameOf(r *nodeRef) string {
	if r == nil || r.src == nil {
		return ""
	}
	n := r.src.nodes[r.off]
	if n == nil {
		return ""
	}
	return qualifiedName(n)
}
