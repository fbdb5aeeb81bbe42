package strindex

import "testing"

// TestStrIndexCollision: strings sharing a hash are told apart.
func TestStrIndexCollision(t *testing.T) {
	table := map[uint32]string{}
	at := func(off uint32, s string) bool { return table[off] == s }
	var x Index
	x.Hash("") // initializes
	for i, s := range []string{"a", "b", "c"} {
		off := uint32(10 * (i + 1))
		if _, ok := x.Find(7, s, at); ok {
			t.Fatalf("%q found before it was added", s)
		}
		table[off] = s
		x.Add(7, s, off)
	}
	for i, s := range []string{"a", "b", "c"} {
		if off, ok := x.Find(7, s, at); !ok || off != uint32(10*(i+1)) {
			t.Errorf("%q: %d, %v", s, off, ok)
		}
	}
	if _, ok := x.Find(7, "d", at); ok {
		t.Error("d found")
	}
}
