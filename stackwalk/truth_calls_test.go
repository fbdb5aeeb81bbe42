package stackwalk_test

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/gobreakpad/gobreakpad/stackwalk"
)

// TestCallsTruth walks the crashes of testdata/truth/calls (calls through
// null and wild function pointers, tail calls, deep recursion, abort from a
// few frames deep; x86-64 captured live, i386 and arm64 from qemu cores, at
// -O0, -O2 and -O2 -fomit-frame-pointer; generate.sh) and compares the
// crashing thread with gdb's backtrace: every frame found in order, none
// spurious. The tail call frames gdb makes from DWARF call-site records
// (info.txt) are not expected: nothing in the dump or the symbol file says
// that a function jumped to its callee.
func TestCallsTruth(t *testing.T) {
	for _, dir := range truthCases(t, "calls") {
		t.Run(filepath.Base(dir), func(t *testing.T) {
			// As minidump_stackwalk walks, and with --check-call-sites.
			for _, cc := range []bool{false, true} {
				w := walkTruth(t, dir, truthOptions{walk: stackwalk.Options{CheckCallSites: cc}})
				t.Logf("check call sites %v: truth %d named frames (+%d tail call frames %q): %d found, %d spurious",
					cc, w.named, len(w.truth.tails), w.truth.tails, w.found, w.spurious)
				if !w.allFound() {
					t.Errorf("check call sites %v: truth %s", cc, w.chainMatch)
				}
			}
		})
	}
}

