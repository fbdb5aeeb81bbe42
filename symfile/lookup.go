package symfile

import (
	"bytes"
	"cmp"
	"slices"
)

// MaxInlineDepth caps the inlined calls a lookup returns at one address (the
// innermost ones are kept). Real chains are tens of calls deep; a hostile
// file nesting 200,000 INLINE records over one address would otherwise
// return them all for every lookup there (a walk: 200 MB, seconds).
const MaxInlineDepth = 1024

// Symbol is what [Table.Lookup] finds at an address: the FUNC record covering
// it, with the line record and inlined calls there, or else the nearest
// PUBLIC record below it.
type Symbol struct {
	Name      string
	Address   uint64 // the FUNC's or PUBLIC's address: the function base
	Size      uint64 // the FUNC's size; 0 for a PUBLIC
	ParamSize uint64
	Multiple  bool // the record has the "m" flag: several symbols were folded together
	Public    bool // found through the PUBLIC fallback; no line or inline data then

	// The line record covering the address, when HasLine is set. File is
	// empty when the line names no FILE record.
	HasLine     bool
	File        string
	Line        int64
	LineAddress uint64 // start address of the line record

	// Inlines is the chain of inlined calls at the address, innermost first.
	Inlines []InlinedCall
}

// InlinedCall is one INLINE record covering an address: a call, inlined into
// the function, of the function named by its INLINE_ORIGIN.
type InlinedCall struct {
	Name     string // the origin's name; "<name omitted>" when the origin is missing, as Breakpad prints
	Address  uint64 // start of the INLINE range covering the address
	CallFile string // file of the call site; empty when absent (old form, -1 or unknown FILE)
	CallLine int64  // line of the call site
}

// Frame is one frame of Breakpad's view of an address: the inlined
// functions, innermost first, then the real function.
type Frame struct {
	Name    string
	Address uint64 // function base: the FUNC, PUBLIC or inline range start
	File    string
	Line    int64 // 0 when unknown
	Inline  bool
}

// Frames returns the frames Breakpad's SourceLineResolver makes from s,
// innermost first: each inlined call shows the source position inside it
// (the line record for the innermost, the call site of the next inner inlined
// call for the others), and the real function shows the call site of the
// outermost inlined call, or the line record when nothing is inlined. As in
// Breakpad, a call site without a known file (old INLINE form, file -1 or an
// unknown FILE number) takes the line record's file.
func (s *Symbol) Frames() []Frame {
	out := make([]Frame, 0, len(s.Inlines)+1)
	file, line := "", int64(0)
	if s.HasLine {
		file, line = s.File, s.Line
	}
	lineFile := file
	for _, in := range s.Inlines {
		out = append(out, Frame{Name: in.Name, Address: in.Address, File: file, Line: line, Inline: true})
		file, line = in.CallFile, in.CallLine
		if file == "" {
			file = lineFile
		}
	}
	return append(out, Frame{Name: s.Name, Address: s.Address, File: file, Line: line})
}

