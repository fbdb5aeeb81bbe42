package symfile

import (
	"cmp"
	"slices"
)

// span is an address range [start, last] (last inclusive, so a range may end
// at the top of the address space) with the byte offset of its record in the
// file, which doubles as the record's order in the file, and one word of
// payload whose meaning depends on the table holding it.
type span struct {
	start, last uint64
	off         uint32
	aux         uint32
}

// makeSpan returns the span for a record at base with size, and false when
// Breakpad's range maps would refuse it (size zero or wrapping around).
func makeSpan(base, size uint64, off, aux uint32) (span, bool) {
	if size == 0 || base+size-1 < base {
		return span{}, false
	}
	return span{start: base, last: base + size - 1, off: off, aux: aux}, true
}

func (s span) contains(a uint64) bool { return s.start <= a && a <= s.last }

func byStartThenOrder(a, b span) int {
	if c := cmp.Compare(a.start, b.start); c != 0 {
		return c
	}
	return cmp.Compare(a.off, b.off)
}

// maxReplay bounds the size of a cluster of conflicting ranges that is
// resolved by replaying Breakpad's stores in file order, which costs time
// quadratic in the cluster's size. Real files have clusters of a few ranges;
// larger ones (only seen in crafted input) are resolved greedily in address
// order instead, keeping the index build O(n log n).
const maxReplay = 1024

// exclusiveRanges turns spans given in any order into the sorted,
// non-overlapping set Breakpad's RangeMap keeps when the records are stored in
// file order: a range overlapping one stored earlier is dropped. The common
// case (already sorted, no overlap) costs one pass and no allocation.
func exclusiveRanges(s []span) []span {
	kept, _ := exclusiveRangesDropped(s)
	return kept
}

// exclusiveRangesDropped is exclusiveRanges also returning the dropped ranges.
func exclusiveRangesDropped(s []span) (kept, dropped []span) {
	if !slices.IsSortedFunc(s, byStartThenOrder) {
		slices.SortFunc(s, byStartThenOrder)
	}
	overlap := false
	for i := 1; i < len(s); i++ {
		if s[i].start <= s[i-1].last {
			overlap = true
			break
		}
	}
	if !overlap {
		return s, nil
	}
	// Resolve each cluster of transitively overlapping ranges on its own, by
	// replaying its stores in file order.
	out := make([]span, 0, len(s))
	var acc []span
	for i := 0; i < len(s); {
		j, maxLast := i+1, s[i].last
		for j < len(s) && s[j].start <= maxLast {
			maxLast = max(maxLast, s[j].last)
			j++
		}
		if j == i+1 {
			out = append(out, s[i])
			i = j
			continue
		}
		if j-i > maxReplay {
			// Pathological input: keep ranges greedily in address order.
			last := s[i].last
			out = append(out, s[i])
			for _, c := range s[i+1 : j] {
				if c.start > last {
					out = append(out, c)
					last = c.last
				} else {
					dropped = append(dropped, c)
				}
			}
			i = j
			continue
		}
		cluster := slices.Clone(s[i:j])
		slices.SortFunc(cluster, func(a, b span) int { return cmp.Compare(a.off, b.off) })
		acc = acc[:0]
		for _, c := range cluster {
			p, _ := slices.BinarySearchFunc(acc, c.start, func(e span, t uint64) int { return cmp.Compare(e.start, t) })
			if (p > 0 && acc[p-1].last >= c.start) || (p < len(acc) && acc[p].start <= c.last) {
				dropped = append(dropped, c)
				continue
			}
			acc = slices.Insert(acc, p, c)
		}
		out = append(out, acc...)
		i = j
	}
	return out, dropped
}

// findExclusive returns the index of the range in sorted, non-overlapping s
// containing a, or -1.
func findExclusive(s []span, a uint64) int {
	i := nearestBelow(s, a)
	if i >= 0 && s[i].last >= a {
		return i
	}
	return -1
}

// nearestBelow returns the index of the last range starting at or below a, or -1.
func nearestBelow(s []span, a uint64) int {
	lo, hi := 0, len(s)
	for lo < hi {
		m := int(uint(lo+hi) >> 1)
		if s[m].start <= a {
			lo = m + 1
		} else {
			hi = m
		}
	}
	return lo - 1
}

// nested is a set of ranges where any two are either disjoint or one contains
// the other, as Breakpad's ContainedRangeMap keeps them. Ranges are sorted by
// start, then larger first; parent[i] is the index of the smallest range
// containing range i, or -1.
type nested struct {
	s      []span
	parent []int32
}

func containsSpan(outer, inner span) bool {
	return outer.start <= inner.start && inner.last <= outer.last
}

func byStartLargerFirst(a, b span) int {
	if c := cmp.Compare(a.start, b.start); c != 0 {
		return c
	}
	if c := cmp.Compare(b.last, a.last); c != 0 {
		return c
	}
	return cmp.Compare(a.off, b.off)
}

