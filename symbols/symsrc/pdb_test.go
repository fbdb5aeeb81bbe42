package symsrc

import (
	"bytes"
	"errors"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"testing"

	"github.com/gobreakpad/gobreakpad/dumpsyms"
	dspe "github.com/gobreakpad/gobreakpad/dumpsyms/pe"
	"github.com/gobreakpad/gobreakpad/internal/testkit/corpus"
	"github.com/gobreakpad/gobreakpad/symbols"
	"github.com/gobreakpad/gobreakpad/symbols/symtest"
)

// TestSymbolServerPDB serves a corpus PDB from a Microsoft-layout store over
// HTTP (loopback): the symbol server source fetches it, converts it with
// dumpsyms/pe into the cache once, and answers lookups as the PDB's own
// conversion does at every FUNC and line address; a second chain over the
// same cache makes no request.
func TestSymbolServerPDB(t *testing.T) {
	src := filepath.Join(corpus.Dir(t), "windows", "breakpad", "dump_syms_regtest.pdb")
	data, err := os.ReadFile(src)
	if err != nil {
		t.Skip(err)
	}
	m := symbols.Module{DebugFile: `c:\build\dump_syms_regtest.pdb`, DebugID: "9214611565FA4C538FE724A797B860F71"}
	store := t.TempDir()
	dir := filepath.Join(store, "dump_syms_regtest.pdb", m.DebugID)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "dump_syms_regtest.pdb"), data, 0o644); err != nil {
		t.Fatal(err)
	}
	requests := 0
	files := http.FileServer(http.Dir(store))
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		requests++
		files.ServeHTTP(w, r)
	}))
	defer srv.Close()
	cacheDir := t.TempDir()

	want, err := dspe.Dump(src, dumpsyms.Options{Inlines: true})
	if err != nil {
		t.Fatal(err)
	}

	before := 0
	for round := range 2 {
		s, err := Open(Config{NTSymbolPath: "srv*" + cacheDir + "*" + srv.URL})
		if err != nil {
			t.Fatal(err)
		}
		syms, err := s.Load(m)
		if err != nil {
			t.Fatalf("round %d: %v", round, err)
		}
		if syms.Lookup == nil || syms.Win == nil {
			t.Fatalf("round %d: %+v: want lookups and STACK WIN", round, syms)
		}
		n, err := symtest.AgreeAtFuncs(t, syms, want)
		if err != nil {
			t.Fatalf("round %d: %v", round, err)
		}
		if round == 0 {
			t.Logf("%d addresses agree; %d requests", n, requests)
		} else if requests != before {
			t.Errorf("second walk over a warm cache made %d requests", requests-before)
		}
		before = requests
		s.Close()
	}
}

// TestPDBFolder: a plain folder holding a corpus PDB, given as a symbol
// path, gives the module's symbols through the chain (after the .sym
// stores), converted into the cache, and -v's summary names the source.
func TestPDBFolder(t *testing.T) {
	src := filepath.Join(corpus.Dir(t), "windows", "breakpad", "dump_syms_regtest.pdb")
	if _, err := os.Stat(src); err != nil {
		t.Skip(err)
	}
	dir := t.TempDir()
	if err := os.Symlink(src, filepath.Join(dir, "dump_syms_regtest.pdb")); err != nil {
		t.Fatal(err)
	}
	cacheDir := t.TempDir()
	s, err := Open(Config{Paths: []string{dir}, CacheDir: cacheDir})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	m := symbols.Module{DebugFile: `c:\build\dump_syms_regtest.pdb`, DebugID: "9214611565FA4C538FE724A797B860F71"}
	syms, err := s.Load(m)
	if err != nil || syms.Lookup == nil || syms.Win == nil {
		t.Fatalf("%+v, %v: want lookups and STACK WIN", syms, err)
	}
	if _, err := os.Stat(filepath.Join(cacheDir, "dump_syms_regtest.pdb", m.DebugID, "dump_syms_regtest.sym")); err != nil {
		t.Errorf("converted file: %v", err)
	}
	var sum bytes.Buffer
	s.Summary(&sum, "prog")
	if want := "prog: symbols: " + m.DebugFile + " " + m.DebugID + ": from " + dir + " (PDB files) (lookups, STACK WIN)\n"; sum.String() != want {
		t.Errorf("summary %q, want %q", sum.String(), want)
	}
}

// TestPEWithoutCodeView: a folder holding a PE without a CodeView record
// (Wine's kernelbase.dll, trimmed: testdata/truth/wincxx/pe), given as a
// symbol path, gives the symbols of a module with no debug file, found by
// its code file and identifier, and -v's summary names the module by them.
func TestPEWithoutCodeView(t *testing.T) {
	dir := filepath.Join("..", "..", "testdata", "truth", "wincxx", "pe")
	s, err := Open(Config{Paths: []string{dir}, CacheDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	m := symtest.WineKernelbase
	syms, err := s.Load(m)
	if err != nil || syms.Lookup == nil || syms.CFI == nil {
		t.Fatalf("%+v, %v: want lookups and CFI", syms, err)
	}
	other := symbols.Module{CodeFile: `C:\windows\system32\kernel32.dll`, CodeID: "63F14E2B195000"}
	if _, err := s.Load(other); !errors.Is(err, symbols.ErrNotFound) {
		t.Errorf("kernel32.dll: %v, want not found", err)
	}
	var sum bytes.Buffer
	s.Summary(&sum, "prog")
	want := "prog: symbols: " + other.CodeFile + " " + other.CodeID + ": none (not in any source)\n" +
		"prog: symbols: " + m.CodeFile + " " + m.CodeID + ": from " + dir + " (PDB files) (lookups, CFI, STACK WIN)\n"
	if sum.String() != want {
		t.Errorf("summary\n%s\nwant\n%s", sum.String(), want)
	}
}
