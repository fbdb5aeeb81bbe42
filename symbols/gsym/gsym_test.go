package gsym_test

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/gobreakpad/gobreakpad/gsym"
	"github.com/gobreakpad/gobreakpad/symbols"
	symgsym "github.com/gobreakpad/gobreakpad/symbols/gsym"
)

// file writes a GSYM file with function name at 0x1100 (base 0x1000) and
// an inlined call.
func file(t *testing.T, path, name string, uuid []byte) {
	t.Helper()
	w := gsym.NewWriter()
	w.BaseAddress, w.UUID = 0x1000, uuid
	a := w.FilePath("/src/a.c")
	err := w.Add(&gsym.FunctionInfo{Start: 0x1100, Size: 0x20, Name: w.String(name),
		LineTable: gsym.LineTable{{Address: 0x1100, File: a, Line: 5}, {Address: 0x1110, File: a, Line: 7}},
		Inline: &gsym.InlineInfo{Ranges: []gsym.Range{{Start: 0x1100, End: 0x1120}}, Name: w.String(name), Children: []gsym.InlineInfo{
			{Ranges: []gsym.Range{{Start: 0x1108, End: 0x110c}, {Start: 0x1110, End: 0x1118}}, Name: w.String("inl"), CallFile: a, CallLine: 6}}}})
	if err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	if _, err := w.WriteTo(&b); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, b.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
}

func TestDirs(t *testing.T) {
	store, flat := t.TempDir(), t.TempDir()
	const id = "000102030405060708090A0B0C0D0E0F0"
	file(t, filepath.Join(store, "prog", id, "prog.gsym"), "in_store", nil)
	file(t, filepath.Join(flat, "lib.so.gsym"), "by_name", []byte{0xab, 0xcd})
	file(t, filepath.Join(flat, "beef.gsym"), "by_build_id", []byte{0xbe, 0xef})
	d := symgsym.NewDirs(filepath.Join(store, "absent"), store, flat)
	defer d.Close()

	for _, c := range []struct {
		m    symbols.Module
		want string
	}{
		{symbols.Module{DebugFile: "prog", DebugID: id}, "in_store"},
		{symbols.Module{CodeFile: "/usr/lib/lib.so", CodeID: "abcd", DebugFile: "lib.so", DebugID: id}, "by_name"},
		{symbols.Module{CodeFile: "/other/name", CodeID: "BEEF", DebugFile: "name", DebugID: id}, "by_build_id"},
	} {
		s, err := d.Load(c.m)
		if err != nil {
			t.Fatalf("%+v: %v", c.m, err)
		}
		if s.CFI != nil || s.Win != nil {
			t.Errorf("%+v: GSYM gave unwind information", c.m)
		}
		// Module-relative 0x108: the header's base is added.
		sym, ok := s.Lookup.Lookup(0x112, true)
		if !ok || sym.Function != c.want || sym.FunctionBase != 0x100 || sym.File != "/src/a.c" || sym.Line != 6 || !sym.HasLine || sym.LineBase != 0x110 ||
			len(sym.Inlines) != 1 || sym.Inlines[0] != (symbols.InlineFrame{Function: "inl", Base: 0x110, File: "/src/a.c", Line: 7}) {
			t.Errorf("%+v: Lookup = %+v, %v", c.m, sym, ok)
		}
		if again, _ := d.Load(c.m); again != s {
			t.Errorf("%+v: loaded twice", c.m)
		}
	}
	for _, m := range []symbols.Module{
		{DebugFile: "other", DebugID: id},
		{DebugFile: "../../etc/passwd", DebugID: id},
		{CodeFile: "/usr/lib/lib.so", CodeID: "0000", DebugFile: "lib.so", DebugID: id}, // UUID mismatch
	} {
		if _, err := d.Load(m); !errors.Is(err, symbols.ErrNotFound) {
			t.Errorf("%+v: err = %v, want ErrNotFound", m, err)
		}
	}
}
