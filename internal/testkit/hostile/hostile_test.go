//go:build linux

package hostile

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/gobreakpad/gobreakpad/internal/testkit/corpus"
)

// Generous bounds: the fixed programs take milliseconds and tens of MB on
// these inputs; before the fixes they took minutes, gigabytes, or died.
const (
	// maxCPU bounds the child's CPU time (user + system, from its
	// rusage): on a loaded shared machine wall time says little (a run of
	// 1.8 s of CPU took 20 s at a load of 23). A child still running after
	// maxWall is killed as hung.
	maxCPU  = 30 * time.Second
	maxWall = 4 * maxCPU
	maxRSS  = 300 << 20 // bytes
)

// bins builds the programs once per test binary.
var bins struct {
	dir string
	err error
}

func binDir(t *testing.T) string {
	t.Helper()
	if bins.dir == "" && bins.err == nil {
		bins.dir, bins.err = os.MkdirTemp("", "gobreakpad-hostile-")
		if bins.err == nil {
			cmd := exec.Command("go", "build", "-o", bins.dir+string(filepath.Separator),
				"./cmd/dump_syms", "./cmd/minidump_dump", "./cmd/minidump_stackwalk")
			cmd.Dir = corpus.Root()
			if out, err := cmd.CombinedOutput(); err != nil {
				bins.err = fmt.Errorf("go build: %v\n%s", err, out)
			}
		}
	}
	if bins.err != nil {
		t.Skipf("cannot build the programs: %v", bins.err)
	}
	return bins.dir
}

func TestMain(m *testing.M) {
	code := m.Run()
	if bins.dir != "" {
		os.RemoveAll(bins.dir)
	}
	os.Exit(code)
}

// countWriter keeps the first bytes written and counts them all.
type countWriter struct {
	n    int64
	head bytes.Buffer
}

func (w *countWriter) Write(p []byte) (int, error) {
	w.n += int64(len(p))
	if room := 1<<20 - w.head.Len(); room > 0 {
		w.head.Write(p[:min(len(p), room)])
	}
	return len(p), nil
}

// run is one program run and what is checked of it.
type run struct {
	name    string
	prog    string
	args    []string
	exit    int
	anyExit bool     // any exit status but a crash's
	stderr  []string // substrings stderr must hold
	stdout  []string // substrings the first MB of stdout must hold
	maxOut  int64
	check   func(t *testing.T, stdout string)
}

func (r run) do(t *testing.T) {
	t.Helper()
	cmd := exec.Command(filepath.Join(binDir(t), r.prog), r.args...)
	var out countWriter
	var errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	start := time.Now()
	done := make(chan error, 1)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() { done <- cmd.Wait() }()
	var err error
	select {
	case err = <-done:
	case <-time.After(maxWall):
		cmd.Process.Kill()
		<-done
		t.Fatalf("%s: still running after %v: killed", r.name, maxWall)
	}
	wall := time.Since(start)
	exit := 0
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		exit = ee.ExitCode()
	} else if err != nil {
		t.Fatal(err)
	}
	ru := cmd.ProcessState.SysUsage().(*syscall.Rusage)
	rss := int64(ru.Maxrss) << 10
	cpu := time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
	stderr := errb.String()
	t.Logf("%s: exit %d, %v (CPU %v), peak RSS %.1f MB, %d bytes of output, stderr %.300q", r.name, exit, wall.Round(time.Millisecond), cpu.Round(time.Millisecond), float64(rss)/(1<<20), out.n, stderr)
	if strings.Contains(stderr, "panic:") || strings.Contains(stderr, "goroutine ") {
		t.Errorf("%s: panicked:\n%s", r.name, stderr)
	}
	if exit != r.exit {
		t.Errorf("%s: exit status %d, want %d", r.name, exit, r.exit)
	}
	for _, s := range r.stderr {
		if !strings.Contains(stderr, s) {
			t.Errorf("%s: stderr lacks %q", r.name, s)
		}
	}
	for _, s := range r.stdout {
		if !strings.Contains(out.head.String(), s) {
			t.Errorf("%s: stdout lacks %q; it starts %.600q", r.name, s, out.head.String())
		}
	}
	maxOut := r.maxOut
	if maxOut == 0 {
		maxOut = 1 << 20
	}
	if out.n > maxOut {
		t.Errorf("%s: %d bytes of output, bound %d", r.name, out.n, maxOut)
	}
	if cpu > maxCPU {
		t.Errorf("%s: took %v of CPU, bound %v", r.name, cpu, maxCPU)
	}
	if rss > maxRSS {
		t.Errorf("%s: peak RSS %d MB, bound %d MB", r.name, rss>>20, maxRSS>>20)
	}
	if r.check != nil {
		r.check(t, out.head.String())
	}
}

