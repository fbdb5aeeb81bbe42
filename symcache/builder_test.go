package symcache

import (
	"fmt"
	"math/rand/v2"
	"reflect"
	"slices"
	"testing"
)

// TestBuilderRangesAsAMap: the Builder's compact range list answers as a
// map from range start to source location updated as Add and AddSymbol
// describe, over random sequences of calls (out of order, overlapping,
// repeated starts, symbols before and after ranges).
func TestBuilderRangesAsAMap(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for round := range 300 {
		b := &Builder{}
		want := map[uint32]SourceLocation{}
		n := 1 + rng.IntN(200)
		ordered := round%3 == 0 // mostly increasing, as writers call it
		at := uint64(0)
		for k := range n {
			var start uint64
			if ordered {
				at += uint64(rng.IntN(8))
				start = at
			} else {
				start = uint64(rng.IntN(100))
			}
			if rng.IntN(4) == 0 {
				name := fmt.Sprintf("sym%d", k)
				b.AddSymbol(name, start)
				if old, ok := want[uint32(start)]; !ok || old == NoSourceLocation {
					want[uint32(start)] = SourceLocation{File: None, Function: b.function(name, uint32(start), 0), InlinedInto: None}
				}
				continue
			}
			end := start + 1 + uint64(rng.IntN(10))
			chain := []Loc{{Function: fmt.Sprintf("f%d", rng.IntN(5)), File: "a.c", Line: uint32(rng.IntN(9))}}
			if rng.IntN(2) == 0 {
				chain = append(chain, Loc{Function: "g", File: "b.c", Line: 3, EntryPC: None})
			}
			b.Add(start, end, chain)
			leaf := b.location(chain[len(chain)-1], b.calls[b.location(chain[0], None)])
			if len(chain) == 1 {
				leaf = b.location(chain[0], None)
			}
			if old, ok := want[uint32(start)]; !ok || old == NoSourceLocation {
				want[uint32(start)] = leaf
			}
			if _, ok := want[uint32(end)]; !ok {
				want[uint32(end)] = NoSourceLocation
			}
			if ordered {
				at = end - uint64(rng.IntN(2))*uint64(rng.IntN(int(end-start)+1))
			}
		}
		r := b.Raw()
		var starts []uint32
		for a := range want {
			starts = append(starts, a)
		}
		slices.Sort(starts)
		if !reflect.DeepEqual(r.Ranges, starts) {
			t.Fatalf("round %d: starts %v, want %v", round, r.Ranges, starts)
		}
		locs := r.SourceLocations[len(r.SourceLocations)-len(starts):]
		for i, a := range starts {
			if locs[i] != want[a] {
				t.Fatalf("round %d: start %#x: %+v, want %+v", round, a, locs[i], want[a])
			}
		}
	}
}
