package rangemap

import (
	"fmt"
	"testing"
)

type span struct{ base, size uint64 }

// stored lists m's ranges as "name[base-high]".
func stored(m *Map[string]) string {
	s := ""
	for _, r := range m.Ranges() {
		s += fmt.Sprintf("%s[%#x-%#x] ", r.Entry, r.Base, r.High)
	}
	return s
}

func TestStore(t *testing.T) {
	const top = ^uint64(0)
	for _, tc := range []struct {
		name     string
		strategy Strategy
		in       []span // stored in order, named a, b, c, ...
		ok       string // which were stored
		want     string
	}{
		{"exclusive overlap", Exclusive, []span{{0x1000, 0x4000}, {0x2000, 0x1000}, {0x5000, 0x1000}}, "a c", "a[0x1000-0x4fff] c[0x5000-0x5fff] "},
		{"exclusive below", Exclusive, []span{{0x2000, 0x1000}, {0x1000, 0x1001}, {0x1000, 0x1000}}, "a c", "c[0x1000-0x1fff] a[0x2000-0x2fff] "},
		{"lower: inner after outer", TruncateLower, []span{{0x1000, 0x4000}, {0x2000, 0x1000}}, "a b", "a[0x1000-0x1fff] b[0x2000-0x2fff] "},
		{"lower: outer after inner", TruncateLower, []span{{0x2000, 0x1000}, {0x1000, 0x4000}}, "a b", "b[0x1000-0x1fff] a[0x2000-0x2fff] "},
		{"lower: pair", TruncateLower, []span{{0x1000, 0x2000}, {0x2000, 0x2000}}, "a b", "a[0x1000-0x1fff] b[0x2000-0x3fff] "},
		{"lower: pair reversed", TruncateLower, []span{{0x2000, 0x2000}, {0x1000, 0x2000}}, "a b", "b[0x1000-0x1fff] a[0x2000-0x3fff] "},
		{"lower: same base", TruncateLower, []span{{0x1000, 0x2000}, {0x1000, 0x1000}, {0x1000, 0x2000}}, "a", "a[0x1000-0x2fff] "},
		{"lower: spanning several", TruncateLower, []span{{0x2000, 0x1000}, {0x4000, 0x1000}, {0x1000, 0x8000}, {0x4800, 0x100}}, "a b c d",
			"c[0x1000-0x1fff] a[0x2000-0x2fff] b[0x4000-0x47ff] d[0x4800-0x48ff] "},
		{"upper: pair", TruncateUpper, []span{{0x1000, 0x2000}, {0x2000, 0x2000}}, "a b", "a[0x1000-0x2fff] b[0x3000-0x3fff] "},
		{"upper: pair reversed", TruncateUpper, []span{{0x2000, 0x2000}, {0x1000, 0x2000}}, "a b", "b[0x1000-0x2fff] a[0x3000-0x3fff] "},
		{"upper: same end", TruncateUpper, []span{{0x2000, 0x2000}, {0x1000, 0x3000}}, "a", "a[0x2000-0x3fff] "},
		{"empty and wrapping", TruncateLower, []span{{0x1000, 0}, {top - 0xfff, 0x2000}, {top - 0xfff, 0x1000}}, "c", "c[0xfffffffffffff000-0xffffffffffffffff] "},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m := &Map[string]{Strategy: tc.strategy}
			ok := ""
			for i, s := range tc.in {
				name := string(rune('a' + i))
				if m.Store(s.base, s.size, name) {
					if ok != "" {
						ok += " "
					}
					ok += name
				}
			}
			if ok != tc.ok || stored(m) != tc.want {
				t.Errorf("stored %q: %s; want %q: %s", ok, stored(m), tc.ok, tc.want)
			}
		})
	}
}

func TestRetrieve(t *testing.T) {
	m := &Map[string]{Strategy: TruncateLower}
	m.Store(0x1000, 0x4000, "a")
	m.Store(0x2000, 0x1000, "b")
	for _, tc := range []struct {
		addr uint64
		want string
	}{{0xfff, ""}, {0x1000, "a"}, {0x1fff, "a"}, {0x2000, "b"}, {0x2fff, "b"}, {0x3000, ""}, {0x4fff, ""}} {
		r, ok := m.Retrieve(tc.addr)
		if got := r.Entry; got != tc.want || ok != (tc.want != "") {
			t.Errorf("Retrieve(%#x) = %q, %v; want %q", tc.addr, got, ok, tc.want)
		}
	}
	if m.Len() != 2 {
		t.Errorf("Len = %d", m.Len())
	}
}

// FuzzStore stores the ranges the bytes describe (strategy, then 3 bytes a
// range: base and size, scaled small so that they overlap often, or near the
// top of the address space) and checks the map's invariants: ranges sorted,
// not overlapping, each inside the range it was stored from.
func FuzzStore(f *testing.F) {
	f.Add([]byte{1, 1, 4, 0, 2, 1, 0, 0, 0, 0})
	f.Add([]byte{2, 0, 8, 1, 4, 8, 3, 2, 9, 0, 1, 0})
	f.Fuzz(func(t *testing.T, b []byte) {
		if len(b) == 0 {
			return
		}
		m := &Map[span]{Strategy: Strategy(b[0] % 3)}
		b = b[1:]
		for len(b) >= 3 {
			base, size := uint64(b[0])*0x10, uint64(b[1])*0x10+uint64(b[2]&0xf)
			if b[2]&0x80 != 0 {
				base = ^uint64(0) - base
			}
			b = b[3:]
			m.Store(base, size, span{base, size})
			for i, r := range m.Ranges() {
				if r.Base > r.High || r.Base < r.Entry.base || r.High > r.Entry.base+(r.Entry.size-1) {
					t.Fatalf("range %d [%#x-%#x] outside %#x+%#x", i, r.Base, r.High, r.Entry.base, r.Entry.size)
				}
				if i > 0 && m.Ranges()[i-1].High >= r.Base {
					t.Fatalf("ranges %d and %d overlap", i-1, i)
				}
			}
		}
	})
}
