package main

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/gobreakpad/gobreakpad/internal/testkit/cmdtest"
	"github.com/gobreakpad/gobreakpad/internal/testkit/corpus"
	"github.com/gobreakpad/gobreakpad/stackwalk/batch"
	"github.com/gobreakpad/gobreakpad/stackwalk/golden"
)

// The corpus cases the tests walk: one per generated program, x64 -O2.
var testCases = []string{"deep_chain", "inline_chain", "null_write", "qsort_cb", "solib_link", "threads"}

// setup returns the dumps of testCases and their symbol directories.
func setup(t *testing.T) (dumps, syms []string) {
	dir := corpus.Dir(t)
	syms = []string{filepath.Join(dir, "generated", "syslib-symbols")}
	for _, c := range testCases {
		d := filepath.Join(dir, "generated", c+"-x64-O2")
		if _, err := os.Stat(filepath.Join(d, "crash.dmp")); err != nil {
			t.Skipf("corpus case %s: %v", d, err)
		}
		dumps = append(dumps, filepath.Join(d, "crash.dmp"))
		syms = append(syms, filepath.Join(d, "symbols"))
	}
	return dumps, syms
}

// runIn runs crashdiff in this process and returns its output and exit
// status.
func runIn(t *testing.T, cfg config) (string, int) {
	t.Helper()
	var out, errOut bytes.Buffer
	cfg.quiet = true
	if cfg.workers == 0 {
		cfg.workers = 2
	}
	code := exitCode(run(context.Background(), &out, &errOut, cfg), &errOut)
	if code == 2 {
		t.Logf("stderr: %s", errOut.String())
	}
	return out.String(), code
}

// statuses maps each dump of a text report to its status.
func statuses(out string) map[string]golden.Status {
	m := map[string]golden.Status{}
	for _, l := range strings.Split(out, "\n") {
		f := strings.Fields(l)
		if len(f) == 2 && strings.HasSuffix(f[1], ".dmp") {
			m[f[1]] = golden.Status(f[0])
		}
	}
	return m
}

// TestGolden: --update then a compare finds every dump unchanged; a symbol
// file with one line number changed makes exactly the dump using it
// "changed", with a diff naming the frame.
func TestGolden(t *testing.T) {
	dumps, syms := setup(t)
	gdir := filepath.Join(t.TempDir(), "golden")
	out, code := runIn(t, config{golden: gdir, update: true, symbolPaths: syms, args: dumps})
	if code != 0 || !strings.Contains(out, "6 dumps: 6 written") {
		t.Fatalf("--update: exit %d\n%s", code, out)
	}
	out, code = runIn(t, config{golden: gdir, symbolPaths: syms, args: dumps})
	if code != 0 || !strings.Contains(out, "6 dumps: 6 unchanged") {
		t.Fatalf("compare: exit %d\n%s", code, out)
	}

	// Change the line of null_write's crashing frame in a copy of its symbols.
	target := dumps[2]
	data, err := os.ReadFile(golden.Path(gdir, batch.Key(target)))
	if err != nil {
		t.Fatal(err)
	}
	rec, err := golden.Parse(bytes.NewReader(data), "golden")
	if err != nil {
		t.Fatal(err)
	}
	top := rec.Frames[0]
	if top.Line == 0 {
		t.Fatalf("frame 0 of %s has no line: %+v", target, top)
	}
	changed := make([]string, len(syms))
	copy(changed, syms)
	changed[3] = copySymbolsChangingLine(t, syms[3], top.File, top.Line, top.Line+1000)

	out, code = runIn(t, config{golden: gdir, symbolPaths: changed, args: dumps})
	st := statuses(out)
	n := 0
	for d, s := range st {
		if s == golden.Changed {
			n++
			if d != batch.Key(target) {
				t.Errorf("%s changed", d)
			}
		}
	}
	want := "-#0 " + top.String()
	top.Line += 1000
	want2 := "+#0 " + top.String()
	if code != 1 || n != 1 || !strings.Contains(out, want) || !strings.Contains(out, want2) {
		t.Errorf("changed line: exit %d, %d changed, want a diff with %q and %q:\n%s", code, n, want, want2, out)
	}

	// JSON says the same.
	out, code = runIn(t, config{golden: gdir, symbolPaths: changed, args: dumps, json: true})
	var rep golden.Report
	if err := json.Unmarshal([]byte(out), &rep); err != nil {
		t.Fatalf("--json: %v\n%s", err, out)
	}
	if code != 1 || rep.Counts[golden.Changed] != 1 || rep.Counts[golden.Unchanged] != 5 || len(rep.Signatures) == 0 {
		t.Errorf("--json: exit %d, counts %v", code, rep.Counts)
	}
}