// Lookup returns the symbol at module-relative address addr, with Breakpad's
// rules: the FUNC record whose range covers addr (with its line record and
// inlined calls), else the nearest PUBLIC record at or below addr provided it
// lies above the start of the nearest FUNC below addr. It returns false when
// neither exists.
func (t *Table) Lookup(addr uint64) (Symbol, bool) {
	var sym Symbol
	fi := nearestBelow(t.funcs, addr)
	if fi >= 0 && t.funcs[fi].last >= addr {
		fs := t.funcs[fi]
		bd := t.funcBody[fs.aux]
		inlineEnd := bd.end
		if bd.lines != 0 {
			inlineEnd = bd.lines
		}
		var l Line
		var found, searched bool
		// The FUNC line and the line record are likely cache misses on a
		// large file. When the line records need no decoding (ordered, and
		// the INLINE records before them too short to be worth keeping
		// decoded: see below), the search starts before the FUNC line is
		// parsed, with the FUNC line's first byte loaded just before, so that
		// the two misses overlap.
		if bd.ordered && bd.lines != 0 && inlineEnd-fs.off < detailCacheMin && t.data[fs.off] == 'F' {
			l, found = t.searchLines(bd, fs, addr)
			searched = true
		}
		line := t.lineAt(fs.off)
		f, _ := parseFuncLine(line)
		sym = Symbol{
			Name:      t.recordText(fs.off, line[f.name:]),
			Address:   f.addr,
			Size:      f.size,
			ParamSize: f.param,
			Multiple:  f.multiple,
		}
		bodyStart := fs.off + uint32(len(line))
		var d *funcDetail
		if !bd.ordered || inlineEnd-bodyStart >= detailCacheMin {
			d = t.detail(fi)
		}
		switch {
		case searched:
			// Done above; d is nil, as inlineEnd-bodyStart < inlineEnd-fs.off.
		case d == nil:
			if bd.lines != 0 {
				l, found = t.searchLines(bd, fs, addr)
			}
		default:
			if li := findExclusive(d.lines, addr); li >= 0 {
				info := d.lineInfo[d.lines[li].aux]
				l = Line{Address: d.lines[li].start, Line: info.line, File: info.file}
				found = true
			}
		}
		if found {
			sym.HasLine = true
			sym.Line = l.Line
			sym.LineAddress = l.Address
			sym.File = t.fileName(l.File)
		}
		var inl *inlineDepths
		var inlInfo []Inline
		if d != nil {
			inl, inlInfo = &d.inlines, d.inlineInfo
		} else if bodyStart < inlineEnd && bd.inlineBounds(fs.start, addr) {
			inl, inlInfo = t.inlinesAt(bodyStart, inlineEnd, addr)
		}
		if inl != nil {
			var buf [16]span
			for _, r := range inl.chain(addr, buf[:0]) {
				in := inlInfo[r.aux]
				c := InlinedCall{Name: "<name omitted>", Address: r.start, CallLine: int64(in.CallLine)}
				if o, ok := findNamed(t.origins, in.Origin); ok {
					c.Name = t.originNames[o.off : o.off+o.n]
				}
				if in.HasCallFile && in.CallFile >= 0 {
					c.CallFile = t.fileName(uint32(in.CallFile))
				}
				sym.Inlines = append(sym.Inlines, c)
			}
		}
		return sym, true
	}
	pi := nearestPublic(t.publics, addr)
	if pi < 0 || (fi >= 0 && t.publics[pi].addr <= t.funcs[fi].start) {
		return Symbol{}, false
	}
	line := t.lineAt(t.publics[pi].off)
	p, _ := parsePublicLine(line)
	return Symbol{
		Name:      t.recordText(t.publics[pi].off, line[p.name:]),
		Address:   p.addr,
		ParamSize: p.param,
		Multiple:  p.multiple,
		Public:    true,
	}, true
}

// longName is the length from which a FUNC or PUBLIC name, or the rules of a
// STACK CFI or STACK WIN record, are copied out of the file once and kept
// (Table.longNames) instead of once per lookup: a 16 MiB name looked up for
// 257 frames cost 10 GB. Shorter texts, nearly all real ones, are copied per
// lookup, which is cheaper than a map.
const longName = 1 << 10

// recordText returns the name or rules of the record at off, whose bytes
// are b.
func (t *Table) recordText(off uint32, b []byte) string {
	if len(b) < longName {
		return string(b)
	}
	if s, ok := t.longNames.Load(off); ok {
		return s.(string)
	}
	s, _ := t.longNames.LoadOrStore(off, string(b))
	return s.(string)
}

func nearestPublic(s []public, a uint64) int {
	lo, hi := 0, len(s)
	for lo < hi {
		m := int(uint(lo+hi) >> 1)
		if s[m].addr <= a {
			lo = m + 1
		} else {
			hi = m
		}
	}
	return lo - 1
}

func (t *Table) fileName(id uint32) string {
	if f, ok := findNamed(t.files, id); ok {
		return t.fileNames[f.off : f.off+f.n]
	}
	return ""
}

