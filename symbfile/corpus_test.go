package symbfile

import (
	"fmt"
	"os"
	"strconv"
	"strings"
	"testing"

	"github.com/gobreakpad/gobreakpad/internal/testkit/corpus"
)

// symbolizerAnswers reads a TSV of llvm-symbolizer frames (address, frame,
// function, file, line) into one "function file:line" list per address.
func symbolizerAnswers(t *testing.T, path string) (addrs []uint64, want map[uint64][]string) {
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	want = map[uint64][]string{}
	for _, l := range strings.Split(string(b), "\n") {
		f := strings.Split(l, "\t")
		if len(f) != 5 || strings.HasPrefix(l, "#") {
			continue
		}
		a, err := strconv.ParseUint(strings.TrimPrefix(f[0], "0x"), 16, 64)
		if err != nil {
			t.Fatal(err)
		}
		if _, ok := want[a]; !ok {
			addrs = append(addrs, a)
		}
		want[a] = append(want[a], f[2]+" "+f[3]+":"+f[4])
	}
	return addrs, want
}

func frameStrings(fs []Frame) []string {
	var out []string
	for _, f := range fs {
		out = append(out, fmt.Sprintf("%s %s:%d", f.Func, f.File, f.Line))
	}
	return out
}

// TestSymblibFileAgreesWithLLVM: the ranges symblib wrote for inline-no-tco
// give llvm-symbolizer's inline chains at every instruction address.
func TestSymblibFileAgreesWithLLVM(t *testing.T) {
	tb, err := Open(corpus.File(t, "symbfile/inline-no-tco.ranges.symbfile"))
	if err != nil {
		t.Fatal(err)
	}
	addrs, want := symbolizerAnswers(t, "testdata/inline-no-tco.llvm-symbolizer.tsv")
	if len(addrs) != 31 {
		t.Fatalf("%d addresses in the answers", len(addrs))
	}
	agree := 0
	for _, a := range addrs {
		got := frameStrings(tb.Lookup(a))
		if strings.Join(got, "\n") != strings.Join(want[a], "\n") {
			t.Errorf("%#x: got\n%s\nwant\n%s", a, strings.Join(got, "\n"), strings.Join(want[a], "\n"))
			continue
		}
		agree++
	}
	t.Logf("%d/%d addresses agree", agree, len(addrs))
}
