package main

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/gobreakpad/gobreakpad/internal/testkit/cmdtest"
	"github.com/gobreakpad/gobreakpad/internal/testkit/corpus"
)

func TestMain(m *testing.M) { cmdtest.Main(m) }

// TestBreakpadReferences runs the built program over the corpus microdumps
// that have Breakpad's microdump_stackwalk outputs.
func TestBreakpadReferences(t *testing.T) {
	dir := filepath.Join(corpus.Dir(t), "breakpad/processor")
	prog := cmdtest.Build(t, ".")
	syms := filepath.Join(dir, "symbols/microdump")
	for _, a := range []string{"arm", "arm64"} {
		dump := filepath.Join(dir, "microdump-"+a+".dmp")
		for _, c := range []struct {
			args []string
			ref  string
		}{
			{[]string{dump, syms}, "microdump.stackwalk-" + a + ".out"},
			{[]string{"-m", dump, syms}, "microdump.stackwalk.machine_readable-" + a + ".out"},
		} {
			want, err := os.ReadFile(filepath.Join(dir, c.ref))
			if err != nil {
				t.Fatal(err)
			}
			r := cmdtest.Run(t, prog, c.args...)
			if r.Code != 0 || r.Stderr != "" || r.Stdout != string(want) {
				t.Errorf("%v: exit %d, stderr %q, stdout equal to %s: %v", c.args, r.Code, r.Stderr, c.ref, r.Stdout == string(want))
			}
		}
	}
	// The same microdump as bare lines, without logcat's prefix.
	text, err := os.ReadFile(filepath.Join(dir, "microdump-arm.dmp"))
	if err != nil {
		t.Fatal(err)
	}
	bare := regexp.MustCompile(`(?m)^W/google-breakpad\( *\d+\): `).ReplaceAll(text, nil)
	path := filepath.Join(t.TempDir(), "bare.txt")
	if err := os.WriteFile(path, bare, 0o644); err != nil {
		t.Fatal(err)
	}
	want, _ := os.ReadFile(filepath.Join(dir, "microdump.stackwalk-arm.out"))
	if r := cmdtest.Run(t, prog, path, syms); r.Code != 0 || r.Stdout != string(want) {
		t.Errorf("bare lines: exit %d, stderr %q, output differs: %v", r.Code, r.Stderr, r.Stdout != string(want))
	}
}

// TestX86_64 walks an x86_64 microdump, which Breakpad's processor rejects.
func TestX86_64(t *testing.T) {
	c := filepath.Join(corpus.Dir(t), "generated/null_write-x64-O2-microdump")
	if _, err := os.Stat(c); err != nil {
		t.Skip(err)
	}
	prog := cmdtest.Build(t, ".")
	r := cmdtest.Run(t, prog, filepath.Join(c, "crash.microdump"), filepath.Join(c, "symbols"))
	if r.Code != 0 || r.Stderr != "" || !strings.Contains(r.Stdout, "CPU: x86_64\n") ||
		!strings.Contains(r.Stdout, " 0  null_write!bump_counter [null_write.c : 11 + 0x") ||
		!strings.Contains(r.Stdout, "null_write!main [null_write.c : 32 + 0x") {
		t.Errorf("exit %d, stderr %q, stdout:\n%s", r.Code, r.Stderr, r.Stdout)
	}
}

