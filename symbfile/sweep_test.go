package symbfile

import (
	"math/rand/v2"
	"slices"
	"testing"
)

// TestSweepAgreesWithCovering: a sweep's answers are Covering's at random
// ascending addresses of random range sets, nested or overlapping, some with
// more ranges crossing their parent's end than a lookup skips.
func TestSweepAgreesWithCovering(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	for set := range 2000 {
		n := 1 + rng.IntN(60)
		if set%10 == 0 {
			n = 3 * maxCrossing
		}
		span := 1 + rng.Uint64N(300)
		var rs []Range
		for range n {
			start := rng.Uint64N(span)
			rs = append(rs, Range{Start: start, Length: rng.Uint64N(span/3 + 2), Depth: uint32(rng.IntN(4))})
		}
		if set%10 == 5 {
			// Many ranges at depth 1 crossing a parent's end: more than
			// maxCrossing cover some addresses.
			rs = rs[:0]
			rs = append(rs, Range{Start: 0, Length: span/2 + 1})
			for range 4 * maxCrossing {
				start := rng.Uint64N(span)
				length := 1 + rng.Uint64N(3)
				if rng.IntN(4) > 0 {
					length = span + rng.Uint64N(span)
				}
				rs = append(rs, Range{Start: start, Length: length, Depth: 1})
			}
		}
		if set%7 == 0 {
			rs = append(rs, Range{Start: 1<<64 - 5, Length: 10})
		}
		tab := NewTable(rs, nil)
		var addrs []uint64
		for range 1 + rng.IntN(80) {
			addrs = append(addrs, rng.Uint64N(span+5))
		}
		addrs = append(addrs, 1<<64-3, 1<<64-1)
		slices.Sort(addrs)
		sw := tab.NewSweep()
		for _, a := range addrs {
			if got, want := sw.Covering(a), tab.Covering(a); !slices.Equal(got, want) {
				t.Fatalf("set %d: Covering(%d): sweep %v, lookup %v; ranges %+v", set, a, got, want, tab.Ranges)
			}
		}
	}
}