// nestedRanges builds the ContainedRangeMap Breakpad gets by storing s in
// file order: a range that partly overlaps a stored one is dropped, as is a
// range equal to a stored one unless allowEqual, in which case the later range
// nests inside the earlier.
func nestedRanges(s []span, allowEqual bool) nested {
	slices.SortFunc(s, byStartLargerFirst)
	if n, ok := linkNested(s, allowEqual); ok {
		return n
	}
	// Conflicts: replay each cluster of overlapping ranges in file order.
	out := make([]span, 0, len(s))
	var acc []span
	for i := 0; i < len(s); {
		j, maxLast := i+1, s[i].last
		for j < len(s) && s[j].start <= maxLast {
			maxLast = max(maxLast, s[j].last)
			j++
		}
		if j-i > maxReplay {
			// Pathological input: keep properly nested ranges greedily in
			// address order.
			var stack []span
			for _, c := range s[i:j] {
				for len(stack) > 0 && stack[len(stack)-1].last < c.start {
					stack = stack[:len(stack)-1]
				}
				if len(stack) > 0 {
					top := stack[len(stack)-1]
					if c.last > top.last || (!allowEqual && top.start == c.start && top.last == c.last) {
						continue
					}
				}
				stack = append(stack, c)
				out = append(out, c)
			}
			i = j
			continue
		}
		cluster := slices.Clone(s[i:j])
		slices.SortFunc(cluster, func(a, b span) int { return cmp.Compare(a.off, b.off) })
		acc = acc[:0]
		for _, c := range cluster {
			ok := true
			for _, a := range acc {
				if a.start > c.last || c.start > a.last {
					continue // disjoint
				}
				equal := a.start == c.start && a.last == c.last
				if (equal && !allowEqual) || (!equal && !containsSpan(a, c) && !containsSpan(c, a)) {
					ok = false
					break
				}
			}
			if ok {
				acc = append(acc, c)
			}
		}
		out = append(out, acc...)
		i = j
	}
	slices.SortFunc(out, byStartLargerFirst)
	n, _ := linkNested(out, true)
	return n
}

// linkNested computes parents for ranges sorted by byStartLargerFirst and
// reports whether they nest properly (equal ranges only when allowEqual).
func linkNested(s []span, allowEqual bool) (nested, bool) {
	parent := make([]int32, len(s))
	var stack []int32
	for i, r := range s {
		for len(stack) > 0 && s[stack[len(stack)-1]].last < r.start {
			stack = stack[:len(stack)-1]
		}
		parent[i] = -1
		if len(stack) > 0 {
			top := s[stack[len(stack)-1]]
			if r.last > top.last || (!allowEqual && top.start == r.start && top.last == r.last) {
				return nested{}, false
			}
			parent[i] = stack[len(stack)-1]
		}
		stack = append(stack, int32(i))
	}
	return nested{s: s, parent: parent}, true
}

// innermost returns the index of the smallest range containing a, or -1.
// Walk parent links from it to get all the enclosing ranges.
func (n *nested) innermost(a uint64) int {
	i := nearestBelow(n.s, a)
	for i >= 0 && n.s[i].last < a {
		i = int(n.parent[i])
	}
	return i
}

// inlineDepths holds a function's INLINE ranges by depth (their
// inline_nest_level): byDepth[d] the ranges of the records of depth d,
// a range overlapping one before it in the file dropped (as Breakpad's
// RangeMap keeps FUNC and line records). The inlined calls at an address
// are the range covering it at depth 0, then at depth 1, and so on to the
// first depth with none: the records' depths decide the nesting, as they
// do for symbolic and LLVM (docs/symfile.md: Breakpad nests by the ranges'
// containment and storage order instead).
type inlineDepths struct {
	byDepth [][]span
}

// newInlineDepths groups spans, whose aux names their record, by the depth
// of that record.
func newInlineDepths(spans []span, depth func(aux uint32) uint32) inlineDepths {
	var by [][]span
	for _, s := range spans {
		d := int(depth(s.aux))
		for len(by) <= d {
			by = append(by, nil)
		}
		by[d] = append(by[d], s)
	}
	for d := range by {
		by[d] = exclusiveRanges(by[d])
	}
	return inlineDepths{byDepth: by}
}

// chain appends the ranges covering a, innermost first, keeping the
// innermost MaxInlineDepth.
func (n *inlineDepths) chain(a uint64, dst []span) []span {
	from := len(dst)
	for _, rs := range n.byDepth {
		i := findExclusive(rs, a)
		if i < 0 {
			break
		}
		dst = append(dst, rs[i])
	}
	slices.Reverse(dst[from:])
	if len(dst)-from > MaxInlineDepth {
		dst = dst[:from+MaxInlineDepth]
	}
	return dst
}