// withoutCFI copies a case's symbols to a temporary folder without their
// STACK records, so that the walk must use frame pointers and scans.
func withoutCFI(t *testing.T, dir string) string {
	out := t.TempDir()
	root := filepath.Join(dir, "symbols")
	err := filepath.WalkDir(root, func(path string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		var keep []string
		for _, l := range strings.SplitAfter(string(b), "\n") {
			if !strings.HasPrefix(l, "STACK ") {
				keep = append(keep, l)
			}
		}
		rel, _ := filepath.Rel(root, path)
		if err := os.MkdirAll(filepath.Dir(filepath.Join(out, rel)), 0o755); err != nil {
			return err
		}
		return os.WriteFile(filepath.Join(out, rel), []byte(strings.Join(keep, "")), 0o644)
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// TestCallsTruthNoCFI walks the wild calls (null, data, unmapped) of
// testdata/truth/calls built with frame pointers (O0, O2) with symbols
// stripped of their STACK records, as a dump whose modules have no CFI:
// the chain from the function that made the call up to main must be the
// frames right after the context's, found by the wild-call rules and the
// frame pointers (the libc frames around it are left out: the trimmed symbol
// files name the code of the functions they dropped after their
// neighbours).
func TestCallsTruthNoCFI(t *testing.T) {
	dirs, _ := filepath.Glob("../testdata/truth/calls/*-*-O[02]")
	n := 0
	for _, dir := range dirs {
		mode, _, _ := strings.Cut(filepath.Base(dir), "-")
		if mode != "null" && mode != "data" && mode != "unmapped" {
			continue
		}
		n++
		t.Run(filepath.Base(dir), func(t *testing.T) {
			truth := loadTruth(t, filepath.Join(dir, "truth.txt"))
			want := truth.chain[1:]
			for i, fn := range want {
				if fn == "main" {
					want = want[:i+1]
					break
				}
			}
			sd := withoutCFI(t, dir)
			for _, cc := range []bool{false, true} {
				ours := walkTruth(t, dir, truthOptions{symbols: sd, walk: stackwalk.Options{CheckCallSites: cc}}).ours
				if len(ours) < 1+len(want) || !slices.Equal(ours[1:1+len(want)], want) {
					t.Errorf("check call sites %v: frames 1-%d %q; want %q", cc, len(want), ours, want)
				}
			}
		})
	}
	if n != 18 {
		t.Errorf("%d wild-call cases with frame pointers; want 18", n)
	}
}

// sourceTailCalls are tail calls on the true chain, by the source, that
// gdb does not show: run jumps to wild_level1 from three call sites (one
// per mode), and gdb makes no tail call frame when several call sites
// could have made the jump. Keyed by mode and optimisation; the function
// is inserted before main.
var sourceTailCalls = map[string]string{
	"null-O2": "run", "null-O2nofp": "run",
	"data-O2": "run", "data-O2nofp": "run",
	"unmapped-O2": "run", "unmapped-O2nofp": "run",
}

// alignOptional is alignTruth where the truth frames marked optional (tail
// call frames) match a frame of ours without being required: it returns
// the required frames found, the optional frames found, and our frames that
// match nothing.
func alignOptional(ours, truth []string, optional []bool) (found, optFound, spurious int) {
	type cell struct{ hits, covered, opt int }
	better := func(a, b cell) cell {
		if a.hits != b.hits {
			if a.hits > b.hits {
				return a
			}
			return b
		}
		if a.covered != b.covered {
			if a.covered > b.covered {
				return a
			}
			return b
		}
		if a.opt >= b.opt {
			return a
		}
		return b
	}
	dp := make([][]cell, len(ours)+1)
	for i := range dp {
		dp[i] = make([]cell, len(truth)+1)
	}
	for i := range ours {
		for j := range truth {
			best := better(dp[i][j+1], dp[i+1][j])
			c := dp[i][j]
			switch {
			case truth[j] == "":
				best = better(best, cell{c.hits, c.covered + 1, c.opt})
			case ours[i] == truth[j] && optional[j]:
				best = better(best, cell{c.hits, c.covered + 1, c.opt + 1})
			case ours[i] == truth[j]:
				best = better(best, cell{c.hits + 1, c.covered + 1, c.opt})
			}
			dp[i+1][j+1] = best
		}
	}
	end := dp[len(ours)][len(truth)]
	return end.hits, end.opt, len(ours) - end.covered
}

// TestCallsTruthTailCalls walks testdata/truth/calls with
// Options.TailCalls: every frame of gdb's chain found in order and none
// spurious, where gdb's tail call frames, and the tail calls gdb does not
// show (sourceTailCalls), may be shown. The tail call frames found from
// the direct call before each caller's return address: tail1 and run of
// gdb's tail2, tail1 and run in the tail chains (tail2 is jumped to from
// tail1, whose code is not in the dump), run in the recursions.
func TestCallsTruthTailCalls(t *testing.T) {
	dirs, _ := filepath.Glob("../testdata/truth/calls/*-*-*")
	gdbTails, foundTails := 0, 0
	for _, dir := range dirs {
		name := filepath.Base(dir)
		truth := loadTruth(t, filepath.Join(dir, "truth.txt"))
		full, optional := truth.full, truth.optional
		p := strings.Split(name, "-")
		if fn, ok := sourceTailCalls[p[0]+"-"+p[2]]; ok {
			i := slices.Index(full, "main")
			full = slices.Insert(slices.Clone(full), i, fn)
			optional = slices.Insert(slices.Clone(optional), i, true)
		}
		named := 0
		for i, n := range full {
			if n != "" && !optional[i] {
				named++
			}
		}
		ours := walkTruth(t, dir, truthOptions{walk: stackwalk.Options{TailCalls: true}}).ours
		found, optFound, spurious := alignOptional(ours, full, optional)
		gdbTails += len(truth.tails)
		if _, ok := sourceTailCalls[p[0]+"-"+p[2]]; !ok {
			foundTails += optFound
		}
		t.Logf("%s: %d of %d found, %d spurious; tail calls %d shown (gdb %d %q)", name, found, named, spurious, optFound, len(truth.tails), truth.tails)
		if found != named || spurious != 0 {
			t.Errorf("%s: %d of %d found, %d spurious\nours  %q\ntruth %q", name, found, named, spurious, ours, full)
		}
	}
	t.Logf("gdb's tail call frames: %d of %d found", foundTails, gdbTails)
	if foundTails < 18 {
		t.Errorf("gdb's tail call frames: %d of %d found; want 18", foundTails, gdbTails)
	}
}
