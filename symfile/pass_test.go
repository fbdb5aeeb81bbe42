package symfile

import (
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"sync"
	"testing"
)

// tableState is what a Table holds after parsing, for comparing two parses.
func tableState(t *Table) []any {
	return []any{t.module, t.hasModule, t.codeID, t.hasCodeID, t.infos, t.files, t.origins,
		t.funcs, t.funcBody, t.publics, t.cfi, t.deltas, t.win, t.errs, t.numErrs, t.numCorrupt}
}

// parseChunked parses data in the given number of chunks (1: one pass).
func parseChunked(data []byte, chunks int) *Table {
	t := &Table{data: data}
	t.parse(chunks, nil, false)
	return t
}

// parseLazy parses data as OpenLookups does, in the given number of chunks
// (1: one pass), then its STACK records in as many.
func parseLazy(data []byte, chunks int) *Table {
	t := &Table{data: data}
	t.parse(chunks, nil, true)
	t.stack()
	return t
}

// chunkCounts are the chunk counts the tests compare with one pass.
var chunkCounts = []int{2, 3, 8}

// TestParallelPassMatchesSequential checks that parsing in chunks gives
// exactly the sequential result, on the corpus and on files where the second
// chunk starts inside a function's records.
func TestParallelPassMatchesSequential(t *testing.T) {
	inputs := map[string][]byte{
		"sample": []byte(sample),
		// The split lands on the STACK WIN line; the line record after it
		// belongs to the FUNC in the first chunk, so the chunked parse must
		// fall back.
		"child after split": []byte("MODULE a b c d\nFUNC 10 10 0 f\n" + strings.Repeat("10 1 1 0\n", 20) +
			"STACK WIN 4 0 1 0 0 0 0 0 0 1 x\n11 1 2 0\n"),
		"errors": []byte(strings.Repeat("junk\n", 150) + "MODULE a b c d\n" + strings.Repeat("FUNC zz\nPUBLIC 5 0 p\n", 60)),
		// Runs of STACK records between other records, malformed ones among
		// both (more than maxErrors in all), deltas after a line that is not
		// their INIT's, no MODULE record: what a lazy parse must merge.
		"stack runs": []byte(strings.Repeat("STACK CFI INIT 10 20 .cfa: $rsp 8 +\nSTACK CFI 12 .cfa: $rsp 16 +\nSTACK CFI zz\n"+
			"FUNC 10 10 0 f\n10 4 1 0\nSTACK CFI 14 .cfa: $rsp 24 +\nSTACK WIN 4 10 10 0 0 0 0 0 0 1 x\nSTACK WIN 0 12 2 0 0 0 0 0 0 0 1\n"+
			"junk\n11 1 2 0\nSTACK nope\n\nSTACKS\nSTACK CFI 16 .cfa: $rsp 32 +\r\nPUBLIC 30 0 p\n", 40) + "STACK CFI INIT 40 8 .cfa: $rsp 8 +"),
	}
	for _, p := range corpusSymFiles(t) {
		if st, err := os.Stat(p); err == nil && st.Size() > 1<<20 {
			b, err := os.ReadFile(p)
			if err != nil {
				t.Fatal(err)
			}
			inputs[p] = b
		}
	}
	for name, data := range inputs {
		seq := tableState(parseChunked(data, 1))
		for _, n := range append(chunkCounts, 0) {
			if !reflect.DeepEqual(seq, tableState(parseChunked(data, n))) {
				t.Errorf("%s: parse in %d chunks (0: automatic) differs from the sequential one", name, n)
			}
		}
		lazyCounts := []int{1, 2, 3, 8, 0}
		if len(data) > 1<<20 {
			lazyCounts = []int{0} // (the race detector makes each parse of a big file seconds)
		}
		for _, n := range lazyCounts {
			if !reflect.DeepEqual(seq, tableState(parseLazy(data, n))) {
				t.Errorf("%s: lazy parse in %d chunks (0: automatic) differs from the sequential one", name, n)
			}
		}
	}
	lz := &Table{data: inputs["stack runs"]}
	lz.parse(2, nil, true)
	if lz.cfi != nil || lz.win[0].s != nil || lz.numErrs != 40*2 || len(lz.lazy.runs) != 40*4+1 {
		t.Errorf("lazy parse: %d CFI INIT records, %d STACK WIN, %d errors, %d runs of STACK records before first use; want 0, 0, 80, 161",
			len(lz.cfi), len(lz.win[0].s), lz.numErrs, len(lz.lazy.runs))
	}
	if len(passes(inputs["child after split"], 2, nil, false)) != 1 {
		t.Error("chunked parse did not fall back for a line record after the split")
	}
	if n := len(passes(inputs["sample"], 3, nil, false)); n != 3 {
		t.Errorf("sample was parsed in %d chunks, not 3", n)
	}
}

