package formats

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"

	dsbreakpad "github.com/gobreakpad/gobreakpad/dumpsyms/breakpad"
	"github.com/gobreakpad/gobreakpad/internal/testkit/corpus"
	"github.com/gobreakpad/gobreakpad/symbols"
	symbreakpad "github.com/gobreakpad/gobreakpad/symbols/breakpad"
	"github.com/gobreakpad/gobreakpad/symfile"
)

// fullString is chainString with the function's and the line's starts.
func fullString(s symbols.Symbol, ok bool) string {
	if !ok {
		return "none"
	}
	out := chainString(s, ok)
	if s.HasLine {
		out += fmt.Sprintf(" line@%#x", s.LineBase)
	}
	return out + fmt.Sprintf(" func@%#x", s.FunctionBase)
}

// TestReadBack converts .sym files to each format, reads the result back
// into the model and writes it as a .sym: that .sym answers every lookup
// (function, its start, file, line, the line's start, inline chain) as the
// format's file does, at every address of the original's records and the
// byte after, so symconv's .symc/.symbfile to .sym conversion loses nothing
// of what the format holds.
func TestReadBack(t *testing.T) {
	syms := []string{"symbolic/macos/crash.inlines.sym", "symbolic/linux/crash.sym", "symbolic/windows/crash.sym"}
	gen, _ := filepath.Glob(filepath.Join(corpus.Dir(t), "generated", "inline_chain-x64-O2*", "symbols", "*", "*", "*.sym"))
	for _, p := range gen {
		rel, _ := filepath.Rel(corpus.Dir(t), p)
		syms = append(syms, rel)
	}
	for _, name := range []string{"symcache", "symbfile"} {
		f, err := ByName(name)
		if err != nil {
			t.Fatal(err)
		}
		for _, rel := range syms {
			src := corpus.File(t, rel)
			model, err := dsbreakpad.ReadFile(src, nil)
			if err != nil {
				t.Fatal(err)
			}
			dir := t.TempDir()
			conv := filepath.Join(dir, "m"+f.Exts[0])
			w, _ := os.Create(conv)
			if err := f.Write(w, model, WriteOptions{}); err != nil {
				t.Fatal(err)
			}
			w.Close()
			back, err := f.Read(conv, nil)
			if err != nil {
				t.Fatal(err)
			}
			symPath := filepath.Join(dir, "back.sym")
			w, _ = os.Create(symPath)
			if err := back.Write(w); err != nil {
				t.Fatal(err)
			}
			w.Close()
			l, closer, err := f.Open(conv)
			if err != nil {
				t.Fatal(err)
			}
			tab, err := symfile.Open(symPath)
			if err != nil {
				t.Fatal(err)
			}
			if n := tab.NumErrors(); n > 0 {
				t.Errorf("%s %s: the .sym read back has %d errors: %v", name, rel, n, tab.Errors()[0])
			}
			ref := &symbreakpad.Table{Table: tab}
			bad := 0
			addrs := lineAddresses(model)
			for _, a := range addrs {
				for _, x := range []uint64{a, a + 1} {
					got, want := fullString(ref.Lookup(x, true)), fullString(l.Lookup(x, true))
					if got != want {
						if bad++; bad <= 3 {
							t.Errorf("%s %s %#x:\n .sym read back: %s\n %s: %s", name, rel, x, got, name, want)
						}
					}
				}
			}
			if bad > 0 {
				t.Errorf("%s %s: %d of %d addresses differ", name, rel, bad, 2*len(addrs))
			}
			closer.Close()
			tab.Close()
		}
	}
}

// TestSymCacheVersions writes a .sym as SymCache versions 7, 8 and 9
// (formats symcache7, symcache8, symcache): each file has its version in
// the header and answers every lookup as the others.
func TestSymCacheVersions(t *testing.T) {
	src := corpus.File(t, "symbolic/macos/crash.inlines.sym")
	model, err := dsbreakpad.ReadFile(src, nil)
	if err != nil {
		t.Fatal(err)
	}
	var ls []symbols.Lookuper
	for _, tc := range []struct {
		name    string
		version byte
	}{{"symcache", 9}, {"symcache7", 7}, {"symcache8", 8}} {
		f, err := ByName(tc.name)
		if err != nil {
			t.Fatal(err)
		}
		p := filepath.Join(t.TempDir(), "c.symc")
		w, _ := os.Create(p)
		if err := f.Write(w, model, WriteOptions{}); err != nil {
			t.Fatal(err)
		}
		w.Close()
		data, _ := os.ReadFile(p)
		if len(data) < 8 || string(data[:4]) != "SYMC" || data[4] != tc.version {
			t.Fatalf("%s: header % x", tc.name, data[:min(8, len(data))])
		}
		if d, err := Sniff(p); err != nil || d.Name != "symcache" {
			t.Errorf("%s: Sniff = %v, %v; want symcache", tc.name, d, err)
		}
		l, c, err := f.Open(p)
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		ls = append(ls, l)
	}
	for _, a := range lineAddresses(model) {
		want := fullString(ls[0].Lookup(a, true))
		for i, l := range ls[1:] {
			if got := fullString(l.Lookup(a, true)); got != want {
				t.Fatalf("%#x: version file %d: %s, want %s", a, i+1, got, want)
			}
		}
	}
}
