package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gobreakpad/gobreakpad/internal/corpus"
)

func runCmd(t *testing.T, args ...string) (string, error) {
	t.Helper()
	var out bytes.Buffer
	stderr, err := os.CreateTemp(t.TempDir(), "stderr")
	if err != nil {
		t.Fatal(err)
	}
	defer stderr.Close()
	err = newCommand(&out, stderr).Run(context.Background(), append([]string{"dump_syms"}, args...))
	return out.String(), err
}

func TestFlags(t *testing.T) {
	bin := corpus.File(t, "elf/x64-dw4/full/inline_chain")
	want, _ := os.ReadFile(corpus.File(t, "breakpad/expected-dump_syms/elf-x64-dw4-full-inline_chain.sym"))
	header := strings.Join(strings.SplitN(string(want), "\n", 3)[:2], "\n") + "\n"

	out, err := runCmd(t, "-i", bin)
	if err != nil || out != header {
		t.Errorf("-i: %q, %v; want %q", out, err, header)
	}
	out, err = runCmd(t, "-c", "-n", "renamed", "-o", "Android", bin)
	if err != nil || strings.Contains(out, "STACK CFI") || !strings.HasPrefix(out, "MODULE Android x86_64 35B22B3C8214A4DB5C83772E005978D50 renamed\n") {
		t.Errorf("-c -n -o: %.200q, %v", out, err)
	}
	out, err = runCmd(t, "-d", bin)
	if err != nil || !strings.Contains(out, "\nINLINE_ORIGIN ") || !strings.Contains(out, "\nINLINE ") {
		t.Errorf("-d: no INLINE records (%v)", err)
	}
	store := t.TempDir()
	if _, err := runCmd(t, "--store", store, bin); err != nil {
		t.Fatal(err)
	}
	got, err := os.ReadFile(filepath.Join(store, "inline_chain", "35B22B3C8214A4DB5C83772E005978D50", "inline_chain.sym"))
	if err != nil || !bytes.HasPrefix(got, []byte(header)) {
		t.Errorf("--store: %v", err)
	}
	if _, err := runCmd(t); err == nil {
		t.Error("no BINARY: no error")
	}
	if _, err := runCmd(t, filepath.Join(t.TempDir(), "missing")); err == nil {
		t.Error("missing file: no error")
	}
	notELF := filepath.Join(t.TempDir(), "app.exe")
	if err := os.WriteFile(notELF, []byte("MZ\x90\x00 rest of a PE file"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := runCmd(t, notELF); err == nil || !strings.Contains(err.Error(), `unsupported file format (magic 4d 5a 90 00, "MZ\x90\x00")`) {
		t.Errorf("PE file: %v, want unsupported file format naming the magic", err)
	}
	short := filepath.Join(t.TempDir(), "short")
	if err := os.WriteFile(short, []byte("\x7fE"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := runCmd(t, short); err == nil || !strings.Contains(err.Error(), "unsupported file format") {
		t.Errorf("2-byte file: %v, want unsupported file format", err)
	}
}
