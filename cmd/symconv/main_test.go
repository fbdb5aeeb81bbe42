package main

import (
	"bytes"
	"context"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gobreakpad/gobreakpad/cmd/internal/cmdline"
	"github.com/gobreakpad/gobreakpad/dumpsyms"
	dself "github.com/gobreakpad/gobreakpad/dumpsyms/elf"
	"github.com/gobreakpad/gobreakpad/internal/testkit/corpus"
)

const sym = "../../testdata/capture/x64-segv/symbols/crasher-x64/18BAFF1081380C82C6A55BB5BDB2732F0/crasher-x64.sym"

func runCmd(t *testing.T, args ...string) (string, string, error) {
	t.Helper()
	var out, errb bytes.Buffer
	err := newCommand(&out, &errb).Run(context.Background(), append([]string{"symconv"}, args...))
	return out.String(), errb.String(), err
}

func TestSymToSym(t *testing.T) {
	dst := filepath.Join(t.TempDir(), "out.sym")
	if _, _, err := runCmd(t, sym, dst); err != nil {
		t.Fatal(err)
	}
	a, _ := os.ReadFile(sym)
	b, _ := os.ReadFile(dst)
	if !bytes.Equal(a, b) {
		t.Error(".sym to .sym changed the file")
	}
	out, _, err := runCmd(t, "-f", "breakpad", sym, "-")
	if err != nil || out != string(a) {
		t.Errorf("to stdout: err %v, %d bytes, want %d", err, len(out), len(a))
	}
}

// TestELF converts a corpus ELF: the same text as dump_syms -d writes.
func TestELF(t *testing.T) {
	dir := corpus.Dir(t)
	matches, _ := filepath.Glob(filepath.Join(dir, "generated", "*", "symbols", "*", "*", "*.sym"))
	if len(matches) == 0 {
		t.Skip("no generated case with symbols in the corpus")
	}
	// The binary next to a generated case is named by the .sym's module.
	var bin string
	for _, m := range matches {
		caseDir := filepath.Dir(filepath.Dir(filepath.Dir(filepath.Dir(m))))
		name := strings.TrimSuffix(filepath.Base(m), ".sym")
		if _, err := os.Stat(filepath.Join(caseDir, name)); err == nil {
			bin = filepath.Join(caseDir, name)
			break
		}
	}
	if bin == "" {
		t.Skip("no generated case keeps its binary")
	}
	out, _, err := runCmd(t, "-f", "breakpad", bin, "-")
	if err != nil {
		t.Fatal(err)
	}
	s, err := dself.Dump(bin, dumpsyms.Options{Inlines: true})
	if err != nil {
		t.Fatal(err)
	}
	var ds bytes.Buffer
	s.Write(&ds)
	if out != ds.String() || !strings.Contains(out, "\nFUNC ") {
		t.Errorf("%s: symconv wrote %d bytes, dump_syms -d %d", bin, len(out), ds.Len())
	}
}

func TestErrors(t *testing.T) {
	dir := t.TempDir()
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{sym}, "expected INPUT OUTPUT"},
		{[]string{sym, filepath.Join(dir, "x.unknown")}, "no format writes"},
		{[]string{"-f", "nosuch", sym, "-"}, "unknown format"},
		{[]string{sym, "-"}, "needs -f"},
		{[]string{"main.go", filepath.Join(dir, "x.sym")}, "not a symbol or debug file"},
		{[]string{sym, filepath.Join(dir, "no", "such", "dir", "x.sym")}, "no such file"},
	} {
		if _, _, err := runCmd(t, tc.args...); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("symconv %q: err %v, want one saying %q", tc.args, err, tc.want)
		}
	}
	// A command line naming no writable format is a usage error (exit 2),
	// and a directory as OUTPUT is named as such.
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"-f", "nope", sym, "out"}, "unknown format"},
		{[]string{sym, dir}, "is a directory"},
		{[]string{sym, filepath.Join(dir, "noext")}, "no extension"},
	} {
		var errb bytes.Buffer
		code := cmdline.Run(context.Background(), newCommand(io.Discard, &errb), append([]string{"symconv"}, tc.args...), io.Discard, &errb)
		if code != 2 || !strings.Contains(errb.String(), tc.want) || strings.Contains(errb.String(), `""`) {
			t.Errorf("symconv %q: exit %d, %q; want 2 and %q", tc.args, code, errb.String(), tc.want)
		}
	}
}
