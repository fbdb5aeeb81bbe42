package symsrc

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gobreakpad/gobreakpad/symbols"
)

func TestParse(t *testing.T) {
	def := t.TempDir()
	for _, c := range []struct {
		paths  []string
		nt     string
		want   []string // source names, in order
		caches int
	}{
		{paths: []string{"/a", "/b"}, want: []string{"/a, /b (SymCache)", "/a, /b (symbfile)", "/a, /b (GSYM)", "/a, /b", "/a, /b (ELF files)", "/a, /b (PDB files)", "/a, /b (Mach-O files)"}},
		{paths: []string{"https://s.example/"}, want: []string{"https://s.example"}, caches: 1},
		{paths: []string{"srv*/c*https://ms.example"}, want: []string{"https://ms.example", "https://ms.example (symbol server)"}, caches: 1},
		{nt: "cache*/c;srv*https://ms.example;/d", want: []string{"/c, /d (SymCache)", "/c, /d (symbfile)", "/c, /d (GSYM)", "/c, /d", "/c, /d (ELF files)", "/c, /d (PDB files)", "/c, /d (Mach-O files)",
			"https://ms.example", "https://ms.example (symbol server)"}, caches: 1},
		{nt: "symsrv*symsrv.dll*/c*https://ms.example", want: []string{"https://ms.example", "https://ms.example (symbol server)"}, caches: 1},
		{nt: "srv*/local/store", want: []string{"/local/store (SymCache)", "/local/store (symbfile)", "/local/store (GSYM)", "/local/store", "/local/store (ELF files)", "/local/store (PDB files)", "/local/store (Mach-O files)"}},
	} {
		s, err := Open(Config{Paths: c.paths, NTSymbolPath: c.nt, CacheDir: def, DebuginfodURLs: nil})
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, src := range s.chain {
			got = append(got, src.(*traced).name)
		}
		if strings.Join(got, "|") != strings.Join(c.want, "|") || len(s.clients) != c.caches {
			t.Errorf("%q %q: sources %q with %d caches, want %q with %d", c.paths, c.nt, got, len(s.clients), c.want, c.caches)
		}
		if c.nt == "cache*/c;srv*https://ms.example;/d" {
			if _, ok := s.clients[filepath.Clean("/c")]; !ok {
				t.Errorf("cache*/c not used for srv*: %v", s.clients)
			}
		}
		s.Close()
	}
}

// TestNotAURL: a --symbols-url that is not an http(s) URL is one warning
// line and no source, not a silent miss for every module.
func TestNotAURL(t *testing.T) {
	var w strings.Builder
	s, err := Open(Config{URLs: []string{"symbols.example.com", "ftp://s.example", "https://ok.example"}, CacheDir: t.TempDir(), Progress: &w})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if len(s.chain) != 1 || s.chain[0].(*traced).name != "https://ok.example" {
		t.Errorf("sources %d, want https://ok.example alone", len(s.chain))
	}
	want := "warning: symbol server \"symbols.example.com\": not an http(s) URL; going on without it\n" +
		"warning: symbol server \"ftp://s.example\": not an http(s) URL; going on without it\n"
	if w.String() != want {
		t.Errorf("warnings:\n%s\nwant\n%s", w.String(), want)
	}
}

// TestSummaryCorrupt: -v's line for a module whose .sym has records that do
// not parse says "corrupt", not only what the file gave.
func TestSummaryCorrupt(t *testing.T) {
	dir := t.TempDir()
	const id = "0123456789ABCDEF0123456789ABCDEF0"
	p := filepath.Join(dir, "bad.so", id, "bad.so.sym")
	os.MkdirAll(filepath.Dir(p), 0o755)
	text := "MODULE Linux x86_64 " + id + " bad.so\nFUNC 1000 10 0 f\nFUNC zz not a record\n1000 10 1 0\n"
	if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	s, err := Open(Config{Paths: []string{dir}, CacheDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	syms, err := s.Load(symbols.Module{DebugFile: "bad.so", DebugID: id})
	if err != nil || !syms.Corrupt {
		t.Fatalf("Load: %v, corrupt %v", err, syms != nil && syms.Corrupt)
	}
	var w strings.Builder
	s.Summary(&w, "prog")
	if !strings.Contains(w.String(), "(corrupt: ") {
		t.Errorf("summary %q does not say corrupt", w.String())
	}
}
