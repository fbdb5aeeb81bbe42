package stackwalk

import "testing"

func TestModuleMapOverlaps(t *testing.T) {
	a := &Module{Base: 0x1000, Size: 0x1000, CodeFile: "a"}
	b := &Module{Base: 0x1800, Size: 0x1000, CodeFile: "b"} // overlaps a, later: dropped
	c := &Module{Base: 0x3000, Size: 0x1000, CodeFile: "c"}
	d := &Module{Base: 0x0800, Size: 0x3000, CodeFile: "d"} // overlaps a and c, later: dropped
	e := &Module{Base: 0x5000, Size: 0, CodeFile: "e"}      // empty: dropped
	mm := newModuleMap([]*Module{a, b, c, d, e}, mergeExclusive)
	var got string
	for _, m := range mm.sorted {
		got += m.CodeFile
	}
	if got != "ac" {
		t.Errorf("kept %q, want \"ac\"", got)
	}
	for addr, want := range map[uint64]*Module{0x1000: a, 0x1fff: a, 0x2000: nil, 0x3abc: c, 0x4000: nil, 0x800: nil} {
		if m := mm.at(addr); m != want {
			t.Errorf("at(%#x) = %v, want %v", addr, m, want)
		}
	}
	// The earlier module wins even when it starts higher.
	mm = newModuleMap([]*Module{c, d}, mergeExclusive)
	if len(mm.sorted) != 1 || mm.sorted[0] != c {
		t.Errorf("earlier overlapping module not kept")
	}
}

// TestModuleMapShrink: Android microdumps shrink the upper of two
// overlapping modules from below, as Breakpad's kTruncateUpper, whichever
// came first; a module ending where another ends is dropped.
func TestModuleMapShrink(t *testing.T) {
	a := &Module{Base: 0x1000, Size: 0x1000, CodeFile: "a"}
	b := &Module{Base: 0x1800, Size: 0x1000, CodeFile: "b"}
	for _, order := range [][]*Module{{a, b}, {b, a}} {
		mm := newModuleMap(order, mergeTruncateUpper)
		if len(mm.sorted) != 2 || mm.sorted[0] != a || mm.sorted[1] != b {
			t.Errorf("%s%s: kept %v", order[0].CodeFile, order[1].CodeFile, mm.sorted)
		}
		for addr, want := range map[uint64]*Module{0x1000: a, 0x1fff: a, 0x2000: b, 0x27ff: b, 0x2800: nil} {
			if m := mm.at(addr); m != want {
				t.Errorf("at(%#x) = %v, want %v", addr, m, want)
			}
		}
	}
	x := &Module{Base: 0x1000, Size: 0x4000, CodeFile: "x"}
	y := &Module{Base: 0x2000, Size: 0x1000, CodeFile: "y"} // inside x: x loses everything below y's end
	z := &Module{Base: 0x4000, Size: 0x1000, CodeFile: "z"} // ends where x ends: dropped
	mm := newModuleMap([]*Module{x, y, z}, mergeTruncateUpper)
	if len(mm.sorted) != 2 || mm.sorted[0] != y || mm.sorted[1] != x {
		t.Errorf("kept %v", mm.sorted)
	}
	for addr, want := range map[uint64]*Module{0x1800: nil, 0x2000: y, 0x3000: x, 0x4fff: x} {
		if m := mm.at(addr); m != want {
			t.Errorf("at(%#x) = %v, want %v", addr, m, want)
		}
	}
}
