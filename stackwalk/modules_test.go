package stackwalk

import "testing"

func TestModuleMapOverlaps(t *testing.T) {
	a := &Module{Base: 0x1000, Size: 0x1000, CodeFile: "a"}
	b := &Module{Base: 0x1800, Size: 0x1000, CodeFile: "b"} // overlaps a, later: dropped
	c := &Module{Base: 0x3000, Size: 0x1000, CodeFile: "c"}
	d := &Module{Base: 0x0800, Size: 0x3000, CodeFile: "d"} // overlaps a and c, later: dropped
	e := &Module{Base: 0x5000, Size: 0, CodeFile: "e"}      // empty: dropped
	mm := newModuleMap([]*Module{a, b, c, d, e})
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
	mm = newModuleMap([]*Module{c, d})
	if len(mm.sorted) != 1 || mm.sorted[0] != c {
		t.Errorf("earlier overlapping module not kept")
	}
}
