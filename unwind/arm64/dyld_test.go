package arm64_test

import (
	"testing"

	"github.com/gobreakpad/gobreakpad/unwind"
	arm64unwind "github.com/gobreakpad/gobreakpad/unwind/arm64"
	"github.com/gobreakpad/gobreakpad/unwind/unwindtest"
)

// TestDyldTerminatingRecord: on arm64 macOS, dyld (10.15-11) enters main
// with lr at libdyld's start glue and fp at a terminating frame record
// (0, 0), its startGlue variable stored just below the record, above
// main's frame. The frame-pointer step out of start reads the record,
// gives pc 0 and ends the walk: the copy of start's address a scan would
// find is never reached (docs/stackwalk.md, "A copy of a frame's return
// address at its stack pointer").
func TestDyldTerminatingRecord(t *testing.T) {
	u := arm64unwind.NewUnwinder(modBase + modSize)
	env := newEnv(u)
	sp := env.Push(0x5eed, 0)
	rec := env.Push(0, 0x403050) // main's frame record: start's fp, return into start
	env.Push(0, 0x403050)        // dyld's locals: startGlue above main's frame
	term := env.Push(0, 0)       // the terminating frame record
	env.Push(1, stackBase)       // argc, argv: the kernel's
	env.Put(rec, term)
	frames := unwindtest.Walk(u, env, contextFrame(t, u, env, 0x401010, sp, rec, 0x402050), 10)
	if len(frames) != 3 {
		for i, f := range frames {
			t.Logf("frame %d: %v pc %#x sp %#x", i, f.Trust, f.Regs[32], f.Regs[31])
		}
		t.Fatalf("%d frames, want 3 (leaf, main, start)", len(frames))
	}
	check(t, frames[2], unwind.TrustFP, 0x403050, term+16) // Breakpad's step: sp from the next record
}
