package stackwalk_test

import (
	"path/filepath"
	"testing"
)

// threadsMisses are the thread cases whose walks do not reach the truth.
var threadsMisses = map[string]knownMiss{}

// TestTruthThreads walks the crashes in a second thread of
// testdata/truth/threads (generate.sh there): the crashing thread's walk
// must equal gdb's backtrace and end at the thread's start (start_thread,
// then clone, clone3 or arm64's thread_start, whose CFI marks the return
// address undefined), and the main thread's, blocked in pthread_join, must
// equal gdb's backtrace of it down to _start.
func TestTruthThreads(t *testing.T) {
	for _, dir := range truthCases(t, "threads") {
		name := filepath.Base(dir)
		t.Run(name, func(t *testing.T) {
			w := walkTruth(t, dir, truthOptions{})
			if w.p.RequestingThread < 0 || len(w.p.Threads) != 2 {
				t.Fatalf("crashing thread %d of %d threads; want one of 2", w.p.RequestingThread, len(w.p.Threads))
			}
			miss, isMiss := threadsMisses[name]
			checkMatch(t, "crashing thread", w.chainMatch, miss, isMiss)
			mainMiss, isMainMiss := threadsMisses[name+"/main"]
			main := 1 - w.p.RequestingThread
			checkChain(t, "main thread", threadChain(w.m, main), readTruthFile(t, filepath.Join(dir, "truth-main.txt")), mainMiss, isMainMiss)
		})
	}
}
