//go:build linux

package capture_test

import (
	"bufio"
	"bytes"
	"debug/elf"

	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"

	"github.com/gobreakpad/gobreakpad/arch"
	"github.com/gobreakpad/gobreakpad/arch/x86"
	"github.com/gobreakpad/gobreakpad/capture"
	"github.com/gobreakpad/gobreakpad/capture/elfcore"
	"github.com/gobreakpad/gobreakpad/internal/testkit/corpus"
	"github.com/gobreakpad/gobreakpad/minidump"
)

var (
	buildDir  string // built tools and compiled test programs, shared by the tests
	buildMu   sync.Mutex
	buildOnce = map[string]*built{}
)

type built struct {
	path string
	err  error
}

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "capture-test")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	buildDir = dir
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

// once builds something at most once per test binary.
func once(key string, build func(out string) error) (string, error) {
	buildMu.Lock()
	defer buildMu.Unlock()
	if b, ok := buildOnce[key]; ok {
		return b.path, b.err
	}
	out := filepath.Join(buildDir, key)
	err := build(out)
	buildOnce[key] = &built{out, err}
	return out, err
}

// tool builds cmd/NAME of this module, or skips the test when that command
// is not in the tree yet or does not build.
func tool(t *testing.T, name string) string {
	t.Helper()
	root := corpus.Root()
	if _, err := os.Stat(filepath.Join(root, "cmd", name)); err != nil {
		t.Skipf("cmd/%s is not in the tree yet: skipping the walk", name)
	}
	path, err := once("tool-"+name, func(out string) error {
		cmd := exec.Command("go", "build", "-o", out, "./cmd/"+name)
		cmd.Dir = root
		if b, err := cmd.CombinedOutput(); err != nil {
			return fmt.Errorf("%v\n%s", err, b)
		}
		return nil
	})
	if err != nil {
		t.Skipf("cmd/%s does not build yet, skipping the walk: %v", name, err)
	}
	return path
}

// crasher compiles testdata/capture/crasher.c with the given compiler and
// flags, or skips the test when that is not possible here.
func crasher(t *testing.T, cc string, flags ...string) string {
	t.Helper()
	if _, err := exec.LookPath(cc); err != nil {
		t.Skipf("%s not found: skipping", cc)
	}
	src := filepath.Join(corpus.Root(), "testdata", "capture", "crasher.c")
	key := "crasher-" + strings.NewReplacer("/", "_", " ", "_").Replace(cc+strings.Join(flags, ""))
	path, err := once(key, func(out string) error {
		args := append([]string{"-O1", "-g", "-pthread", "-o", out, src}, flags...)
		if b, err := exec.Command(cc, args...).CombinedOutput(); err != nil {
			return fmt.Errorf("%v\n%s", err, b)
		}
		return nil
	})
	if err != nil {
		t.Skipf("cannot compile crasher.c with %s %v: %v", cc, flags, err)
	}
	return path
}

// symbols writes the Breakpad symbols of binary into a symbol directory,
// with our dump_syms, and returns the directory.
func symbols(t *testing.T, binary string) string {
	t.Helper()
	dumpSyms := tool(t, "dump_syms")
	dir, err := once("syms-"+filepath.Base(binary), func(out string) error {
		sym, err := exec.Command(dumpSyms, binary).Output()
		if err != nil {
			return err
		}
		f := strings.Fields(string(sym[:bytes.IndexByte(sym, '\n')]))
		if len(f) != 5 || f[0] != "MODULE" {
			return fmt.Errorf("unexpected MODULE line %q", f)
		}
		d := filepath.Join(out, f[4], f[3])
		if err := os.MkdirAll(d, 0o755); err != nil {
			return err
		}
		return os.WriteFile(filepath.Join(d, f[4]+".sym"), sym, 0o644)
	})
	if err != nil {
		t.Skipf("dump_syms cannot make symbols yet: %v", err)
	}
	return dir
}

