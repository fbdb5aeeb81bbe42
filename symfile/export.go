package symfile

// This file exports the resolved views of the records that drive unwinding,
// for indexes built from a parsed file (package cfiindex): each answers
// exactly as the lookups of this package do.

// EachCFI calls f, in address order, for every STACK CFI INIT record that
// lookups use (overlapping records resolved as Breakpad does), with every
// delta record that applies anywhere within its range, as CFIRules at the
// range's last address returns them. It stops when f returns false.
func (t *Table) EachCFI(f func(CFIRules) bool) {
	t.stack()
	for _, c := range t.cfi {
		r, ok := t.CFIRules(c.last)
		if !ok {
			continue
		}
		if !f(r) {
			return
		}
	}
}

// EachFunc calls f, in address order, for every FUNC record's range as
// lookups see it (the first address and size of the part of the record
// lookups find; overlapping records resolved as Breakpad does), with its
// parameter size. It stops when f returns false.
func (t *Table) EachFunc(f func(addr, size, paramSize uint64) bool) {
	for _, s := range t.funcs {
		fl, _ := parseFuncLine(t.lineAt(s.off))
		if !f(s.start, s.last-s.start+1, fl.param) {
			return
		}
	}
}

// StackWinBounds returns the addresses at which the answer of StackWin may
// change: the first address of every STACK WIN record lookups use and the
// address after its last (when that does not wrap). Between two consecutive
// bounds (sorted), StackWin answers the same.
func (t *Table) StackWinBounds() []uint64 {
	t.stack()
	var b []uint64
	for k := range t.win {
		for _, s := range t.win[k].s {
			b = append(b, s.start)
			if s.last+1 != 0 {
				b = append(b, s.last+1)
			}
		}
	}
	return b
}

// InlineNesting is how lookups nest the INLINE records of one function
// (NestInlines), for writers of other formats that must answer as the .sym
// file does (dumpsyms/internal/segment).
type InlineNesting struct {
	n    inlineDepths
	refs []InlineRange
}

// InlineRange names one range of one INLINE record: indices in the records
// given to NestInlines and in that record's Ranges.
type InlineRange struct {
	Inline, Range int
}

// NestInlines nests a function's INLINE records, given in file order, as
// lookups do: a range overlapping one of its depth before it is dropped;
// the calls at an address are the ranges covering it at depth 0, 1, ... up
// to the first depth with none.
func NestInlines(inlines []Inline) *InlineNesting {
	var spans []span
	var refs []InlineRange
	var depths []uint32
	for i, in := range inlines {
		for ri, r := range in.Ranges {
			if s, ok := makeSpan(r.Address, r.Size, uint32(len(refs)), uint32(len(refs))); ok {
				spans = append(spans, s)
				refs = append(refs, InlineRange{i, ri})
				depths = append(depths, in.Depth)
			}
		}
	}
	return &InlineNesting{n: newInlineDepths(spans, func(k uint32) uint32 { return depths[k] }), refs: refs}
}

// At appends to dst the INLINE ranges covering addr, innermost first (at
// most MaxInlineDepth), as a lookup at addr gives its inlined calls.
func (n *InlineNesting) At(addr uint64, dst []InlineRange) []InlineRange {
	var buf [16]span
	for _, s := range n.n.chain(addr, buf[:0]) {
		dst = append(dst, n.refs[s.aux])
	}
	return dst
}
