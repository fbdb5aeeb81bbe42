package symcache

import (
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/gobreakpad/gobreakpad/symbols"
	"github.com/gobreakpad/gobreakpad/symcache"
	"github.com/gobreakpad/gobreakpad/symstore"
)

const (
	testID    = "0123456789ABCDEF0123456789ABCDEF1"
	otherID   = "FEDCBA9876543210FEDCBA98765432100"
	testDebug = "demo.pdb"
)

// writeStore writes ROOT/demo.pdb/ID/demo.symc with one function at
// 0x1000-0x1010 (line 7 of a.c), whose debug id is cacheID, and returns ROOT.
func writeStore(t *testing.T, storeID, cacheID string) string {
	t.Helper()
	root := t.TempDir()
	id, err := symcache.ParseDebugID(cacheID)
	if err != nil {
		t.Fatal(err)
	}
	b := &symcache.Builder{DebugID: id, Arch: symcache.ArchFromName("x86_64")}
	b.Add(0x1000, 0x1010, []symcache.Loc{{Function: "f", EntryPC: 0x1000, File: "/src/a.c", Line: 7}})
	p, err := symstore.BreakpadFile(root, testDebug, storeID, Ext)
	if err != nil {
		t.Fatal("no store path")
	}
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	w, err := os.Create(p)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := b.WriteTo(w); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return root
}

func TestDirs(t *testing.T) {
	root := writeStore(t, testID, testID)
	if got := filepath.Base(filepath.Dir(filepath.Dir(mustPath(t, root)))); got != testDebug {
		t.Errorf("store folder %q, want %q", got, testDebug)
	}
	d := NewDirs(t.TempDir(), root) // the first root lacks the module
	defer d.Close()
	m := symbols.Module{DebugFile: `C:\build\` + testDebug, DebugID: testID}
	s, err := d.Load(m)
	if err != nil {
		t.Fatal(err)
	}
	if s.CFI != nil || s.Win != nil || s.Lookup == nil {
		t.Errorf("Symbols = %+v, want lookups only", s)
	}
	sym, ok := s.Lookup.Lookup(0x1004, true)
	if !ok || sym.Function != "f" || sym.FunctionBase != 0x1000 || sym.File != "/src/a.c" || sym.Line != 7 || !sym.HasLine {
		t.Errorf("Lookup(0x1004) = %+v, %v", sym, ok)
	}
	if _, ok := s.Lookup.Lookup(0x2000, true); ok {
		t.Error("Lookup(0x2000) found something")
	}
	// Loaded once: the same symbols again.
	if s2, err := d.Load(m); err != nil || s2 != s {
		t.Errorf("second Load = %p, %v; want %p", s2, err, s)
	}
}

func mustPath(t *testing.T, root string) string {
	p, err := symstore.BreakpadFile(root, testDebug, testID, Ext)
	if err != nil {
		t.Fatal("no path")
	}
	return p
}

func TestDirsNotFound(t *testing.T) {
	root := writeStore(t, testID, testID)
	d := NewDirs(root)
	defer d.Close()
	for _, m := range []symbols.Module{
		{DebugFile: "other.pdb", DebugID: testID},
		{DebugFile: testDebug, DebugID: otherID},
		{DebugFile: testDebug, DebugID: "../" + testID},   // escapes the store
		{DebugFile: testDebug, DebugID: ".."},             // likewise
		{DebugFile: "..", DebugID: testID},                // no file name
		{DebugFile: "", DebugID: testID},                  // none
		{DebugFile: testDebug + "\x00", DebugID: testID},  // NUL
		{DebugFile: testDebug, DebugID: testID + "/../x"}, // escapes
	} {
		if s, err := d.Load(m); !errors.Is(err, symbols.ErrNotFound) {
			t.Errorf("Load(%+v) = %v, %v; want ErrNotFound", m, s, err)
		}
	}
}

// TestDirsWrongID: a cache in the module's folder whose own debug id
// differs is not used.
func TestDirsWrongID(t *testing.T) {
	root := writeStore(t, testID, otherID)
	d := NewDirs(root)
	defer d.Close()
	if s, err := d.Load(symbols.Module{DebugFile: testDebug, DebugID: testID}); !errors.Is(err, symbols.ErrNotFound) {
		t.Errorf("Load = %v, %v; want ErrNotFound", s, err)
	}
}

// TestDirsBadFile: a damaged cache is an error that is not ErrNotFound
// (the chain reports it), every time.
func TestDirsBadFile(t *testing.T) {
	root := t.TempDir()
	p, _ := symstore.BreakpadFile(root, testDebug, testID, Ext)
	os.MkdirAll(filepath.Dir(p), 0o755)
	if err := os.WriteFile(p, []byte("SYMC\x09\x00\x00\x00short"), 0o644); err != nil {
		t.Fatal(err)
	}
	d := NewDirs(root)
	defer d.Close()
	for range 2 {
		if _, err := d.Load(symbols.Module{DebugFile: testDebug, DebugID: testID}); err == nil || errors.Is(err, symbols.ErrNotFound) {
			t.Errorf("Load of a damaged cache: %v", err)
		}
	}
}
