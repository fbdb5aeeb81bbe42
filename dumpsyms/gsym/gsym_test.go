package gsym_test

import (
	"bytes"
	"reflect"
	"strings"
	"testing"

	"github.com/gobreakpad/gobreakpad/dumpsyms"
	dumpgsym "github.com/gobreakpad/gobreakpad/dumpsyms/gsym"
	"github.com/gobreakpad/gobreakpad/gsym"
	"github.com/gobreakpad/gobreakpad/symfile"
)

func TestWriteRead(t *testing.T) {
	in := &dumpsyms.Model{
		Module:      symfile.Module{OS: "Linux", Arch: "x86_64", ID: "000102030405060708090A0B0C0D0E0F0", Name: "m"},
		CodeID:      symfile.CodeID{ID: "0102030405"},
		LoadAddress: 0x400000,
		Files:       []symfile.File{{Number: 0, Name: "/src/a.c"}, {Number: 1, Name: "/src/b.h"}},
		Origins:     []symfile.InlineOrigin{{ID: 0, Name: "inl"}, {ID: 1, Name: "deeper"}},
		Funcs: []dumpsyms.Function{
			{Name: "f", Ranges: []symfile.Range{{Address: 0x1000, Size: 0x40}},
				Lines: []symfile.Line{{Address: 0x1000, Size: 0x10, Line: 3, File: 0}, {Address: 0x1008, Size: 4, Line: 99, File: 0}, {Address: 0x1010, Size: 0x30, Line: 4, File: 1}},
				Inlines: []symfile.Inline{
					{Depth: 0, CallLine: 3, CallFile: 0, HasCallFile: true, Origin: 0, Ranges: []symfile.Range{{Address: 0x1010, Size: 0x20}}},
					{Depth: 1, CallLine: 7, CallFile: 1, HasCallFile: true, Origin: 1, Ranges: []symfile.Range{{Address: 0x1018, Size: 8}, {Address: 0x1028, Size: 0x10}}},
					{Depth: 3, CallLine: 1, Origin: 1, Ranges: []symfile.Range{{Address: 0x1018, Size: 1}}},
				}},
			{Name: "overlapping", Ranges: []symfile.Range{{Address: 0x1020, Size: 0x40}}},
			{Name: "g", Ranges: []symfile.Range{{Address: 0x2000, Size: 0x10}}},
		},
		Publics: []symfile.Public{{Address: 0x1004, Name: "inside_f"}, {Address: 0x3000, Name: "pub"}, {Address: 0x2000, Name: "same_as_g"}},
	}
	var b bytes.Buffer
	var warned []string
	if err := dumpgsym.Write(&b, in, func(f string, a ...any) { warned = append(warned, f) }); err != nil {
		t.Fatal(err)
	}
	if len(warned) != 1 || !strings.Contains(warned[0], "overlaps") {
		t.Errorf("warnings %q", warned)
	}
	f, err := gsym.NewFileBytes(b.Bytes())
	if err != nil {
		t.Fatal(err)
	}
	if f.Header.BaseAddress != 0x400000 || !bytes.Equal(f.Header.ID(), []byte{1, 2, 3, 4, 5}) || f.NumFunctions() != 3 {
		t.Fatalf("header %+v, %d functions", f.Header, f.NumFunctions())
	}
	r, err := f.Lookup(0x401019)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, l := range r.Locations {
		got = append(got, l.Name+" "+l.Path()+":"+string(rune('0'+l.Line)))
	}
	if want := []string{"deeper /src/b.h:4", "inl /src/b.h:7", "f /src/a.c:3"}; !reflect.DeepEqual(got, want) {
		t.Errorf("0x1019: %q, want %q", got, want)
	}
	// The line overlapping the first is dropped.
	if r, err := f.Lookup(0x401008); err != nil || r.Locations[0].Line != 3 {
		t.Errorf("0x1008: %+v, %v", r, err)
	}
	if r, err := f.Lookup(0x403100); err != nil || r.Name != "pub" || r.Size != 0 {
		t.Errorf("0x3100: %+v, %v", r, err)
	}

	out, err := dumpgsym.Read(f, "m", nil)
	if err != nil {
		t.Fatal(err)
	}
	if out.LoadAddress != 0x400000 || out.CodeID.ID != "0102030405" || len(out.Funcs) != 2 || len(out.Publics) != 1 || out.Publics[0].Address != 0x3000 {
		t.Fatalf("read back: %+v", out)
	}
	fn := out.Funcs[0]
	if fn.Name != "f" || !reflect.DeepEqual(fn.Ranges, in.Funcs[0].Ranges) || len(fn.Lines) != 2 || fn.Lines[0] != (symfile.Line{Address: 0x1000, Size: 0x10, Line: 3, File: 1}) ||
		len(fn.Inlines) != 2 || fn.Inlines[1].Depth != 1 || len(fn.Inlines[1].Ranges) != 1 { // [0x1028, 0x1038) leaves its parent: dropped
		t.Errorf("read back f: %+v", fn)
	}
}
