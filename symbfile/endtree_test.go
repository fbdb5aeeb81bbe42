package symbfile

import (
	"math/rand/v2"
	"sort"
	"testing"
)

// scanCovering is covering as it was, a scan back over the running maximum
// of the ends: the reference the tree must agree with.
func scanCovering(t *Table, d int, addr, lo, hi uint64) int {
	di := &t.depths[d]
	rs := t.Ranges[di.lo:di.hi]
	var m uint64
	maxEnd := make([]uint64, len(rs))
	for i := range rs {
		m = max(m, rs[i].End())
		maxEnd[i] = m
	}
	i := sort.Search(len(rs), func(i int) bool { return rs[i].Start > addr }) - 1
	for ; i >= 0 && maxEnd[i] > addr; i-- {
		r := &rs[i]
		if r.End() > addr && r.Start >= lo && r.End() <= hi {
			return di.lo + i
		}
	}
	return -1
}

// TestCoveringAgreesWithScan: on random overlapping ranges at three depths,
// every lookup finds what the scan found.
func TestCoveringAgreesWithScan(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for round := range 200 {
		var rs []Range
		n := 1 + rng.IntN(40)
		for range n {
			rs = append(rs, Range{Start: uint64(rng.IntN(200)), Length: uint64(rng.IntN(60)), Depth: uint32(rng.IntN(3))})
		}
		tab := NewTable(rs, nil)
		for addr := uint64(0); addr < 270; addr++ {
			lo, hi := uint64(0), ^uint64(0)
			for d := range tab.depths {
				want := scanCovering(tab, d, addr, lo, hi)
				if got := tab.covering(d, addr, lo, hi); got != want {
					t.Fatalf("round %d, depth %d, address %d in [%d, %d): %d, want %d", round, d, addr, lo, hi, got, want)
				}
				if want < 0 {
					break
				}
				lo, hi = tab.Ranges[want].Start, tab.Ranges[want].End()
			}
		}
	}
}