// crashingFrames walks dump with our minidump_stackwalk -m and returns the
// function names of the crashing thread's frames ("" where unknown).
func crashingFrames(t *testing.T, dump string, symDirs ...string) []string {
	t.Helper()
	walker := tool(t, "minidump_stackwalk")
	out, err := exec.Command(walker, append([]string{"-m", dump}, symDirs...)...).Output()
	if err != nil {
		t.Skipf("minidump_stackwalk fails on the dump, skipping the walk: %v", err)
	}
	crashed := ""
	var frames []string
	sc := bufio.NewScanner(bytes.NewReader(out))
	for sc.Scan() {
		f := strings.Split(sc.Text(), "|")
		if f[0] == "Crash" && len(f) == 4 {
			crashed = f[3]
		}
		if len(f) == 7 && f[0] == crashed {
			frames = append(frames, f[3])
		}
	}
	if crashed == "" {
		t.Fatalf("no Crash line in minidump_stackwalk -m output:\n%s", out)
	}
	return frames
}

// checkChain checks that chain appears as consecutive frames of the walk.
func checkChain(t *testing.T, frames, chain []string) {
	t.Helper()
	for i := range frames {
		if len(frames)-i >= len(chain) && slices.Equal(frames[i:i+len(chain)], chain) {
			return
		}
	}
	t.Errorf("walk of the crashing thread %q lacks the true chain %q", frames, chain)
}

// dumpFacts decodes a minidump the way the checks need it.
type dumpFacts struct {
	f       *minidump.File
	exc     *minidump.Exception
	threads []minidump.Thread
	cpu     arch.CPU
}

func decode(t *testing.T, f *minidump.File, linuxStreams []minidump.StreamType) dumpFacts {
	return decodeStack(t, f, linuxStreams, true)
}

// decodeStack is decode, checking the crashing thread's stack memory only
// when wantStack is set.
func decodeStack(t *testing.T, f *minidump.File, linuxStreams []minidump.StreamType, wantStack bool) dumpFacts {
	t.Helper()
	for _, st := range append([]minidump.StreamType{
		minidump.ThreadListStream, minidump.ModuleListStream, minidump.MemoryListStream,
		minidump.ExceptionStream, minidump.SystemInfoStream, minidump.MiscInfoStream, minidump.BreakpadInfoStream,
	}, linuxStreams...) {
		if b, err := f.Stream(st); err != nil || len(b) == 0 {
			t.Errorf("stream %v missing: %v", st, err)
		}
	}
	var d dumpFacts
	d.f = f
	var err error
	if d.threads, err = f.ThreadList(); err != nil {
		t.Fatalf("thread list: %v", err)
	}
	if d.exc, err = f.Exception(); err != nil {
		t.Fatalf("exception: %v", err)
	}
	if d.exc.Context == nil {
		t.Fatalf("exception context: %v", d.exc.ContextErr)
	}
	si, err := f.SystemInfo()
	if err != nil {
		t.Fatalf("system info: %v", err)
	}
	d.cpu = si.CPU()
	if _, err := f.ModuleList(); err != nil {
		t.Errorf("module list: %v", err)
	}
	if _, err := f.MiscInfo(); err != nil {
		t.Errorf("misc info: %v", err)
	}
	if bi, err := f.BreakpadInfo(); err != nil || bi.RequestingThreadID != d.exc.ThreadID {
		t.Errorf("breakpad info %+v, %v; want requesting thread %d", bi, err, d.exc.ThreadID)
	}
	for _, st := range linuxStreams {
		if n, err := decodeLinux(f, st); err != nil || n == 0 {
			t.Errorf("%v: %d entries, %v", st, n, err)
		}
	}
	mem, err := f.Memory()
	if err != nil {
		t.Fatalf("memory: %v", err)
	}
	if _, err := mem.ReadMemory(d.exc.Context.InstructionPointer(), 1); err != nil {
		t.Errorf("no memory at the crashing thread's pc: %v", err)
	}
	if _, err := mem.ReadMemory(d.exc.Context.StackPointer(), 8); wantStack && err != nil {
		t.Errorf("no memory at the crashing thread's stack pointer: %v", err)
	}
	for _, th := range d.threads {
		if th.ThreadID == d.exc.ThreadID && wantStack {
			if b, err := f.StackMemory(&th); err != nil || len(b) == 0 {
				t.Errorf("crashing thread's stack: %d bytes, %v", len(b), err)
			}
		}
	}
	return d
}

