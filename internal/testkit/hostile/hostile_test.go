//go:build linux

package hostile

import (
	"bufio"
	"bytes"
	"cmp"
	"crypto/sha256"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
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

// bins builds the programs once per test binary (mu: subtests run in
// parallel).
var bins struct {
	mu  sync.Mutex
	dir string
	err error
}

func binDir(t *testing.T) string {
	t.Helper()
	bins.mu.Lock()
	defer bins.mu.Unlock()
	if bins.dir == "" && bins.err == nil {
		bins.dir, bins.err = os.MkdirTemp("", "gobreakpad-hostile-")
		if bins.err == nil {
			cmd := exec.Command("go", "build", "-o", bins.dir+string(filepath.Separator),
				"./cmd/dump_syms", "./cmd/minidump_dump", "./cmd/minidump_stackwalk", "./cmd/symlookup")
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

// rusageEnv, when set, makes the test binary a wrapper (see runWrapped):
// it runs its arguments as a command and writes the command's peak RSS and
// CPU time into the file the variable names.
const rusageEnv = "GOBREAKPAD_HOSTILE_RUSAGE"

// runWrapped is the wrapper: the program is started from this small, fresh
// process instead of from the test process. Linux counts into a child's
// peak RSS (ru_maxrss) the memory of the process it was forked from up to
// its exec, and Go starts children with vfork from the parent's memory: a
// child of a test process that holds 130 MB reports at least 130 MB.
func runWrapped(out string) int {
	cmd := exec.Command(os.Args[1], os.Args[2:]...)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = os.Stdin, os.Stdout, os.Stderr
	err := cmd.Run()
	var ee *exec.ExitError
	if err != nil && !errors.As(err, &ee) {
		fmt.Fprintln(os.Stderr, "hostile wrapper:", err)
		return 125
	}
	ru := cmd.ProcessState.SysUsage().(*syscall.Rusage)
	if err := os.WriteFile(out, fmt.Appendf(nil, "%d %d %d", ru.Maxrss, ru.Utime.Nano(), ru.Stime.Nano()), 0o644); err != nil {
		fmt.Fprintln(os.Stderr, "hostile wrapper:", err)
		return 125
	}
	if ws, ok := cmd.ProcessState.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
		return 128 + int(ws.Signal())
	}
	return cmd.ProcessState.ExitCode()
}

func TestMain(m *testing.M) {
	if out := os.Getenv(rusageEnv); out != "" {
		os.Exit(runWrapped(out))
	}
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
	maxRSS  int64 // a bound on the peak RSS below the package's maxRSS (0: maxRSS)
	check   func(t *testing.T, stdout string)
}

// frameBytes is the bound's cost of a frame kept (docs/hostile.md): a
// StackFrame and its known registers take about 165 bytes, of which the
// 8 bytes per input byte cover part when frames are justified by 16 bytes.
const frameBytes = 128

// memBound is the peak memory docs/hostile.md states for a walk: 32 MiB
// (the runtime, the program, its buffers) plus perByte bytes per byte of
// the inputs (the dump and the symbol files read). A walk keeping more
// frames than its 32 MiB and 8 bytes per input byte cover (frames justified
// by less than about 20 bytes each: TestFrameChains) adds frameBytes per
// frame.
func memBound(t *testing.T, perByte int64, files ...string) int64 {
	n := int64(32 << 20)
	for _, f := range files {
		err := filepath.WalkDir(f, func(p string, d fs.DirEntry, err error) error {
			if err != nil {
				return err
			}
			if info, err := d.Info(); err == nil && info.Mode().IsRegular() {
				n += perByte * info.Size()
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	return n
}

func (r run) do(t *testing.T) {
	t.Helper()
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	usage := filepath.Join(t.TempDir(), "rusage")
	cmd := exec.Command(self, append([]string{filepath.Join(binDir(t), r.prog)}, r.args...)...)
	// GORACE: a wrapper built with -race would otherwise sleep a second
	// at exit (the race runtime's atexit_sleep_ms).
	cmd.Env = append(os.Environ(), rusageEnv+"="+usage, "GORACE=atexit_sleep_ms=0")
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	var out countWriter
	var errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	start := time.Now()
	done := make(chan error, 1)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() { done <- cmd.Wait() }()
	select {
	case err = <-done:
	case <-time.After(maxWall):
		syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) // the wrapper and the program
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
	var maxrss, utime, stime int64
	if b, err := os.ReadFile(usage); err != nil {
		t.Fatalf("%s: the wrapper wrote no rusage (exit %d): %v", r.name, exit, err)
	} else if _, err := fmt.Sscan(string(b), &maxrss, &utime, &stime); err != nil {
		t.Fatalf("%s: rusage %q: %v", r.name, b, err)
	}
	rss := maxrss << 10
	cpu := time.Duration(utime + stime)
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
	if bound := cmp.Or(min(r.maxRSS, maxRSS), maxRSS); rss > bound {
		t.Errorf("%s: peak RSS %d MB, bound %d MB", r.name, rss>>20, bound>>20)
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
			// -d prints each stack word pointing into the function with
			// its name: cut as every printed name (4 GB before).
			{prog: "minidump_stackwalk", args: []string{"-d", f("dump-for-long-func-name.dmp"), longSyms}, maxOut: 32 << 20,
				stdout: []string{"Possible instruction pointers:\n *(0x000000007fff0000) = 0x000000007fff0000 -- stack_address\n *(0x000000007fff0008) = 0x0000000000401025 aaaa"}},
			// Signature generation reads a name as printed (64 KiB): it
			// took 71 s and 2.1 GB with the whole 16 MiB name; the
			// signature (255 bytes) is the same.
			{prog: "minidump_stackwalk", args: []string{"--signature", f("dump-for-long-func-name.dmp"), longSyms},
				stdout: []string{strings.Repeat("a", 252) + "...\n"}, maxRSS: memBound(t, 4, f("dump-for-long-func-name.dmp"), longSyms)},
			{prog: "minidump_stackwalk", args: []string{"--signature", "--json", f("dump-for-long-func-name.dmp"), longSyms},
				stdout: []string{`...[16711680 more bytes]"`}, maxOut: 64 << 20, maxRSS: memBound(t, 6, f("dump-for-long-func-name.dmp"), longSyms)},
		},
		// Issue 31 (2026-11-26). The frame budget: one frame per 16 bytes
		// of distinct amd64 stack beyond 4,096 frames, the crashed thread
		// walked first; the cut said on stderr and in soft_errors.
		"dump-4threads-shared-1M-stack.dmp": {
			{prog: "minidump_stackwalk", args: []string{f("dump-4threads-shared-1M-stack.dmp")}, maxOut: 12 << 20,
				stderr: []string{"frame budget spent: 3 of 4 threads cut short (the dump justifies 65540 frames", "1 threads cut at 65536 frames (MaxFrames)"},
				maxRSS: memBound(t, 8, f("dump-4threads-shared-1M-stack.dmp"))},
			{prog: "minidump_stackwalk", args: []string{"-m", f("dump-4threads-shared-1M-stack.dmp")}, maxOut: 4 << 20,
				stderr: []string{"frame budget spent"}, maxRSS: memBound(t, 8, f("dump-4threads-shared-1M-stack.dmp"))},
			{prog: "minidump_stackwalk", args: []string{"-s", f("dump-4threads-shared-1M-stack.dmp")}, maxOut: 40 << 20,
				stderr: []string{"frame budget spent"}, maxRSS: memBound(t, 8, f("dump-4threads-shared-1M-stack.dmp"))},
			// soft_errors comes after the threads, past the first MB kept.
			{prog: "minidump_stackwalk", args: []string{"--json", f("dump-4threads-shared-1M-stack.dmp")}, maxOut: 40 << 20,
				stderr: []string{"frame budget spent: 3 of 4 threads cut short"}, maxRSS: memBound(t, 8, f("dump-4threads-shared-1M-stack.dmp"))},
			{prog: "minidump_stackwalk", args: []string{"--pretty", f("dump-4threads-shared-1M-stack.dmp")}, maxOut: 128 << 20,
				stderr: []string{"frame budget spent: 3 of 4 threads cut short"}, maxRSS: memBound(t, 8, f("dump-4threads-shared-1M-stack.dmp"))},
			// -d prints shared stack memory once: the crashed thread's
			// words, a line for each other thread.
			{prog: "minidump_stackwalk", args: []string{"-d", f("dump-4threads-shared-1M-stack.dmp")}, maxOut: 16 << 20,
				stdout: []string{"Thread 0 (crashed)"}, maxRSS: memBound(t, 8, f("dump-4threads-shared-1M-stack.dmp")),
				check: func(t *testing.T, out string) {
					if n := strings.Count(out, "(shared stack memory: the words from "); n != 0 {
						t.Errorf("%d threads named as shared in the first MB, want 0 (the crashed thread comes first, 1 MB of words)", n)
					}
				}},
		},
		"dump-4096threads-shared-64K-stack.dmp": {
			{prog: "minidump_stackwalk", args: []string{"-m", f("dump-4096threads-shared-64K-stack.dmp")}, maxOut: 4 << 20, maxRSS: memBound(t, 8, f("dump-4096threads-shared-64K-stack.dmp")),
				stderr: []string{"frame budget spent: 4095 of 4096 threads cut short (the dump justifies 8192 frames: 4096 threads walked, 65536 bytes of stack memory"}},
			{prog: "minidump_stackwalk", args: []string{"--json", f("dump-4096threads-shared-64K-stack.dmp")}, maxOut: 8 << 20, maxRSS: memBound(t, 8, f("dump-4096threads-shared-64K-stack.dmp")),
				stdout: []string{`"ProcessingProblem":"walk: frame budget spent: 4095 of 4096 threads`}},
			// --pretty: the threads share one buffer and encoder.
			{prog: "minidump_stackwalk", args: []string{"--pretty", f("dump-4096threads-shared-64K-stack.dmp")}, maxOut: 32 << 20, maxRSS: memBound(t, 8, f("dump-4096threads-shared-64K-stack.dmp")),
				stderr: []string{"frame budget spent: 4095 of 4096 threads"}},
			// -d printed the 64 KiB stack once per thread: 2 GB.
			{prog: "minidump_stackwalk", args: []string{"-d", f("dump-4096threads-shared-64K-stack.dmp")}, maxOut: 4 << 20, maxRSS: memBound(t, 8, f("dump-4096threads-shared-64K-stack.dmp")),
				stdout: []string{"(shared stack memory: the words from 0x"}, stderr: []string{"frame budget spent"},
				check: func(t *testing.T, out string) {
					if n := strings.Count(out, "(shared stack memory: the words from "); n < 1000 {
						t.Errorf("%d threads named as shared in the first MB, want 4095 over the whole output", n)
					}
				}},
		},
		"dump-4096threads-crash-in-last.dmp": {
			{prog: "minidump_stackwalk", args: []string{"-d", "-j", "1", f("dump-4096threads-crash-in-last.dmp")}, maxOut: 4 << 20, maxRSS: memBound(t, 8, f("dump-4096threads-crash-in-last.dmp")),
				stdout: []string{"Thread 4095 (crashed)", "(shared stack memory: the words from 0x"}},
			{prog: "minidump_stackwalk", args: []string{"-c", f("dump-4096threads-crash-in-last.dmp")}, maxOut: 4 << 20, maxRSS: memBound(t, 8, f("dump-4096threads-crash-in-last.dmp")),
				stderr: []string{"frame budget spent: 4095 of 4096 threads cut short"}, stdout: []string{"Thread 4095 (crashed)"},
				check: func(t *testing.T, out string) {
					// The crashed thread, last, walked first: 4,097 frames.
					if n := strings.Count(out, "Found by: previous frame's frame pointer"); n < 4000 {
						t.Errorf("crashed thread: %d frames found by frame pointer, want 4096", n)
					}
				}},
		},
		// Damaged cabinets: refused, nothing written.
		"cab-checksum-wrong-data-corrupt.pd_": {{prog: "dump_syms", args: []string{f("cab-checksum-wrong-data-corrupt.pd_")}, exit: 1,
			stderr: []string{"block checksum mismatch: block 100"}, check: emptyOut}},
		"cab-one-bit-flipped.pd_": {{prog: "dump_syms", args: []string{f("cab-one-bit-flipped.pd_")}, exit: 1,
			stderr: []string{"block checksum mismatch: block 15"}, check: emptyOut}},
		// A truncated GSYM: refused at open.
		"gsym-libc-cut-401408.gsym": {{prog: "symlookup", args: []string{"--json", f("gsym-libc-cut-401408.gsym"), "0x98930"}, exit: 1,
			stderr: []string{"past the end of the file (401408 bytes): the file is truncated or damaged"}, check: emptyOut}},
		// A damaged PDB: a warning by default, an error with --strict.
		"pdb-regtest-page10-zeroed.pdb": {
			{prog: "dump_syms", args: []string{f("pdb-regtest-page10-zeroed.pdb")},
				stderr: []string{"dump_syms: warning: module symbol records: 1 failed to parse, left out"}, stdout: []string{"MODULE windows x86"}},
			{prog: "dump_syms", args: []string{"--strict", f("pdb-regtest-page10-zeroed.pdb")}, exit: 1,
				stderr: []string{"--strict: damaged input: module symbol records"}, check: emptyOut},
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
			// In parallel: each run waits mostly for its programs to
			// start and end; the bounds are per run (its own CPU time
			// and peak RSS).
			t.Parallel()
			for i, r := range runs {
				r.name = fmt.Sprintf("%s %s #%d", r.prog, e.Name(), i)
				r.do(t)
			}
		})
	}
}

// emptyOut checks that nothing was written on stdout.
func emptyOut(t *testing.T, out string) {
	if out != "" {
		t.Errorf("stdout not empty: %.200q", out)
	}
}

// TestJobs walks the hostile dumps whose threads share a stack with -j 1,
// 2 and 8, twice each: stdout and stderr are the same every time (issue
// 31: with the shared budget, three -m runs gave three outputs).
func TestJobs(t *testing.T) {
	for _, name := range []string{"dump-4096threads-shared-64K-stack.dmp", "dump-4096threads-crash-in-last.dmp", "dump-4threads-shared-1M-stack.dmp"} {
		dmp := corpus.File(t, "hostile/"+name)
		for _, mode := range []string{"-m", "--json"} {
			if mode == "--json" && strings.Contains(name, "1M") {
				continue // 33 MB each: -m shows the same walk
			}
			var want [32]byte
			for i, j := range []string{"1", "2", "8", "8", "2"} {
				cmd := exec.Command(filepath.Join(binDir(t), "minidump_stackwalk"), "-j", j, mode, dmp)
				var out, errb bytes.Buffer
				cmd.Stdout, cmd.Stderr = &out, &errb
				if err := cmd.Run(); err != nil {
					t.Fatalf("%s %s -j %s: %v", name, mode, j, err)
				}
				got := sha256.Sum256(append(out.Bytes(), errb.Bytes()...))
				if i == 0 {
					want = got
				} else if got != want {
					t.Errorf("%s %s: -j %s gives another output than -j 1", name, mode, j)
				}
			}
		}
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
			t.Parallel()
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