// funcDetail is the decoded line and INLINE records of one function.
type funcDetail struct {
	lines      []span // aux: index in lineInfo
	lineInfo   []lineInfo
	inlines    inlineDepths // aux: index in inlineInfo
	inlineInfo []Inline
}

type lineInfo struct {
	line int64
	file uint32
}

// detailCacheMin is the size in bytes of a function's line and INLINE records
// above which its decoded form is kept for later lookups; smaller ones are
// cheaper to decode again than to keep.
const detailCacheMin = 2048

// detail decodes the line and INLINE records of function fi.
func (t *Table) detail(fi int) *funcDetail {
	if d, ok := t.details.Load(fi); ok {
		return d.(*funcDetail)
	}
	f := t.funcs[fi]
	head := uint32(len(t.lineAt(f.off)))
	bodyStart, bodyEnd := f.off+head, t.funcBody[f.aux].end
	d := &funcDetail{}
	var inlineSpans []span
	for off := bodyStart; off < bodyEnd; {
		b := t.lineAt(off)
		lineOff := off
		off = t.nextLine(off)
		if len(b) == 0 || !isChildRecord(b) {
			continue
		}
		if hasPrefix(b, "INLINE ") {
			in := Inline{}
			if parseInlineLine(b, &in) != "" {
				continue
			}
			// Breakpad drops an INLINE nested deeper than the one
			// before it allows (its parent taken for malformed); nesting
			// by depth needs no such rule (a call without its parent
			// is in no chain), and it lost true calls in files whose
			// records are not in depth-first order (docs/symfile.md).
			k := uint32(len(d.inlineInfo))
			d.inlineInfo = append(d.inlineInfo, in)
			for _, r := range in.Ranges {
				if s, ok := makeSpan(r.Address, r.Size, lineOff, k); ok {
					inlineSpans = append(inlineSpans, s)
				}
			}
			continue
		}
		l, msg := parseLineRecord(b)
		if msg != "" {
			continue
		}
		if s, ok := makeSpan(l.Address, l.Size, lineOff, uint32(len(d.lineInfo))); ok {
			d.lines = append(d.lines, s)
			d.lineInfo = append(d.lineInfo, lineInfo{line: l.Line, file: l.File})
		}
	}
	d.lines = exclusiveRanges(d.lines)
	d.inlines = newInlineDepths(inlineSpans, func(k uint32) uint32 { return d.inlineInfo[k].Depth })
	if bodyEnd-bodyStart >= detailCacheMin {
		t.details.Store(fi, d)
	}
	return d
}

// lineScanMax is the size in bytes of the stretch of line records that
// searchLines scans line by line rather than probes.
const lineScanMax = 64

// interpolateMax is how many probes of searchLines place themselves by the
// address (interpolation) before falling back to halving the stretch.
const interpolateMax = 3

// searchLines finds the line record covering addr in the ordered line
// records of function f by a search over the text, then a short scan. The
// first probes guess the offset from the address, since line records are
// about as long as one another: on a large file each probe is a cache miss,
// and a guess lands within a line or two in one or two probes where halving
// takes a dozen.
func (t *Table) searchLines(bd body, f span, addr uint64) (Line, bool) {
	d := t.data[:bd.end]
	lo, hi := int(bd.lines), int(bd.end)
	// Estimates of the addresses of the lines at lo and hi.
	aLo, aHi := f.start, f.last
	// Invariant: the line at lo is the first one or starts at or below addr;
	// every line starting at or after hi starts above addr.
	for probe := 0; hi-lo > lineScanMax; probe++ {
		mid := lo + (hi-lo)/2
		if probe < interpolateMax && aLo <= addr && addr < aHi {
			g := lo + int(float64(addr-aLo)/float64(aHi-aLo)*float64(hi-lo))
			if g-lo <= lineScanMax {
				// The line looked for seems to be a few after lo: read
				// them (a bounded stretch, in case the guess is wrong).
				l, found, last, lastAddr, done := scanLines(d, lo, addr, lo+2*lineScanMax)
				if done {
					return l, found
				}
				lo, aLo = last, lastAddr
				continue
			}
			// Aim a little below the guess so that the probe likely
			// lands at or below addr, close to it.
			mid = min(max(g-lineScanMax/2, lo), hi-1)
		}
		nl := bytes.IndexByte(d[mid:hi], '\n')
		if nl < 0 {
			break
		}
		m := mid + nl + 1
		if m >= hi {
			hi = mid
			continue
		}
		a, _, _ := hexField(d, m)
		if a <= addr {
			lo, aLo = m, a
		} else {
			hi, aHi = m, a
		}
	}
	l, found, _, _, _ := scanLines(d, lo, addr, len(d))
	return l, found
}

