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
	dirs, _ := filepath.Glob("../testdata/signal/*-*")
	if len(dirs) == 0 {
		t.Fatal("no cases in testdata/signal")
	}
	for _, dir := range dirs {
		t.Run(filepath.Base(dir), func(t *testing.T) {
			truth := readTruthFile(t, filepath.Join(dir, "truth.txt"))
			// The vDSO of x86-native-abort has no symbol file: its
			// symbols and CFI come from its image in the dump.
			p, m := walkTruthCase(t, dir)
			ours, _ := crashChain(m)
			found, spurious := alignTruth(ours, truth)
			named := 0
			for _, n := range truth {
				if n != "" {
					named++
				}
			}
			if found != named || spurious != 0 || len(ours) != len(truth) {
				t.Errorf("truth: %d of %d found, %d spurious\nours  %q\ntruth %q", found, named, spurious, ours, truth)
			}
			frames := p.Threads[p.RequestingThread].Frames
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
