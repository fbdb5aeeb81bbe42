package stackwalk_test

import (
	"bufio"
	"bytes"
	symbreakpad "github.com/gobreakpad/gobreakpad/symbols/breakpad"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/gobreakpad/gobreakpad/internal/testkit/corpus"
	"github.com/gobreakpad/gobreakpad/minidump"
	"github.com/gobreakpad/gobreakpad/stackwalk"
)

// walkCase is one line of the corpus's cases.tsv.
type walkCase struct {
	name, dump, machine, human string
	syms                       []string
}

func loadCases(t testing.TB) []walkCase {
	dir := corpus.Dir(t)
	f, err := os.Open(filepath.Join(dir, "cases.tsv"))
	if err != nil {
		t.Skipf("cases.tsv: %v", err)
	}
	defer f.Close()
	var out []walkCase
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := sc.Text()
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		fields := append(strings.Split(line, "\t"), "", "", "", "")
		c := walkCase{name: fields[0], dump: filepath.Join(dir, fields[1]), machine: filepath.Join(dir, fields[2])}
		for _, s := range strings.Fields(fields[3]) {
			c.syms = append(c.syms, filepath.Join(dir, s))
		}
		switch {
		case strings.HasSuffix(c.machine, ".m.txt"):
			c.human = strings.TrimSuffix(c.machine, ".m.txt") + ".txt"
		case strings.HasSuffix(c.machine, "ref-m.txt"):
			c.human = strings.TrimSuffix(c.machine, "ref-m.txt") + "ref.txt"
		}
		out = append(out, c)
	}
	return out
}

func process(t testing.TB, c walkCase) (*stackwalk.ProcessState, *symbreakpad.Dirs, error) {
	f, err := minidump.Open(c.dump)
	if err != nil {
		return nil, nil, err
	}
	t.Cleanup(func() { f.Close() })
	var opt stackwalk.Options
	var dirs *symbreakpad.Dirs
	if len(c.syms) > 0 {
		dirs = symbreakpad.NewDirs(c.syms...)
		t.Cleanup(func() { dirs.Close() })
		opt.Symbols = dirs
	}
	p, err := stackwalk.Process(f, opt)
	return p, dirs, err
}

// TestCorpus checks, for every case of the shared corpus, that the
// machine-readable and human reports equal Breakpad's byte for byte; for
// cases with gdb's truth (truth.txt beside the dump), the crashing
// thread's frames are compared with the truth instead (compareTruth).
func TestCorpus(t *testing.T) {
	for _, c := range loadCases(t) {
		t.Run(c.name, func(t *testing.T) {
			wantM, err := os.ReadFile(c.machine)
			if err != nil {
				t.Skipf("expected output: %v", err)
			}
			p, dirs, err := process(t, c)
			if err != nil {
				// Breakpad prints nothing for dumps it cannot read.
				if len(wantM) != 0 {
					t.Fatalf("Process: %v", err)
				}
				return
			}
			if truth := readTruth(t, c); truth != nil {
				compareTruth(t, c, p, wantM, truth)
				return
			}
			wantH, herr := os.ReadFile(c.human)
			if herr == nil {
				cut := entryCuts(p)
				for th, n := range repeatCuts(wantH) {
					if c, ok := cut[th]; !ok || n < c {
						cut[th] = n
					}
				}
				wantH, wantM = pastEntryFilter(wantH, wantM, cut)
			}
			var got bytes.Buffer
			if err := stackwalk.PrintMachineReadable(&got, p); err != nil {
				t.Fatal(err)
			}
			compare(t, "-m", got.Bytes(), wantM)
			if herr != nil {
				return
			}
			got.Reset()
			opt := stackwalk.PrintOptions{}
			if dirs != nil {
				opt.Symbols = dirs
			}
			if err := stackwalk.Print(&got, p, opt); err != nil {
				t.Fatal(err)
			}
			compare(t, "human", got.Bytes(), wantH)
		})
	}
}

// compare reports the first differing line.
func compare(t *testing.T, what string, got, want []byte) {
	t.Helper()
	if bytes.Equal(got, want) {
		return
	}
	g, w := strings.Split(string(got), "\n"), strings.Split(string(want), "\n")
	for i := 0; i < len(g) || i < len(w); i++ {
		var gl, wl string
		if i < len(g) {
			gl = g[i]
		}
		if i < len(w) {
			wl = w[i]
		}
		if gl != wl {
			t.Errorf("%s output differs at line %d:\n got: %q\nwant: %q", what, i+1, gl, wl)
			return
		}
	}
}

