package main

import (
	"bytes"
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/gobreakpad/gobreakpad/cmd/internal/cmdline"
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
	// Mozilla's dump_syms habit, -o as the output file: refused, with the
	// flag that does it (it wrote "MODULE out.sym ..." on stdout).
	out, err = runCmd(t, "-o", "out.sym", bin)
	var ue *cmdline.UsageError
	if !errors.As(err, &ue) || out != "" || !strings.Contains(err.Error(), "--output out.sym") {
		t.Errorf("-o out.sym: %.100q, %v; want a usage error naming --output", out, err)
	}
	if _, err := runCmd(t, "-o", "Plan9", bin); !errors.As(err, &ue) {
		t.Errorf("-o Plan9: %v, want a usage error", err)
	}
	if _, err := runCmd(t, "-i", "-o", "WINDOWS", bin); err != nil {
		t.Errorf("-o WINDOWS: %v", err)
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

// TestCheckCFIAndExtraInfo: Mozilla's --check-cfi fails (exit 1, nothing
// written) on a file without CFI and passes one with it; --extra-info LINE
// writes INFO LINE after INFO CODE_ID and refuses a line without a
// capitalised keyword.
func TestCheckCFIAndExtraInfo(t *testing.T) {
	prog := cmdtest.Build(t, ".")
	bin := corpus.File(t, "elf/x64-dw4/full/inline_chain")
	noCFI := corpus.File(t, "elf/x64-dw4/debuglink/inline_chain.debug")
	if r := cmdtest.Run(t, prog, "--check-cfi", noCFI); r.Code != 1 || r.Stdout != "" || !strings.Contains(r.Stderr, "no CFI data") {
		t.Errorf("--check-cfi without CFI: exit %d, %d bytes out, %q", r.Code, len(r.Stdout), r.Stderr)
	}
	plain := cmdtest.Run(t, prog, bin)
	if r := cmdtest.Run(t, prog, "--check-cfi", bin); r.Code != 0 || r.Stdout != plain.Stdout {
		t.Errorf("--check-cfi with CFI: exit %d, %q", r.Code, r.Stderr)
	}
	if r := cmdtest.Run(t, prog, "--check-cfi", "-c", bin); r.Code != 2 {
		t.Errorf("--check-cfi -c: exit %d, want 2", r.Code)
	}
	r := cmdtest.Run(t, prog, "-i", "--extra-info", "FOO bar baz", "--extra-info", "X_Y z", bin)
	want := "MODULE Linux x86_64 35B22B3C8214A4DB5C83772E005978D50 inline_chain\nINFO CODE_ID 3C2BB2351482DBA45C83772E005978D5D33A72E7\nINFO FOO bar baz\nINFO X_Y z\n"
	if r.Code != 0 || r.Stdout != want {
		t.Errorf("--extra-info: exit %d, %q, want %q", r.Code, r.Stdout, want)
	}
	if r := cmdtest.Run(t, prog, "--extra-info", "lower case", bin); r.Code != 2 || r.Stdout != "" {
		t.Errorf("--extra-info with a bad keyword: exit %d", r.Code)
	}
}

// TestLoadAddressAndArch: Breakpad's Linux -a (no value) keeps the load
// address: every address of a non-PIE executable (first PT_LOAD at
// 0x400000) is the plain output's plus 0x400000; -a followed by an
// architecture name is Mach-O's -a ARCH (ignored for an ELF file, as
// --arch, Mozilla's spelling).
func TestLoadAddressAndArch(t *testing.T) {
	gcc, err := exec.LookPath("gcc")
	if err != nil {
		t.Skip("no gcc to build a non-PIE executable")
	}
	dir := t.TempDir()
	src := filepath.Join(dir, "a.c")
	os.WriteFile(src, []byte("static int f(int x) { return x * 3; }\nint g(int x) { return f(x) + 1; }\nint main(int c, char **v) { return g(c); }\n"), 0o644)
	bin := filepath.Join(dir, "a")
	if out, err := exec.Command(gcc, "-O1", "-g", "-no-pie", "-o", bin, src).CombinedOutput(); err != nil {
		t.Skipf("gcc -no-pie: %v %s", err, out)
	}
	prog := cmdtest.Build(t, ".")
	plain := cmdtest.Run(t, prog, "-d", bin)
	kept := cmdtest.Run(t, prog, "-a", "-d", bin)
	if plain.Code != 0 || kept.Code != 0 {
		t.Fatalf("exit %d, %d: %s %s", plain.Code, kept.Code, plain.Stderr, kept.Stderr)
	}
	if r := cmdtest.Run(t, prog, "-d", "-a", bin); r.Stdout != kept.Stdout {
		t.Error("-d -a BINARY differs from -a -d BINARY")
	}
	pl, kl := strings.Split(plain.Stdout, "\n"), strings.Split(kept.Stdout, "\n")
	if len(pl) != len(kl) {
		t.Fatalf("-a: %d lines, plain %d", len(kl), len(pl))
	}
	shifted := 0
	for i := range pl {
		p, k := strings.Fields(pl[i]), strings.Fields(kl[i])
		if len(p) != len(k) {
			t.Fatalf("line %d: %q vs %q", i, pl[i], kl[i])
		}
		// The address field of each record kind.
		at := -1
		switch {
		case len(p) == 0 || p[0] == "MODULE" || p[0] == "INFO" || p[0] == "FILE" || p[0] == "INLINE_ORIGIN":
		case p[0] == "FUNC" || p[0] == "PUBLIC":
			at = 1
		case p[0] == "STACK" && p[2] == "INIT":
			at = 3
		case p[0] == "STACK":
			at = 2
		case p[0] == "INLINE":
			for j := 5; j < len(p); j += 2 {
				checkShift(t, p[j], k[j], pl[i])
				shifted++
			}
		default: // a line record
			at = 0
		}
		if at >= 0 {
			checkShift(t, p[at], k[at], pl[i])
			shifted++
			p[at], k[at] = "", ""
		}
		if len(p) > 0 && p[0] != "INLINE" && strings.Join(p, " ") != strings.Join(k, " ") {
			t.Errorf("line %d: %q vs %q: more than the address differs", i, pl[i], kl[i])
		}
	}
	if shifted < 10 {
		t.Errorf("only %d addresses compared", shifted)
	}
	for _, args := range [][]string{{"-a", "x86_64", "-d", bin}, {"--arch", "arm64", "-d", bin}} {
		if r := cmdtest.Run(t, prog, args...); r.Code != 0 || r.Stdout != plain.Stdout {
			t.Errorf("%q: exit %d, differs from the plain output: %s", args, r.Code, r.Stderr)
		}
	}
}

func checkShift(t *testing.T, plain, kept, line string) {
	t.Helper()
	p, err1 := strconv.ParseUint(plain, 16, 64)
	k, err2 := strconv.ParseUint(kept, 16, 64)
	if err1 != nil || err2 != nil || k != p+0x400000 {
		t.Errorf("%q: address %s with -a, want %x", line, kept, p+0x400000)
	}
}

// TestSeveralInputs: as Mozilla's dump_syms, binaries after the first
// (files, where Breakpad's DEBUG_DIR arguments are directories) are dumped
// too, -j N at a time: into --store each as its own dump, to stdout in the
// order given; the results do not depend on -j; a binary that fails is
// named and the others are still written (exit 1).
func TestSeveralInputs(t *testing.T) {
	prog := cmdtest.Build(t, ".")
	bins := []string{corpus.File(t, "elf/x64-dw4/full/inline_chain"), corpus.File(t, "elf/arm64/full/libshapes.so"),
		corpus.File(t, "windows/breakpad/dump_syms_regtest.pdb"), corpus.File(t, "elf/x64-dw4/full/deep_chain")}
	var want []string
	for _, b := range bins {
		r := cmdtest.Run(t, prog, "-d", b)
		if r.Code != 0 {
			t.Fatalf("%s: exit %d %s", b, r.Code, r.Stderr)
		}
		want = append(want, r.Stdout)
	}
	if r := cmdtest.Run(t, prog, append([]string{"-d", "-j", "3"}, bins...)...); r.Code != 0 || r.Stdout != strings.Join(want, "") {
		t.Errorf("-j 3 to stdout: exit %d, output equal %v: %s", r.Code, r.Stdout == strings.Join(want, ""), r.Stderr)
	}
	var stores []string
	for _, j := range []string{"1", "4"} {
		store := t.TempDir()
		stores = append(stores, store)
		if r := cmdtest.Run(t, prog, append([]string{"-d", "-j", j, "--store", store}, bins...)...); r.Code != 0 || r.Stdout != "" {
			t.Fatalf("-j %s --store: exit %d: %s", j, r.Code, r.Stderr)
		}
	}
	for i, w := range want {
		f := strings.Fields(w[:strings.IndexByte(w, '\n')])
		name, id := f[4], f[3]
		sym := strings.TrimSuffix(name, ".pdb") + ".sym"
		for _, store := range stores {
			got, err := os.ReadFile(filepath.Join(store, name, id, sym))
			if err != nil || string(got) != w {
				t.Errorf("%s in %s: %v, equal to its own dump %v", bins[i], store, err, string(got) == w)
			}
		}
	}
	bad := filepath.Join(t.TempDir(), "notes.txt")
	os.WriteFile(bad, []byte("not a binary"), 0o644)
	store := t.TempDir()
	r := cmdtest.Run(t, prog, "--store", store, bins[0], bad, bins[1])
	if r.Code != 1 || !strings.Contains(r.Stderr, bad+": not an ELF") || !strings.Contains(r.Stderr, "1 of 3 binaries not dumped") {
		t.Errorf("a bad input among three: exit %d, %q", r.Code, r.Stderr)
	}
	if ents, _ := os.ReadDir(store); len(ents) != 2 {
		t.Errorf("a bad input among three: %d modules stored, want 2", len(ents))
	}
}

// TestPDBHolesSaid: one-page holes in dump_syms_regtest.pdb that used to
// change the output with nothing on stderr, even with -v (issue 31: line
// subsections of a module zeroed, frame programs' strings zeroed), are
// said once per kind by default, and refused with --strict.
func TestPDBHolesSaid(t *testing.T) {
	prog := cmdtest.Build(t, ".")
	src, err := os.ReadFile(corpus.File(t, "windows/breakpad/dump_syms_regtest.pdb"))
	if err != nil {
		t.Fatal(err)
	}
	const page = 1024 // the file's MSF block size
	for _, c := range []struct {
		page int
		want string
	}{
		{43, "dump_syms: warning: module line subsection kinds: 1 inconsistent with the rest of the file, used as read (first: module "},
		{55, "dump_syms: warning: line file references: 1 inconsistent with the rest of the file, used as read (first: file checksum 0x3f0: its name (names offset 0x0) is empty)"},
		{103, "dump_syms: warning: line order: 1 inconsistent with the rest of the file, used as read (first: module "},
		{511, "dump_syms: warning: module streams: 1 inconsistent with the rest of the file, used as read (first: module "},
		{589, "dump_syms: warning: frame data programs: 4 inconsistent with the rest of the file, used as read (first: frame data at 0x114c: its program string"},
	} {
		b := slices.Clone(src)
		clear(b[c.page*page : (c.page+1)*page])
		p := filepath.Join(t.TempDir(), "dump_syms_regtest.pdb")
		os.WriteFile(p, b, 0o644)
		if r := cmdtest.Run(t, prog, p); r.Code != 0 || !strings.HasPrefix(r.Stderr, c.want) || strings.Count(r.Stderr, "\n") != 1 || !strings.Contains(r.Stdout, "FUNC ") {
			t.Errorf("page %d zeroed: exit %d, stderr %q", c.page, r.Code, r.Stderr)
		}
		if r := cmdtest.Run(t, prog, "--strict", p); r.Code != 1 || r.Stdout != "" {
			t.Errorf("page %d zeroed, --strict: exit %d, %d bytes out", c.page, r.Code, len(r.Stdout))
		}
	}
}
