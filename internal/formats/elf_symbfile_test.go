package formats

import (
	"bytes"
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/gobreakpad/gobreakpad/dumpsyms"
	"github.com/gobreakpad/gobreakpad/dumpsyms/elf"
	"github.com/gobreakpad/gobreakpad/internal/corpus"
	"github.com/gobreakpad/gobreakpad/symbfile"
)

// TestSymbfileFromELFAgreesWithLLVM: our writer on the ELF inline-no-tco,
// read back by our reader, gives llvm-symbolizer's inline chains at every
// instruction address, as symblib's own file does.
func TestSymbfileFromELFAgreesWithLLVM(t *testing.T) {
	model, err := elf.Dump(corpus.File(t, "symbfile/inline-no-tco"), dumpsyms.Options{Inlines: true})
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	if err := WriteSymbfile(&buf, model); err != nil {
		t.Fatal(err)
	}
	tb, err := symbfile.Parse(buf.Bytes())
	if err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile("../../symbfile/testdata/inline-no-tco.llvm-symbolizer.tsv")
	if err != nil {
		t.Fatal(err)
	}
	want := map[string][]string{}
	var addrs []string
	for _, l := range strings.Split(string(b), "\n") {
		f := strings.Split(l, "\t")
		if len(f) != 5 || strings.HasPrefix(l, "#") {
			continue
		}
		if _, ok := want[f[0]]; !ok {
			addrs = append(addrs, f[0])
		}
		want[f[0]] = append(want[f[0]], f[2]+" "+f[3]+":"+f[4])
	}
	agree := 0
	for _, a := range addrs {
		var v uint64
		fmt.Sscanf(a, "0x%x", &v)
		var got []string
		for _, fr := range tb.Lookup(v) {
			got = append(got, fmt.Sprintf("%s %s:%d", fr.Func, fr.File, fr.Line))
		}
		if strings.Join(got, "\n") == strings.Join(want[a], "\n") {
			agree++
		} else {
			t.Logf("%s: got %q want %q", a, got, want[a])
		}
	}
	t.Logf("%d/%d addresses agree with llvm-symbolizer", agree, len(addrs))
	if agree != len(addrs) {
		t.Errorf("%d of %d addresses differ", len(addrs)-agree, len(addrs))
	}
}
