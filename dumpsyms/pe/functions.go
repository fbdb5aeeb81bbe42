package pe

import (
	"cmp"
	"slices"

	"github.com/gobreakpad/gobreakpad/dumpsyms"
	"github.com/gobreakpad/gobreakpad/pdb"
	"github.com/gobreakpad/gobreakpad/symfile"
)

// moduleLines is what a module's C13 subsections give to its functions.
type moduleLines struct {
	lines     []*pdb.Lines
	checksums map[uint32]pdb.FileChecksum
	inlinees  map[pdb.TypeIndex]pdb.InlineeLine
	imports   []pdb.CrossScopeImport // DEBUG_S_CROSSSCOPEIMPORTS
	// maxEnd[i] is the largest end (segment<<32 + offset+size) of
	// lines[:i+1], which are sorted by start: the first subsection that can
	// reach an address is found by binary search (a module has one per
	// function).
	maxEnd []uint64
}

// lineInfo is one line entry: an address range of the original image, a
// line and a FILE number.
type lineInfo struct {
	addr, length uint32
	line         uint32
	file         uint32
	hasLength    bool
}

func (d *dumper) fileOf(ml *moduleLines, checksumOff uint32) uint32 {
	c, ok := ml.checksums[checksumOff]
	if !ok {
		d.inconsistent("line file references", "lines of file checksum %#x, which the module's DEBUG_S_FILECHKSMS lacks: file <unknown>", checksumOff)
		return d.fileID("<unknown>")
	}
	name, err := d.names.String(c.NameOffset)
	if err != nil {
		d.inconsistent("line file references", "file checksum %#x: name: %v: file <unknown>", checksumOff, err)
		return d.fileID("<unknown>")
	}
	if name == "" {
		d.inconsistent("line file references", "file checksum %#x: its name (names offset %#x) is empty", checksumOff, c.NameOffset)
	}
	return d.fileID(name)
}

// checkLineOrder reports a DEBUG_S_LINES block whose entries are not in
// ascending offsets within the subsection's code: zeroed entries (offset 0,
// line 0) read as valid ones amid the others, and their lines then vanish
// or move without a word.
func checkLineOrder(d *dumper, l *pdb.Lines, modName string) {
	for _, blk := range l.Blocks {
		for i, e := range blk.Lines {
			if e.Offset >= l.CodeSize && l.CodeSize > 0 || i > 0 && e.Offset < blk.Lines[i-1].Offset {
				d.inconsistent("line order", "module %s: lines at %#x:%#x: entry %d at offset %#x after %#x, in %#x bytes of code", modName, l.Segment, l.Offset, i, e.Offset, blk.Lines[max(i-1, 0)].Offset, l.CodeSize)
				return
			}
		}
	}
}

func (d *dumper) readModuleLines(ms *pdb.ModuleStream, modName string) *moduleLines {
	ml := &moduleLines{checksums: map[uint32]pdb.FileChecksum{}, inlinees: map[pdb.TypeIndex]pdb.InlineeLine{}}
	subs, err := pdb.ParseSubsections(ms.C13)
	if err != nil {
		d.damage("module line subsections", "module %s: %v", modName, err)
	}
	bad := 0
	for _, s := range subs {
		// Kinds are 0xf1 and up (LLVM's DebugSubsectionKind: up to 0x100
		// today); DEBUG_S_IGNORE marks one to skip. Zeroed bytes read as
		// subsections of kind 0.
		if k := s.Kind; k&pdb.DEBUG_S_IGNORE == 0 && (k < pdb.DEBUG_S_SYMBOLS || k > 0x1ff) {
			if bad++; bad == 1 {
				d.inconsistent("module line subsection kinds", "module %s: a subsection of kind %#x, %d bytes (zeroed or damaged line information)", modName, uint32(k), len(s.Data))
			}
		}
		switch s.Kind {
		case pdb.DEBUG_S_LINES:
			l, err := pdb.ParseLines(s.Data)
			if err != nil {
				d.damage("module line subsections", "module %s: %v", modName, err)
			}
			if l != nil {
				checkLineOrder(d, l, modName)
				ml.lines = append(ml.lines, l)
			}
		case pdb.DEBUG_S_FILECHKSMS:
			c, err := pdb.ParseFileChecksums(s.Data)
			if err != nil {
				d.damage("module line subsections", "module %s: %v", modName, err)
			}
			for k, v := range c {
				ml.checksums[k] = v
			}
		case pdb.DEBUG_S_CROSSSCOPEIMPORTS:
			imp, err := pdb.ParseCrossScopeImports(s.Data)
			if err != nil {
				d.damage("module line subsections", "module %s: %v", modName, err)
			}
			ml.imports = append(ml.imports, imp...)
		case pdb.DEBUG_S_INLINEELINES:
			il, err := pdb.ParseInlineeLines(s.Data)
			if err != nil {
				d.damage("module line subsections", "module %s: %v", modName, err)
			}
			for _, e := range il {
				ml.inlinees[pdb.TypeIndex(e.Inlinee)] = e
			}
		}
	}
	slices.SortStableFunc(ml.lines, func(a, b *pdb.Lines) int {
		if c := cmp.Compare(a.Segment, b.Segment); c != 0 {
			return c
		}
		return cmp.Compare(a.Offset, b.Offset)
	})
	ml.maxEnd = make([]uint64, len(ml.lines))
	for i, l := range ml.lines {
		ml.maxEnd[i] = uint64(l.Segment)<<32 + uint64(l.Offset) + uint64(l.CodeSize)
		if i > 0 {
			ml.maxEnd[i] = max(ml.maxEnd[i], ml.maxEnd[i-1])
		}
	}
	return ml
}

