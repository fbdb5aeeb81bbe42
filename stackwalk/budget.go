package stackwalk

import (
	"fmt"
	"sort"
	"strings"
)

// The frame budget. A walk's frames cost memory (a StackFrame holds its
// registers) and output, so their number is bounded by what the dump
// justifies: a physical frame other than the innermost occupies stack
// memory of its own, at least two words (the return address and the
// caller's saved frame pointer or the ABI's alignment: 16 bytes on amd64
// and arm64, 8 on x86 and arm), and memory several threads share (one
// region given as the stack of many) is counted once. The budget of a
// dump, its inline and tail-call frames included, is
//
//	min(MaxTotalFrames, max(MinFrameBudget, walked threads + distinct stack bytes / (2 × word size)))
//
// and each thread's share is decided by the dump alone, never by which
// walk finishes first: the crashed thread walks first, with all the
// budget but a frame for each other thread; the others share what is
// left equally, and what a thread leaves unused goes, in rounds, to the
// threads that were cut, equally again. So the walk's output is the same
// with any number of workers, and a thread cut by the budget or by
// MaxFrames is said in ProcessState.Problems (stderr, soft_errors).
const (
	// MinFrameBudget is the least budget of a dump, whatever its stacks:
	// real dumps never reach it with small stacks (no corpus dump does).
	MinFrameBudget = 4096
	// maxBudgetRounds bounds the rounds handing unused shares on.
	maxBudgetRounds = 16
)

// minFrameBudget is MinFrameBudget; tests lower it so that small dumps
// are cut.
var minFrameBudget = MinFrameBudget

// budget is a dump's frame budget and what it came from.
type budget struct {
	total      int
	threads    int
	stackBytes uint64
}

// frameBudget computes the frame budget of the walks' stacks.
func frameBudget(walks []*threadWalk) budget {
	type span struct{ lo, hi uint64 }
	var spans []span
	word := uint64(8)
	for _, w := range walks {
		if ws := uint64(w.cpu.WordSize()); ws > 0 && ws < word {
			word = ws
		}
		if r, ok := w.env.stack.(*region); ok && len(r.data) > 0 {
			spans = append(spans, span{r.base, r.end()})
		}
	}
	sort.Slice(spans, func(i, j int) bool { return spans[i].lo < spans[j].lo })
	var bytes, end uint64
	started := false
	for _, s := range spans {
		lo := s.lo
		if started && lo < end {
			lo = end
		}
		if s.hi > lo {
			bytes += s.hi - lo
		}
		if !started || s.hi > end {
			end = s.hi
		}
		started = true
	}
	b := budget{threads: len(walks), stackBytes: bytes}
	n := uint64(len(walks)) + bytes/(2*word)
	b.total = int(min(uint64(MaxTotalFrames), max(uint64(minFrameBudget), n)))
	return b
}

// allot walks every thread within the budget total: the crashed walk
// (index crashed, or -1) first, then the others in rounds, on up to
// workers goroutines. Every walk's limits depend only on the dump.
func allot(walks []*threadWalk, crashed, total, workers int) {
	used := func() int {
		n := 0
		for _, w := range walks {
			n += len(w.out)
		}
		return n
	}
	others := len(walks)
	if crashed >= 0 {
		others--
		walks[crashed].run(max(1, total-others))
	}
	var active []*threadWalk
	for i, w := range walks {
		if i != crashed && !w.done {
			active = append(active, w)
		}
	}
	for round := 0; len(active) > 0 && round < maxBudgetRounds; round++ {
		share := (total - used()) / len(active)
		if share < 1 {
			if round > 0 {
				break
			}
			share = 1 // every thread has its context frame
		}
		jobs := make([]func(), len(active))
		for i, w := range active {
			limit := len(w.out) + share
			jobs[i] = func() { w.run(limit) }
		}
		runJobs(jobs, workers)
		still := active[:0]
		for _, w := range active {
			if !w.done && len(w.out) < MaxFrames {
				still = append(still, w)
			}
		}
		active = still
	}
}

// walkProblem is a problem Walk met (a walk cut short); Walk replaces
// those of an earlier walk.
type walkProblem struct{ msg string }

func (e *walkProblem) Error() string { return e.msg }

func removeWalkProblems(ps []error) []error {
	out := ps[:0]
	for _, e := range ps {
		if _, ok := e.(*walkProblem); !ok {
			out = append(out, e)
		}
	}
	if len(out) == 0 {
		return nil
	}
	return out
}

// report says which walks were cut, by the budget or by MaxFrames, or
// returns nil.
func (b budget) report(walks []*threadWalk, owners []int, threads []*CallStack) error {
	var atMax, cut []string
	nCut := 0
	for j, w := range walks {
		if !w.cut() {
			continue
		}
		name := fmt.Sprintf("%d (id %#x, %d frames)", owners[j], threads[owners[j]].ThreadID, len(w.out))
		if len(w.out) >= MaxFrames {
			atMax = append(atMax, name)
			continue
		}
		nCut++
		if len(cut) < 8 {
			cut = append(cut, name)
		}
	}
	var parts []string
	if nCut > 0 {
		more := ""
		if nCut > len(cut) {
			more = fmt.Sprintf(", and %d more", nCut-len(cut))
		}
		parts = append(parts, fmt.Sprintf("frame budget spent: %d of %d threads cut short (the dump justifies %d frames: %d threads walked, %d bytes of stack memory, shared memory counted once; at most %d): threads %s%s",
			nCut, len(walks), b.total, b.threads, b.stackBytes, MaxTotalFrames, strings.Join(cut, ", "), more))
	}
	if n := len(atMax); n > 0 {
		if n > 8 {
			atMax = append(atMax[:8], fmt.Sprintf("and %d more", len(atMax)-8))
		}
		parts = append(parts, fmt.Sprintf("%d threads cut at %d frames (MaxFrames): threads %s", n, MaxFrames, strings.Join(atMax, ", ")))
	}
	if len(parts) == 0 {
		return nil
	}
	return &walkProblem{"walk: " + strings.Join(parts, "; ")}
}
