package stackwalk

import "testing"

// TestMemMapExecutable: an address in an executable range is executable,
// one in a data range or in no range is not, and without a map nothing is
// known.
func TestMemMapExecutable(t *testing.T) {
	m := memMap{{0x1000, 0x2000, true}, {0x2000, 0x3000, false}, {0x5000, 0x6000, true}}
	for _, c := range []struct {
		addr        uint64
		exec, known bool
	}{
		{0x1000, true, true}, {0x1fff, true, true}, {0x2000, false, true}, {0x4000, false, true},
		{0x5800, true, true}, {0x6000, false, true}, {0, false, true},
	} {
		if e, k := m.executable(c.addr); e != c.exec || k != c.known {
			t.Errorf("%#x: exec %v known %v; want %v %v", c.addr, e, k, c.exec, c.known)
		}
	}
	if _, k := memMap(nil).executable(0x1000); k {
		t.Error("no map: known")
	}
}
