package stackwalk_test

import (
	"path/filepath"
	"testing"

	"github.com/gobreakpad/gobreakpad/unwind"
)

// TestSignalTruth walks the crashes inside signal handlers of
// testdata/signal (x86-64 captured live, i386 and arm64 from qemu cores;
// testdata/signal/generate.sh; x86-native-abort from the kernel's core,
// through the vDSO read from the dump) and compares the crashing thread with gdb's
// backtrace: every frame found in order, none spurious, the trampoline
// frame where gdb shows "<signal handler called>" and the interrupted
// frame after it restored from the signal frame.
func TestSignalTruth(t *testing.T) {
	for _, dir := range caseDirs(t, "../testdata/signal/*-*") {
		t.Run(filepath.Base(dir), func(t *testing.T) {
			// The vDSO of x86-native-abort has no symbol file: its
			// symbols and CFI come from its image in the dump.
			w := walkTruth(t, dir, truthOptions{})
			if !w.exact() {
				t.Errorf("truth: %s", w.chainMatch)
			}
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
		})
	}
}
