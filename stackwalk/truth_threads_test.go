package stackwalk_test

import (
	"bytes"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/gobreakpad/gobreakpad/minidump"
	"github.com/gobreakpad/gobreakpad/stackwalk"
	"github.com/gobreakpad/gobreakpad/symbols/breakpad"
	"github.com/gobreakpad/gobreakpad/symbols/elfimage"
)

// knownMiss is the result a truth case is known to have instead of the
// whole truth, and why.
type knownMiss struct {
	found, spurious int
	why             string
}

// readTruthFile reads a truth.txt of testdata/truth: gdb's frames as
// "N<TAB>function" lines, as normalized names.
func readTruthFile(t *testing.T, path string) []string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var truth []string
	for _, l := range strings.Split(strings.TrimSpace(string(b)), "\n") {
		_, fn, _ := strings.Cut(l, "\t")
		if fn == "<signal handler called>" {
			fn = ""
		}
		truth = append(truth, normName(fn))
	}
	return truth
}

// threadChain returns the function names of thread index's frames in -m
// output.
func threadChain(m []byte, index int) []string {
	var chain []string
	want := strconv.Itoa(index)
	for _, l := range strings.Split(string(m), "\n") {
		p := strings.Split(l, "|")
		if len(p) >= 7 && p[0] == want {
			if _, err := strconv.Atoi(p[1]); err == nil {
				chain = append(chain, normName(p[3]))
			}
		}
	}
	return chain
}

// walkTruthCase walks testdata/truth/GROUP/CASE/crash.dmp with its symbols
// and returns the process and its -m report.
func walkTruthCase(t *testing.T, dir string) (*stackwalk.ProcessState, []byte) {
	t.Helper()
	f, err := minidump.Open(filepath.Join(dir, "crash.dmp"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
	syms := breakpad.NewDirs(filepath.Join(dir, "symbols"))
	t.Cleanup(func() { syms.Close() })
	p, err := stackwalk.Process(f, stackwalk.Options{Symbols: syms, ImageSymbols: elfimage.Load})
	if err != nil {
		t.Fatal(err)
	}
	var m bytes.Buffer
	if err := stackwalk.PrintMachineReadable(&m, p); err != nil {
		t.Fatal(err)
	}
	return p, m.Bytes()
}

// checkChain compares a walked chain with gdb's: every truth frame found
// in order and nothing else, unless the case is a known miss, which must
// then give exactly the recorded counts (a change either way is news).
func checkChain(t *testing.T, what string, ours, truth []string, miss knownMiss, isMiss bool) {
	t.Helper()
	found, spurious := alignTruth(ours, truth)
	named := 0
	for _, n := range truth {
		if n != "" {
			named++
		}
	}
	t.Logf("%s: %d of %d found, %d spurious", what, found, named, spurious)
	if isMiss {
		if found != miss.found || spurious != miss.spurious {
			t.Errorf("%s: %d of %d found, %d spurious; known miss says %d found, %d spurious (%s)\nours  %q\ntruth %q",
				what, found, named, spurious, miss.found, miss.spurious, miss.why, ours, truth)
		}
		return
	}
	if found != named || spurious != 0 || len(ours) != len(truth) {
		t.Errorf("%s: %d of %d found, %d spurious\nours  %q\ntruth %q", what, found, named, spurious, ours, truth)
	}
}

// truthCases returns the case folders of testdata/truth/GROUP.
func truthCases(t *testing.T, group string) []string {
	dirs, _ := filepath.Glob(filepath.Join("../testdata/truth", group, "*-*-*"))
	var out []string
	for _, d := range dirs {
		if fi, err := os.Stat(d); err == nil && fi.IsDir() {
			out = append(out, d)
		}
	}
	if len(out) == 0 {
		t.Fatalf("no cases in testdata/truth/%s", group)
	}
	return out
}

// threadsMisses are the thread cases whose walks do not reach the truth.
var threadsMisses = map[string]knownMiss{}

// TestTruthThreads walks the crashes in a second thread of
// testdata/truth/threads (generate.sh there): the crashing thread's walk
// must equal gdb's backtrace and end at the thread's start (start_thread,
// then clone, clone3 or arm64's thread_start, whose CFI marks the return
// address undefined), and the main thread's, blocked in pthread_join, must
// equal gdb's backtrace of it down to _start.
func TestTruthThreads(t *testing.T) {
	for _, dir := range truthCases(t, "threads") {
		name := filepath.Base(dir)
		t.Run(name, func(t *testing.T) {
			p, m := walkTruthCase(t, dir)
			if p.RequestingThread < 0 || len(p.Threads) != 2 {
				t.Fatalf("crashing thread %d of %d threads; want one of 2", p.RequestingThread, len(p.Threads))
			}
			ours, _ := crashChain(m)
			miss, isMiss := threadsMisses[name]
			checkChain(t, "crashing thread", ours, readTruthFile(t, filepath.Join(dir, "truth.txt")), miss, isMiss)
			mainMiss, isMainMiss := threadsMisses[name+"/main"]
			main := 1 - p.RequestingThread
			checkChain(t, "main thread", threadChain(m, main), readTruthFile(t, filepath.Join(dir, "truth-main.txt")), mainMiss, isMainMiss)
		})
	}
}
