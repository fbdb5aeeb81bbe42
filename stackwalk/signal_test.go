package stackwalk_test

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/gobreakpad/gobreakpad/minidump"
	"github.com/gobreakpad/gobreakpad/unwind"
)

// signalMisses are the signal cases whose walk cannot equal gdb's, and why.
var signalMisses = map[string]knownMiss{
	"arm-segv-nocode": {found: 5, spurious: 24, why: "the signal frame is found from the stack, but " +
		"past __libc_start_call_main glibc's code has no CFI (only .ARM.exidx, which dump_syms does " +
		"not read, as Breakpad's) and the arm walk scans: __libc_start_main_impl and _start lost"},
}

// TestSignalTruth walks the crashes inside signal handlers of
// testdata/signal (x86-64 captured live, i386 and arm64 from qemu cores;
// testdata/signal/generate.sh; x86-native-* from the kernel's core,
// through the vDSO read from the dump) and compares the crashing thread
// with gdb's backtrace: every frame found in order, none spurious, the
// trampoline frame where gdb shows "<signal handler called>" and the
// interrupted frame after it restored from the signal frame. The *-nocode
// cases hold only the memory Breakpad's client saves (no trampoline code
// unless within 128 bytes of the crash's pc) and symbols that do not name
// the trampolines: their signal frames are recognised from the stack.
func TestSignalTruth(t *testing.T) {
	for _, dir := range caseDirs(t, "../testdata/signal/*-*") {
		name := filepath.Base(dir)
		t.Run(name, func(t *testing.T) {
			// The vDSO of x86-native-abort has no symbol file: its
			// symbols and CFI come from its image in the dump.
			w := walkTruth(t, dir, truthOptions{})
			miss, isMiss := signalMisses[name]
			checkMatch(t, "truth", w.chainMatch, miss, isMiss)
			truth := w.truth.chain
			frames := w.p.Threads[w.p.RequestingThread].Frames
			sig := -1
			for i, f := range frames {
				if f.Trust == unwind.TrustSignal {
					sig = i
					break
				}
			}
			if sig < 1 || truth[sig-1] != "" || normName(frames[sig].Function) != truth[sig] {
				t.Errorf("signal frame at %d; want the frame after the trampoline (%q)", sig, truth)
			}
			if strings.HasSuffix(name, "-nocode") {
				checkNoTrampolineCode(t, dir, frames[sig-1].Instruction, frames[0].Instruction)
			}
			// Out of __kernel_vsyscall without the vDSO's code: by the
			// function's shape (unwind/x86 byVsyscall), not by a scan;
			// the frame named from the auxiliary vector's AT_SYSINFO,
			// the vDSO still without symbols.
			if name == "x86-native-abort-nocode" {
				if len(frames) < 2 || frames[1].Trust != unwind.TrustFP {
					t.Errorf("frame 1 not found from __kernel_vsyscall's shape: %+v", frames[1])
				}
				f := frames[0]
				if w.p.KernelVsyscall == 0 || f.FunctionBase != w.p.KernelVsyscall || f.Instruction-f.FunctionBase != 9 ||
					f.Module == nil || !f.Module.MissingSymbols {
					t.Errorf("frame 0: %s at %#x + %#x (module %+v), want __kernel_vsyscall at AT_SYSINFO %#x + 0x9 in a vDSO without symbols",
						f.Function, f.FunctionBase, f.Instruction-f.FunctionBase, f.Module, w.p.KernelVsyscall)
				}
			}
		})
	}
}

// checkNoTrampolineCode checks that a *-nocode case's dump does not hold
// the trampoline's code at tramp, unless within the 128 bytes around the
// crash's pc (crashPC) that Breakpad's client saves.
func checkNoTrampolineCode(t *testing.T, dir string, tramp, crashPC uint64) {
	t.Helper()
	f, err := minidump.Open(filepath.Join(dir, "crash.dmp"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	m, err := f.Memory()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := m.ReadMemory(tramp, 1); err == nil && (tramp > crashPC+128 || tramp+128 < crashPC) {
		t.Errorf("the dump holds the trampoline's code at %#x", tramp)
	}
}

// TestVsyscallNamedCorpus: in the corpus's i386 dumps of Breakpad's client
// (gen-threads-x86-*: five threads wait in system calls), each waiting
// thread's frame 0 is named __kernel_vsyscall + 0x9 from the auxiliary
// vector's AT_SYSINFO, the vDSO having neither code nor symbols in the
// dump, and its caller is found from the function's shape; Breakpad shows
// "linux-gate.so + 0x5e9" (docs/compat.md B17).
func TestVsyscallNamedCorpus(t *testing.T) {
	n := 0
	for _, c := range loadCases(t) {
		if !strings.HasPrefix(c.name, "gen-threads-x86-") {
			continue
		}
		p, _, err := process(t, c)
		if err != nil {
			t.Fatal(err)
		}
		named := 0
		for i, cs := range p.Threads {
			if i == p.RequestingThread || len(cs.Frames) < 2 {
				continue
			}
			f := cs.Frames[0]
			if f.Module == nil || f.Module.CodeFile != "linux-gate.so" {
				continue
			}
			if f.Function != "__kernel_vsyscall" || f.FunctionBase != p.KernelVsyscall || f.Instruction-f.FunctionBase != 9 ||
				!f.Module.MissingSymbols || cs.Frames[1].Trust != unwind.TrustFP {
				t.Errorf("%s thread %d: frame 0 %q at %#x + %#x, frame 1 by %v; want __kernel_vsyscall at AT_SYSINFO %#x + 0x9, frame 1 by its shape",
					c.name, i, f.Function, f.FunctionBase, f.Instruction-f.FunctionBase, cs.Frames[1].Trust, p.KernelVsyscall)
			}
			named++
		}
		if named != 5 {
			t.Errorf("%s: %d waiting threads in linux-gate.so, want 5", c.name, named)
		}
		n++
	}
	if n != 2 {
		t.Errorf("%d gen-threads-x86 cases, want 2", n)
	}
}