// copySymbolsChangingLine copies a symbol directory, changing the line
// number of the LINE records of file at line from to to.
func copySymbolsChangingLine(t *testing.T, src, file string, from, to int) string {
	dst := filepath.Join(t.TempDir(), "symbols")
	changed := 0
	err := filepath.WalkDir(src, func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(src, p)
		out := filepath.Join(dst, rel)
		if d.IsDir() {
			return os.MkdirAll(out, 0o755)
		}
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		lines := strings.Split(string(data), "\n")
		fileNum := ""
		for i, l := range lines {
			f := strings.Fields(l)
			if len(f) >= 3 && f[0] == "FILE" && strings.Join(f[2:], " ") == file {
				fileNum = f[1]
			}
			// LINE records: address size line filenum (hex, hex, decimal, decimal).
			if len(f) == 4 && f[3] == fileNum && f[2] == strconv.Itoa(from) && isHex.MatchString(f[0]) {
				lines[i] = strings.Join([]string{f[0], f[1], strconv.Itoa(to), f[3]}, " ")
				changed++
			}
		}
		return os.WriteFile(out, []byte(strings.Join(lines, "\n")), 0o644)
	})
	if err != nil {
		t.Fatal(err)
	}
	if changed == 0 {
		t.Fatalf("no LINE record of %s at line %d in %s", file, from, src)
	}
	return dst
}

var isHex = regexp.MustCompile(`^[0-9a-f]+$`)

// TestMissingAndNew: dumps of the same name in two directories get their
// own golden files; a removed dump is "missing", an added one "new";
// --update removes the golden file of a missing dump.
func TestMissingAndNew(t *testing.T) {
	dumps, syms := setup(t)
	root := t.TempDir()
	var copies []string
	for i, d := range dumps[:3] {
		data, err := os.ReadFile(d)
		if err != nil {
			t.Fatal(err)
		}
		p := filepath.Join(root, "case"+strconv.Itoa(i), "crash.dmp")
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, data, 0o644); err != nil {
			t.Fatal(err)
		}
		copies = append(copies, p)
	}
	gdir := filepath.Join(t.TempDir(), "golden")
	if out, code := runIn(t, config{golden: gdir, update: true, symbolPaths: syms, args: []string{root}}); code != 0 || !strings.Contains(out, "3 written") {
		t.Fatalf("--update: exit %d\n%s", code, out)
	}
	if err := os.Remove(copies[1]); err != nil {
		t.Fatal(err)
	}
	out, code := runIn(t, config{golden: gdir, symbolPaths: syms, args: []string{root}})
	st := statuses(out)
	if code != 1 || st[batch.Key(copies[1])] != golden.Missing || st[batch.Key(copies[0])] != golden.Unchanged || st[batch.Key(copies[2])] != golden.Unchanged {
		t.Errorf("removed dump: exit %d\n%s", code, out)
	}
	// A dump outside the given paths is not missing.
	if out, code := runIn(t, config{golden: gdir, symbolPaths: syms, args: []string{copies[0]}}); code != 0 {
		t.Errorf("one dump: exit %d\n%s", code, out)
	}
	if out, code := runIn(t, config{golden: gdir, update: true, symbolPaths: syms, args: []string{root}}); code != 0 || !strings.Contains(out, "1 removed") {
		t.Errorf("--update after removal: exit %d\n%s", code, out)
	}
	data, _ := os.ReadFile(dumps[3])
	os.WriteFile(filepath.Join(root, "case1", "other.dmp"), data, 0o644)
	out, code = runIn(t, config{golden: gdir, symbolPaths: syms, args: []string{root}})
	if st := statuses(out); code != 1 || st[batch.Key(filepath.Join(root, "case1", "other.dmp"))] != golden.New {
		t.Errorf("added dump: exit %d\n%s", code, out)
	}
}

