package dumpsyms

import (
	"bytes"
	"testing"

	"github.com/gobreakpad/gobreakpad/symfile"
)

// TestWrite checks Breakpad's record order, a function with two ranges (each
// FUNC followed by all INLINE records and its own lines) and HeaderOnly.
func TestWrite(t *testing.T) {
	s := &Model{
		Module:  symfile.Module{OS: "Linux", Arch: "x86_64", ID: "5A6E5D48B112F8756FDC024A45F537C30", Name: "m"},
		CodeID:  symfile.CodeID{ID: "485D6E5A"},
		Files:   []symfile.File{{Number: 0, Name: "a.c"}},
		Origins: []symfile.InlineOrigin{{ID: 0, Name: "g"}},
		Funcs: []Function{{
			Name:    "f",
			Ranges:  []symfile.Range{{Address: 0x100, Size: 0x10}, {Address: 0x200, Size: 8}},
			Lines:   []symfile.Line{{Address: 0x100, Size: 0x10, Line: 3}, {Address: 0x200, Size: 8, Line: 9}},
			Inlines: []symfile.Inline{{Depth: 0, CallLine: 4, HasCallFile: true, Origin: 0, Ranges: []symfile.Range{{Address: 0x104, Size: 4}}}},
		}},
		Publics: []symfile.Public{{Address: 0x300, Name: "p"}},
		CFI:     []CFIEntry{{Init: symfile.CFIInit{Address: 0x100, Size: 0x10, Rules: ".cfa: $rsp 8 + .ra: .cfa -8 + ^"}}},
	}
	var b bytes.Buffer
	if err := s.Write(&b); err != nil {
		t.Fatal(err)
	}
	want := `MODULE Linux x86_64 5A6E5D48B112F8756FDC024A45F537C30 m
INFO CODE_ID 485D6E5A
FILE 0 a.c
INLINE_ORIGIN 0 g
FUNC 100 10 0 f
INLINE 0 4 0 0 104 4
100 10 3 0
FUNC 200 8 0 f
INLINE 0 4 0 0 104 4
200 8 9 0
PUBLIC 300 0 p
STACK CFI INIT 100 10 .cfa: $rsp 8 + .ra: .cfa -8 + ^
`
	if b.String() != want {
		t.Errorf("got\n%s\nwant\n%s", b.String(), want)
	}
	s.HeaderOnly = true
	b.Reset()
	if err := s.Write(&b); err != nil {
		t.Fatal(err)
	}
	if want := "MODULE Linux x86_64 5A6E5D48B112F8756FDC024A45F537C30 m\nINFO CODE_ID 485D6E5A\n"; b.String() != want {
		t.Errorf("HeaderOnly: got %q, want %q", b.String(), want)
	}
}