// TestCorpus runs every file of ../shared/corpus/hostile; a file without a
// case here fails the test, so new hostile inputs get one.
func TestCorpus(t *testing.T) {
	dir := corpus.File(t, "hostile/README.md")
	dir = filepath.Dir(dir)
	f := func(name string) string { return filepath.Join(dir, name) }
	longSyms := longFuncSyms(t, func(*bufio.Writer) error { return nil })
	cases := map[string][]run{
		"elf-line-file-entry-leb.elf": {{prog: "dump_syms", args: []string{"-v", f("elf-line-file-entry-leb.elf")},
			stderr: []string{"line table header: file 1: directory index", "out of range"}, stdout: []string{"MODULE Linux"}}},
		"elf-line-file-dir-index.elf": {{prog: "dump_syms", args: []string{"-v", f("elf-line-file-dir-index.elf")},
			stderr: []string{"directory index 18446744073709551615 out of range"}, stdout: []string{"FUNC "}}},
		"elf-line-set-file-huge.elf": {{prog: "dump_syms", args: []string{"-v", f("elf-line-set-file-huge.elf")},
			stderr: []string{"corrupt line program"}, stdout: []string{"FUNC "}}},
		"elf-dw5-line-dir-count-huge.elf": {{prog: "dump_syms", args: []string{"-v", f("elf-dw5-line-dir-count-huge.elf")},
			stderr: []string{"line table header: line table entry count beyond its data"}, stdout: []string{"MODULE Linux"}}},
		"elf-zlib-bomb-4G.elf": {
			{prog: "dump_syms", args: []string{"-v", f("elf-zlib-bomb-4G.elf")},
				stderr: []string{"section .debug_info: compressed 4174537 bytes declare 4294967296 decompressed, over the limit"}, stdout: []string{"MODULE Linux"}},
			// Raising the limit past the declared size is the user's choice;
			// not run (it would take 4 GiB).
		},
		"elf-namespaces-30000-deep.elf": {{prog: "dump_syms", args: []string{f("elf-namespaces-30000-deep.elf")},
			stdout: []string{"FUNC "}, check: func(t *testing.T, out string) {
				if n := strings.Count(out, "::"); n < 30000 {
					t.Errorf("the function's name has %d scopes, want 30000", n)
				}
			}}},
		"dump-exception-params-4G.dmp": {
			{prog: "minidump_dump", args: []string{f("dump-exception-params-4G.dmp")}, exit: 1,
				stdout: []string{"exception_information[14]", "exception_information: 4294967280 more claimed, not printed (a record holds 15)"}},
			{prog: "minidump_stackwalk", args: []string{f("dump-exception-params-4G.dmp")}, stdout: []string{"Crash reason:"}},
		},
		"dump-thread-count-4G.dmp": {
			{prog: "minidump_stackwalk", args: []string{f("dump-thread-count-4G.dmp")},
				stderr: []string{"thread list: count 4294967295 needs", "(no thread walked)"}},
			{prog: "minidump_stackwalk", args: []string{"-m", f("dump-thread-count-4G.dmp")}, stderr: []string{"thread list: count 4294967295"}},
			{prog: "minidump_stackwalk", args: []string{"--json", f("dump-thread-count-4G.dmp")},
				stdout: []string{`"soft_errors":[{"ProcessingProblem":"thread list: count 4294967295 needs`}},
		},
		"dump-200000-threads-one-context.dmp": {
			{prog: "minidump_stackwalk", args: []string{f("dump-200000-threads-one-context.dmp")},
				stderr: []string{"thread list: entry", "decoded data exceeds the file's size", "(no thread walked)"}},
			{prog: "minidump_stackwalk", args: []string{"-m", f("dump-200000-threads-one-context.dmp")}, stderr: []string{"thread list: entry"}},
			{prog: "minidump_stackwalk", args: []string{"--json", f("dump-200000-threads-one-context.dmp")},
				stdout: []string{`"soft_errors":[{"ProcessingProblem":"thread list: entry`}},
			{prog: "minidump_dump", args: []string{f("dump-200000-threads-one-context.dmp")}, exit: 1},
		},
		"dump-module-name-newline.dmp": {
			{prog: "minidump_stackwalk", args: []string{f("dump-module-name-newline.dmp")}, stdout: []string{`a\x0ab + 0x1000`},
				check: noLineStarts("b")},
			{prog: "minidump_stackwalk", args: []string{"-m", f("dump-module-name-newline.dmp")}, stdout: []string{"Module|ab|"},
				check: noLineStarts("b")},
			{prog: "minidump_stackwalk", args: []string{"--json", f("dump-module-name-newline.dmp")}, stdout: []string{`"module":"a\nb"`}},
			{prog: "minidump_dump", args: []string{f("dump-module-name-newline.dmp")}, stdout: []string{`(code_file)                     = "a\x0ab"`, `(debug_file)                    = "a\x0ab"`},
				check: noLineStarts(`b"`)},
		},
		"dump-for-long-func-name.dmp": {
			{prog: "minidump_stackwalk", args: []string{f("dump-for-long-func-name.dmp"), longSyms}, maxOut: 32 << 20,
				stdout: []string{"app!aaaa", "...[16711680 more bytes] + 0x20"}},
			{prog: "minidump_stackwalk", args: []string{"-m", f("dump-for-long-func-name.dmp"), longSyms}, maxOut: 32 << 20,
				stdout: []string{"...[16711680 more bytes]|||0x20"}},
			{prog: "minidump_stackwalk", args: []string{"--json", f("dump-for-long-func-name.dmp"), longSyms},
				stdout: []string{`...[16711680 more bytes]"`}, maxOut: 64 << 20},
		},
	}
	ents, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range ents {
		if e.Name() == "README.md" {
			continue
		}
		runs, ok := cases[e.Name()]
		if !ok {
			t.Errorf("%s: no case in TestCorpus", e.Name())
			continue
		}
		t.Run(e.Name(), func(t *testing.T) {
			for i, r := range runs {
				r.name = fmt.Sprintf("%s %s #%d", r.prog, e.Name(), i)
				r.do(t)
			}
		})
	}
}

