package breakpad_test

import (
	"bytes"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/gobreakpad/gobreakpad/dumpsyms"
	"github.com/gobreakpad/gobreakpad/dumpsyms/breakpad"
	"github.com/gobreakpad/gobreakpad/internal/testkit/corpus"
)

// materialize decodes every function and PUBLIC record of a model with a
// Source into Funcs and Publics.
func materialize(s *dumpsyms.Model) *dumpsyms.Model {
	out := *s
	out.Lazy = nil
	for i := range s.NumFuncs() {
		var f dumpsyms.Function
		s.Func(i, &f, true)
		out.Funcs = append(out.Funcs, f)
	}
	for i := range s.NumPublics() {
		out.Publics = append(out.Publics, s.Public(i))
	}
	return &out
}

// normalize drops what Open's model does not carry (STACK records) and
// makes empty slices nil.
func normalize(s *dumpsyms.Model) {
	s.CFI, s.Wins = nil, nil
	for i := range s.Funcs {
		f := &s.Funcs[i]
		if len(f.Lines) == 0 {
			f.Lines = nil
		}
		if len(f.Inlines) == 0 {
			f.Inlines = nil
		}
	}
}

// checkOpen compares Open's model of path with Read's, warnings included.
func checkOpen(t *testing.T, path string) {
	t.Helper()
	var w1, w2 []string
	want, err1 := breakpad.ReadFile(path, func(f string, a ...any) { w1 = append(w1, fmt.Sprintf(f, a...)) })
	lazy, c, err2 := breakpad.Open(path, func(f string, a ...any) { w2 = append(w2, fmt.Sprintf(f, a...)) })
	if (err1 == nil) != (err2 == nil) {
		t.Fatalf("%s: Read error %v, Open error %v", path, err1, err2)
	}
	if err1 != nil {
		return
	}
	defer c.Close()
	got := materialize(lazy)
	normalize(want)
	normalize(got)
	if !reflect.DeepEqual(want, got) {
		t.Errorf("%s: Open's model differs from Read's", path)
	}
	if !reflect.DeepEqual(w1, w2) {
		t.Errorf("%s: warnings differ:\nRead: %q\nOpen: %q", path, w1, w2)
	}
}

// TestOpenAgreesWithRead: on every corpus .sym (hostile ones included) and
// on files made to test the index's corners, Open's model decodes to Read's.
func TestOpenAgreesWithRead(t *testing.T) {
	dir := t.TempDir()
	cases := map[string]string{
		"interleaved.sym": "MODULE Linux x86_64 0123 a\nFILE 0 a.c\nFUNC 200 10 0 g\n200 4 7 0\nPUBLIC 300 0 p\n204 4 8 0\nINLINE 0 3 0 0 200 4\nFUNC 100 10 0 f\n\n108 4 2 0\nbogus line\n100 4 1 0\nFILE 1 b.c\n104 4 3 1\n",
		"orphans.sym":     "MODULE Linux x86 0 a\n100 4 1 0\nINLINE 0 1 0 0 100 4\nSTACK CFI 100 .cfa: $esp 4 +\nMODULE Linux x86 1 b\nFUNC 1 1 0 f\r\n1 1 1 0\r\n",
		"nomodule.sym":    "FUNC 1 1 0 f\n",
		"noeol.sym":       "MODULE Linux x86 0 a\nFUNC 1 2 0 f\n1 1 1 0",
	}
	for name, text := range cases {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
		checkOpen(t, p)
	}
	root := corpus.Dir(t)
	n, seen := 0, 0
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(p, ".sym") {
			return err
		}
		if data, err := os.ReadFile(p); err == nil && len(data) < 512 && bytes.HasPrefix(data, []byte("../")) {
			return nil
		}
		if st, err := os.Stat(p); err == nil && st.Size() > 32<<20 && (testing.Short() || raceBuild) {
			return nil
		}
		if seen++; raceBuild && seen%10 != 0 {
			return nil // a sample under -race, which is slow
		}
		checkOpen(t, p)
		n++
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("%d corpus files", n)
}
