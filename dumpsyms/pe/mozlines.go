package pe

import (
	"cmp"
	"slices"

	"github.com/gobreakpad/gobreakpad/dumpsyms"
	"github.com/gobreakpad/gobreakpad/symfile"
)

// cleanLines prepares line entries as symbolic's PDB reader does for
// Mozilla's dump_syms: zero-length entries dropped, sorted by address, and
// adjacent entries of the same file and line merged.
func cleanLines(in []lineInfo) []lineInfo {
	out := make([]lineInfo, 0, len(in))
	for _, l := range in {
		if l.hasLength && l.length == 0 {
			continue
		}
		out = append(out, l)
	}
	slices.SortStableFunc(out, func(a, b lineInfo) int { return cmp.Compare(a.addr, b.addr) })
	merged := out[:0]
	for _, l := range out {
		if n := len(merged); n > 0 {
			p := &merged[n-1]
			if p.hasLength && p.addr+p.length == l.addr && p.file == l.file && p.line == l.line {
				p.length += l.length
				continue
			}
		}
		merged = append(merged, l)
	}
	return merged
}

func (l lineInfo) end() uint32 {
	if l.hasLength {
		return l.addr + l.length
	}
	return l.addr + 1
}

// mozLine is a line record before its size is known.
type mozLine struct{ addr, line, file uint32 }

type mozSite struct {
	origin, depth, line, file uint32
}

// mozillaLines fills f's line and INLINE records with Mozilla's rules: a
// line starts where its (line, file) changes, each lasting up to the next
// one and the last to the function's end; inlined code takes the lines of
// the inlined function, and each inline site with its call line and file
// (those of the line it lies in) is one INLINE record with its ranges.
func (d *dumper) mozillaLines(f *dumpsyms.Function, lines []lineInfo, sites []*inlineSite, start, size uint32) {
	lines = cleanLines(lines)
	end := start + size
	kept := lines[:0]
	for _, l := range lines {
		if l.addr >= end || l.end() <= start {
			continue
		}
		kept = append(kept, l)
	}
	lines = kept
	var out []mozLine
	inl := map[mozSite][]addrRange{}
	if !d.opts.Inlines {
		var prev *mozLine
		for _, l := range lines {
			if l.line == 0 {
				continue
			}
			if prev != nil && prev.line == l.line && prev.file == l.file {
				continue
			}
			out = append(out, mozLine{l.addr, l.line, l.file})
			prev = &out[len(out)-1]
		}
	} else {
		d.mozInlines(&out, inl, lines, childrenOf(sites, nil), sites, 0)
	}
	slices.SortStableFunc(out, func(a, b mozLine) int { return cmp.Compare(a.addr, b.addr) })
	// Kept until written: sized exactly (append's doubling would leave up
	// to half of each function's records unused).
	f.Lines = slices.Grow(f.Lines, len(out))
	for i, l := range out {
		var n uint32
		if i+1 < len(out) {
			n = out[i+1].addr - l.addr
		} else if l.addr < end {
			n = end - l.addr
		}
		f.Lines = append(f.Lines, symfile.Line{Address: uint64(l.addr), Size: uint64(n), Line: int64(l.line), File: l.file})
	}
	type rec struct {
		s      mozSite
		ranges []addrRange
	}
	var recs []rec
	for s, rs := range inl {
		slices.SortStableFunc(rs, func(a, b addrRange) int { return cmp.Compare(a.rva, b.rva) })
		merged := rs[:0]
		for _, r := range rs {
			if n := len(merged); n > 0 && merged[n-1].end() == r.rva {
				merged[n-1].length += r.length
				continue
			}
			merged = append(merged, r)
		}
		recs = append(recs, rec{s, merged})
	}
	slices.SortFunc(recs, func(a, b rec) int {
		if c := cmp.Compare(a.ranges[0].rva, b.ranges[0].rva); c != 0 {
			return c
		}
		if c := cmp.Compare(a.s.depth, b.s.depth); c != 0 {
			return c
		}
		if c := cmp.Compare(a.s.origin, b.s.origin); c != 0 {
			return c
		}
		if c := cmp.Compare(a.s.line, b.s.line); c != 0 {
			return c
		}
		return cmp.Compare(a.s.file, b.s.file)
	})
	f.Inlines = slices.Grow(f.Inlines, len(recs))
	for _, r := range recs {
		in := symfile.Inline{Depth: r.s.depth, CallLine: r.s.line, CallFile: int32(r.s.file), HasCallFile: true, Origin: r.s.origin}
		in.Ranges = make([]symfile.Range, 0, len(r.ranges))
		for _, x := range r.ranges {
			in.Ranges = append(in.Ranges, symfile.Range{Address: uint64(x.rva), Size: uint64(x.length)})
		}
		f.Inlines = append(f.Inlines, in)
	}
}

// childrenOf returns the sites whose parent is p.
func childrenOf(all []*inlineSite, p *inlineSite) []*inlineSite {
	var out []*inlineSite
	for _, s := range all {
		if s.parent == p {
			out = append(out, s)
		}
	}
	return out
}

type inlRange struct {
	start, end uint32
	origin     uint32
}

func (d *dumper) mozInlines(out *[]mozLine, inl map[mozSite][]addrRange, lines []lineInfo, children, all []*inlineSite, depth uint32) {
	var ranges []inlRange
	for _, c := range children {
		cl := cleanLines(c.lines)
		if len(cl) == 0 {
			continue
		}
		origin := d.originID(c.origin)
		for _, l := range cl {
			ranges = append(ranges, inlRange{l.addr, l.end(), origin})
		}
		d.mozInlines(out, inl, cl, childrenOf(all, c), all, depth+1)
	}
	slices.SortStableFunc(ranges, func(a, b inlRange) int { return cmp.Compare(a.start, b.start) })
	ri := 0
	hasPrev := false
	var prevLine, prevFile uint32
	for li := 0; li < len(lines); {
		l := lines[li]
		lend := l.end()
		cur := l.addr
		for cur < lend {
			if ri >= len(ranges) || ranges[ri].start > cur {
				if !hasPrev || prevLine != l.line || prevFile != l.file {
					*out = append(*out, mozLine{cur, l.line, l.file})
					hasPrev, prevLine, prevFile = true, l.line, l.file
				}
			}
			if ri < len(ranges) && ranges[ri].start < lend {
				r := ranges[ri]
				s := mozSite{origin: r.origin, depth: depth, line: l.line, file: l.file}
				inl[s] = append(inl[s], addrRange{r.start, r.end - r.start})
				cur = r.end
				hasPrev = false
				ri++
			} else {
				cur = lend
			}
		}
		li++
		for li < len(lines) && lines[li].addr < cur {
			li++
		}
	}
}
