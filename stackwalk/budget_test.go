package stackwalk_test

import (
	"bytes"
	"runtime"
	"strings"
	"testing"

	"github.com/gobreakpad/gobreakpad/internal/testkit/corpus"
	"github.com/gobreakpad/gobreakpad/minidump"
	"github.com/gobreakpad/gobreakpad/stackwalk"
)

// walkMachine processes a dump with workers and returns its -m report and
// problems.
func walkMachine(t *testing.T, f *minidump.File, workers int) (*stackwalk.ProcessState, string) {
	t.Helper()
	p, err := stackwalk.Process(f, stackwalk.Options{Workers: workers})
	if err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	if err := stackwalk.PrintMachineReadable(&b, p); err != nil {
		t.Fatal(err)
	}
	for _, e := range p.Problems {
		b.WriteString("problem: " + e.Error() + "\n")
	}
	return p, b.String()
}

// TestFrameBudgetDeterministic walks the hostile dumps whose threads share
// one stack: the output, what was cut included, is the same with 1, 2 and
// 8 workers and run after run; the crashed thread is walked first.
func TestFrameBudgetDeterministic(t *testing.T) {
	for _, name := range []string{"dump-4096threads-shared-64K-stack.dmp", "dump-4096threads-crash-in-last.dmp", "dump-4threads-shared-1M-stack.dmp"} {
		t.Run(name, func(t *testing.T) {
			f, err := minidump.Open(corpus.File(t, "hostile/"+name))
			if err != nil {
				t.Fatal(err)
			}
			defer f.Close()
			p, want := walkMachine(t, f, 1)
			if !strings.Contains(want, "problem: walk: frame budget spent:") {
				t.Errorf("the cut is not said: problems %v", p.Problems)
			}
			if c := p.RequestingThread; c >= 0 && len(p.Threads[c].Frames) < 2 {
				t.Errorf("crashed thread %d has %d frames", c, len(p.Threads[c].Frames))
			}
			total := 0
			for _, cs := range p.Threads {
				total += len(cs.Frames)
			}
			if total > stackwalk.MaxTotalFrames {
				t.Errorf("%d frames in all", total)
			}
			for _, w := range []int{2, 8, 2, 8} {
				if _, got := walkMachine(t, f, w); got != want {
					t.Fatalf("-j %d gives another output than -j 1", w)
				}
			}
		})
	}
}

// TestFrameBudgetMemory bounds what the walk of a 1 MB dump allocates:
// its frames are bounded by its stack bytes (one frame per 16 bytes of
// amd64 stack, shared memory counted once), not by the fixed caps. Before,
// the walk allocated about 300 MB (262,144 frames).
func TestFrameBudgetMemory(t *testing.T) {
	name := corpus.File(t, "hostile/dump-4threads-shared-1M-stack.dmp")
	f, err := minidump.Open(name)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	p, err := stackwalk.Process(f, stackwalk.Options{Workers: 2})
	if err != nil {
		t.Fatal(err)
	}
	runtime.ReadMemStats(&after)
	total := 0
	for _, cs := range p.Threads {
		total += len(cs.Frames)
	}
	alloc := after.TotalAlloc - before.TotalAlloc
	runtime.GC()
	var live runtime.MemStats
	runtime.ReadMemStats(&live)
	held := int64(live.HeapAlloc) - int64(before.HeapAlloc)
	t.Logf("%d frames, %.1f MB allocated, %.1f MB held (%d bytes a frame)", total, float64(alloc)/(1<<20), float64(held)/(1<<20), held/int64(max(total, 1)))
	if want := 4 + (1<<20)/16; total > want {
		t.Errorf("%d frames, want at most %d", total, want)
	}
	// A frame kept costs about 165 bytes (a StackFrame in a block, its
	// three known registers, its place in Frames: frames.go), and the
	// unwinders' frames are reused: 12 MB allocated, 10.5 MB held (it was
	// 47 MB and 25 MB with each frame's whole unwind.Context).
	if bound := uint64(total) * 256; alloc > bound {
		t.Errorf("the walk allocated %d bytes, bound %d (256 a frame)", alloc, bound)
	}
	if bound := int64(total) * 192; held > bound {
		t.Errorf("the walk holds %d bytes, bound %d (192 a frame)", held, bound)
	}
	runtime.KeepAlive(p)
}

// TestFrameBudgetSmall cuts FuzzWalkWorkers's shared-stack seed with a
// lowered least budget: 4 threads + 1,024 bytes / 16 = 68 frames, the
// crashed thread (last) walked first and whole, the others sharing the
// rest; the same with any number of workers.
func TestFrameBudgetSmall(t *testing.T) {
	defer stackwalk.SetMinFrameBudget(8)()
	f, err := minidump.NewFileBytes(sharedStackDump(t))
	if err != nil {
		t.Fatal(err)
	}
	p, want := walkMachine(t, f, 1)
	var n []int
	total := 0
	for _, cs := range p.Threads {
		n = append(n, len(cs.Frames))
		total += len(cs.Frames)
	}
	t.Logf("frames per thread %v; %v", n, p.Problems)
	if !strings.Contains(want, "frame budget spent: 3 of 4 threads cut short (the dump justifies 68 frames") {
		t.Errorf("problems %v", p.Problems)
	}
	if c := p.RequestingThread; c != 3 || n[3] <= n[0] {
		t.Errorf("crashed thread %d, frames %v", c, n)
	}
	if total > 68+4 {
		t.Errorf("%d frames in all", total)
	}
	for _, w := range []int{2, 3, 8} {
		if _, got := walkMachine(t, f, w); got != want {
			t.Errorf("-j %d differs", w)
		}
	}
}
