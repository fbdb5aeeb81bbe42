package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	dsbreakpad "github.com/gobreakpad/gobreakpad/dumpsyms/breakpad"
	"github.com/gobreakpad/gobreakpad/internal/testkit/corpus"
	"github.com/gobreakpad/gobreakpad/symbols/formats"
)

// TestWalkWithSymCacheAndSymbfile walks every generated/ minidump with the
// program's symbols converted to SymCache and to symbfile and compares the
// machine-readable report (every thread's frames: module, function, file,
// line, offset) with the walk from the original .sym files. Each converted
// store keeps a .sym of every module holding only its MODULE, INFO and
// STACK records: unwind rules still come from it, and function names,
// files and lines can only come from the converted file (a store without
// the converted file would print no names). Under the race detector a third
// of the cases are walked.
func TestWalkWithSymCacheAndSymbfile(t *testing.T) {
	root := corpus.Dir(t)
	cases, _ := filepath.Glob(filepath.Join(root, "generated", "*", "crash.dmp"))
	if len(cases) == 0 {
		t.Skip("no generated/ minidumps in the corpus")
	}
	syslib := filepath.Join(root, "generated", "syslib-symbols")
	for i, dump := range cases {
		if raceEnabled && i%3 != 0 {
			continue // a third of the cases under the race detector
		}
		dir := filepath.Dir(dump)
		syms, _ := filepath.Glob(filepath.Join(dir, "symbols", "*", "*", "*.sym"))
		if len(syms) == 0 {
			continue
		}
		t.Run(filepath.Base(dir), func(t *testing.T) {
			want := runCmd(t, dump, filepath.Join(dir, "symbols"), syslib)
			for _, name := range []string{"symcache", "symbfile"} {
				store := convertStore(t, dir, syms, name)
				got := runCmd(t, dump, store, syslib)
				if got != want {
					t.Errorf("%s: the walk differs from the .sym walk:\n%s", name, lineDiff(want, got, 6))
				}
			}
		})
	}
}

// convertStore writes a symbol store holding, for each .sym file of a case,
// the file converted to the named format and a .sym with only its MODULE,
// INFO and STACK records, and returns its root.
func convertStore(t *testing.T, caseDir string, syms []string, name string) string {
	t.Helper()
	f, err := formats.ByName(name)
	if err != nil {
		t.Fatal(err)
	}
	store := t.TempDir()
	for _, p := range syms {
		rel, err := filepath.Rel(filepath.Join(caseDir, "symbols"), p)
		if err != nil {
			t.Fatal(err)
		}
		model, err := dsbreakpad.ReadFile(p, nil)
		if err != nil {
			t.Fatal(err)
		}
		out := filepath.Join(store, strings.TrimSuffix(rel, ".sym")+f.Exts[0])
		if err := os.MkdirAll(filepath.Dir(out), 0o755); err != nil {
			t.Fatal(err)
		}
		w, err := os.Create(out)
		if err != nil {
			t.Fatal(err)
		}
		if err := f.Write(w, model, formats.WriteOptions{}); err != nil {
			t.Fatal(err)
		}
		if err := w.Close(); err != nil {
			t.Fatal(err)
		}
		model.Funcs, model.Publics, model.Files, model.Origins = nil, nil, nil, nil
		w, err = os.Create(filepath.Join(store, rel))
		if err != nil {
			t.Fatal(err)
		}
		if err := model.Write(w); err != nil {
			t.Fatal(err)
		}
		if err := w.Close(); err != nil {
			t.Fatal(err)
		}
	}
	return store
}

// lineDiff shows up to max differing lines of two texts.
func lineDiff(want, got string, max int) string {
	wl, gl := strings.Split(want, "\n"), strings.Split(got, "\n")
	var b strings.Builder
	shown := 0
	for i := 0; i < len(wl) || i < len(gl); i++ {
		var w, g string
		if i < len(wl) {
			w = wl[i]
		}
		if i < len(gl) {
			g = gl[i]
		}
		if w == g {
			continue
		}
		if shown++; shown > max {
			b.WriteString("...\n")
			break
		}
		b.WriteString("-" + w + "\n+" + g + "\n")
	}
	return b.String()
}