// decodeLinux decodes a Linux stream with the reader's decoder for it and
// returns how many entries it holds.
func decodeLinux(f *minidump.File, st minidump.StreamType) (int, error) {
	switch st {
	case minidump.LinuxCPUInfo:
		return count(f.LinuxCPUInfo())
	case minidump.LinuxProcStatus:
		return count(f.LinuxProcStatus())
	case minidump.LinuxLSBRelease:
		return count(f.LinuxLSBRelease())
	case minidump.LinuxCmdLine:
		return count(f.LinuxCmdLine())
	case minidump.LinuxEnviron:
		return count(f.LinuxEnviron())
	case minidump.LinuxAuxv:
		return count(f.LinuxAuxv())
	case minidump.LinuxMaps:
		return count(f.LinuxMaps())
	case minidump.LinuxDSODebug:
		v, err := f.LinuxDSODebug()
		if err != nil {
			return 0, err
		}
		return len(v.LinkMaps), nil
	}
	return 0, fmt.Errorf("no decoder for %v", st)
}

// count is the entry count of what a list decoder returns.
func count[T any](v []T, err error) (int, error) { return len(v), err }

var liveStreams = []minidump.StreamType{
	minidump.LinuxCPUInfo, minidump.LinuxProcStatus, minidump.LinuxLSBRelease, minidump.LinuxCmdLine,
	minidump.LinuxEnviron, minidump.LinuxAuxv, minidump.LinuxMaps, minidump.LinuxDSODebug,
}

var coreStreams = []minidump.StreamType{minidump.LinuxCmdLine, minidump.LinuxEnviron, minidump.LinuxAuxv, minidump.LinuxMaps, minidump.LinuxDSODebug}

// TestTestdata checks the captured dumps kept in testdata/capture: every
// stream decodes, the exception names the recorded signal, and, with our
// minidump_stackwalk and the kept symbols, the crashing thread walks to its
// true call chain.
func TestTestdata(t *testing.T) {
	cases, err := filepath.Glob(filepath.Join(corpus.Root(), "testdata", "capture", "*", "info.txt"))
	if err != nil || len(cases) == 0 {
		t.Fatalf("no cases in testdata/capture: %v", err)
	}
	for _, info := range cases {
		dir := filepath.Dir(info)
		t.Run(filepath.Base(dir), func(t *testing.T) {
			want := readInfo(t, info)
			f, err := minidump.Open(filepath.Join(dir, "crash.dmp"))
			if err != nil {
				t.Fatal(err)
			}
			defer f.Close()
			streams := coreStreams
			if strings.Contains(dir, "core") == false {
				streams = liveStreams
			}
			d := decode(t, f, streams)
			if got := strconv.Itoa(int(d.exc.ExceptionRecord.ExceptionCode)); got != want["signal"] {
				t.Errorf("signal %s, want %s", got, want["signal"])
			}
			if got := strconv.Itoa(int(int32(d.exc.ExceptionRecord.ExceptionFlags))); got != want["code"] {
				t.Errorf("si_code %s, want %s", got, want["code"])
			}
			if got := strconv.Itoa(len(d.threads)); got != want["threads"] {
				t.Errorf("%s threads, want %s", got, want["threads"])
			}
			if d.cpu.String() != want["cpu"] {
				t.Errorf("cpu %v, want %s", d.cpu, want["cpu"])
			}
			// Breakpad reads no context of an arm64 dump whose system info
			// says ArchARM64Old (0x8003) beside the current context.
			if si, err := f.SystemInfo(); err == nil && d.cpu == arch.ARM64 && si.ProcessorArchitecture != minidump.ArchARM64 {
				t.Errorf("arm64 system info CPU %#x, want %#x (the current context's)", si.ProcessorArchitecture, minidump.ArchARM64)
			}
			frames := crashingFrames(t, filepath.Join(dir, "crash.dmp"), filepath.Join(dir, "symbols"))
			checkChain(t, frames, strings.Fields(want["chain"]))
			if b, err := os.ReadFile(filepath.Join(dir, "regs.txt")); err == nil {
				checkRegs(t, d, string(b))
			}
			if b, err := os.ReadFile(filepath.Join(dir, "truth.txt")); err == nil {
				checkTruth(t, frames, string(b))
			}
		})
	}
}

