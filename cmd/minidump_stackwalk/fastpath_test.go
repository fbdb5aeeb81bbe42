package main

import (
	"bufio"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/gobreakpad/gobreakpad/internal/testkit/cmdtest"
	"github.com/gobreakpad/gobreakpad/internal/testkit/corpus"
)

// TestSymbolsCacheFastPath walks the corpus's cases (all but perf-*) without
// a cache, then with one (cold: the .sym files are read and the SymCaches
// and unwind indexes written; then warm: served from them), and requires
// the human, -m and --json outputs to be byte for byte the same.
func TestSymbolsCacheFastPath(t *testing.T) {
	root := corpus.Dir(t)
	f, err := os.Open(filepath.Join(root, "cases.tsv"))
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		n, _, _ := strings.Cut(sc.Text(), "\t")
		if n != "" && !strings.HasPrefix(n, "perf-") {
			names = append(names, n)
		}
	}
	f.Close()
	// A spread of the cases (all of them pass: -run with
	// GOBREAKPAD_ALL_CASES=1): Windows x86 (STACK WIN), Linux and generated
	// ones (STACK CFI, inlines).
	step := 4
	if testing.Short() {
		step = 9
	}
	if os.Getenv("GOBREAKPAD_ALL_CASES") != "" {
		step = 1
	}
	var some []string
	for i := 0; i < len(names); i += step {
		some = append(some, names[i])
	}
	names = some
	prog := cmdtest.Build(t, ".")
	cacheDir := t.TempDir()
	flags := [][]string{nil, {"-m"}, {"--json"}}
	for _, c := range readCases(t, names) {
		for _, fl := range flags {
			args := append(append([]string{}, fl...), c.dump)
			args = append(args, c.paths...)
			want := cmdtest.RunClean(t, prog, nil, args...)
			// First with the cache: cold for the files of this case not
			// walked before; second: warm.
			for _, name := range []string{"cold", "warm"} {
				got := cmdtest.RunClean(t, prog, nil, append([]string{"--symbols-cache", cacheDir}, args...)...)
				if got.Stdout != want.Stdout || got.Code != want.Code {
					t.Errorf("%s %v (%s): output differs from the walk without a cache (exit %d, want %d):\n%s",
						c.name, fl, name, got.Code, want.Code, firstDiff(want.Stdout, got.Stdout))
				}
			}
		}
	}
	// The cache holds a SymCache and an index per .sym walked.
	n := map[string]int{}
	filepath.WalkDir(cacheDir, func(p string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			n[filepath.Ext(p)]++
		}
		return nil
	})
	if n[".cfidx"] == 0 || n[".symc"] == 0 {
		t.Errorf("cache holds %v, want .symc and .cfidx files", n)
	}
	t.Logf("cache: %v", n)
}

// firstDiff shows the first differing line of two outputs.
func firstDiff(a, b string) string {
	al, bl := strings.Split(a, "\n"), strings.Split(b, "\n")
	for i := 0; i < len(al) && i < len(bl); i++ {
		if al[i] != bl[i] {
			return "line " + itoa(i+1) + ":\n- " + al[i] + "\n+ " + bl[i]
		}
	}
	return "lengths differ: " + itoa(len(al)) + " and " + itoa(len(bl)) + " lines"
}

func itoa(i int) string { return strconv.Itoa(i) }
