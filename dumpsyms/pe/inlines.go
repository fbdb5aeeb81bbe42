package pe

import (
	"cmp"
	"slices"

	"github.com/gobreakpad/gobreakpad/dumpsyms"
	"github.com/gobreakpad/gobreakpad/pdb"
	"github.com/gobreakpad/gobreakpad/symfile"
)

// inlineSite decodes an inline site's binary annotations into its line
// entries (original-image RVAs), relative to the procedure's start.
func (d *dumper) inlineSite(ml *moduleLines, p *procInfo, site pdb.InlineSiteSym) *inlineSite {
	in := &inlineSite{}
	if d.fmt.ipi != nil {
		name, err := d.fmt.id(pdb.TypeIndex(site.Inlinee))
		if err != nil {
			d.damage("inline sites", "inline site %#x: %v", site.Inlinee, err)
		}
		in.origin = fixName(name)
	}
	if in.origin == "" {
		in.origin = "<name omitted>"
	}
	il, ok := ml.inlinees[pdb.TypeIndex(site.Inlinee)]
	if !ok {
		return in
	}
	ops, err := pdb.DecodeAnnotations(site.Annotations)
	if err != nil {
		d.damage("inline sites", "inline site %#x: %v", site.Inlinee, err)
	}
	file := il.FileChecksumOffset
	line := int64(il.SourceLine)
	codeOff := uint64(p.off)
	var codeLen uint32
	hasCodeLen := false
	var last *lineInfo
	var lastOff uint64
	var out []lineInfo
	emit := func() {
		if last != nil && !last.hasLength {
			last.length = uint32(codeOff - lastOff)
			last.hasLength = true
		}
		if last != nil {
			out = append(out, *last)
		}
		l := lineInfo{line: uint32(line), length: codeLen, hasLength: hasCodeLen}
		if rva, ok := d.rva(p.seg, uint32(codeOff)); ok {
			l.addr = rva
		}
		l.file = d.fileOf(ml, file)
		last, lastOff = &l, codeOff
		hasCodeLen = false
		codeLen = 0
	}
	for _, op := range ops {
		switch op.Op {
		case pdb.BACodeOffset:
			codeOff = uint64(p.off) + uint64(op.A)
		case pdb.BAChangeCodeOffset:
			codeOff += uint64(op.A)
			emit()
		case pdb.BAChangeCodeLength:
			if last != nil && !last.hasLength {
				last.length = uint32(op.A)
				last.hasLength = true
			}
			codeOff += uint64(op.A)
		case pdb.BAChangeFile:
			file = uint32(op.A)
		case pdb.BAChangeLineOffset:
			line += op.A
		case pdb.BAChangeCodeOffsetAndLineOffset:
			codeOff += uint64(op.A)
			line += op.B
			emit()
		case pdb.BAChangeCodeLengthAndCodeOffset:
			codeLen, hasCodeLen = uint32(op.A), true
			codeOff += uint64(op.B)
			emit()
		}
	}
	if last != nil {
		if !last.hasLength {
			last.length, last.hasLength = 1, true
		}
		out = append(out, *last)
	}
	in.lines = out
	return in
}

// lineMap is a function's line table as Breakpad's Lines class keeps it:
// non-overlapping entries by address, a newly added entry cutting the
// entries it overlaps.
type lineMap []lineInfo

func (m *lineMap) add(l lineInfo) {
	if l.length == 0 {
		return
	}
	end := l.addr + l.length
	var out lineMap
	for _, o := range *m {
		oend := o.addr + o.length
		if oend <= l.addr || o.addr >= end {
			out = append(out, o)
			continue
		}
		if o.addr < l.addr {
			left := o
			left.length = l.addr - o.addr
			out = append(out, left)
		}
		if oend > end {
			right := o
			right.addr = end
			right.length = oend - end
			out = append(out, right)
		}
	}
	out = append(out, l)
	slices.SortStableFunc(out, func(a, b lineInfo) int { return cmp.Compare(a.addr, b.addr) })
	*m = out
}

// at returns the entry covering rva.
func (m lineMap) at(rva uint32) (lineInfo, bool) {
	i, found := slices.BinarySearchFunc(m, rva, func(l lineInfo, v uint32) int { return cmp.Compare(l.addr, v) })
	if found {
		return m[i], true
	}
	if i == 0 {
		return lineInfo{}, false
	}
	l := m[i-1]
	if rva >= l.addr+l.length {
		return lineInfo{}, false
	}
	return l, true
}

// applyInlines adds the function's INLINE records and splits its lines
// where inlined code lies, as Breakpad does: an inline site's call line
// and file are those of the line covering its first address before its
// own lines are added; its lines then replace what they overlap.
func (d *dumper) applyInlines(f *dumpsyms.Function, lines []lineInfo, sites []*inlineSite) []lineInfo {
	var m lineMap
	for _, l := range lines {
		m.add(l)
	}
	for _, s := range sites {
		in := symfile.Inline{Depth: uint32(s.depth), HasCallFile: true, Origin: d.originID(s.origin)}
		first := true
		var ranges []addrRange
		for _, l := range s.lines {
			if l.length == 0 {
				continue
			}
			if first {
				if c, ok := m.at(l.addr); ok {
					in.CallLine = c.line
					in.CallFile = int32(c.file)
				}
				first = false
			}
			m.add(l)
			if n := len(ranges); n > 0 && ranges[n-1].end() == l.addr {
				ranges[n-1].length += l.length
			} else {
				ranges = append(ranges, l.addrRange())
			}
		}
		if len(ranges) == 0 {
			continue
		}
		slices.SortFunc(ranges, func(a, b addrRange) int { return cmp.Compare(a.rva, b.rva) })
		for _, r := range ranges {
			for _, mr := range d.imap.mapRange(r) {
				in.Ranges = append(in.Ranges, symfile.Range{Address: uint64(mr.rva), Size: uint64(mr.length)})
			}
		}
		f.Inlines = append(f.Inlines, in)
	}
	return m
}

func (l lineInfo) addrRange() addrRange { return addrRange{l.addr, l.length} }