// x86Regs names the registers of an x86 context as gdb does.
func x86Regs(c *x86.Context) map[string]uint32 {
	return map[string]uint32{
		"eax": c.Eax, "ecx": c.Ecx, "edx": c.Edx, "ebx": c.Ebx, "esp": c.Esp, "ebp": c.Ebp, "esi": c.Esi, "edi": c.Edi,
		"eip": c.Eip, "eflags": c.EFlags, "cs": c.Cs, "ss": c.Ss, "ds": c.Ds, "es": c.Es, "fs": c.Fs, "gs": c.Gs,
	}
}

// checkRegs compares a dump's x86 contexts with the registers gdb showed at
// the same crash (regs.txt: one line of NAME=VALUE per thread, the crashing
// thread first): the exception context equals the first line, and every
// line's thread is in the thread list with the same pc, stack and frame
// pointers, flags and segments (the other registers of a thread blocked in
// a system call may hold thread ids, which differ from run to run).
func checkRegs(t *testing.T, d dumpFacts, text string) {
	t.Helper()
	if d.exc.Context.X86 == nil {
		t.Fatalf("regs.txt is for x86 contexts; the exception's is %v", d.exc.Context.CPU)
	}
	stable := []string{"eip", "esp", "ebp", "eflags", "cs", "ss", "ds", "es", "fs", "gs"}
	for i, line := range strings.Split(strings.TrimSpace(text), "\n") {
		want := map[string]uint32{}
		for _, f := range strings.Fields(line) {
			k, v, _ := strings.Cut(f, "=")
			n, err := strconv.ParseUint(v, 0, 32)
			if err != nil {
				t.Fatalf("regs.txt line %d: %q: %v", i+1, f, err)
			}
			want[k] = uint32(n)
		}
		if len(want) != 16 {
			t.Fatalf("regs.txt line %d: %d registers, want 16", i+1, len(want))
		}
		if i == 0 {
			got := x86Regs(d.exc.Context.X86)
			for k, v := range want {
				if got[k] != v {
					t.Errorf("crashing thread: %s = %#x, gdb showed %#x", k, got[k], v)
				}
			}
		}
		found := false
		for _, th := range d.threads {
			if th.Context == nil || th.Context.X86 == nil {
				continue
			}
			got := x86Regs(th.Context.X86)
			same := true
			for _, k := range stable {
				same = same && got[k] == want[k]
			}
			found = found || same
		}
		if !found {
			t.Errorf("no thread of the dump has the registers gdb showed: %s", line)
		}
	}
}

// checkTruth compares the crashing thread's frames with gdb's backtrace
// (truth.txt: frame, function, file:line; "??" for a frame gdb could not
// name): the same number of frames, and the same function where gdb names
// one.
func checkTruth(t *testing.T, frames []string, text string) {
	t.Helper()
	var truth []string
	for _, line := range strings.Split(strings.TrimSpace(text), "\n") {
		if f := strings.Split(line, "\t"); len(f) >= 2 {
			truth = append(truth, f[1])
		}
	}
	ok := len(frames) == len(truth)
	for i := range min(len(frames), len(truth)) {
		ok = ok && (truth[i] == "??" || frames[i] == truth[i])
	}
	if !ok {
		t.Errorf("crashing thread's frames %q, gdb's %q", frames, truth)
	}
}

func readInfo(t *testing.T, path string) map[string]string {
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	m := map[string]string{}
	for line := range strings.Lines(string(b)) {
		if k, v, ok := strings.Cut(strings.TrimSpace(line), "="); ok {
			m[k] = v
		}
	}
	return m
}

// ptraceOK skips the test when this process may not trace its children.
func ptraceOK(t *testing.T) {
	t.Helper()
	if _, err := capture.Run([]string{"/bin/true"}, capture.RunOptions{}); err != nil {
		t.Skipf("cannot run programs under ptrace here: %v", err)
	}
}

// symbolRange returns the address range of function name in an ELF file.
func symbolRange(t *testing.T, path, name string) (lo, hi uint64) {
	t.Helper()
	f, err := elf.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	syms, err := f.Symbols()
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range syms {
		if s.Name == name {
			return s.Value, s.Value + s.Size
		}
	}
	t.Fatalf("%s: no symbol %s", path, name)
	return 0, 0
}

