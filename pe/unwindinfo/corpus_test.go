package unwindinfo

import (
	"bufio"
	"debug/pe"
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/gobreakpad/gobreakpad/internal/testkit/corpus"
)

// cfiLines writes entries as STACK CFI records.
func cfiLines(entries []Entry) []string {
	var out []string
	for _, e := range entries {
		out = append(out, fmt.Sprintf("STACK CFI INIT %x %x %s", e.Address, e.Size, e.Init))
		for _, c := range e.Changes {
			out = append(out, fmt.Sprintf("STACK CFI %x %s", c.Address, c.Rules))
		}
	}
	return out
}

// refCFI returns the STACK CFI records of a reference file.
func refCFI(t *testing.T, path string) []string {
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out []string
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		if l := strings.TrimRight(sc.Text(), "\r"); strings.HasPrefix(l, "STACK CFI") {
			out = append(out, l)
		}
	}
	return out
}

// TestCorpus compares the rules made from the corpus's x64 images with the
// references of Breakpad, Mozilla dump_syms and symbolic, record by record
// in order.
func TestCorpus(t *testing.T) {
	cases := []struct {
		pe, ref string
		style   Style
	}{
		{"windows/breakpad/pe_only_symbol_test.dll", "windows/breakpad/pe_only_symbol_test.sym", StyleBreakpad},
		{"windows/breakpad/dump_syms_regtest64.exe", "windows/breakpad/dump_syms_regtest64.sym", StyleBreakpad},
		{"windows/symbolic/CrashWithException.exe", "windows/symbolic/cfi-snapshot-CrashWithException.exe.txt", StyleSymbolic},
		{"windows/mozilla/dump_syms_regtest64.exe", "mozilla-dump_syms/windows/dump_syms_regtest64.sym", StyleMozilla},
		{"windows/mozilla/basic64.dll", "mozilla-dump_syms/windows/basic64.sym", StyleMozilla},
		{"windows/mozilla/basic-opt64.dll", "mozilla-dump_syms/windows/basic-opt64.sym", StyleMozilla},
		{"windows/mozilla/mozwer.dll", "mozilla-dump_syms/windows/mozwer.sym", StyleMozillaPE},
	}
	for _, c := range cases {
		t.Run(c.pe, func(t *testing.T) {
			f, err := pe.Open(corpus.File(t, c.pe))
			if err != nil {
				t.Fatal(err)
			}
			defer f.Close()
			tab, err := New(f)
			if err != nil {
				t.Fatal(err)
			}
			entries, err := tab.Rules(c.style)
			if err != nil {
				t.Errorf("rules: %v", err)
			}
			got, want := cfiLines(entries), refCFI(t, corpus.File(t, c.ref))
			diff := 0
			for i := 0; i < max(len(got), len(want)); i++ {
				var g, w string
				if i < len(got) {
					g = got[i]
				}
				if i < len(want) {
					w = want[i]
				}
				if g != w {
					if diff++; diff <= 5 {
						t.Errorf("record %d:\n got %s\nwant %s", i, g, w)
					}
				}
			}
			t.Logf("%d records, %d differ", len(want), diff)
		})
	}
}
