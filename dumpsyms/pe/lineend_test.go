package pe

import (
	"fmt"
	"strconv"
	"strings"
	"testing"

	"github.com/gobreakpad/gobreakpad/dumpsyms"
	"github.com/gobreakpad/gobreakpad/internal/testkit/corpus"
	"github.com/gobreakpad/gobreakpad/pdb"
)

// c13LineEnds returns, for each line entry of a PDB's DEBUG_S_LINES
// subsections (keyed "RVA line"), the length Breakpad's rule gives it:
// to the next entry of its block, the last to the end of the subsection's
// code (its CodeSize).
func c13LineEnds(t *testing.T, path string) map[string]uint32 {
	t.Helper()
	f, d, secs := openPDB(t, path)
	out := map[string]uint32{}
	for i := range d.Modules {
		ms, err := f.ModuleSymbols(&d.Modules[i])
		if err != nil || ms == nil {
			continue
		}
		subs, _ := pdb.ParseSubsections(ms.C13)
		for _, s := range subs {
			if s.Kind != pdb.DEBUG_S_LINES {
				continue
			}
			l, err := pdb.ParseLines(s.Data)
			if err != nil || l.Segment == 0 || int(l.Segment) > len(secs) {
				continue
			}
			base := secs[l.Segment-1].VirtualAddress + l.Offset
			for _, blk := range l.Blocks {
				for k, e := range blk.Lines {
					end := l.CodeSize
					if k+1 < len(blk.Lines) {
						end = blk.Lines[k+1].Offset
					}
					out[fmt.Sprintf("%x %d", base+e.Offset, e.LineStart)] = end - e.Offset
				}
			}
		}
	}
	return out
}

// lineRecords returns a .sym text's line records as "addr line" -> size,
// and its FUNC ranges.
func lineRecords(t *testing.T, text string) (map[string]uint64, [][2]uint64) {
	t.Helper()
	lines := map[string]uint64{}
	var funcs [][2]uint64
	for l := range strings.SplitSeq(text, "\n") {
		f := strings.Fields(l)
		if len(f) == 0 {
			continue
		}
		if f[0] == "FUNC" {
			if f[1] == "m" {
				f = f[1:]
			}
			a, _ := strconv.ParseUint(f[1], 16, 64)
			n, _ := strconv.ParseUint(f[2], 16, 64)
			funcs = append(funcs, [2]uint64{a, a + n})
			continue
		}
		if len(f) != 4 {
			continue
		}
		a, err1 := strconv.ParseUint(f[0], 16, 64)
		n, err2 := strconv.ParseUint(f[1], 16, 64)
		if err1 != nil || err2 != nil {
			continue
		}
		lines[fmt.Sprintf("%x %s", a, f[2])] = n
	}
	return lines, funcs
}

// TestLastLineOfBlock (issue 28, item 5): Breakpad's line lengths for
// dump_syms_regtest64.pdb follow one rule: a line entry lasts to the next
// entry of its C13 block, the last one to the end of the subsection's code
// (CodeSize), across the ends of the functions in it. So jmpuwind.asm's
// `3313 d 69`, `3336 a 109` and `3340 10 114` reach the next function's
// start, where ours, Mozilla's rule (a line lasts to the next or to its
// function's end), are 1, 2 and 1: Mozilla's reference has those, and ours
// stay identical to it (TestMozillaReferences). The bytes in between belong
// to no function, so a lookup answers the same either way. Every other line
// record of Breakpad's (but its zero-length ones) is ours.
func TestLastLineOfBlock(t *testing.T) {
	path := corpus.File(t, "windows/breakpad/dump_syms_regtest64.pdb")
	rule := c13LineEnds(t, path)
	bp, _ := lineRecords(t, readText(t, corpus.File(t, "windows/breakpad/dump_syms_regtest64.sym")))
	for k, n := range bp {
		if got, ok := rule[k]; !ok || uint64(got) != n {
			t.Errorf("Breakpad's line %s size %#x: the C13 rule gives %#x (entry found: %v)", k, n, got, ok)
		}
	}
	ours, funcs := lineRecords(t, dumpText(t, path, dumpsyms.Options{}))
	clipped := 0
	for k, n := range bp {
		if n == 0 {
			continue // Breakpad writes zero-length entries; Mozilla's rule drops them
		}
		got, ok := ours[k]
		if !ok {
			t.Errorf("line %s: not ours", k)
			continue
		}
		if got == n {
			continue
		}
		a, _ := strconv.ParseUint(strings.Fields(k)[0], 16, 64)
		end := uint64(0)
		for _, f := range funcs {
			if a >= f[0] && a < f[1] {
				end = f[1]
			}
		}
		if a+n > end && a+got == end {
			clipped++
			t.Logf("line %s: Breakpad %#x, ours %#x (to the function's end)", k, n, got)
			continue
		}
		t.Errorf("line %s: size %#x, Breakpad's %#x", k, got, n)
	}
	if clipped != 3 {
		t.Errorf("%d lines clipped at their function's end, want jmpuwind.asm's 3", clipped)
	}
}
