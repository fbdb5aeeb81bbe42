package stackwalk_test

import (
	"bytes"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/gobreakpad/gobreakpad/minidump"
	"github.com/gobreakpad/gobreakpad/stackwalk"
	"github.com/gobreakpad/gobreakpad/symbols/breakpad"
	"github.com/gobreakpad/gobreakpad/symbols/elfimage"
)

// callsTruth is one case of testdata/truth/calls: gdb's chain with the
// tail call frames gdb makes from DWARF call-site records left out (they
// are in neither the dump nor the symbol file), and those frames' names.
type callsTruth struct {
	chain []string // normalised names, "" where gdb names none
	tails []string // the tail call frames left out of chain
}

func readCallsTruth(t *testing.T, dir string) callsTruth {
	b, err := os.ReadFile(filepath.Join(dir, "truth.txt"))
	if err != nil {
		t.Fatal(err)
	}
	skip := map[int]bool{}
	if info, err := os.ReadFile(filepath.Join(dir, "info.txt")); err == nil {
		for _, l := range strings.Split(string(info), "\n") {
			if v, ok := strings.CutPrefix(l, "truth_tailcall_frames="); ok {
				for _, f := range strings.Fields(v) {
					n, _ := strconv.Atoi(f)
					skip[n] = true
				}
			}
		}
	}
	var c callsTruth
	for _, l := range strings.Split(strings.TrimSpace(string(b)), "\n") {
		num, fn, _ := strings.Cut(l, "\t")
		n, err := strconv.Atoi(num)
		if err != nil {
			t.Fatalf("truth.txt: bad line %q", l)
		}
		if skip[n] {
			c.tails = append(c.tails, normName(fn))
			continue
		}
		c.chain = append(c.chain, normName(fn))
	}
	return c
}

// walkCallsCase walks a case's dump with its symbols as minidump_stackwalk
// does with a symbol path, and returns the crashing thread's function names.
func walkCallsCase(t *testing.T, dir string) []string {
	f, err := minidump.Open(filepath.Join(dir, "crash.dmp"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	syms := breakpad.NewDirs(filepath.Join(dir, "symbols"))
	defer syms.Close()
	p, err := stackwalk.Process(f, stackwalk.Options{Symbols: syms, ImageSymbols: elfimage.Load})
	if err != nil {
		t.Fatal(err)
	}
	var m bytes.Buffer
	if err := stackwalk.PrintMachineReadable(&m, p); err != nil {
		t.Fatal(err)
	}
	ours, _ := crashChain(m.Bytes())
	return ours
}

// TestCallsTruth walks the crashes of testdata/truth/calls (calls through
// null and wild function pointers, tail calls, deep recursion, abort from a
// few frames deep; x86-64 captured live, i386 and arm64 from qemu cores, at
// -O0, -O2 and -O2 -fomit-frame-pointer; generate.sh) and compares the
// crashing thread with gdb's backtrace: every frame found in order, none
// spurious. The tail call frames gdb makes from DWARF call-site records
// (info.txt) are not expected: nothing in the dump or the symbol file says
// that a function jumped to its callee.
func TestCallsTruth(t *testing.T) {
	dirs, _ := filepath.Glob("../testdata/truth/calls/*-*-*")
	if len(dirs) == 0 {
		t.Fatal("no cases in testdata/truth/calls")
	}
	for _, dir := range dirs {
		t.Run(filepath.Base(dir), func(t *testing.T) {
			truth := readCallsTruth(t, dir)
			ours := walkCallsCase(t, dir)
			found, spurious := alignTruth(ours, truth.chain)
			named := 0
			for _, n := range truth.chain {
				if n != "" {
					named++
				}
			}
			t.Logf("truth %d named frames (+%d tail call frames): %d found, %d spurious",
				named, len(truth.tails), found, spurious)
			if found != named || spurious != 0 {
				t.Errorf("truth: %d of %d found, %d spurious\nours  %q\ntruth %q", found, named, spurious, ours, truth.chain)
			}
		})
	}
}