// TestRun runs the crasher under ptrace in each of its modes and checks the
// exit status, the captured process and the dump written from it.
func TestRun(t *testing.T) {
	prog := crasher(t, "gcc")
	ptraceOK(t)
	lo, hi := symbolRange(t, prog, "crash_here")
	for _, c := range []struct {
		mode       string
		signal     syscall.Signal
		code       int32  // expected si_code
		inCrash    bool   // the faulting pc is in crash_here
		exit       int    // exit code when signal is 0
		childCrash bool   // the program exits with code exit after a child it forked crashes
		note       string // expected in the capture's notes
		threads    int
		chain      []string
	}{
		{mode: "segv", signal: syscall.SIGSEGV, code: 1, inCrash: true, threads: 1, chain: []string{"crash_here", "level3", "level2", "level1", "main"}},
		{mode: "fpe", signal: syscall.SIGFPE, code: 1, inCrash: true, threads: 1},
		{mode: "ill", signal: syscall.SIGILL, code: 2, inCrash: true, threads: 1},
		{mode: "trap", signal: syscall.SIGTRAP, code: 0x80, inCrash: true, threads: 1},
		{mode: "abort", signal: syscall.SIGABRT, code: -6, threads: 1},
		{mode: "threads", signal: syscall.SIGSEGV, code: 1, inCrash: true, threads: 5, chain: []string{"crash_here", "level3", "level2", "level1", "crasher_thread"}},
		{mode: "fork", signal: syscall.SIGSEGV, code: 1, inCrash: true, threads: 1},
		{mode: "exec", signal: syscall.SIGSEGV, code: 1, inCrash: true, threads: 1},
		{mode: "badsp", signal: syscall.SIGSEGV, code: 1, inCrash: true, threads: 1, note: "stack pointer 0x10 is in no readable mapping"},
		{mode: "handled", exit: 3},
		{mode: "child", exit: 5, childCrash: true},
		{mode: "exit", exit: 0},
	} {
		t.Run(c.mode, func(t *testing.T) {
			var procs []*capture.Process
			var dumps [][]byte
			ws, err := capture.Run([]string{prog, c.mode}, capture.RunOptions{OnCrash: func(p *capture.Process) error {
				var buf bytes.Buffer
				if err := p.WriteMinidump(&buf); err != nil {
					return err
				}
				procs, dumps = append(procs, p), append(dumps, buf.Bytes())
				return nil
			}})
			if err != nil {
				t.Fatal(err)
			}
			if c.childCrash {
				if !ws.Exited() || ws.ExitStatus() != c.exit || len(procs) != 1 {
					t.Fatalf("status %#x, %d dumps; want exit %d and the child's dump", uint32(ws), len(procs), c.exit)
				}
				if p := procs[0]; p.Crash.Signal != int32(syscall.SIGSEGV) || int(p.PID) == 0 || !strings.Contains(string(p.CmdLine), "child") {
					t.Errorf("child capture: pid %d crash %+v", p.PID, p.Crash)
				}
				return
			}
			if c.signal == 0 {
				if !ws.Exited() || ws.ExitStatus() != c.exit || len(procs) != 0 {
					t.Fatalf("status %#x (exited %v code %d), %d dumps; want exit %d and no dump", uint32(ws), ws.Exited(), ws.ExitStatus(), len(procs), c.exit)
				}
				return
			}
			if !ws.Signaled() || ws.Signal() != c.signal {
				t.Fatalf("status %#x, want death by %v", uint32(ws), c.signal)
			}
			if len(procs) != 1 {
				t.Fatalf("%d dumps, want 1", len(procs))
			}
			p := procs[0]
			if p.Crash.Signal != int32(c.signal) || p.Crash.Code != c.code || p.Crash.ThreadID != p.Threads[0].ID {
				t.Errorf("crash %+v, want signal %d code %d in thread %d", p.Crash, c.signal, c.code, p.Threads[0].ID)
			}
			if len(p.Threads) != c.threads {
				t.Errorf("%d threads, want %d", len(p.Threads), c.threads)
			}
			if p.CPU != arch.AMD64 {
				t.Errorf("cpu %v", p.CPU)
			}
			var base uint64
			for _, m := range p.Modules {
				if m.Path == prog {
					base = m.Base
				}
			}
			if base == 0 {
				t.Fatalf("no module for %s among %+v", prog, p.Modules)
			}
			if pc := p.Threads[0].PC; c.inCrash && (pc < base+lo || pc >= base+hi) {
				t.Errorf("pc %#x is not in crash_here [%#x, %#x)", pc, base+lo, base+hi)
			}
			notes := strings.Join(p.Notes, "\n")
			if c.note != "" && !strings.Contains(notes, c.note) {
				t.Errorf("notes lack %q:\n%s", c.note, notes)
			}
			f, err := minidump.NewFileBytes(dumps[0])
			if err != nil {
				t.Fatal(err)
			}
			d := decodeStack(t, f, liveStreams, c.note == "")
			// The crashing thread's registers in the dump are those ptrace
			// reported at the fault.
			if d.exc.ThreadID != p.Crash.ThreadID || d.exc.Context.AMD64 == nil || !bytes.Equal(d.exc.Context.AMD64.Encode(), p.Threads[0].Context.Encode()) {
				t.Errorf("exception context differs from the registers ptrace reported")
			}
			if uint32(p.Crash.Signal) != d.exc.ExceptionRecord.ExceptionCode || uint32(p.Crash.Code) != d.exc.ExceptionRecord.ExceptionFlags {
				t.Errorf("exception record %+v, crash %+v", d.exc.ExceptionRecord, p.Crash)
			}
			names, err := f.ThreadNames()
			if err != nil || len(names) != len(p.Threads) || names[0].ThreadID != p.Crash.ThreadID || names[0].Name == "" {
				t.Errorf("thread names %+v, %v", names, err)
			}
			if c.chain != nil {
				path := filepath.Join(t.TempDir(), "crash.dmp")
				if err := os.WriteFile(path, dumps[0], 0o644); err != nil {
					t.Fatal(err)
				}
				checkChain(t, crashingFrames(t, path, symbols(t, prog)), c.chain)
			}
		})
	}
}