// TestErrors checks exit statuses and messages of what cannot be walked and
// of usage errors.
func TestErrors(t *testing.T) {
	prog := cmdtest.Build(t, ".")
	tmp := t.TempDir()
	notMD := filepath.Join(tmp, "log.txt")
	os.WriteFile(notMD, []byte("just a log\n"), 0o644)
	noCtx := filepath.Join(tmp, "noctx.txt")
	os.WriteFile(noCtx, []byte("-----BEGIN BREAKPAD MICRODUMP-----\nO L x86 01 i686 v\nC 0011\n-----END BREAKPAD MICRODUMP-----\n"), 0o644)
	empty := filepath.Join(tmp, "empty.txt")
	os.WriteFile(empty, nil, 0o644)
	for _, c := range []struct {
		args   []string
		code   int
		stderr string // a regexp over the whole of stderr
	}{
		{nil, 2, `^microdump_stackwalk: missing microdump file \(see --help\)\n$`},
		{[]string{"-x", notMD}, 2, `^microdump_stackwalk: flag provided but not defined: -x \(see --help\)\n$`},
		{[]string{filepath.Join(tmp, "none")}, 1, `^microdump_stackwalk: open .*none: no such file or directory\n$`},
		{[]string{empty}, 1, `^microdump_stackwalk: .*empty.txt: microdump is empty\n$`},
		{[]string{notMD}, 1, `^microdump_stackwalk: .*log.txt: no microdump: no -----BEGIN BREAKPAD MICRODUMP----- line\n$`},
		{[]string{noCtx}, 1, `(?s)^microdump_stackwalk: warning: .*malformed x86 context: 2 bytes instead of 716\n` +
			`microdump_stackwalk: .*no usable CPU context \(C record\)\n$`},
	} {
		r := cmdtest.Run(t, prog, c.args...)
		if r.Code != c.code || r.Stdout != "" || !regexp.MustCompile(c.stderr).MatchString(r.Stderr) {
			t.Errorf("%v: exit %d (want %d), stdout %q, stderr %q (want %s)", c.args, r.Code, c.code, r.Stdout, r.Stderr, c.stderr)
		}
	}
	if r := cmdtest.Run(t, prog, "--help"); r.Code != 0 || r.Stderr != "" || !strings.Contains(r.Stdout, "MICRODUMP [SYMBOL_PATH ...]") {
		t.Errorf("--help: exit %d, stderr %q, stdout %q", r.Code, r.Stderr, r.Stdout)
	}
	if r := cmdtest.Run(t, prog, "--version"); r.Code != 0 || r.Stderr != "" || !strings.HasPrefix(r.Stdout, "microdump_stackwalk ") {
		t.Errorf("--version: exit %d, stderr %q, stdout %q", r.Code, r.Stderr, r.Stdout)
	}
}

// TestMIPS walks the mips and mips64 microdumps to the frames Breakpad's
// microdump_processor_unittest expects (blaTest, Crash, main, then libc).
func TestMIPS(t *testing.T) {
	bp := filepath.Join(corpus.Dir(t), "breakpad/processor")
	prog := cmdtest.Build(t, ".")
	for _, dump := range []string{"microdump-mips32.dmp", "microdump-mips64.dmp"} {
		r := cmdtest.Run(t, prog, "-m", filepath.Join(bp, dump), filepath.Join(bp, "symbols/microdump"))
		want := regexp.MustCompile(`(?m)^0\|0\|crash_example\|blaTest\|.*\n0\|1\|crash_example\|Crash\|.*\n0\|2\|crash_example\|main\|.*\n0\|3\|libc\.so\|\|\|\|0x[0-9a-f]+\n\z`)
		if r.Code != 0 || r.Stderr != "" || !want.MatchString(r.Stdout) {
			t.Errorf("%s: exit %d, stderr %q, stdout:\n%s", dump, r.Code, r.Stderr, r.Stdout)
		}
	}
}

// TestMissingSymbolPath: a symbol path that does not exist is a warning;
// the walk proceeds.
func TestMissingSymbolPath(t *testing.T) {
	dump := filepath.Join(corpus.Dir(t), "breakpad/processor/microdump-arm.dmp")
	prog := cmdtest.Build(t, ".")
	r := cmdtest.Run(t, prog, dump, "/nonexistent/symbols")
	if r.Code != 0 || !strings.Contains(r.Stdout, "Thread 0 (crashed)") ||
		r.Stderr != "microdump_stackwalk: warning: symbol path /nonexistent/symbols does not exist; walking without it\n" {
		t.Errorf("exit %d, stderr %q", r.Code, r.Stderr)
	}
}
