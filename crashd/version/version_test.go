package version

import (
	"slices"
	"strings"
	"testing"
)

// chain checks that each version of list is below the next in o, and the
// order's antisymmetry on every pair.
func chain(t *testing.T, o Order, list []string) {
	t.Helper()
	for i := range list {
		for j := range list {
			want := 0
			if i < j {
				want = -1
			} else if i > j {
				want = 1
			}
			if got := o.Compare(list[i], list[j]); got != want {
				t.Errorf("%s: Compare(%q, %q) = %d, want %d", o, list[i], list[j], got, want)
			}
		}
	}
}

// TestMozilla: the cases of Mozilla's TestVersionComparator
// (xpcom/tests/gtest/TestVersionComparator.cpp), ascending, and its
// equalities.
func TestMozilla(t *testing.T) {
	chain(t, Mozilla, []string{
		"0.9", "0.9.1", "1.0pre1", "1.0pre2", "1.0", "1.1pre", "1.1pre1a", "1.1pre1", "1.1pre10a", "1.1pre10",
		"1.1", "1.1.0.1", "1.1.1", "1.1.*", "1.*", "2.0", "2.1", "3.0.-1", "3.0",
	})
	chain(t, Mozilla, []string{"1.0a1", "1.0b1", "1.0b2", "1.0pre", "1.0", "1.0.1", "1.1"})
	chain(t, Mozilla, []string{"2.0b3", "2.0", "2.0.1", "10.0", "100.0a1"})
	for _, eq := range [][2]string{
		{"1.0", "1.0.0"}, {"1.0.0", "1.0.0.0"}, {"1.1pre", "1.1pre0"}, {"1.1pre", "1.0+"}, {"1.0", "1.00"},
		{"", "0"}, {"1..0", "1.0.0"}, {"9+", "10pre"},
	} {
		if c := CompareMozilla(eq[0], eq[1]); c != 0 {
			t.Errorf("CompareMozilla(%q, %q) = %d, want 0", eq[0], eq[1], c)
		}
	}
	// Numbers beyond any integer type compare by value.
	chain(t, Mozilla, []string{"99999999999999999999", "100000000000000000000", "100000000000000000000.1"})
}

func TestSemver(t *testing.T) {
	// Semantic Versioning 2.0.0, section 11's example, and garbage
	// below every semantic version.
	chain(t, Semver, []string{
		"", "1.0", "garbage", "1.0.0-alpha", "1.0.0-alpha.1", "1.0.0-alpha.beta", "1.0.0-beta", "1.0.0-beta.2", "1.0.0-beta.11",
		"1.0.0-rc.1", "1.0.0", "v1.0.1", "1.2.0", "1.10.0", "2.0.0",
	})
	if c := CompareSemver("1.0.0+build.5", "v1.0.0"); c != 0 {
		t.Errorf("build metadata: %d", c)
	}
	for _, bad := range []string{"01.0.0", "1.0", "1.0.0-", "1.0.0-a..b", "1.0.0-é", "1.2.3.4"} {
		if _, ok := parseSemver(bad); ok {
			t.Errorf("%q taken as a semantic version", bad)
		}
	}
}

func TestString(t *testing.T) {
	chain(t, String, []string{"1.10", "1.9", "a"})
}

func TestParseOrder(t *testing.T) {
	for _, s := range []string{"", "mozilla", "semver", "string"} {
		if _, err := ParseOrder(s); err != nil {
			t.Errorf("%q: %v", s, err)
		}
	}
	if _, err := ParseOrder("natural"); err == nil {
		t.Error("natural: no error")
	}
}

// TestGarbage: any bytes compare without panicking, consistently, and
// sorting a list of garbage gives one order whatever the input order.
func TestGarbage(t *testing.T) {
	list := []string{"\x00", "a.b.c", "1.-2", "+", "1.+", "*.*", "..", "1\xff", "-1", "1.0b", "1.0b.", strings.Repeat("9", 500), "1.0" + strings.Repeat(".", 200)}
	for _, o := range Orders {
		a := slices.Clone(list)
		b := slices.Clone(list)
		slices.Reverse(b)
		slices.SortStableFunc(a, o.Compare)
		slices.SortStableFunc(b, o.Compare)
		for i := range a {
			if o.Compare(a[i], b[i]) != 0 {
				t.Errorf("%s: sorts differ at %d: %q vs %q", o, i, a[i], b[i])
			}
		}
		for _, x := range list {
			for _, y := range list {
				if o.Compare(x, y) != -o.Compare(y, x) {
					t.Errorf("%s: Compare(%q, %q) not antisymmetric", o, x, y)
				}
			}
		}
	}
}

// FuzzCompare: no input panics, every order is antisymmetric and
// reflexive.
func FuzzCompare(f *testing.F) {
	for _, s := range []string{"1.0a1", "2.0b3", "1.0+", "*", "1.0.0-rc.1+b", "v1.2.3", "", "1..", "99999999999999999999"} {
		f.Add(s, "2.0")
	}
	f.Fuzz(func(t *testing.T, a, b string) {
		for _, o := range Orders {
			if o.Compare(a, b) != -o.Compare(b, a) {
				t.Fatalf("%s: Compare(%q, %q) = %d, reversed %d", o, a, b, o.Compare(a, b), o.Compare(b, a))
			}
			if o.Compare(a, a) != 0 {
				t.Fatalf("%s: Compare(%q, itself) != 0", o, a)
			}
		}
	})
}

func BenchmarkCompareMozilla(b *testing.B) {
	for b.Loop() {
		CompareMozilla("128.0.3esr", "128.0b9")
	}
}