// crasher32 compiles crasher.c for 32-bit x86 with gcc -m32 or, without
// multilib, Debian's i686-linux-gnu-gcc cross compiler, or skips the test.
func crasher32(t *testing.T) string {
	t.Helper()
	for _, cc := range []struct {
		name  string
		flags []string
	}{{"gcc", []string{"-m32"}}, {"i686-linux-gnu-gcc", nil}} {
		if _, err := exec.LookPath(cc.name); err != nil {
			continue
		}
		key := "crasher32-" + cc.name
		path, err := once(key, func(out string) error {
			args := append([]string{"-O1", "-g", "-pthread", "-o", out, filepath.Join(corpus.Root(), "testdata", "capture", "crasher.c")}, cc.flags...)
			if b, err := exec.Command(cc.name, args...).CombinedOutput(); err != nil {
				return fmt.Errorf("%v\n%s", err, b)
			}
			return nil
		})
		if err == nil {
			return path
		}
	}
	t.Skip("no compiler for 32-bit x86 (gcc -m32 with multilib, or i686-linux-gnu-gcc): skipping")
	return ""
}

// TestRun32 captures a 32-bit x86 program on an x86-64 host: every thread's
// context is an x86 one whose registers point into the process (pc in
// crash_here for the crashing thread, stack pointers in mapped memory), and
// the crashing thread walks to its true chain.
func TestRun32(t *testing.T) {
	prog := crasher32(t)
	if err := exec.Command(prog, "exit").Run(); err != nil {
		t.Skipf("32-bit programs do not run here: %v", err)
	}
	ptraceOK(t)
	lo, hi := symbolRange(t, prog, "crash_here")
	for _, c := range []struct {
		mode    string
		threads int
		chain   []string
	}{
		{"segv", 1, []string{"crash_here", "level3", "level2", "level1", "main"}},
		{"threads", 5, []string{"crash_here", "level3", "level2", "level1", "crasher_thread"}},
	} {
		t.Run(c.mode, func(t *testing.T) {
			var procs []*capture.Process
			ws, err := capture.Run([]string{prog, c.mode}, capture.RunOptions{OnCrash: func(p *capture.Process) error {
				procs = append(procs, p)
				return nil
			}})
			if err != nil {
				t.Fatal(err)
			}
			if !ws.Signaled() || ws.Signal() != syscall.SIGSEGV || len(procs) != 1 {
				t.Fatalf("status %#x, %d captures", uint32(ws), len(procs))
			}
			p := procs[0]
			if p.CPU != arch.X86 {
				t.Errorf("cpu %v, want x86", p.CPU)
			}
			if len(p.Threads) != c.threads {
				t.Errorf("%d threads, want %d", len(p.Threads), c.threads)
			}
			if len(p.Notes) != 0 {
				t.Errorf("notes:\n%s", strings.Join(p.Notes, "\n"))
			}
			var base uint64
			for _, m := range p.Modules {
				if m.Path == prog {
					base = m.Base
				}
			}
			for i, th := range p.Threads {
				xc, ok := th.Context.(*x86.Context)
				if !ok {
					t.Fatalf("thread %d: context %T, want x86", th.ID, th.Context)
				}
				if xc.Cs != 0x23 || xc.Ss != 0x2b || xc.Ds != 0x2b || xc.EFlags&0x200 == 0 || uint64(xc.Eip) != th.PC || uint64(xc.Esp) != th.SP {
					t.Errorf("thread %d: segments or flags not a 32-bit user thread's: %+v", th.ID, xc)
				}
				if len(th.Stack.Data) == 0 {
					t.Errorf("thread %d: no stack captured at esp %#x", th.ID, xc.Esp)
				}
				if i == 0 && (th.PC < base+lo || th.PC >= base+hi) {
					t.Errorf("crashing thread's eip %#x is not in crash_here [%#x, %#x)", th.PC, base+lo, base+hi)
				}
			}
			if p.DSODebug == nil || len(p.DSODebug.LinkMaps) < 3 {
				t.Errorf("dso debug %+v: want the link maps of a dynamic program", p.DSODebug)
			}
			path := filepath.Join(t.TempDir(), "crash.dmp")
			f, err := os.Create(path)
			if err != nil {
				t.Fatal(err)
			}
			if err := p.WriteMinidump(f); err != nil {
				t.Fatal(err)
			}
			f.Close()
			checkChain(t, crashingFrames(t, path, symbols(t, prog)), c.chain)
		})
	}
}

