package symfile

import (
	"os"
	"reflect"
	"strings"
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
	t.parse(chunks, nil)
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
	}
	if len(passes(inputs["child after split"], 2, nil)) != 1 {
		t.Error("chunked parse did not fall back for a line record after the split")
	}
	if n := len(passes(inputs["sample"], 3, nil)); n != 3 {
		t.Errorf("sample was parsed in %d chunks, not 3", n)
	}
}
