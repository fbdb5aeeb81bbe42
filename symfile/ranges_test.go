package symfile

import (
	"math/rand/v2"
	"testing"
)

// replayExclusive is Breakpad's RangeMap store, literally: each range in file
// order is kept unless it overlaps one kept before.
func replayExclusive(s []span) map[uint32]bool {
	kept := map[uint32]bool{}
	var acc []span
	for _, c := range s {
		ok := true
		for _, a := range acc {
			if a.start <= c.last && c.start <= a.last {
				ok = false
			}
		}
		if ok {
			acc = append(acc, c)
			kept[c.off] = true
		}
	}
	return kept
}

func randomSpans(r *rand.Rand, n int) []span {
	s := make([]span, 0, n)
	for i := 0; i < n; i++ {
		start := r.Uint64N(200)
		if sp, ok := makeSpan(start, 1+r.Uint64N(20), uint32(i), 0); ok {
			s = append(s, sp)
		}
	}
	return s
}

func TestExclusiveRangesMatchesReplay(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for iter := 0; iter < 2000; iter++ {
		s := randomSpans(r, 1+r.IntN(30))
		want := replayExclusive(s)
		got := exclusiveRanges(append([]span(nil), s...))
		if len(got) != len(want) {
			t.Fatalf("kept %d ranges, want %d", len(got), len(want))
		}
		for i, g := range got {
			if !want[g.off] || (i > 0 && got[i-1].last >= g.start) {
				t.Fatalf("bad result %v for %v", got, s)
			}
		}
	}
}

func TestNestedRangesMatchesReplay(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	for iter := 0; iter < 2000; iter++ {
		s := randomSpans(r, 1+r.IntN(30))
		allowEqual := iter%2 == 0
		// Literal replay of ContainedRangeMap stores.
		want := map[uint32]bool{}
		var acc []span
		for _, c := range s {
			ok := true
			for _, a := range acc {
				if a.start > c.last || c.start > a.last {
					continue
				}
				equal := a.start == c.start && a.last == c.last
				if (equal && !allowEqual) || (!equal && !containsSpan(a, c) && !containsSpan(c, a)) {
					ok = false
				}
			}
			if ok {
				acc = append(acc, c)
				want[c.off] = true
			}
		}
		n := nestedRanges(append([]span(nil), s...), allowEqual)
		if len(n.s) != len(want) {
			t.Fatalf("kept %d ranges, want %d", len(n.s), len(want))
		}
		for _, g := range n.s {
			if !want[g.off] {
				t.Fatalf("kept %v not kept by replay", g)
			}
		}
		// innermost agrees with a linear search for the smallest containing
		// range (the later of equal ones).
		for a := uint64(0); a < 230; a++ {
			best := -1
			for i, g := range n.s {
				if g.contains(a) && (best < 0 || g.last-g.start < n.s[best].last-n.s[best].start ||
					(g.last-g.start == n.s[best].last-n.s[best].start && g.off > n.s[best].off)) {
					best = i
				}
			}
			if got := n.innermost(a); got != best {
				t.Fatalf("innermost(%d) = %d, want %d in %v", a, got, best, n.s)
			}
		}
	}
}

// TestPathologicalClusters checks that huge clusters of conflicting ranges
// are resolved quickly and consistently.
func TestPathologicalClusters(t *testing.T) {
	const n = 200000
	s := make([]span, 0, n+1)
	for i := n - 1; i >= 0; i-- { // disjoint ranges in descending order
		sp, _ := makeSpan(uint64(i)*16, 8, uint32(n-1-i), 0)
		s = append(s, sp)
	}
	big, _ := makeSpan(0, n*16, n, 0)
	s = append(s, big)
	ex := exclusiveRanges(append([]span(nil), s...))
	for i := 1; i < len(ex); i++ {
		if ex[i-1].last >= ex[i].start {
			t.Fatal("exclusive ranges overlap")
		}
	}
	nr := nestedRanges(append([]span(nil), s...), false)
	if len(nr.s) != n+1 {
		t.Errorf("nested kept %d ranges, want %d", len(nr.s), n+1)
	}
	// A chain of partly overlapping ranges: one cluster of conflicts.
	s = s[:0]
	for i := 0; i < n; i++ {
		sp, _ := makeSpan(uint64(i)*8, 16, uint32(i), 0)
		s = append(s, sp)
	}
	nr = nestedRanges(s, false)
	if _, ok := linkNested(nr.s, false); !ok || len(nr.s) != n/2 {
		t.Errorf("chain: kept %d ranges (want %d), properly nested: %v", len(nr.s), n/2, ok)
	}
}