// makeCore runs argv with core dumps enabled in dir and returns the core
// file the kernel wrote there, or skips when it writes none.
func makeCore(t *testing.T, dir string, argv ...string) string {
	t.Helper()
	pattern, err := os.ReadFile("/proc/sys/kernel/core_pattern")
	if err != nil || strings.HasPrefix(string(pattern), "|") || strings.Contains(string(pattern), "/") {
		t.Skipf("core_pattern %q does not write cores into the working directory", pattern)
	}
	cmd := exec.Command("sh", "-c", `ulimit -c unlimited && exec "$@"`, "sh")
	cmd.Args = append(cmd.Args, argv...)
	cmd.Dir = dir
	cmd.Run()
	// qemu-user names its guest's core qemu_*.core (and then dumps its own
	// core as "core").
	cores, _ := filepath.Glob(filepath.Join(dir, "qemu_*.core"))
	if len(cores) == 0 {
		cores, _ = filepath.Glob(filepath.Join(dir, "core*"))
	}
	if len(cores) == 0 {
		t.Skipf("no core file written by %v", argv)
	}
	return cores[0]
}

// TestFromKernelCore converts a core the kernel wrote of a multi-threaded
// crash and checks it against the crash's facts.
func TestFromKernelCore(t *testing.T) {
	prog := crasher(t, "gcc")
	dir := t.TempDir()
	core := makeCore(t, dir, prog, "threads")
	c, err := elfcore.Open(core)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	p, err := capture.FromCore(c, capture.CoreOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if p.Crash == nil || p.Crash.Signal != int32(syscall.SIGSEGV) || p.Crash.Code != 1 || len(p.Threads) != 5 || p.Threads[0].ID != p.Crash.ThreadID {
		t.Fatalf("crash %+v with %d threads", p.Crash, len(p.Threads))
	}
	if string(p.CmdLine) != prog+"\x00threads\x00" || !strings.Contains(string(p.Environ), "PATH=") {
		t.Errorf("arguments %q, environment %q: not recovered from the stack", p.CmdLine, p.Environ)
	}
	path := filepath.Join(dir, "crash.dmp")
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := p.WriteMinidump(f); err != nil {
		t.Fatal(err)
	}
	f.Close()
	md, err := minidump.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer md.Close()
	decode(t, md, coreStreams)
	checkChain(t, crashingFrames(t, path, symbols(t, prog)), []string{"crash_here", "level3", "level2", "level1", "crasher_thread"})
}

// TestFromQemuCore converts an arm64 core written by qemu-user.
func TestFromQemuCore(t *testing.T) {
	qemu, err := exec.LookPath("qemu-aarch64")
	if err != nil {
		t.Skip("qemu-aarch64 not found: skipping")
	}
	sysroot := "/usr/aarch64-linux-gnu"
	if _, err := os.Stat(sysroot); err != nil {
		t.Skipf("no arm64 sysroot at %s", sysroot)
	}
	prog := crasher(t, "aarch64-linux-gnu-gcc-12")
	dir := t.TempDir()
	core := makeCore(t, dir, qemu, "-L", sysroot, prog, "segv")
	c, err := elfcore.Open(core)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	p, err := capture.FromCore(c, capture.CoreOptions{Executable: prog})
	if err != nil {
		t.Fatal(err)
	}
	if p.CPU != arch.ARM64 || p.Crash == nil || p.Crash.Signal != int32(syscall.SIGSEGV) {
		t.Fatalf("cpu %v crash %+v", p.CPU, p.Crash)
	}
	if string(p.CmdLine) != prog+"\x00segv\x00" {
		t.Errorf("arguments %q: not recovered from the stack", p.CmdLine)
	}
	if !slices.ContainsFunc(p.Modules, func(m capture.Module) bool { return m.Path == prog && len(m.BuildID) > 0 }) {
		t.Errorf("executable not among the modules %+v", p.Modules)
	}
	path := filepath.Join(dir, "crash.dmp")
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := p.WriteMinidump(f); err != nil {
		t.Fatal(err)
	}
	f.Close()
	checkChain(t, crashingFrames(t, path, symbols(t, prog)), []string{"crash_here", "level3", "level2", "level1", "main"})
}

// TestCorpusPrograms captures crashes of the shared corpus's own crash
// programs (built for Debian 12 x86-64, the binaries next to Breakpad's dumps
// of them) and checks that our walk of our dump agrees with gdb's backtrace
// of the same crash (truth.txt) from the crashing frame through main, or
// through the thread's start function.
func TestCorpusPrograms(t *testing.T) {
	ptraceOK(t)
	gen := filepath.Join(corpus.Dir(t), "generated")
	for _, name := range []string{"deep_chain-x64-O0", "deep_chain-x64-O2", "threads-x64-O2"} {
		t.Run(name, func(t *testing.T) {
			dir := filepath.Join(gen, name)
			info := readInfo(t, corpus.File(t, filepath.Join("generated", name, "info.txt")))
			prog := filepath.Join(dir, info["program"])
			truth, err := os.ReadFile(filepath.Join(dir, "truth.txt"))
			if err != nil {
				t.Skip(err)
			}
			var chain []string
			for line := range strings.Lines(string(truth)) {
				f := strings.Split(strings.TrimSpace(line), "\t")
				if len(f) < 2 || f[1] == "start_thread" {
					break
				}
				chain = append(chain, f[1])
				if f[1] == "main" {
					break
				}
			}
			var dumps [][]byte
			ws, err := capture.Run([]string{prog}, capture.RunOptions{
				Env: []string{"PATH=/usr/bin:/bin", "LD_LIBRARY_PATH=" + dir},
				OnCrash: func(p *capture.Process) error {
					var buf bytes.Buffer
					err := p.WriteMinidump(&buf)
					dumps = append(dumps, buf.Bytes())
					return err
				},
			})
			if err != nil {
				t.Fatal(err)
			}
			if ws.Exited() {
				t.Skipf("%s exited with %d instead of crashing (a different system?)", prog, ws.ExitStatus())
			}
			if len(dumps) != 1 || strconv.Itoa(128+int(ws.Signal())) != info["exit_status"] {
				t.Fatalf("%d dumps, death by %v; want one dump and exit status %s", len(dumps), ws.Signal(), info["exit_status"])
			}
			path := filepath.Join(t.TempDir(), "crash.dmp")
			if err := os.WriteFile(path, dumps[0], 0o644); err != nil {
				t.Fatal(err)
			}
			checkChain(t, crashingFrames(t, path, filepath.Join(dir, "symbols"), filepath.Join(gen, "syslib-symbols")), chain)
		})
	}
}