var (
	threadLine = regexp.MustCompile(`^Thread (\d+)`)
	frameLine  = regexp.MustCompile(`^ ?(\d+)  (\S+?)(?:!| \+ |$)`)
	warning    = regexp.MustCompile(`^(0x[0-9a-f]+ - 0x[0-9a-f]+  (\S+)  .*?)  \(WARNING: No symbols, .*\)$`)
)

// entryCuts returns, for each thread whose walk ended at the program's
// entry point (AT_ENTRY), the number of frames it has: Breakpad's frames
// from there on are beyond the entry point.
func entryCuts(p *stackwalk.ProcessState) map[int]int {
	cut := map[int]int{}
	if p.EntryPoint == 0 {
		return cut
	}
	for i, cs := range p.Threads {
		if n := len(cs.Frames); n > 0 {
			f := cs.Frames[n-1]
			if f.Function != "" && f.FunctionBase == p.EntryPoint ||
				f.Function == "" && f.Instruction >= p.EntryPoint && f.Instruction-p.EntryPoint < 64 {
				cut[i] = n
			}
		}
	}
	return cut
}

var (
	ripLine = regexp.MustCompile(`\brip = (0x[0-9a-f]+)`)
	rspLine = regexp.MustCompile(`\brsp = (0x[0-9a-f]+)`)
)

// repeatCuts returns, for each thread of a Breakpad x86-64 report whose
// walk went on by a scanned copy of a frame's return address at that
// frame's rsp (the frame not the context's: unwind/amd64's
// repeatsReturnAddress, docs/stackwalk.md), the number of frames before
// the copy. Only a copy that ends Breakpad's walk is left out of the
// comparison: frames after one would be numbered differently, and fail.
func repeatCuts(human []byte) map[int]int {
	type phys struct {
		n        int
		rip, rsp string
		context  bool
	}
	cut := map[int]int{}
	thread := -1
	var prev, cur *phys
	for _, l := range strings.Split(string(human), "\n") {
		if m := threadLine.FindStringSubmatch(l); m != nil {
			thread, _ = strconv.Atoi(m[1])
			prev, cur = nil, nil
			continue
		}
		if strings.HasPrefix(l, "Loaded modules:") {
			thread = -1
		}
		if thread < 0 {
			continue
		}
		if m := frameLine.FindStringSubmatch(l); m != nil {
			n, _ := strconv.Atoi(m[1])
			cur = &phys{n: n}
			continue
		}
		if cur == nil {
			continue
		}
		if m := ripLine.FindStringSubmatch(l); m != nil {
			cur.rip = m[1]
		}
		if m := rspLine.FindStringSubmatch(l); m != nil {
			cur.rsp = m[1]
		}
		trust, ok := strings.CutPrefix(strings.TrimSpace(l), "Found by: ")
		if !ok || cur.rip == "" {
			continue
		}
		cur.context = trust == "given as instruction pointer in context"
		if _, done := cut[thread]; !done && trust == "stack scanning" && prev != nil && !prev.context && cur.rip == prev.rip {
			p, err1 := strconv.ParseUint(prev.rsp, 0, 64)
			c, err2 := strconv.ParseUint(cur.rsp, 0, 64)
			if err1 == nil && err2 == nil && c == p+8 {
				cut[thread] = cur.n
			}
		}
		prev = cur
	}
	return cut
}

