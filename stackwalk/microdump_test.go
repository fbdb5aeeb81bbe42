package stackwalk_test

import (
	"bytes"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/gobreakpad/gobreakpad/internal/testkit/corpus"
	"github.com/gobreakpad/gobreakpad/microdump"
	"github.com/gobreakpad/gobreakpad/stackwalk"
	symbreakpad "github.com/gobreakpad/gobreakpad/symbols/breakpad"
)

// readMicrodump reads the microdump file at path into a ProcessState; the
// test is skipped when the file is absent.
func readMicrodump(t *testing.T, path string) *stackwalk.ProcessState {
	t.Helper()
	text, err := os.ReadFile(path)
	if err != nil {
		t.Skip(err)
	}
	md, err := microdump.Parse(text)
	if err != nil {
		t.Fatal(err)
	}
	p, err := stackwalk.ReadMicrodump(md)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// microdumpReport walks a microdump file with the symbol paths and returns
// its human and -m reports.
func microdumpReport(t *testing.T, path string, syms ...string) (human, machine []byte) {
	t.Helper()
	p := readMicrodump(t, path)
	var opt stackwalk.Options
	var popt stackwalk.PrintOptions
	if len(syms) > 0 {
		dirs := symbreakpad.NewDirs(syms...)
		defer dirs.Close()
		opt.Symbols, popt.Symbols = dirs, dirs
	}
	p.Walk(opt)
	var h, m bytes.Buffer
	if err := stackwalk.Print(&h, p, popt); err != nil {
		t.Fatal(err)
	}
	if err := stackwalk.PrintMachineReadable(&m, p); err != nil {
		t.Fatal(err)
	}
	return h.Bytes(), m.Bytes()
}

// TestMicrodumpCorpus compares the reports of every corpus microdump that
// has Breakpad's microdump_stackwalk outputs with them, byte for byte
// (after the _start filter TestCorpus applies to minidumps).
func TestMicrodumpCorpus(t *testing.T) {
	dir := corpus.Dir(t)
	type ref struct {
		name, dump, human, machine string
		syms                       []string
	}
	bp := filepath.Join(dir, "breakpad/processor")
	refs := []ref{
		{"bp-arm", "microdump-arm.dmp", "microdump.stackwalk-arm.out", "microdump.stackwalk.machine_readable-arm.out", []string{"symbols/microdump"}},
		{"bp-arm64", "microdump-arm64.dmp", "microdump.stackwalk-arm64.out", "microdump.stackwalk.machine_readable-arm64.out", []string{"symbols/microdump"}},
	}
	for i := range refs {
		r := &refs[i]
		r.dump, r.human, r.machine = filepath.Join(bp, r.dump), filepath.Join(bp, r.human), filepath.Join(bp, r.machine)
		r.syms[0] = filepath.Join(bp, r.syms[0])
	}
	gen, _ := filepath.Glob(filepath.Join(dir, "generated/*-microdump"))
	for _, c := range gen {
		if strings.Contains(c, "-x64-") {
			continue // Breakpad cannot walk x86_64 microdumps: TestMicrodumpX64Truth
		}
		d := filepath.Join(c, "crash.microdump")
		refs = append(refs,
			ref{filepath.Base(c), d, filepath.Join(c, "ref.txt"), filepath.Join(c, "ref-m.txt"),
				[]string{filepath.Join(c, "symbols"), filepath.Join(dir, "generated/syslib-symbols")}},
			ref{filepath.Base(c) + "-nosym", d, filepath.Join(c, "ref-nosym.txt"), "", nil})
	}
	matched := 0
	for _, r := range refs {
		t.Run(r.name, func(t *testing.T) {
			wantH, err := os.ReadFile(r.human)
			if err != nil {
				t.Skip(err)
			}
			var wantM []byte
			if r.machine != "" {
				if wantM, err = os.ReadFile(r.machine); err != nil {
					t.Fatal(err)
				}
			}
			gotH, gotM := microdumpReport(t, r.dump, r.syms...)
			// Cases with gdb's truth are compared with it, as TestCorpus
			// does: the crashing thread must find as many true frames as
			// Breakpad with no more spurious ones (x86's realigned main
			// makes Breakpad scan a spurious frame). Without symbols,
			// frames have no names to compare: the report up to the
			// crashing thread must equal Breakpad's, and the thread may
			// have no more frames than Breakpad's.
			if _, err := os.Stat(filepath.Join(filepath.Dir(r.dump), "truth.txt")); err == nil {
				if truth := readTruth(t, walkCase{name: r.name, dump: r.dump, syms: r.syms}); truth != nil {
					compareTruthM(t, gotM, wantM, truth)
				} else {
					compareNoSymbolsWithTruth(t, gotH, wantH)
				}
				if !t.Failed() {
					matched++
				}
				return
			}
			wantH, wantM = pastEntryFilter(wantH, wantM, map[int]int{})
			compare(t, "human", gotH, wantH)
			if r.machine != "" {
				compare(t, "-m", gotM, wantM)
			}
			if !t.Failed() {
				matched++
			}
		})
	}
	t.Logf("%d/%d microdump cases match Breakpad's reports (or the truth)", matched, len(refs))
}

// compareNoSymbolsWithTruth compares a report without symbols of a case
// with a truth: the same text up to the crashing thread's first frame and no
// more frames in it than Breakpad found.
func compareNoSymbolsWithTruth(t *testing.T, got, want []byte) {
	head := func(b []byte) ([]byte, int) {
		i := bytes.Index(b, []byte("(crashed)\n"))
		if i < 0 {
			return b, 0
		}
		rest := b[i:]
		if j := bytes.Index(rest, []byte("\n\n")); j >= 0 {
			rest = rest[:j]
		}
		return b[:i], bytes.Count(rest, []byte("\n    Found by:"))
	}
	gh, gn := head(got)
	wh, wn := head(want)
	compare(t, "human (up to the crashing thread)", gh, wh)
	if gn > wn || gn == 0 {
		t.Errorf("crashing thread: %d frames, Breakpad %d", gn, wn)
	}
}

// TestMicrodumpX64Truth walks the x86_64 microdumps, which Breakpad's
// processor rejects ("Unsupported architecture: x86_64"), and checks the
// crashing thread's functions against gdb's backtrace (truth.txt), less the
// frames gdb makes up from DWARF call-site data.
func TestMicrodumpX64Truth(t *testing.T) {
	dir := corpus.Dir(t)
	gen, _ := filepath.Glob(filepath.Join(dir, "generated/*-x64-*-microdump"))
	if len(gen) == 0 {
		t.Skip("no x86_64 microdump cases in the corpus")
	}
	frame := regexp.MustCompile(`^ ?\d+  \S+!(\S+) `)
	for _, c := range gen {
		t.Run(filepath.Base(c), func(t *testing.T) {
			h, _ := microdumpReport(t, filepath.Join(c, "crash.microdump"),
				filepath.Join(c, "symbols"), filepath.Join(dir, "generated/syslib-symbols"))
			var got []string
			inThread := false
			for _, l := range strings.Split(string(h), "\n") {
				switch {
				case strings.HasPrefix(l, "Thread 0"):
					inThread = true
				case l == "":
					inThread = false
				}
				if m := frame.FindStringSubmatch(l); m != nil && inThread {
					got = append(got, m[1])
				}
			}
			info, _ := os.ReadFile(filepath.Join(c, "info.txt"))
			tail := map[string]bool{}
			for _, l := range strings.Split(string(info), "\n") {
				if v, ok := strings.CutPrefix(l, "truth_tailcall_frames="); ok {
					for _, f := range strings.Fields(strings.SplitN(v, "(", 2)[0]) {
						tail[f] = true
					}
				}
			}
			truth, err := os.ReadFile(filepath.Join(c, "truth.txt"))
			if err != nil {
				t.Fatal(err)
			}
			var want []string
			for _, l := range strings.Split(strings.TrimSpace(string(truth)), "\n") {
				f := strings.Split(l, "\t")
				if len(f) < 2 || tail[f[0]] || tail[f[1]] {
					continue
				}
				want = append(want, f[1])
			}
			if strings.Join(got, " ") != strings.Join(want, " ") {
				t.Errorf("frames:\n got %q\nwant %q (truth.txt)\n%s", got, want, h)
			}
		})
	}
}

// TestMicrodumpProcessorExpectations checks the corpus microdumps without
// Breakpad reports against what Breakpad's microdump_processor_unittest.cc
// expects of them: module counts (Android's overlapping modules shrunk, not
// dropped), frame counts, function and module names.
func TestMicrodumpProcessorExpectations(t *testing.T) {
	bp := filepath.Join(corpus.Dir(t), "breakpad/processor")
	cases := []struct {
		dump            string
		cpu             string
		cpus, modules   int
		frames          int
		functions       map[int]string
		frame0DebugFile string
		reason          string
		address         uint64
		osVersionPrefix string
	}{
		{dump: "microdump-mips32.dmp", cpu: "mips", cpus: 2, modules: 7, frames: 4,
			functions: map[int]string{0: "blaTest", 1: "Crash", 2: "main"}, frame0DebugFile: "crash_example",
			osVersionPrefix: "3.0.8-g893bf16 #7 SMP PREEMPT"},
		{dump: "microdump-mips64.dmp", cpu: "mips64", cpus: 1, modules: 8, frames: 4,
			functions: map[int]string{0: "blaTest", 1: "Crash", 2: "main"}, frame0DebugFile: "crash_example",
			osVersionPrefix: "3.10.0-gf185e20 #112 PREEMPT"},
		{dump: "microdump-multiple.dmp", cpu: "arm", cpus: 6, modules: 156, frames: 5,
			osVersionPrefix: "lge/p1_tmo_us/p1:6.0/MRA58K"},
		{dump: "microdump-withcrashreason.dmp", cpu: "arm", cpus: 8, modules: -1, frames: -1,
			reason: "SIGTRAP", address: 0x4A7CB000},
	}
	for _, c := range cases {
		t.Run(c.dump, func(t *testing.T) {
			p := readMicrodump(t, filepath.Join(bp, c.dump))
			dirs := symbreakpad.NewDirs(filepath.Join(bp, "symbols/microdump"))
			defer dirs.Close()
			p.Walk(stackwalk.Options{Symbols: dirs})
			if p.System.CPU != c.cpu || p.System.CPUCount != c.cpus || p.System.OSShort != "android" || !strings.HasPrefix(p.System.OSVersion, c.osVersionPrefix) {
				t.Errorf("system %+v", p.System)
			}
			if p.CrashReason != c.reason || (c.reason != "" && p.CrashAddress != c.address) {
				t.Errorf("crash %q at %#x", p.CrashReason, p.CrashAddress)
			}
			if n := len(p.ModulesByAddress()); c.modules >= 0 && n != c.modules {
				t.Errorf("%d modules, want %d", n, c.modules)
			}
			fs := p.Threads[0].Frames
			if c.frames >= 0 && len(fs) != c.frames {
				t.Fatalf("%d frames, want %d", len(fs), c.frames)
			}
			for i, want := range c.functions {
				if fs[i].Function != want {
					t.Errorf("frame %d: function %q, want %q", i, fs[i].Function, want)
				}
			}
			if c.frame0DebugFile != "" && (fs[0].Module == nil || fs[0].Module.DebugFile != c.frame0DebugFile) {
				t.Errorf("frame 0 module %+v", fs[0].Module)
			}
		})
	}
}
