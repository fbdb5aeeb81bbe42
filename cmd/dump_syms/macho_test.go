package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gobreakpad/gobreakpad/internal/testkit/corpus"
)

// TestMachO runs dump_syms on the corpus' Mach-O files: a dSYM bundle by
// its path with -a, a binary with -g, --list-arch, a bundle of two files,
// and the store layout.
func TestMachO(t *testing.T) {
	dir := corpus.File(t, "macos/built")
	fat := filepath.Join(dir, "hello-fat")
	out, err := runCmd(t, "--list-arch", fat)
	if err != nil || out != "hello-fat contains the following architectures:\nx86_64, arm64\n" {
		t.Errorf("--list-arch: %q, %v", out, err)
	}
	want, _ := os.ReadFile(filepath.Join(corpus.Path(), "macos", "breakpad", "hello-fat.info.arm64.sym"))
	out, err = runCmd(t, "-i", "-a", "arm64", fat)
	if err != nil || out != string(want)+"INFO CODE_ID 4C4C443B55553144A1DB54C239A5B995\n" {
		t.Errorf("-i -a arm64: %q, %v; want %q", out, err, want)
	}
	out, err = runCmd(t, "-d", "-a", "arm64", filepath.Join(dir, "hello-fat.dSYM"))
	if err != nil || !strings.HasPrefix(out, "MODULE mac arm64 4C4C443B55553144A1DB54C239A5B9950 hello-fat\n") || !strings.Contains(out, "\nINLINE_ORIGIN 1 outer_inl\n") {
		t.Errorf("-d -a arm64 hello-fat.dSYM: %.300q, %v", out, err)
	}
	out, err = runCmd(t, "-g", filepath.Join(dir, "libframeless-x86_64.dylib.dSYM"), filepath.Join(dir, "libframeless-x86_64.dylib"))
	if err != nil || !strings.Contains(out, "\nFUNC 510 d8 0 big_frame\n") || !strings.Contains(out, "\nSTACK CFI INIT 510 e0 .cfa: $rsp 3024 + .ra: .cfa -8 + ^\n") {
		t.Errorf("-g: %.300q, %v", out, err)
	}
	if _, err := runCmd(t, "-a", "ppc", fat); err == nil || !strings.Contains(err.Error(), "no ppc slice (the file has x86_64, arm64)") {
		t.Errorf("-a ppc: %v", err)
	}
	if crash := filepath.Join(corpus.Path(), "macos", "symbolic", "crash.dSYM"); dirExists(crash) {
		if _, err := runCmd(t, crash); err == nil || !strings.Contains(err.Error(), "(crash, invalid)") {
			t.Errorf("two-file bundle: %v", err)
		}
	}
	store := t.TempDir()
	if _, err := runCmd(t, "--store", store, filepath.Join(dir, "hello-x86_64.dSYM")); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(store, "hello-x86_64", "4C4C44A555553144A1E6AD1402E0F3C70", "hello-x86_64.sym")); err != nil {
		t.Errorf("--store: %v", err)
	}
}

func dirExists(p string) bool {
	st, err := os.Stat(p)
	return err == nil && st.IsDir()
}

// TestMachO32 runs dump_syms on the 32-bit objects of dumpsyms/macho
// (testdata/mach32): --list-arch, -a i386 and -a armv7 of the universal
// one, the MODULE lines Breakpad's dump_syms_mac writes.
func TestMachO32(t *testing.T) {
	dir := filepath.Join("..", "..", "dumpsyms", "macho", "testdata", "mach32")
	fat := filepath.Join(dir, "prog-fat.o")
	out, err := runCmd(t, "--list-arch", fat)
	if err != nil || out != "prog-fat.o contains the following architectures:\nx86, x86_64, armv7\n" {
		t.Errorf("--list-arch: %q, %v", out, err)
	}
	for arch, want := range map[string]string{
		"i386":  "MODULE mac x86 FFC2426B33C49AD3B41CDD20ED9CF9320 prog-fat.o\n",
		"armv7": "MODULE mac armv7 2AAF7A9F8FEC11D00898A6B5EA4BC7620 prog-fat.o\n",
	} {
		out, err := runCmd(t, "-a", arch, fat)
		if err != nil || !strings.HasPrefix(out, want) || !strings.Contains(out, "\nFUNC ") || !strings.Contains(out, "\nSTACK CFI INIT ") {
			t.Errorf("-a %s: %.300q, %v", arch, out, err)
		}
	}
}