// noLineStarts checks that no output line starts with prefix (what an
// injected newline would make).
func noLineStarts(prefix string) func(t *testing.T, out string) {
	return func(t *testing.T, out string) {
		for _, l := range strings.Split(out, "\n") {
			if strings.HasPrefix(l, prefix) {
				t.Errorf("injected line %q", l)
			}
		}
	}
}

// longFuncSyms writes the symbol store of the README's recipe for
// dump-for-long-func-name.dmp: module app with a FUNC named by 16 MiB of
// 'a', plus extra records; it returns the store's root.
func longFuncSyms(t *testing.T, extra func(w *bufio.Writer) error) string {
	t.Helper()
	root := t.TempDir()
	dir := filepath.Join(root, "app", "333231303534373638396162636465660")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	// Written in pieces: the test's own peak memory would count in the
	// child's (Linux carries the high-water mark across the exec of a
	// vforked child).
	f, err := os.Create(filepath.Join(dir, "app.sym"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	w := bufio.NewWriter(f)
	w.WriteString("MODULE Linux x86_64 333231303534373638396162636465660 app\nFUNC 1000 100 0 ")
	a := bytes.Repeat([]byte("a"), 1<<20)
	for range 16 {
		w.Write(a)
	}
	w.WriteString("\n1020 10 1 0\nFILE 1 a.c\n")
	if err := extra(w); err != nil {
		t.Fatal(err)
	}
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	return root
}

// TestGeneratedRules walks the long-name dump with symbol files whose
// STACK CFI rules are huge: refused before tokenizing, so the walk falls
// back to scanning in bounded memory.
func TestGeneratedRules(t *testing.T) {
	dmp := corpus.File(t, "hostile/dump-for-long-func-name.dmp")
	for _, n := range []int{1e6, 1e7} {
		t.Run(fmt.Sprint(n), func(t *testing.T) {
			syms := longFuncSyms(t, func(w *bufio.Writer) error {
				w.WriteString("STACK CFI INIT 1000 100 .cfa: $rsp 8 + .ra: ")
				for range n {
					w.WriteString("$rsp ")
				}
				w.WriteString("\nSTACK CFI 1010 $rbx: ")
				for range n {
					w.WriteString("^ ")
				}
				_, err := w.WriteString("\n")
				return err
			})
			run{name: fmt.Sprintf("walk with %d-token rules", n), prog: "minidump_stackwalk", args: []string{"-m", dmp, syms},
				maxOut: 32 << 20, stdout: []string{"app|aaaa"}}.do(t)
		})
	}
}
