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
	"x86-native-abort-nocode": {found: 10, spurious: 1, why: "frame 0 is __kernel_vsyscall in the vDSO, " +
		"which the dump (as Breakpad's client writes it) and the symbols lack: its caller is found from the " +
		"function's shape (unwind/x86 byVsyscall: by frame pointer, where a scan found it before), but the " +
		"frame itself is left unnamed (nothing names it)"},
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
			// function's shape (unwind/x86 byVsyscall), not by a scan.
			if name == "x86-native-abort-nocode" && (len(frames) < 2 || frames[1].Trust != unwind.TrustFP) {
				t.Errorf("frame 1 not found from __kernel_vsyscall's shape: %+v", frames[1])
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
