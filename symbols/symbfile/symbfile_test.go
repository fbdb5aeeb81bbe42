package symbfile

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/klauspost/compress/zstd"

	"github.com/gobreakpad/gobreakpad/symbfile"
	"github.com/gobreakpad/gobreakpad/symbols"
	"github.com/gobreakpad/gobreakpad/symstore"
)

const (
	testID    = "0123456789ABCDEF0123456789ABCDEF0"
	testDebug = "libdemo.so"
)

// testSymbfile is a function f at 0x1000-0x1010 (lines 7 and 8 of a.c)
// with g inlined at 0x1008-0x100c from line 8.
func testSymbfile(t *testing.T) []byte {
	t.Helper()
	var buf bytes.Buffer
	w := symbfile.NewWriter(&buf)
	w.AddRange(symbfile.Range{Start: 0x1000, Length: 0x10, Func: "f", File: "/src/a.c",
		Lines: []symbfile.LineEntry{{Addr: 0x1000, Line: 7}, {Addr: 0x1004, Line: 8}}})
	w.AddRange(symbfile.Range{Start: 0x1008, Length: 4, Func: "g", File: "/src/g.h", Depth: 1, CallLine: 8,
		Lines: []symbfile.LineEntry{{Addr: 0x1008, Line: 3}}})
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

func writeStore(t *testing.T, ext string, data []byte) string {
	t.Helper()
	root := t.TempDir()
	p, err := symstore.BreakpadFile(root, testDebug, testID, ext)
	if err != nil {
		t.Fatal("no store path")
	}
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, data, 0o644); err != nil {
		t.Fatal(err)
	}
	return root
}

func TestDirs(t *testing.T) {
	plain := testSymbfile(t)
	enc, err := zstd.NewWriter(nil)
	if err != nil {
		t.Fatal(err)
	}
	packed := enc.EncodeAll(plain, nil)
	for _, tc := range []struct {
		ext  string
		data []byte
	}{{".symbfile", plain}, {".symbfile.zst", packed}} {
		root := writeStore(t, tc.ext, tc.data)
		d := NewDirs(t.TempDir(), root)
		m := symbols.Module{DebugFile: "/usr/lib/" + testDebug, DebugID: testID}
		s, err := d.Load(m)
		if err != nil {
			t.Fatalf("%s: %v", tc.ext, err)
		}
		if s.CFI != nil || s.Win != nil || s.Lookup == nil {
			t.Errorf("%s: Symbols = %+v, want lookups only", tc.ext, s)
		}
		sym, ok := s.Lookup.Lookup(0x1004, true)
		if !ok || sym.Function != "f" || sym.FunctionBase != 0x1000 || sym.File != "/src/a.c" || sym.Line != 8 || sym.LineBase != 0x1004 || len(sym.Inlines) != 0 {
			t.Errorf("%s: Lookup(0x1004) = %+v, %v", tc.ext, sym, ok)
		}
		sym, ok = s.Lookup.Lookup(0x1009, true)
		if !ok || sym.Function != "f" || sym.File != "/src/a.c" || sym.Line != 8 || len(sym.Inlines) != 1 ||
			sym.Inlines[0].Function != "g" || sym.Inlines[0].File != "/src/g.h" || sym.Inlines[0].Line != 3 {
			t.Errorf("%s: Lookup(0x1009) = %+v, %v", tc.ext, sym, ok)
		}
		if _, ok := s.Lookup.Lookup(0x1010, true); ok {
			t.Errorf("%s: Lookup(0x1010) found something", tc.ext)
		}
		if s2, err := d.Load(m); err != nil || s2 != s {
			t.Errorf("%s: second Load = %p, %v; want %p", tc.ext, s2, err, s)
		}
		d.Close()
	}
}

func TestDirsNotFound(t *testing.T) {
	root := writeStore(t, ".symbfile", testSymbfile(t))
	d := NewDirs(root)
	defer d.Close()
	for _, m := range []symbols.Module{
		{DebugFile: "other.so", DebugID: testID},
		{DebugFile: testDebug, DebugID: "00000000000000000000000000000000"},
		{DebugFile: testDebug, DebugID: "../" + testID},
		{DebugFile: testDebug, DebugID: ".."},
		{DebugFile: "..", DebugID: testID},
		{DebugFile: "", DebugID: testID},
		{DebugFile: testDebug + "\x00", DebugID: testID},
	} {
		if s, err := d.Load(m); !errors.Is(err, symbols.ErrNotFound) {
			t.Errorf("Load(%+v) = %v, %v; want ErrNotFound", m, s, err)
		}
	}
}

// TestDirsBadFile: a damaged symbfile is an error that is not
// ErrNotFound, every time it is asked for.
func TestDirsBadFile(t *testing.T) {
	root := writeStore(t, ".symbfile", []byte("symbfile\x05\x02\xff"))
	d := NewDirs(root)
	defer d.Close()
	for range 2 {
		if _, err := d.Load(symbols.Module{DebugFile: testDebug, DebugID: testID}); err == nil || errors.Is(err, symbols.ErrNotFound) {
			t.Errorf("Load of a damaged symbfile: %v", err)
		}
	}
}
