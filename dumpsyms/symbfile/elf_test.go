package symbfile

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/gobreakpad/gobreakpad/dumpsyms"
	dself "github.com/gobreakpad/gobreakpad/dumpsyms/elf"
	"github.com/gobreakpad/gobreakpad/internal/testkit/corpus"
	"github.com/gobreakpad/gobreakpad/symbfile"
)

// symbfileOf returns the symbfile Write makes of model, read back.
func symbfileOf(t *testing.T, model *dumpsyms.Model, opts WriteOptions) *symbfile.Table {
	t.Helper()
	var buf bytes.Buffer
	if err := Write(&buf, model, opts); err != nil {
		t.Fatal(err)
	}
	tb, err := symbfile.Parse(buf.Bytes())
	if err != nil {
		t.Fatal(err)
	}
	return tb
}

// TestSymbfileFromELFAgreesWithLLVM: our writer on the ELF inline-no-tco,
// read back by our reader, gives llvm-symbolizer's inline chains at every
// instruction address, as symblib's own file does.
func TestSymbfileFromELFAgreesWithLLVM(t *testing.T) {
	model, err := dself.Dump(corpus.File(t, "symbfile/inline-no-tco"), dumpsyms.Options{Inlines: true})
	if err != nil {
		t.Fatal(err)
	}
	tb := symbfileOf(t, model, WriteOptions{})
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

// llvmSymbolizer returns the path of an llvm-symbolizer, or "".
func llvmSymbolizer() string {
	for _, n := range []string{"llvm-symbolizer-22", "llvm-symbolizer-14", "llvm-symbolizer"} {
		if p, err := exec.LookPath(n); err == nil {
			return p
		}
	}
	return ""
}

// TestSymbfileFromCorpusELFsAgreesWithLLVM: our symbfile writer on the x64
// (DWARF 4 and 5), x86 and arm64 builds of the corpus's ELF programs, read
// back by our reader, gives llvm-symbolizer's inline chains (each frame's
// file and line; function names too for the C programs, whose names both
// print alike) at every FUNC address, the first and last byte of every
// line record of our dump, and every return pad (a call instruction's
// return address minus one, answered by the pad).
func TestSymbfileFromCorpusELFsAgreesWithLLVM(t *testing.T) {
	sym := llvmSymbolizer()
	if sym == "" {
		t.Skip("no llvm-symbolizer (apt-get install llvm-22)")
	}
	root := filepath.Join(corpus.Dir(t), "elf")
	for _, target := range []string{"x64-dw4", "x64-dw5", "x86", "arm64"} {
		for _, prog := range []string{"inline_chain", "deep_chain", "libshapes.so"} {
			path := filepath.Join(root, target, "full", prog)
			if _, err := os.Stat(path); err != nil {
				continue
			}
			t.Run(target+"/"+prog, func(t *testing.T) {
				model, err := dself.Dump(path, dumpsyms.Options{Inlines: true})
				if err != nil {
					t.Fatal(err)
				}
				tb := symbfileOf(t, model, WriteOptions{Binary: path}) // return pads
				addrs := map[uint64]bool{}
				for _, f := range model.Funcs {
					for _, r := range f.Ranges {
						addrs[r.Address] = true
					}
					for _, l := range f.Lines {
						addrs[l.Address] = true
						addrs[l.Address+l.Size-1] = true
					}
				}
				if len(tb.Pads) == 0 {
					t.Error("no return pads")
				}
				pads := map[uint64]bool{}
				for _, p := range tb.Pads {
					addrs[p.Addr], pads[p.Addr] = true, true
				}
				var in strings.Builder
				var list []uint64
				for a := range addrs {
					list = append(list, a)
				}
				slices.Sort(list)
				for _, a := range list {
					fmt.Fprintf(&in, "0x%x\n", a)
				}
				cmd := exec.Command(sym, "--obj="+path, "--inlining", "--output-style=JSON")
				cmd.Stdin = strings.NewReader(in.String())
				out, err := cmd.Output()
				if err != nil {
					t.Fatalf("%s: %v", sym, err)
				}
				names := !strings.HasPrefix(prog, "inline_chain") // C programs
				agree, total, padsAgree := 0, 0, 0
				for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
					var rec struct {
						Address string
						Symbol  []struct {
							FunctionName, FileName string
							Line                   int
						}
					}
					if err := json.Unmarshal([]byte(line), &rec); err != nil {
						t.Fatalf("%s: %v", line, err)
					}
					var a uint64
					fmt.Sscanf(rec.Address, "0x%x", &a)
					var want, got []string
					for _, s := range rec.Symbol {
						if s.FunctionName == "" || s.FunctionName == "??" {
							continue
						}
						w := fmt.Sprintf("%s:%d", s.FileName, s.Line)
						if names {
							w = s.FunctionName + " " + w
						}
						want = append(want, w)
					}
					if len(want) == 0 {
						continue // nothing in DWARF: no claim
					}
					total++
					for _, f := range tb.Lookup(a) {
						g := fmt.Sprintf("%s:%d", f.File, f.Line)
						if names {
							g = f.Func + " " + g
						}
						got = append(got, g)
					}
					if strings.Join(got, "|") == strings.Join(want, "|") {
						agree++
						if pads[a] {
							padsAgree++
						}
					} else if total-agree <= 3 {
						t.Errorf("%#x: got %q, llvm-symbolizer %q", a, got, want)
					}
				}
				t.Logf("%d/%d addresses agree, %d of them return pads (%d pads)", agree, total, padsAgree, len(tb.Pads))
			})
		}
	}
}
