package symdiff

import (
	"slices"
	"testing"
)

func TestParseDiff(t *testing.T) {
	want := Parse("MODULE Linux x86_64 ID a.out\r\nFILE 1 a.c\r\nINLINE_ORIGIN 0 inl\r\nFUNC 10 20 0 main\r\n10 4 7 1\r\nINLINE 0 3 1 0 12 2\r\n10 4 7 1\r\n", nil)
	got := Parse("MODULE Linux x86_64 ID a.out\nFILE 4 a.c\nINLINE_ORIGIN 9 inl\nFUNC 10 20 0 main\n10 4 7 4\nINLINE 0 3 4 9 12 2\nPUBLIC 30 0 p\n", nil)
	missing, extra := Diff(want, got)
	if !slices.Equal(missing, []string{"10 4 7 a.c"}) || !slices.Equal(extra, []string{"PUBLIC 30 0 p"}) {
		t.Errorf("missing %q, extra %q", missing, extra)
	}
	if got["INLINE 0 3 a.c inl 12 2"] != 1 {
		t.Errorf("INLINE not by name: %v", got)
	}
	noLines := Parse("FILE 1 a.c\nFUNC 10 20 0 main\n10 4 7 1\n", func(kind string, f []string, rec string) string {
		if kind == "LINE" {
			return ""
		}
		return rec
	})
	if len(noLines) != 1 || noLines["FUNC 10 20 0 main"] != 1 {
		t.Errorf("keep: %v", noLines)
	}
}