// scanLines reads the line records of d from off on, in order, until one
// starts above addr or covers it (done, with the line if found) or until
// it reaches limit (not done: last is the offset of the last line read, which
// starts at lastAddr, at or below addr).
func scanLines(d []byte, off int, addr uint64, limit int) (l Line, found bool, last int, lastAddr uint64, done bool) {
	last = off
	for off < len(d) {
		if off >= limit {
			return Line{}, false, last, lastAddr, false
		}
		a, size, end, next, ok := lineRecordAt(d, off)
		if !ok {
			// Not in the form the fast path knows: take the general one.
			b := d[off:]
			if i := bytes.IndexByte(b, '\n'); i >= 0 {
				b = b[:i]
			}
			next = off + len(b) + 1
			b = trimCR(b)
			end = off + len(b)
			l, msg := parseLineRecord(b)
			if msg != "" {
				break
			}
			a, size = l.Address, l.Size
		}
		if a > addr {
			break
		}
		if addr-a < size {
			l, _ := parseLineRecord(d[off:end])
			return l, true, off, a, true
		}
		last, lastAddr = off, a
		off = next
	}
	return Line{}, false, last, lastAddr, true
}

// inlinesAt decodes the INLINE records in [start, end) into their ranges
// by depth, or returns nil when none covers addr.
func (t *Table) inlinesAt(start, end uint32, addr uint64) (*inlineDepths, []Inline) {
	// Most addresses are in no inlined call: find out without allocating.
	var rangeBuf [8]Range
	in := Inline{Ranges: rangeBuf[:0]}
	hit := false
	for off := start; off < end && !hit; {
		b := t.lineAt(off)
		off = t.nextLine(off)
		if !hasPrefix(b, "INLINE ") {
			continue
		}
		in.Ranges = in.Ranges[:0]
		if parseInlineLine(b, &in) != "" {
			continue
		}
		for _, r := range in.Ranges {
			hit = hit || (addr >= r.Address && addr-r.Address < r.Size)
		}
	}
	if !hit {
		return nil, nil
	}
	var spans []span
	var infos []Inline
	for off := start; off < end; {
		b := t.lineAt(off)
		lineOff := off
		off = t.nextLine(off)
		if !hasPrefix(b, "INLINE ") {
			continue
		}
		in.Ranges = in.Ranges[:0]
		if parseInlineLine(b, &in) != "" {
			continue
		}
		k := uint32(len(infos))
		for _, r := range in.Ranges {
			if s, ok := makeSpan(r.Address, r.Size, lineOff, k); ok {
				spans = append(spans, s)
			}
		}
		kept := in
		kept.Ranges = nil
		infos = append(infos, kept)
	}
	n := newInlineDepths(spans, func(k uint32) uint32 { return infos[k].Depth })
	return &n, infos
}

// nextLine returns the offset of the line after the one at off (or the
// end of the file).
func (t *Table) nextLine(off uint32) uint32 {
	if i := bytes.IndexByte(t.data[off:], '\n'); i >= 0 {
		return off + uint32(i) + 1
	}
	return uint32(len(t.data))
}

