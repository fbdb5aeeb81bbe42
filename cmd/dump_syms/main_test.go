package main

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gobreakpad/gobreakpad/internal/testkit/cmdtest"
	"github.com/gobreakpad/gobreakpad/internal/testkit/corpus"
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
	if _, err := runCmd(t, notELF); err == nil || !strings.Contains(err.Error(), "app.exe: a PE file that does not read") {
		t.Errorf("PE file: %v, want a message naming PE", err)
	}
	short := filepath.Join(t.TempDir(), "short")
	if err := os.WriteFile(short, []byte("\x7fE"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := runCmd(t, short); err == nil || !strings.Contains(err.Error(), "short: not an ELF, Mach-O, PE or PDB file (it starts with 7f 45)") {
		t.Errorf("2-byte file: %v, want not an ELF, Mach-O, PE or PDB file", err)
	}
}

func TestMain(m *testing.M) { cmdtest.Main(m) }

// TestCommand runs the built program: what is not a binary is named as such,
// a debug directory that does not exist is a warning, usage errors are one
// line and exit 2.
func TestCommand(t *testing.T) {
	prog := cmdtest.Build(t, ".")
	tmp := t.TempDir()
	text := filepath.Join(tmp, "notes.txt")
	os.WriteFile(text, []byte("MODULE Linux x86_64 0 x\n"), 0o644)
	empty := filepath.Join(tmp, "empty")
	os.WriteFile(empty, nil, 0o644)
	for _, c := range []struct {
		args         []string
		code         int
		stdout, want string
	}{
		{[]string{text}, 1, "", "dump_syms: " + text + ": not an ELF, Mach-O, PE or PDB file (it starts with 4d 4f 44 55)\n"},
		{[]string{empty}, 1, "", "dump_syms: " + empty + ": not an ELF, Mach-O, PE or PDB file (empty file)\n"},
		{nil, 2, "", "dump_syms: missing binary (see --help)\n"},
		{[]string{"-q", text}, 2, "", "dump_syms: flag provided but not defined: -q (see --help)\n"},
	} {
		r := cmdtest.Run(t, prog, c.args...)
		if r.Code != c.code || r.Stdout != c.stdout || r.Stderr != c.want {
			t.Errorf("%q: exit %d, stdout %q, stderr %q; want exit %d, %q", c.args, r.Code, r.Stdout, r.Stderr, c.code, c.want)
		}
	}
	if r := cmdtest.Run(t, prog, "--version"); r.Code != 0 || !strings.HasPrefix(r.Stdout, "dump_syms ") || r.Stderr != "" {
		t.Errorf("--version: %+v", r)
	}
	if r := cmdtest.Run(t, prog, "--help"); r.Code != 0 || !strings.Contains(r.Stdout, "BINARY [DEBUG_DIR ...]") || r.Stderr != "" {
		t.Errorf("--help: %+v", r)
	}
	bin := corpus.File(t, "elf/x64-dw4/full/inline_chain")
	r := cmdtest.Run(t, prog, "-i", bin, filepath.Join(tmp, "nodebug"))
	if r.Code != 0 || !strings.HasPrefix(r.Stdout, "MODULE Linux x86_64 ") ||
		r.Stderr != "dump_syms: warning: debug directory "+filepath.Join(tmp, "nodebug")+" does not exist; dumping without it\n" {
		t.Errorf("missing debug directory: %+v", r)
	}
}

// TestDebuginfod: the debug file of a stripped binary comes from a
// debuginfod server ($DEBUGINFOD_URLS) when no DEBUG_DIR is given; the
// output equals the one with the local debug directory.
func TestDebuginfod(t *testing.T) {
	dir := corpus.File(t, "elf/x64-dw4/buildid")
	const buildID = "1750c05a7352bb1327b4179d99547cf80feb625c"
	url := cmdtest.Debuginfod(t, dir, buildID)
	prog := cmdtest.Build(t, ".")
	want := cmdtest.Run(t, prog, filepath.Join(dir, "deep_chain"), filepath.Join(dir, "debug"))
	cmd := exec.Command(prog, "--symbols-cache", t.TempDir(), filepath.Join(dir, "deep_chain"))
	cmd.Env = append(os.Environ(), "DEBUGINFOD_URLS="+url)
	got, err := cmd.Output()
	if err != nil || want.Code != 0 || string(got) != want.Stdout {
		t.Errorf("through debuginfod: %v; output equal: %v", err, string(got) == want.Stdout)
	}
	if !strings.Contains(string(got), "FUNC ") {
		t.Error("no FUNC record: the debug file was not used")
	}
}

// TestSaysLosses: without -v, dump_syms still says on stderr when its
// output lacks information: a PE dumped without its PDB, a binary with no
// FUNC records; a complete dump says nothing.
func TestSaysLosses(t *testing.T) {
	prog := cmdtest.Build(t, ".")
	for _, c := range []struct{ file, want string }{
		{"windows/mozilla/mozwer.dll", "writing what the PE alone holds"},
		{"elf/x64-dw4/stripped/inline_chain", "no FUNC records"},
		{"elf/x64-dw4/full/inline_chain", ""},
	} {
		r := cmdtest.RunClean(t, prog, []string{"_NT_SYMBOL_PATH=", "HOME=" + t.TempDir()}, corpus.File(t, c.file))
		if c.want == "" {
			if r.Code != 0 || r.Stderr != "" {
				t.Errorf("%s: exit %d, stderr %q, want nothing", c.file, r.Code, r.Stderr)
			}
			continue
		}
		if r.Code != 0 || strings.Count(r.Stderr, "\n") != 1 || !strings.HasPrefix(r.Stderr, "dump_syms: warning: ") || !strings.Contains(r.Stderr, c.want) {
			t.Errorf("%s: exit %d, stderr %q, want one warning line saying %q", c.file, r.Code, r.Stderr, c.want)
		}
	}
}

// TestMozillaFlags: Mozilla dump_syms's --inlines (our -d), --output FILE
// and --no-generator.
func TestMozillaFlags(t *testing.T) {
	prog := cmdtest.Build(t, ".")
	bin := corpus.File(t, "elf/x64-dw4/full/inline_chain")
	d := cmdtest.Run(t, prog, "-d", bin)
	if r := cmdtest.Run(t, prog, "--inlines", "--no-generator", bin); r.Code != 0 || r.Stdout != d.Stdout || !strings.Contains(r.Stdout, "\nINLINE ") {
		t.Errorf("--inlines: exit %d, differs from -d: %s", r.Code, r.Stderr)
	}
	out := filepath.Join(t.TempDir(), "sub", "x.sym")
	if r := cmdtest.Run(t, prog, "-d", "--output", out, bin); r.Code != 0 || r.Stdout != "" {
		t.Errorf("--output: exit %d, stdout %d bytes", r.Code, len(r.Stdout))
	}
	if b, _ := os.ReadFile(out); string(b) != d.Stdout {
		t.Error("--output: the file is not the symbol file")
	}
	// Breakpad's -b ID (the MODULE record's identifier) and -r (accepted).
	if r := cmdtest.Run(t, prog, "-i", "-r", "-b", "0123ABC", bin); r.Code != 0 || !strings.HasPrefix(r.Stdout, "MODULE Linux x86_64 0123ABC inline_chain\n") {
		t.Errorf("-b: exit %d, %q %s", r.Code, r.Stdout, r.Stderr)
	}
	if r := cmdtest.Run(t, prog, "--output", out, "--store", t.TempDir(), bin); r.Code != 2 {
		t.Errorf("--output with --store: exit %d, want 2", r.Code)
	}
}
