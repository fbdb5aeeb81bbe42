package main

import (
	"bufio"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/gobreakpad/gobreakpad/internal/testkit/cmdtest"
)

// winThreads are the call chains of testdata/winprogs' crashes, known
// from the source (prog.cpp, lib.c), leaf first, per thread (the crashing
// one first), with the names as Mozilla's dump_syms writes them (argument
// lists from the type records, no return types, no volatile).
var winThreads = map[string][][]string{
	"cpp": {{"geo::Square::area(int*) const", "geo::total<geo::Shape>(geo::Shape* const*, int, int*)",
		"geo::Registry::measure(int*)", "run_cpp()", "main(int, char**)"}},
	"dll":    {{"lib.dll!lib_step(int*, int)", "lib.dll!lib_apply(int*, int)", "run_dll(int)", "main(int, char**)"}},
	"inline": {{"level3(int)", "level2(int)", "level1(int)", "run_inline(int)", "main(int, char**)"}},
	"align":  {{"align_leaf(int*, int)", "aligned_work(int)", "run_align(int)", "main(int, char**)"}},
	"thread": {
		{"thread_crash(int)", "thread_work(int)", "crash_proc(void*)"},
		{"main_wait()", "run_thread()", "main(int, char**)"},
		{"idle_loop()", "idle_proc(void*)"},
	},
	// i686 only (synthetic): threads at their functions' first
	// instructions.
	"entry": {
		{"geo::total<geo::Shape>(geo::Shape* const*, int, int*)", "geo::Registry::measure(int*)", "run_cpp()", "main(int, char**)"},
		{"lib.dll!lib_apply(int*, int)", "run_dll(int)", "main(int, char**)"},
		{"run_cpp()", "main(int, char**)"},
	},
}

// winFrame is one frame of a walk or of llvm-symbolizer's truth.
type winFrame struct {
	module, function, fileLine, trust string
}

// qualified is a function's name without return type and arguments, the
// part llvm-symbolizer (from the PDB's publics) and Mozilla's style share.
func qualified(name string) string {
	name, _, _ = strings.Cut(name, "(")
	return name[strings.LastIndexByte(name, ' ')+1:]
}

// readWinTruth reads a truth.txt of mkprogs.sh: per dump and thread index,
// llvm-symbolizer's frames (inline frames first) at each address.
func readWinTruth(t *testing.T, path string) map[string][]winFrame {
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	truth := map[string][]winFrame{}
	var key, module string
	var lines []string
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		lines = append(lines, sc.Text())
	}
	for i := 0; i < len(lines); i++ {
		if f := strings.Fields(lines[i]); len(f) == 6 && f[0] == "dump" && f[2] == "thread" {
			key, module = f[1]+" "+f[3], f[4]
			continue
		}
		if key == "" || i+1 >= len(lines) {
			t.Fatalf("%s: line %d: %q out of place", path, i+1, lines[i])
		}
		fl := strings.TrimSuffix(lines[i+1], ":0")
		truth[key] = append(truth[key], winFrame{module: module, function: lines[i], fileLine: fl})
		i++
	}
	return truth
}

// crashLines are the file:line places of the source's "the crash"
// comments.
func crashLines(t *testing.T, dir string) map[string]bool {
	out := map[string]bool{}
	for _, name := range []string{"prog.cpp", "lib.c"} {
		b, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil {
			t.Fatal(err)
		}
		for i, l := range strings.Split(string(b), "\n") {
			if strings.Contains(l, "/* the crash */") {
				out[fmt.Sprintf("%s:%d", name, i+1)] = true
			}
		}
	}
	return out
}

var frameLine = regexp.MustCompile(`^ *(\d+)  (.*)$`)