// isChildRecord reports whether line b is a line or INLINE record: one that
// belongs to the FUNC before it.
func isChildRecord(b []byte) bool {
	switch b[0] {
	case 'F':
		return !hasPrefix(b, "FUNC ") && !hasPrefix(b, "FILE ")
	case 'S':
		return !hasPrefix(b, "STACK ")
	case 'P':
		return !hasPrefix(b, "PUBLIC ")
	case 'M':
		return !hasPrefix(b, "MODULE ")
	case 'I':
		return !hasPrefix(b, "INFO ") && !hasPrefix(b, "INLINE_ORIGIN ")
	}
	return true
}

// CFIRules is the DWARF CFI in force at an address: the STACK CFI INIT record
// covering it and the STACK CFI delta records that apply, as text for package
// cfi to compile. Apply Init, then each delta in order.
type CFIRules struct {
	Address uint64 // the INIT record's range
	Size    uint64
	Init    string
	Deltas  []CFI // deltas at addresses from Address up to and including the looked-up address, in address order
}

// CFIRules returns the CFI rules in force at module-relative address addr, as
// Breakpad's FindCFIFrameInfo gathers them: the INIT record whose range covers
// addr, and the delta records (from anywhere in the file) whose addresses lie
// between the INIT address and addr; for a repeated address, the last record
// in the file wins. It returns false when no INIT record covers addr.
func (t *Table) CFIRules(addr uint64) (CFIRules, bool) {
	t.stack()
	ci := findExclusive(t.cfi, addr)
	if ci < 0 {
		return CFIRules{}, false
	}
	c := t.cfi[ci]
	b := t.lineAt(c.off)
	_, f, _ := parseCFILine(b)
	r := CFIRules{Address: c.start, Size: c.last - c.start + 1, Init: t.recordText(c.off, b[f.rules:])}
	type found struct {
		CFI
		off uint32
	}
	var buf [8]found
	ds := buf[:0]
	sorted := true
	add := func(a uint64, off uint32, rules []byte) {
		if a < c.start || a > addr {
			return
		}
		if n := len(ds); n > 0 && (ds[n-1].Address > a || (ds[n-1].Address == a && ds[n-1].off > off)) {
			sorted = false
		}
		ds = append(ds, found{CFI{Address: a}, off})
		ds[len(ds)-1].Rules = t.recordText(off, rules)
	}
	t.blockDeltas(c, add)
	i, _ := slices.BinarySearchFunc(t.deltas, c.start, func(d delta, a uint64) int { return cmp.Compare(d.addr, a) })
	for ; i < len(t.deltas) && t.deltas[i].addr <= addr; i++ {
		d := t.lineAt(t.deltas[i].off)
		_, f, _ := parseCFILine(d)
		add(t.deltas[i].addr, t.deltas[i].off, d[f.rules:])
	}
	if !sorted {
		slices.SortFunc(ds, func(a, b found) int {
			if c := cmp.Compare(a.Address, b.Address); c != 0 {
				return c
			}
			return cmp.Compare(a.off, b.off)
		})
	}
	if len(ds) > 0 {
		r.Deltas = make([]CFI, 0, len(ds)) // one allocation, not append's doublings
	}
	for k, d := range ds {
		// For a repeated address the last record in the file wins.
		if k+1 < len(ds) && ds[k+1].Address == d.Address {
			continue
		}
		r.Deltas = append(r.Deltas, d.CFI)
	}
	return r, true
}

// StackWin returns the STACK WIN record for module-relative address addr as
// Breakpad's FindWindowsFrameInfo chooses it: the innermost FrameData (type 4)
// record covering addr, else the innermost FPO (type 0) one. It returns false
// when neither covers addr.
func (t *Table) StackWin(addr uint64) (StackWin, bool) {
	t.stack()
	for k := range t.win {
		n := &t.win[k]
		if i := n.innermost(addr); i >= 0 {
			b := t.lineAt(n.s[i].off)
			_, we := word(b, len("STACK "))
			w, prog, _ := parseStackWin(b, we)
			if w.HasProgramString {
				w.ProgramString = t.recordText(n.s[i].off, b[prog:])
			}
			return w, true
		}
	}
	return StackWin{}, false
}