// TestExitStatus runs the built command: 0 unchanged, 1 changed, 2 could
// not run (missing golden directory, no dumps); symbols from a server.
func TestExitStatus(t *testing.T) {
	dumps, syms := setup(t)
	if testing.Short() {
		t.Skip("builds the command")
	}
	bin := filepath.Join(t.TempDir(), "crashdiff")
	if out, err := exec.Command("go", "build", "-o", bin, ".").CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	gdir := filepath.Join(t.TempDir(), "golden")
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		for _, root := range syms {
			if st, err := os.Stat(filepath.Join(root, filepath.FromSlash(r.URL.Path))); err == nil && st.Mode().IsRegular() {
				http.FileServer(http.Dir(root)).ServeHTTP(w, r)
				return
			}
		}
		http.NotFound(w, r)
	}))
	defer srv.Close()
	args := func(extra ...string) []string {
		var a []string
		for _, s := range syms {
			a = append(a, "-s", s)
		}
		return append(append(a, extra...), dumps[0])
	}
	for _, c := range []struct {
		args   []string
		code   int
		stderr string
	}{
		{args("--golden", gdir, "--update"), 0, "crashdiff: walked 1/1 dumps"},
		{args("--golden", gdir), 0, ""},
		// The same symbols from a Breakpad-layout HTTP store, prefetched
		// (the default) or not: unchanged.
		{[]string{"--golden", gdir, "--symbols-url", srv.URL, "--symbols-cache", t.TempDir(), "-q", dumps[0]}, 0, ""},
		{[]string{"--golden", gdir, "--symbols-url", srv.URL, "--symbols-cache", t.TempDir(), "--prefetch", "0", "-q", dumps[0]}, 0, ""},
		{args("--golden", filepath.Join(gdir, "none")), 2, "not found"},
		{[]string{"--golden", gdir, t.TempDir()}, 2, "no .dmp file"},
		{args("--golden", gdir, "--no-such-flag"), 2, ""},
		{append(args("--golden", gdir), dumps[1]), 1, ""},
	} {
		r := cmdtest.Run(t, bin, c.args...)
		if r.Code != c.code || !strings.Contains(r.Stderr, c.stderr) {
			t.Errorf("crashdiff %s: exit %d, want %d; stderr:\n%s", strings.Join(c.args, " "), r.Code, c.code, r.Stderr)
		}
	}
}

// TestMicrodumpsAndFailures: a folder of microdumps, minidumps and files
// that are neither. The microdumps are walked (crashdiff called them
// "walked" with a "not MDMP" error each), the file that is no dump is
// "failed", and the run ends with exit status 1 and the failure counted
// (it ended "N dumps: N walked" with exit 0).
func TestMicrodumpsAndFailures(t *testing.T) {
	dumps, _ := setup(t)
	proc := filepath.Join(corpus.Dir(t), "breakpad", "processor")
	dir := t.TempDir()
	cp := func(from, to string) {
		b, err := os.ReadFile(from)
		if err != nil {
			t.Skipf("corpus: %v", err)
		}
		if err := os.WriteFile(filepath.Join(dir, to), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	cp(filepath.Join(proc, "microdump-arm64.dmp"), "micro-arm64.dmp")
	cp(filepath.Join(proc, "microdump-x86.dmp"), "micro-x86.dmp")
	cp(dumps[0], "mini.dmp")
	if err := os.WriteFile(filepath.Join(dir, "short.dmp"), []byte("MDMP\x93\xa7\x00\x00junk..."), 0o644); err != nil {
		t.Fatal(err)
	}
	out, code := runIn(t, config{args: []string{dir}})
	st := statuses(out)
	for name, want := range map[string]golden.Status{"micro-arm64.dmp": golden.Walked, "micro-x86.dmp": golden.Walked, "mini.dmp": golden.Walked, "short.dmp": golden.Failed} {
		k := batch.Key(filepath.Join(dir, name))
		if st[k] != want {
			t.Errorf("%s: %q, want %q\n%s", name, st[k], want, out)
		}
	}
	if code != 1 {
		t.Errorf("exit status %d, want 1 (a dump failed)\n%s", code, out)
	}
	if !strings.Contains(out, "4 dumps: 3 walked, 1 failed;") {
		t.Errorf("summary: want \"4 dumps: 3 walked, 1 failed\"\n%s", out)
	}
	if strings.Contains(out, "not MDMP") || strings.Count(out, golden.Unreadable) != 1 {
		t.Errorf("a microdump was read as a minidump:\n%s", out)
	}
}
