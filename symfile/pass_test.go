package symfile

import (
	"math"
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

func parseChunked(data []byte, parallelMin int) *Table {
	t := &Table{data: data}
	t.parse(parallelMin, nil)
	return t
}

// TestParallelPassMatchesSequential checks that parsing in two chunks gives
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
		seq := parseChunked(data, math.MaxInt)
		par := parseChunked(data, 0)
		if !reflect.DeepEqual(tableState(seq), tableState(par)) {
			t.Errorf("%s: chunked parse differs from the sequential one", name)
		}
	}
	if len(passes(inputs["child after split"], 0, nil)) != 1 {
		t.Error("chunked parse did not fall back for a line record after the split")
	}
	if len(passes(inputs["sample"], 0, nil)) < 2 {
		t.Error("sample was not parsed in chunks")
	}
}
