package stackwalk_test

import (
	"bufio"
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gobreakpad/gobreakpad/internal/corpus"
	"github.com/gobreakpad/gobreakpad/minidump"
	"github.com/gobreakpad/gobreakpad/stackwalk"
)

// walkCase is one line of the corpus's cases.tsv.
type walkCase struct {
	name, dump, machine, human string
	syms                       []string
}

func loadCases(t testing.TB) []walkCase {
	dir := corpus.Dir(t)
	f, err := os.Open(filepath.Join(dir, "cases.tsv"))
	if err != nil {
		t.Skipf("cases.tsv: %v", err)
	}
	defer f.Close()
	var out []walkCase
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := sc.Text()
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		fields := append(strings.Split(line, "\t"), "", "", "", "")
		c := walkCase{name: fields[0], dump: filepath.Join(dir, fields[1]), machine: filepath.Join(dir, fields[2])}
		for _, s := range strings.Fields(fields[3]) {
			c.syms = append(c.syms, filepath.Join(dir, s))
		}
		switch {
		case strings.HasSuffix(c.machine, ".m.txt"):
			c.human = strings.TrimSuffix(c.machine, ".m.txt") + ".txt"
		case strings.HasSuffix(c.machine, "ref-m.txt"):
			c.human = strings.TrimSuffix(c.machine, "ref-m.txt") + "ref.txt"
		}
		out = append(out, c)
	}
	return out
}

func process(t testing.TB, c walkCase) (*stackwalk.ProcessState, *stackwalk.SymbolDirs, error) {
	f, err := minidump.Open(c.dump)
	if err != nil {
		return nil, nil, err
	}
	t.Cleanup(func() { f.Close() })
	var opt stackwalk.Options
	var dirs *stackwalk.SymbolDirs
	if len(c.syms) > 0 {
		dirs = stackwalk.NewSymbolDirs(c.syms...)
		t.Cleanup(func() { dirs.Close() })
		opt.Symbols = dirs
	}
	p, err := stackwalk.Process(f, opt)
	return p, dirs, err
}

// TestCorpus checks, for every case of the shared corpus, that the
// machine-readable and human reports equal Breakpad's byte for byte.
func TestCorpus(t *testing.T) {
	for _, c := range loadCases(t) {
		t.Run(c.name, func(t *testing.T) {
			wantM, err := os.ReadFile(c.machine)
			if err != nil {
				t.Skipf("expected output: %v", err)
			}
			p, dirs, err := process(t, c)
			if err != nil {
				// Breakpad prints nothing for dumps it cannot read.
				if len(wantM) != 0 {
					t.Fatalf("Process: %v", err)
				}
				return
			}
			var got bytes.Buffer
			if err := stackwalk.PrintMachineReadable(&got, p); err != nil {
				t.Fatal(err)
			}
			compare(t, "-m", got.Bytes(), wantM)
			wantH, err := os.ReadFile(c.human)
			if err != nil {
				return
			}
			got.Reset()
			opt := stackwalk.PrintOptions{}
			if dirs != nil {
				opt.Symbols = dirs
			}
			if err := stackwalk.Print(&got, p, opt); err != nil {
				t.Fatal(err)
			}
			compare(t, "human", got.Bytes(), wantH)
		})
	}
}

// compare reports the first differing line.
func compare(t *testing.T, what string, got, want []byte) {
	t.Helper()
	if bytes.Equal(got, want) {
		return
	}
	g, w := strings.Split(string(got), "\n"), strings.Split(string(want), "\n")
	for i := 0; i < len(g) || i < len(w); i++ {
		var gl, wl string
		if i < len(g) {
			gl = g[i]
		}
		if i < len(w) {
			wl = w[i]
		}
		if gl != wl {
			t.Errorf("%s output differs at line %d:\n got: %q\nwant: %q", what, i+1, gl, wl)
			return
		}
	}
}
