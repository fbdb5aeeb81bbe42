package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gobreakpad/gobreakpad/internal/testkit/corpus"
	"github.com/gobreakpad/gobreakpad/minidump"
)

func TestErrors(t *testing.T) {
	dir := t.TempDir()
	notCore := filepath.Join(dir, "text")
	os.WriteFile(notCore, []byte("not a core file"), 0o644)
	for _, args := range [][]string{
		{"core2md"},
		{"core2md", "a", "b", "c"},
		{"core2md", filepath.Join(dir, "missing")},
		{"core2md", notCore},
		{"core2md", "/proc/self/exe"}, // an ELF file, but not a core
	} {
		var stderr strings.Builder
		err := newCommand(&stderr).Run(t.Context(), args)
		if err == nil {
			t.Errorf("%q succeeded", args)
		}
	}
}

// TestMinidumpInput: a minidump given as the core file is named as one.
func TestMinidumpInput(t *testing.T) {
	dump := filepath.Join("..", "..", "testdata", "capture", "x64-segv", "crash.dmp")
	var stderr strings.Builder
	err := newCommand(&stderr).Run(t.Context(), []string{"core2md", "-o", filepath.Join(t.TempDir(), "out.dmp"), dump})
	if err == nil || !strings.Contains(err.Error(), "is a minidump, not a core file") || strings.Contains(err.Error(), "magic") {
		t.Errorf("got %v", err)
	}
}

// TestConvert converts a core the kernel writes of the crasher and reads
// the result back.
func TestConvert(t *testing.T) {
	if _, err := exec.LookPath("gcc"); err != nil {
		t.Skip("gcc not found: skipping")
	}
	pattern, err := os.ReadFile("/proc/sys/kernel/core_pattern")
	if err != nil || strings.HasPrefix(string(pattern), "|") || strings.Contains(string(pattern), "/") {
		t.Skipf("core_pattern %q does not write cores into the working directory", pattern)
	}
	dir := t.TempDir()
	prog := filepath.Join(dir, "crasher")
	src := filepath.Join(corpus.Root(), "testdata", "capture", "crasher.c")
	if b, err := exec.Command("gcc", "-O1", "-g", "-o", prog, src).CombinedOutput(); err != nil {
		t.Skipf("cannot compile crasher.c: %v\n%s", err, b)
	}
	cmd := exec.Command("sh", "-c", `ulimit -c unlimited && exec ./crasher fpe`)
	cmd.Dir = dir
	cmd.Run()
	cores, _ := filepath.Glob(filepath.Join(dir, "core*"))
	if len(cores) == 0 {
		t.Skip("the kernel wrote no core file")
	}
	var stderr strings.Builder
	out := filepath.Join(dir, "out.dmp")
	if err := newCommand(&stderr).Run(t.Context(), []string{"core2md", "-o", out, cores[0], prog}); err != nil {
		t.Fatalf("%v\n%s", err, stderr.String())
	}
	f, err := minidump.Open(out)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	exc, err := f.Exception()
	if err != nil || exc.ExceptionRecord.ExceptionCode != 8 || exc.ExceptionRecord.ExceptionFlags != 1 { // SIGFPE, FPE_INTDIV
		t.Errorf("exception %+v, %v; want SIGFPE/FPE_INTDIV", exc, err)
	}
	mods, err := f.ModuleList()
	if err != nil {
		t.Fatal(err)
	}
	found := false
	for _, m := range mods {
		if id, ok := m.BuildID(); ok && m.Name == prog && len(id) > 0 {
			found = true
		}
	}
	if !found {
		t.Errorf("the program is not among the modules with its build id")
	}
	if _, err := f.Stream(minidump.LinuxCPUInfo); err != nil {
		t.Errorf("host information missing: %v", err)
	}
	checkBreakpadMemory(t, cores[0], prog, len(mods))
}

// checkBreakpadMemory converts the core with --breakpad-memory: the same
// modules, and memory only in the threads' stacks and the 256 bytes around
// the crashing thread's pc.
func checkBreakpadMemory(t *testing.T, core, prog string, modules int) {
	var stderr strings.Builder
	out := filepath.Join(t.TempDir(), "bp.dmp")
	if err := newCommand(&stderr).Run(t.Context(), []string{"core2md", "--breakpad-memory", "-o", out, core, prog}); err != nil {
		t.Fatalf("--breakpad-memory: %v\n%s", err, stderr.String())
	}
	f, err := minidump.Open(out)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if mods, err := f.ModuleList(); err != nil || len(mods) != modules {
		t.Errorf("--breakpad-memory: %d modules (%v), want %d", len(mods), err, modules)
	}
	threads, err := f.ThreadList()
	if err != nil {
		t.Fatal(err)
	}
	exc, err := f.Exception()
	if err != nil {
		t.Fatal(err)
	}
	if exc.Context == nil {
		t.Fatalf("exception context: %v", exc.ContextErr)
	}
	pc := exc.Context.InstructionPointer()
	m, _ := f.Memory()
	for _, r := range m.Regions() {
		inStack := false
		for _, th := range threads {
			s := th.Stack
			if r.Start >= s.StartOfMemoryRange && r.Start+r.Size <= s.StartOfMemoryRange+uint64(s.Memory.DataSize) {
				inStack = true
			}
		}
		if !inStack && (r.Start < pc-128 || r.Start+r.Size > pc+128) {
			t.Errorf("--breakpad-memory: %d bytes at %#x: neither a stack nor around the pc %#x", r.Size, r.Start, pc)
		}
	}
}
