package gsym

import (
	"bytes"
	"encoding/binary"
	"reflect"
	"testing"
)

// sample writes a small file: two functions with line tables, one with a
// two-level inline tree, and a size-0 symbol.
func sample(t testing.TB, order binary.AppendByteOrder) []byte {
	w := NewWriter()
	w.Order = order
	w.BaseAddress = 0x1000
	w.UUID = []byte{1, 2, 3, 4}
	a, b := w.FilePath("/src/a.c"), w.FilePath(`c:\src\b.h`)
	fns := []FunctionInfo{
		{Start: 0x1000, Size: 0x40, Name: w.String("main"), LineTable: LineTable{{0x1000, a, 10}, {0x1004, a, 11}, {0x1010, b, 3}, {0x1020, a, 40}, {0x1030, a, 2}},
			Inline: &InlineInfo{Ranges: []Range{{0x1000, 0x1040}}, Name: w.String("main"), Children: []InlineInfo{
				{Ranges: []Range{{0x1010, 0x1018}, {0x1020, 0x1028}}, Name: w.String("inl"), CallFile: a, CallLine: 12, Children: []InlineInfo{
					{Ranges: []Range{{0x1022, 0x1024}}, Name: w.String("deeper"), CallFile: b, CallLine: 4},
				}},
			}}},
		{Start: 0x1100, Size: 0x10, Name: w.String("g"), LineTable: LineTable{{0x1100, b, 1000}}},
		{Start: 0x1200, Name: w.String("sym")},
	}
	for i := range fns {
		if err := w.Add(&fns[i]); err != nil {
			t.Fatal(err)
		}
	}
	var out bytes.Buffer
	if _, err := w.WriteTo(&out); err != nil {
		t.Fatal(err)
	}
	return out.Bytes()
}

func TestWriteRead(t *testing.T) {
	var want []string
	for _, order := range []binary.AppendByteOrder{binary.LittleEndian, binary.BigEndian} {
		f, err := NewFileBytes(sample(t, order))
		if err != nil {
			t.Fatal(err)
		}
		if f.Order.String() != order.String() || f.NumFunctions() != 3 || !bytes.Equal(f.Header.ID(), []byte{1, 2, 3, 4}) || f.Header.BaseAddress != 0x1000 {
			t.Fatalf("%v: header %+v", order, f.Header)
		}
		fi, err := f.FunctionAt(0)
		if err != nil {
			t.Fatal(err)
		}
		if len(fi.LineTable) != 5 || fi.LineTable[2] != (LineEntry{0x1010, 2, 3}) || fi.Inline == nil || len(fi.Inline.Children) != 1 ||
			!reflect.DeepEqual(fi.Inline.Children[0].Children[0].Ranges, []Range{{0x1022, 0x1024}}) {
			t.Errorf("%v: function 0 = %+v", order, fi)
		}
		var got []string
		for _, a := range []uint64{0x1000, 0x1005, 0x1012, 0x1023, 0x1031, 0x1105, 0x5000} {
			r, err := f.Lookup(a)
			if err != nil {
				t.Fatal(err)
			}
			got = append(got, llvmText(r))
		}
		want1 := []string{
			"0x0000000000001000: main @ /src/a.c:10",
			"0x0000000000001005: main + 5 @ /src/a.c:11",
			`0x0000000000001012: inl + 2 @ c:\src\b.h:3 [inlined]` + "\n                    main + 18 @ /src/a.c:12",
			"0x0000000000001023: deeper + 1 @ /src/a.c:40 [inlined]\n                    inl + 19 @ c:\\src\\b.h:4 [inlined]\n                    main + 35 @ /src/a.c:12",
			"0x0000000000001031: main + 49 @ /src/a.c:2",
			`0x0000000000001105: g + 5 @ c:\src\b.h:1000`,
			"0x0000000000005000: sym + 15872",
		}
		if !reflect.DeepEqual(got, want1) {
			t.Errorf("%v: lookups\n%q\nwant\n%q", order, got, want1)
		}
		if want == nil {
			want = got
		}
	}
}

func TestWriteEmpty(t *testing.T) {
	if _, err := NewWriter().WriteTo(&bytes.Buffer{}); err == nil {
		t.Error("a file without functions was written")
	}
}
