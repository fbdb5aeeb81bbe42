package msvc

import (
	"bufio"
	"compress/gzip"
	"io"
	"os"
	"strings"
	"testing"
)

// readPairs reads "decorated<TAB>expected" lines.
func readPairs(t *testing.T, path string) [][2]string {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var r io.Reader = f
	if strings.HasSuffix(path, ".gz") {
		zr, err := gzip.NewReader(f)
		if err != nil {
			t.Fatal(err)
		}
		r = zr
	}
	var out [][2]string
	sc := bufio.NewScanner(r)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		if a, b, ok := strings.Cut(sc.Text(), "\t"); ok {
			out = append(out, [2]string{a, b})
		}
	}
	return out
}

// agreement demangles every name of a file and counts answers equal to the
// expected ones, logging the first differences.
func agreement(t *testing.T, path string, style Style) (same, total int) {
	for _, p := range readPairs(t, path) {
		if p[1] == "!error" {
			continue
		}
		total++
		got, err := Demangle(p[0], style)
		if err != nil && style == Mozilla {
			got = p[0] // Mozilla's dump_syms writes names it cannot demangle as they are
		}
		if (err == nil || style == Mozilla) && got == p[1] {
			same++
			continue
		}
		if total-same <= 15 {
			t.Logf("%s\n   got %s (%v)\n  want %s", p[0], got, err, p[1])
		}
	}
	return same, total
}

// TestUndname compares the Full style with llvm-undname-22's answers for
// every decorated name of the corpus (testdata/undname.txt.gz, made by
// testdata/gen.py).
func TestUndname(t *testing.T) {
	same, total := agreement(t, "testdata/undname.txt.gz", Full)
	t.Logf("llvm-undname agreement: %d/%d", same, total)
	if same < minUndname {
		t.Errorf("agreement with llvm-undname fell to %d/%d (was %d)", same, total, minUndname)
	}
}

// TestMozilla compares the Mozilla style with the PUBLIC records Mozilla's
// dump_syms wrote for the same decorated publics (testdata/mozilla.txt.gz).
func TestMozilla(t *testing.T) {
	same, total := agreement(t, "testdata/mozilla.txt.gz", Mozilla)
	t.Logf("Mozilla dump_syms agreement: %d/%d", same, total)
	if same < minMozilla {
		t.Errorf("agreement with Mozilla's dump_syms fell to %d/%d (was %d)", same, total, minMozilla)
	}
}

// The agreement reached; the tests fail when it drops.
const (
	minUndname = 3337
	minMozilla = 1561
)

// TestSynthetic checks one name of each construct of the grammar against
// llvm-undname-22 (testdata/synthetic.txt).
func TestSynthetic(t *testing.T) {
	for _, p := range readPairs(t, "testdata/synthetic.txt") {
		got, err := Demangle(p[0], Full)
		if err != nil || got != p[1] {
			t.Errorf("%s:\n got %s (%v)\nwant %s", p[0], got, err, p[1])
		}
	}
}