// linesIn returns the line entries of [off, off+size) in segment seg, in
// original-image RVAs, each with its length (to the next entry of its
// block, the last to the end of the subsection's code).
func (d *dumper) linesIn(ml *moduleLines, seg uint16, off, size uint32) []lineInfo {
	var out []lineInfo
	first, _ := slices.BinarySearch(ml.maxEnd, uint64(seg)<<32+uint64(off)+1)
	limit := uint64(seg)<<32 + uint64(off) + uint64(size)
	for _, l := range ml.lines[first:] {
		if uint64(l.Segment)<<32|uint64(l.Offset) >= limit {
			break
		}
		if l.Segment != seg || uint64(l.Offset) >= uint64(off)+uint64(size) || uint64(l.Offset)+uint64(l.CodeSize) <= uint64(off) {
			continue
		}
		for _, blk := range l.Blocks {
			file := d.fileOf(ml, blk.FileChecksumOffset)
			for i, e := range blk.Lines {
				end := l.CodeSize
				if i+1 < len(blk.Lines) {
					end = blk.Lines[i+1].Offset
				}
				if end < e.Offset {
					end = e.Offset
				}
				abs := uint64(l.Offset) + uint64(e.Offset)
				if abs < uint64(off) || abs >= uint64(off)+uint64(size) {
					continue
				}
				rva, ok := d.rva(seg, uint32(abs))
				if !ok {
					continue
				}
				out = append(out, lineInfo{addr: rva, length: end - e.Offset, line: e.LineStart, file: file, hasLength: true})
			}
		}
	}
	slices.SortStableFunc(out, func(a, b lineInfo) int { return cmp.Compare(a.addr, b.addr) })
	return out
}

// procInfo is a procedure being read, with its inline sites.
type procInfo struct {
	seg     uint16
	off     uint32
	size    uint32
	name    string
	inlines []*inlineSite
}

type inlineSite struct {
	depth  int
	origin string
	lines  []lineInfo
	parent *inlineSite
}