// TestLazyPassReleases checks the lazy parse of a file of several release
// steps, where skipping STACK records stops to give pages back: the same
// table as one eager pass, and every byte given back once by the first pass
// and those of STACK records once more by the second.
func TestLazyPassReleases(t *testing.T) {
	var b strings.Builder
	b.WriteString("MODULE a b c d\nFUNC 10 10 0 f\n10 4 1 0\n")
	for i := 0; b.Len() < 3*releaseStep+12345; i++ {
		fmt.Fprintf(&b, "STACK CFI INIT %x 10 .cfa: $rsp 8 + .ra: .cfa -8 + ^\nSTACK CFI %x .cfa: $rsp 16 +\n", 0x100+i*16, 0x104+i*16)
		if i%5000 == 0 {
			fmt.Fprintf(&b, "PUBLIC %x 0 p%d\nSTACK CFI zz\n", 0x100+i*16, i)
		}
	}
	data := []byte(b.String())
	want := tableState(parseChunked(data, 1))
	for _, chunks := range []int{1, 2, 0} {
		var mu sync.Mutex
		n, calls := 0, 0
		release := func(p []byte) { mu.Lock(); n += len(p); calls++; mu.Unlock() }
		tab := &Table{data: data}
		tab.parse(chunks, release, true)
		stack := 0
		for _, r := range tab.lazy.runs {
			stack += r.hi - r.lo
		}
		if n != len(data) || calls < 3 {
			t.Errorf("%d chunks: %d bytes given back in %d calls by the first pass, want %d in 3 or more", chunks, n, calls, len(data))
		}
		n = 0
		tab.stack()
		if n != stack {
			t.Errorf("%d chunks: %d bytes given back by the pass over STACK records, want %d", chunks, n, stack)
		}
		if !reflect.DeepEqual(want, tableState(tab)) {
			t.Errorf("lazy parse in %d chunks, pages given back, differs from one eager pass", chunks)
		}
	}
}

// TestOpenLookups checks OpenLookups on a file: lookups before the STACK
// records are indexed, then the same answers as Open for everything, and
// no panic for a method called after Close.
func TestOpenLookups(t *testing.T) {
	p := filepath.Join(t.TempDir(), "a.sym")
	data := "MODULE Linux x86_64 ID a\nFUNC 10 10 0 f\n10 4 1 0\nSTACK CFI INIT 10 10 .cfa: $rsp 8 +\nSTACK CFI 12 .cfa: $rsp 16 +\n" +
		"STACK CFI zz\nPUBLIC 30 0 p\nSTACK WIN 4 30 10 0 0 0 0 0 0 1 x\n"
	if err := os.WriteFile(p, []byte(data), 0o644); err != nil {
		t.Fatal(err)
	}
	eager, err := Open(p)
	if err != nil {
		t.Fatal(err)
	}
	defer eager.Close()
	lazy, err := OpenLookups(p)
	if err != nil {
		t.Fatal(err)
	}
	if lazy.cfi != nil || len(lazy.lazy.runs) != 2 {
		t.Errorf("OpenLookups indexed STACK records at once (%d CFI INIT records, %d runs noted)", len(lazy.cfi), len(lazy.lazy.runs))
	}
	for _, a := range []uint64{0x10, 0x12, 0x30, 0x35} {
		g, gok := lazy.Lookup(a)
		w, wok := eager.Lookup(a)
		if gok != wok || !reflect.DeepEqual(g, w) {
			t.Errorf("Lookup(%#x): %+v, %v; Open's: %+v, %v", a, g, gok, w, wok)
		}
	}
	if lazy.cfi != nil {
		t.Error("Lookup indexed the STACK records")
	}
	gc, _ := lazy.CFIRules(0x13)
	wc, _ := eager.CFIRules(0x13)
	gw, _ := lazy.StackWin(0x31)
	ww, _ := eager.StackWin(0x31)
	if !reflect.DeepEqual(gc, wc) || !reflect.DeepEqual(gw, ww) || lazy.Corrupt() != eager.Corrupt() || !eager.Corrupt() ||
		!reflect.DeepEqual(lazy.Errors(), eager.Errors()) {
		t.Errorf("after first use: CFIRules %+v, StackWin %+v, corrupt %v, errors %v; Open's: %+v, %+v, %v, %v",
			gc, gw, lazy.Corrupt(), lazy.Errors(), wc, ww, eager.Corrupt(), eager.Errors())
	}
	closed, err := OpenLookups(p)
	if err != nil {
		t.Fatal(err)
	}
	closed.Close()
	closed.Corrupt() // must not panic
}