// pastEntryFilter removes from Breakpad's reports what this walker leaves
// out on purpose: frames past the program's entry point (cut: thread ->
// frames kept) and, without one, frames found by stack scanning once the
// walk has passed _start (stale stack data; gdb's backtrace ends at
// _start), the frames after them, and the "No symbols" warnings of modules
// only those frames fell in.
func pastEntryFilter(human, machine []byte, cut map[int]int) ([]byte, []byte) {
	lines := strings.Split(string(human), "\n")
	thread, frame, sawEntry := -1, -1, false
	for _, l := range lines {
		if m := threadLine.FindStringSubmatch(l); m != nil {
			thread, _ = strconv.Atoi(m[1])
			frame, sawEntry = -1, false
			continue
		}
		if thread < 0 {
			continue
		}
		if m := frameLine.FindStringSubmatch(l); m != nil {
			frame, _ = strconv.Atoi(m[1])
			continue
		}
		if strings.Contains(l, "Found by: stack scanning") && sawEntry {
			if c, done := cut[thread]; !done || frame < c {
				cut[thread] = frame
			}
		}
		if frame >= 0 && strings.HasPrefix(strings.TrimSpace(l), "Found by:") && frameIsEntry(lines, thread, frame) {
			sawEntry = true
		}
	}
	if len(cut) == 0 {
		return human, machine
	}
	var out []string
	used := map[string]bool{}
	thread, frame = -1, -1
	skip := false
	for _, l := range lines {
		if m := threadLine.FindStringSubmatch(l); m != nil {
			thread, _ = strconv.Atoi(m[1])
			skip = false
		} else if strings.HasPrefix(l, "Loaded modules:") {
			thread, skip = -1, false
		} else if m := frameLine.FindStringSubmatch(l); m != nil && thread >= 0 {
			frame, _ = strconv.Atoi(m[1])
			if c, ok := cut[thread]; ok && frame >= c {
				skip = true
			}
			if !skip {
				used[m[2]] = true
			}
		}
		if skip && l != "" {
			continue
		}
		out = append(out, l)
	}
	for i, l := range out {
		if m := warning.FindStringSubmatch(l); m != nil && !used[m[2]] {
			out[i] = m[1]
		}
	}
	var mout []string
	for _, l := range strings.Split(string(machine), "\n") {
		f := strings.SplitN(l, "|", 3)
		if len(f) == 3 {
			t, err1 := strconv.Atoi(f[0])
			n, err2 := strconv.Atoi(f[1])
			if c, ok := cut[t]; ok && err1 == nil && err2 == nil && n >= c {
				continue
			}
		}
		mout = append(mout, l)
	}
	return []byte(strings.Join(out, "\n")), []byte(strings.Join(mout, "\n"))
}

// frameIsEntry reports whether frame n of thread t in the report is in _start.
func frameIsEntry(lines []string, t, n int) bool {
	thread := -1
	for _, l := range lines {
		if m := threadLine.FindStringSubmatch(l); m != nil {
			thread, _ = strconv.Atoi(m[1])
			continue
		}
		if thread != t {
			continue
		}
		if m := frameLine.FindStringSubmatch(l); m != nil {
			if k, _ := strconv.Atoi(m[1]); k == n {
				return strings.Contains(l, "!_start ")
			}
		}
	}
	return false
}

// TestWorkers checks that walking threads concurrently gives the same
// reports (run with -race to check the sharing).
func TestWorkers(t *testing.T) {
	for _, c := range loadCases(t) {
		if !strings.Contains(c.name, "threads") && !strings.HasPrefix(c.name, "bp-minidump2") {
			continue
		}
		t.Run(c.name, func(t *testing.T) {
			report := func(workers int) string {
				f, err := minidump.Open(c.dump)
				if err != nil {
					t.Fatal(err)
				}
				defer f.Close()
				dirs := symbreakpad.NewDirs(c.syms...)
				defer dirs.Close()
				p, err := stackwalk.Process(f, stackwalk.Options{Symbols: dirs, Workers: workers})
				if err != nil {
					t.Fatal(err)
				}
				var b bytes.Buffer
				if err := stackwalk.Print(&b, p, stackwalk.PrintOptions{}); err != nil {
					t.Fatal(err)
				}
				return b.String()
			}
			if one, four := report(1), report(4); one != four {
				compare(t, "4 workers", []byte(four), []byte(one))
			}
		})
	}
}

// TestReadAnnotations: Read keeps the Crashpad annotations of a corpus
// dump, process-wide simple annotations and module annotation objects.
func TestReadAnnotations(t *testing.T) {
	f, err := minidump.Open(corpus.File(t, "breakpad/processor/minidump_crashpad_annotation.dmp"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	st, err := stackwalk.Read(f)
	if err != nil {
		t.Fatal(err)
	}
	if a := st.Annotations; a["prod"] != "xcuitest" || a["exceptionName"] != "NSRangeException" {
		t.Errorf("annotations: %v", a)
	}
	g, err := minidump.Open(corpus.File(t, "breakpad/processor/minidump2.dmp"))
	if err != nil {
		t.Fatal(err)
	}
	defer g.Close()
	if st, err := stackwalk.Read(g); err != nil || st.Annotations != nil {
		t.Errorf("a dump without a Crashpad info stream: annotations %v (%v)", st.Annotations, err)
	}
}