// walkWin walks a dump twice (-m, and the human output for the trust of
// each frame) and returns each thread's frames by thread index.
func walkWin(t *testing.T, walker, dump, store string) map[string][]winFrame {
	r := cmdtest.Run(t, walker, "-m", dump, store)
	if r.Code != 0 {
		t.Fatalf("minidump_stackwalk -m %s: %d %s", dump, r.Code, r.Stderr)
	}
	threads := map[string][]winFrame{}
	for l := range strings.SplitSeq(r.Stdout, "\n") {
		f := strings.Split(l, "|")
		// thread|frame|module|function|file|line|offset
		if len(f) == 7 && f[1] != "" && f[0] != "Module" {
			fl := ""
			if f[4] != "" {
				fl = filepath.Base(strings.ReplaceAll(f[4], `\`, "/")) + ":" + f[5]
			}
			threads[f[0]] = append(threads[f[0]], winFrame{module: f[2], function: f[3], fileLine: fl})
		}
	}
	r = cmdtest.Run(t, walker, dump, store)
	thread, n := "", 0
	for l := range strings.SplitSeq(r.Stdout, "\n") {
		if rest, ok := strings.CutPrefix(l, "Thread "); ok {
			thread, _, _ = strings.Cut(rest, " ")
			n = -1
		} else if frameLine.MatchString(l) {
			n++
		} else if trust, ok := strings.CutPrefix(strings.TrimSpace(l), "Found by: "); ok && n >= 0 && n < len(threads[thread]) {
			threads[thread][n].trust = trust
		}
	}
	return threads
}

// TestWindowsPrograms walks the crashes of testdata/winprogs end to end:
// prog.cpp (C++: classes, methods in a namespace, a template, a virtual
// call; two threads besides the main one; an inlined chain; a frame
// realigned for an over-aligned local) and the DLL
// lib.c, built with clang-22 and lld-22 for the mingw-w64 targets with
// CodeView debug information, x86_64 and i686, -O0 and -O2 (mkprogs.sh).
// The x86_64 dumps come from the programs crashing under wine64
// (MiniDumpWriteDump in the unhandled-exception filter; the fixture step
// fills the modules' CodeView records Wine leaves empty, from the PEs, and
// keeps only the threads' stacks of Wine's 7000-odd memory regions). The
// i686 dumps are synthetic (32-bit wine is not installable here): mkx86
// built each thread's stack and registers by executing the real machine
// code of the chain's functions up to each call, so only the PDBs' STACK
// WIN records (FrameData) can walk them; for i686 entry.dmp also has
// threads at functions' first instructions (prologues not run yet), and
// mkx86 -sweep walks the i686 chains stopped at every instruction from
// each function's entry to its call of the next; mkx64 does the same for
// the x86_64 builds on synthetic dumps, and on through the epilogs, with
// .pdata's STACK CFI in the exact style (every position true) and,
// logged, in the default.
//
// Our dump_syms on the two PDBs and minidump_stackwalk must give, for each
// thread, the chain known from the source (Mozilla's names), the crash at
// the source's "the crash" line, each frame's function and file:line as
// llvm-symbolizer-22 gives them from the PE and its PDB (truth.txt), and
// no frame of the chain found by scanning the stack: x86_64 frames by
// .pdata's STACK CFI or as returns from leaf functions (no unwind info),
// i686 frames by STACK WIN. Neither clang nor wine is needed.
func TestWindowsPrograms(t *testing.T) {
	root := filepath.Join("testdata", "winprogs")
	dumpSyms := cmdtest.Build(t, ".")
	walker := cmdtest.Build(t, "github.com/gobreakpad/gobreakpad/cmd/minidump_stackwalk")
	crashes := crashLines(t, root)
	for _, build := range []string{"x64-O0", "x64-O2", "x86-O0", "x86-O2"} {
		dir := filepath.Join(root, build)
		store := t.TempDir()
		for _, pdb := range []string{"prog.pdb", "lib.pdb"} {
			if r := cmdtest.Run(t, dumpSyms, "-d", "--store", store, filepath.Join(dir, pdb)); r.Code != 0 {
				t.Fatalf("dump_syms %s/%s: %s", build, pdb, r.Stderr)
			}
		}
		if strings.HasPrefix(build, "x86") {
			// Every instruction up to each call of the chains, not only
			// the call sites (mkx86 -sweep).
			mkx86 := cmdtest.Build(t, "github.com/gobreakpad/gobreakpad/cmd/dump_syms/testdata/winprogs/mkx86")
			if r := cmdtest.Run(t, mkx86, "-sweep", dir); r.Code != 0 {
				t.Errorf("mkx86 -sweep %s: %d\n%s%s", build, r.Code, r.Stdout, r.Stderr)
			} else {
				t.Log(strings.TrimSpace(r.Stdout))
			}
		}
		if strings.HasPrefix(build, "x64") {
			// Every instruction from each chain function's entry to its
			// call and on to its return, prologs and epilogs included, on
			// synthetic dumps (mkx64): true with --cfi-style exact;
			// symbolic's rules (the default) are logged for comparison.
			mkx64 := cmdtest.Build(t, "github.com/gobreakpad/gobreakpad/cmd/dump_syms/testdata/winprogs/mkx64")
			if r := cmdtest.Run(t, mkx64, "-cfi-style", "exact", dir); r.Code != 0 {
				t.Errorf("mkx64 -cfi-style exact %s: %d\n%s%s", build, r.Code, r.Stdout, r.Stderr)
			} else {
				t.Log("exact style: " + strings.TrimSpace(r.Stdout))
			}
			if r := cmdtest.Run(t, mkx64, "-cfi-style", "symbolic", "-expect-wrong", dir); r.Code != 0 {
				t.Errorf("mkx64 -cfi-style symbolic %s: %d\n%s%s", build, r.Code, r.Stdout, r.Stderr)
			} else {
				out := strings.Split(strings.TrimSpace(r.Stdout), "\n")
				t.Log("symbolic style: " + out[len(out)-1])
			}
		}
		truth := readWinTruth(t, filepath.Join(dir, "truth.txt"))
		scenarios := []string{"cpp", "dll", "thread", "inline", "align"}
		if strings.HasPrefix(build, "x86") {
			scenarios = append(scenarios, "entry")
		}
		for _, scenario := range scenarios {
			t.Run(build+"/"+scenario, func(t *testing.T) {
				threads := walkWin(t, walker, filepath.Join(dir, scenario+".dmp"), store)
				for i, chain := range winThreads[scenario] {
					checkWinThread(t, threads, truth, scenario, chain, i == 0 && scenario != "entry", crashes, strings.HasPrefix(build, "x86"))
				}
			})
		}
	}
}

// TestWindowsStackProbeSweep walks testdata/winprogs/chkstk's big.exe
// (clang-22, x86_64; mkchkstk.sh) stopped at every instruction of
// main -> outer -> deep, whose 20000-byte frame is allocated through
// ___chkstk_ms in its prolog, and of ___chkstk_ms itself up to its first
// probe (where a stack overflow stops), on mkx64's synthetic dumps: every
// position true with --cfi-style exact (deep's caller found by STACK CFI
// from deep's state before its sub rsp, rax); symbolic's rules logged.
func TestWindowsStackProbeSweep(t *testing.T) {
	dir := filepath.Join("testdata", "winprogs", "chkstk")
	mkx64 := cmdtest.Build(t, "github.com/gobreakpad/gobreakpad/cmd/dump_syms/testdata/winprogs/mkx64")
	if r := cmdtest.Run(t, mkx64, "-cfi-style", "exact", dir); r.Code != 0 {
		t.Errorf("mkx64 -cfi-style exact %s: %d\n%s%s", dir, r.Code, r.Stdout, r.Stderr)
	} else {
		t.Log("exact style: " + strings.TrimSpace(r.Stdout))
	}
	if r := cmdtest.Run(t, mkx64, "-cfi-style", "symbolic", "-expect-wrong", dir); r.Code != 0 {
		t.Errorf("mkx64 -cfi-style symbolic %s: %d\n%s%s", dir, r.Code, r.Stdout, r.Stderr)
	} else {
		out := strings.Split(strings.TrimSpace(r.Stdout), "\n")
		t.Log("symbolic style: " + out[len(out)-1])
	}
}

func checkWinThread(t *testing.T, threads map[string][]winFrame, truth map[string][]winFrame, scenario string, chain []string, crashed bool, crashes map[string]bool, x86 bool) {
	t.Helper()
	want := make([]winFrame, len(chain))
	for i, c := range chain {
		want[i] = winFrame{module: "prog.exe", function: c}
		if m, fn, ok := strings.Cut(c, "!"); ok {
			want[i] = winFrame{module: m, function: fn}
		}
	}
	// The thread whose walk starts with the chain's leaf.
	var index string
	var got []winFrame
	for id, frames := range threads {
		if len(frames) > 0 && frames[0].function == want[0].function {
			index, got = id, frames
		}
	}
	if got == nil {
		t.Errorf("no thread in %s.dmp starts in %s", scenario, want[0].function)
		return
	}
	if len(got) < len(want) {
		t.Errorf("thread %s: %d frames, want at least %d: %v", index, len(got), len(want), got)
		return
	}
	ref := truth[scenario+" "+index]
	if len(ref) != len(want) {
		t.Errorf("truth.txt: thread %s of %s: %d frames, want %d", index, scenario, len(ref), len(want))
		return
	}
	for i, w := range want {
		g, r := got[i], ref[i]
		if g.module != w.module || g.function != w.function {
			t.Errorf("thread %s frame %d: %s!%s, want %s!%s (the source's chain)", index, i, g.module, g.function, w.module, w.function)
		}
		fileLine := r.fileLine
		if i == 0 && scenario == "entry" {
			// At a function's first instruction clang's line table has a
			// zero-length entry for the line of the function's name, then
			// the first statement's: llvm-symbolizer takes the first,
			// Mozilla's dump_syms (symbolic's PDB reader) drops zero-length
			// entries, and so do we.
			fileLine = g.fileLine
		}
		if qualified(g.function) != qualified(r.function) || g.fileLine != fileLine || g.module != r.module {
			t.Errorf("thread %s frame %d: %s!%s at %s, llvm-symbolizer: %s!%s at %s", index, i, g.module, g.function, g.fileLine, r.module, r.function, r.fileLine)
		}
		if i == 0 {
			if crashed && !crashes[g.fileLine] {
				t.Errorf("thread %s: the crash at %s, not at a line of the source's crash", index, g.fileLine)
			}
			continue
		}
		switch {
		case g.trust == "inline record":
		case g.trust == "given as instruction pointer in context" && got[i-1].trust == "inline record":
		case x86 && g.trust != "call frame info":
			t.Errorf("thread %s frame %d (%s): found by %q, want STACK WIN (call frame info)", index, i, g.function, g.trust)
		case !x86 && g.trust != "call frame info" && g.trust != "simulating a return from leaf function":
			t.Errorf("thread %s frame %d (%s): found by %q, want call frame info or a leaf's return", index, i, g.function, g.trust)
		}
	}
}
