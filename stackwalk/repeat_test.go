package stackwalk_test

import (
	"path/filepath"
	"testing"

	"github.com/gobreakpad/gobreakpad/arch"
	"github.com/gobreakpad/gobreakpad/arch/amd64"
	"github.com/gobreakpad/gobreakpad/internal/testkit/corpus"
	"github.com/gobreakpad/gobreakpad/minidump"
	"github.com/gobreakpad/gobreakpad/minidump/synth"
	"github.com/gobreakpad/gobreakpad/stackwalk"
	"github.com/gobreakpad/gobreakpad/unwind"
)

// TestRepeatedReturnAddressMac walks a macOS x86-64 main thread whose top
// is laid out as dyld 421-852 (macOS 10.12 to 11) leaves it, as in
// rust-minidump's simple-crashpad.dmp: main called by libdyld's start,
// start's rbp at dyld's end-of-frames marker (a 0 word), and right above
// start's return address, at start's rsp, __dyld_start's startGlue
// variable holding the same address. The walk ends at start, as lldb's
// backtrace does; Breakpad and rust-minidump scan the copy into one frame
// more (docs/stackwalk.md, "A copy of a frame's return address at its
// stack pointer").
func TestRepeatedReturnAddressMac(t *testing.T) {
	const (
		app    = 0x10dfe8000
		libdyl = 0x7fff6f2b1000
		start  = libdyl + 0x1acc9 // start+1: main's return address
	)
	b := synth.New(arch.AMD64, minidump.PlatformMacOSX)
	st := synth.NewStack(0x7ffee1c16c70, 8)
	st.U64(0x7ffee1c16ca8) // the crashing function's locals
	st.U64(1)
	rec := st.U64(0x7ffee1c16c98) // its frame record: main's rbp...
	st.Ptr(start)                 // ...and return address into start
	st.Ptr(start)                 // startGlue, at start's rsp
	st.U64(0)                     // dyld's end-of-frames marker
	ctx := &amd64.Context{ContextFlags: amd64.ContextFull, Rip: app + 0x3f80, Rsp: 0x7ffee1c16c70, Rbp: rec}
	b.AddThread(1, synth.AMD64(ctx), st)
	b.AddModule("/tmp/crashy", app, 0x4000, nil)
	b.AddModule("/usr/lib/system/libdyld.dylib", libdyl, 0x37000, nil)
	b.SetException(1, 1, 0, synth.AMD64(ctx))
	p := processBuilt(t, b, stackwalk.Options{})
	fr := p.Threads[0].Frames
	if len(fr) != 2 {
		for i, x := range fr {
			t.Logf("frame %d: %#x %v", i, x.ReturnAddress(), x.Trust)
		}
		t.Fatalf("%d frames, want 2 (the crash and start)", len(fr))
	}
	if fr[1].ReturnAddress() != start || fr[1].Trust != unwind.TrustFP {
		t.Errorf("frame 1: %#x %v; want start+1 %#x found by frame pointer", fr[1].ReturnAddress(), fr[1].Trust, uint64(start))
	}
}

// TestRepeatedReturnAddressCorpus: the corpus's two macOS dumps (10.15
// and 11) end their main threads at libdyld's start, without the scanned
// copy of it Breakpad's and rust-minidump's walks end with (TestCorpus
// compares the rest with Breakpad's).
func TestRepeatedReturnAddressCorpus(t *testing.T) {
	dir := corpus.Dir(t)
	for _, c := range []struct {
		dump   string
		frames int // physical and inline frames
	}{
		{"rust-minidump/testdata/simple-crashpad.dmp", 4},
		{"rust-minidump/testdata/pipeline-inlines-macos-segv.dmp", 19},
	} {
		t.Run(filepath.Base(c.dump), func(t *testing.T) {
			p, _, err := process(t, walkCase{dump: filepath.Join(dir, c.dump), syms: []string{filepath.Join(dir, "rust-minidump/testdata/symbols")}})
			if err != nil {
				t.Fatal(err)
			}
			fr := p.Threads[0].Frames
			if len(fr) != c.frames {
				t.Fatalf("%d frames, want %d", len(fr), c.frames)
			}
			last := fr[len(fr)-1]
			if last.Module == nil || filepath.Base(last.Module.CodeFile) != "libdyld.dylib" || last.Trust == unwind.TrustScan {
				t.Errorf("last frame %#x %v, want libdyld's start found by frame pointer or CFI", last.ReturnAddress(), last.Trust)
			}
		})
	}
}
