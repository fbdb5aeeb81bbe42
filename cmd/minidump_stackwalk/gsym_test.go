package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	dsbreakpad "github.com/gobreakpad/gobreakpad/dumpsyms/breakpad"
	dsgsym "github.com/gobreakpad/gobreakpad/dumpsyms/gsym"
	"github.com/gobreakpad/gobreakpad/internal/testkit/corpus"
	"github.com/gobreakpad/gobreakpad/minidump"
	"github.com/gobreakpad/gobreakpad/stackwalk"
	"github.com/gobreakpad/gobreakpad/stackwalk/signature"
	"github.com/gobreakpad/gobreakpad/symbols"
	symbreakpad "github.com/gobreakpad/gobreakpad/symbols/breakpad"
)

// splitSym writes, for the .sym at path, a .gsym with its lookups and a .sym
// with only its unwind records (STACK CFI, STACK WIN) at the same place of
// the store under root.
func splitSym(t *testing.T, path, rel, root string) {
	m, err := dsbreakpad.ReadFile(path, nil)
	if err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(root, filepath.Dir(rel))
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	var g bytes.Buffer
	if err := dsgsym.Write(&g, m, nil); err != nil {
		t.Fatal(err)
	}
	stem := strings.TrimSuffix(filepath.Base(rel), ".sym")
	if err := os.WriteFile(filepath.Join(dir, stem+".gsym"), g.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	m.Files, m.Origins, m.Funcs, m.Publics = nil, nil, nil, nil
	var s bytes.Buffer
	if err := m.Write(&s); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, stem+".sym"), s.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
}

// walkText walks a dump with src and returns the -m and the human output,
// and the crash signature, which must not depend on the symbols' format.
func walkText(t *testing.T, dump string, src symbols.Source) string {
	f, err := minidump.Open(dump)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	p, err := stackwalk.Process(f, stackwalk.Options{Symbols: src})
	if err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	if err := stackwalk.PrintMachineReadable(&b, p); err != nil {
		t.Fatal(err)
	}
	if err := stackwalk.Print(&b, p, stackwalk.PrintOptions{}); err != nil {
		t.Fatal(err)
	}
	b.WriteString("signature: " + signature.Of(p) + "\n")
	return b.String()
}

// TestWalkWithGSYM: every generated crash case walks to the same output
// (-m and human: frames, functions, files, lines, offsets) with the
// program's symbols as .gsym files, unwind records from a .sym holding
// only those, as with the .sym files alone, through minidump_stackwalk's
// stores (.sym first: a .sym without FUNC or PUBLIC records leaves lookups
// to the .gsym).
func TestWalkWithGSYM(t *testing.T) {
	gen := filepath.Join(corpus.Dir(t), "generated")
	dumps, _ := filepath.Glob(filepath.Join(gen, "*", "crash.dmp"))
	if len(dumps) == 0 {
		t.Skipf("no generated cases in %s", gen)
	}
	syslib := filepath.Join(gen, "syslib-symbols")
	frames, walked := 0, 0
	for i, dump := range dumps {
		if raceBuild && i%8 != 0 {
			continue // a sample: walks under -race are slow
		}
		caseDir := filepath.Dir(dump)
		symDir := filepath.Join(caseDir, "symbols")
		split := t.TempDir()
		syms, _ := filepath.Glob(filepath.Join(symDir, "*", "*", "*.sym"))
		for _, p := range syms {
			rel, _ := filepath.Rel(symDir, p)
			splitSym(t, p, rel, split)
		}
		// Both through minidump_stackwalk's own chain of stores.
		ref, closeRef := localSources(t, symDir, syslib)
		withGSYM, closeGSYM := localSources(t, split, syslib)
		want, got := walkText(t, dump, ref), walkText(t, dump, withGSYM)
		if got != want {
			t.Errorf("%s: walk with .gsym differs:\n%s", filepath.Base(caseDir), lineDiff(want, got, 5))
		}
		if frames == 0 {
			// The lookups did come from the .gsym files.
			if walkText(t, dump, symbreakpad.NewDirs(split, syslib)) == want {
				t.Errorf("%s: the walk without the .gsym files gives the same output", filepath.Base(caseDir))
			}
		}
		frames += strings.Count(want, "\n")
		walked++
		closeRef()
		closeGSYM()
	}
	t.Logf("%d of %d cases, %d output lines the same", walked, len(dumps), frames)
}
