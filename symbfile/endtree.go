package symbfile

// endTree is a max segment tree over the ends of one depth's ranges (sorted
// by start): it finds the last range at or before an index that ends past an
// address in O(log n), where a scan back over a running maximum took O(n)
// when one early range is long (a hostile file: 50,000 small ranges inside
// a long one at the same depth made each lookup in the gaps scan them all).
type endTree struct {
	size int      // leaves: a power of two, at least the ranges' count
	max  []uint64 // max[1] the root; node k's children 2k and 2k+1
}

func newEndTree(ends []uint64) endTree {
	size := 1
	for size < len(ends) {
		size *= 2
	}
	t := endTree{size: size, max: make([]uint64, 2*size)}
	copy(t.max[size:], ends)
	for k := size - 1; k > 0; k-- {
		t.max[k] = max(t.max[2*k], t.max[2*k+1])
	}
	return t
}

// last returns the greatest index j <= i whose end is over addr; -1 for none.
func (t endTree) last(i int, addr uint64) int {
	if i < 0 || len(t.max) == 0 {
		return -1
	}
	return t.find(1, 0, t.size, i, addr)
}

// find searches node k, which holds the leaves [lo, hi).
func (t endTree) find(k, lo, hi, i int, addr uint64) int {
	if lo > i || t.max[k] <= addr {
		return -1
	}
	if hi-lo == 1 {
		return lo
	}
	mid := (lo + hi) / 2
	if j := t.find(2*k+1, mid, hi, i, addr); j >= 0 {
		return j
	}
	return t.find(2*k, lo, mid, i, addr)
}