// functions reads every module's procedures into FUNC records.
func (d *dumper) functions() []dumpsyms.Function {
	var funcs []dumpsyms.Function
	seen := map[uint32]int{} // final RVA → index in funcs
	for mi := range d.dbi.Modules {
		mod := &d.dbi.Modules[mi]
		ms, err := d.f.ModuleSymbols(mod)
		if err != nil {
			d.damage("module streams", "%v", err)
			continue
		}
		if ms == nil {
			if mod.SymByteSize > 0 || mod.C13ByteSize > 0 {
				d.inconsistent("module streams", "module %s declares %d bytes of symbols and %d of lines, but its stream (%d) is absent: its functions are left out", mod.Name, mod.SymByteSize, mod.C13ByteSize, mod.SymStream)
			}
			continue
		}
		ml := d.readModuleLines(ms, mod.Name)
		d.fmt.imports = ml.imports
		it := ms.Iter()
		var cur *procInfo
		var stack []*inlineSite // open inline sites of cur
		depth := 0
		procDepth := -1
		var procs []*procInfo
		for {
			s, ok := it.Next()
			if !ok {
				break
			}
			switch {
			case s.Kind.IsProc():
				p, err := pdb.ParseProc(s.Data)
				if err != nil {
					d.damage("procedure records", "module %s: %v", mod.Name, err)
					break
				}
				var name string
				if s.Kind.IsID() {
					name = orOmitted(p.Name)
				} else {
					name = d.fmt.function(p.Name, pdb.TypeIndex(p.Type))
				}
				cur = &procInfo{seg: p.Segment, off: p.Offset, size: p.CodeSize, name: name}
				procs = append(procs, cur)
				procDepth = depth
				stack = stack[:0]
			case s.Kind == pdb.S_SEPCODE && cur != nil:
				sc, err := pdb.ParseSepCode(s.Data)
				if err != nil {
					d.damage("separated code records", "module %s: %v", mod.Name, err)
				}
				if err == nil {
					procs = append(procs, &procInfo{seg: sc.Segment, off: sc.Offset, size: sc.Length, name: cur.name})
				}
			case (s.Kind == pdb.S_INLINESITE || s.Kind == pdb.S_INLINESITE2) && cur != nil && d.opts.Inlines:
				site, err := pdb.ParseInlineSite(s.Kind, s.Data)
				if err != nil {
					d.damage("inline site records", "module %s: %v", mod.Name, err)
					break
				}
				in := d.inlineSite(ml, cur, site)
				if len(stack) > 0 {
					in.parent = stack[len(stack)-1]
				}
				in.depth = len(stack)
				cur.inlines = append(cur.inlines, in)
				stack = append(stack, in)
			}
			if s.Kind == pdb.S_INLINESITE_END && len(stack) > 0 {
				stack = stack[:len(stack)-1]
			}
			if s.Kind.StartsScope() {
				depth++
			}
			if s.Kind.EndsScope() {
				depth--
				if depth == procDepth {
					cur = nil
					procDepth = -1
				}
			}
		}
		if err := it.Err(); err != nil {
			d.damage("module symbol records", "module %s: %v", mod.Name, err)
		}
		for _, p := range procs {
			d.addFunction(&funcs, seen, ml, p)
		}
		d.f.MSF.Release(int(mod.SymStream))
	}
	sortFuncs(funcs)
	d.syms.Funcs = funcs
	return funcs
}

func (d *dumper) addFunction(funcs *[]dumpsyms.Function, seen map[uint32]int, ml *moduleLines, p *procInfo) {
	if p.size == 0 {
		return
	}
	rva, ok := d.rva(p.seg, p.off)
	if !ok {
		return
	}
	ranges := d.imap.mapRange(addrRange{rva, p.size})
	if len(ranges) == 0 {
		return
	}
	if i, ok := seen[ranges[0].rva]; ok {
		(*funcs)[i].Multiple = true // as both references mark folded functions
		return
	}
	f := dumpsyms.Function{Name: fixName(p.name)}
	for _, r := range ranges {
		f.Ranges = append(f.Ranges, symfile.Range{Address: uint64(r.rva), Size: uint64(r.length)})
	}
	lines := d.linesIn(ml, p.seg, p.off, p.size)
	if d.imap == nil {
		d.mozillaLines(&f, lines, p.inlines, rva, p.size)
	} else {
		// Reordered code: Breakpad's line records, each mapped on its own.
		if d.opts.Inlines && len(p.inlines) > 0 {
			lines = d.applyInlines(&f, lines, p.inlines)
		}
		for _, l := range lines {
			// Zero-length entries are kept, as Breakpad wrote them.
			for _, r := range d.imap.mapRange(addrRange{l.addr, l.length}) {
				f.Lines = append(f.Lines, symfile.Line{Address: uint64(r.rva), Size: uint64(r.length), Line: int64(l.line), File: l.file})
			}
		}
		slices.SortStableFunc(f.Lines, func(a, b symfile.Line) int { return cmp.Compare(a.Address, b.Address) })
	}
	seen[ranges[0].rva] = len(*funcs)
	*funcs = append(*funcs, f)
}
