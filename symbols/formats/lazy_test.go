package formats

import (
	"bytes"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gobreakpad/gobreakpad/internal/testkit/corpus"
)

// TestLazyModelWritesTheSame: every format taking ReadLazy's models writes,
// from the lazy model of each corpus .sym (hostile ones included), the same
// bytes as from Read's model.
func TestLazyModelWritesTheSame(t *testing.T) {
	from, err := ByName("breakpad")
	if err != nil {
		t.Fatal(err)
	}
	var to []*Format
	for _, f := range All() {
		if f.TakesLazyModels() {
			to = append(to, f)
		}
	}
	if len(to) == 0 {
		t.Fatal("no format takes lazy models")
	}
	root := corpus.Dir(t)
	n, seen := 0, 0
	err = filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(p, ".sym") {
			return err
		}
		st, err := os.Stat(p)
		if err != nil || (st.Size() > 8<<20 && (testing.Short() || raceBuild)) {
			return nil // the big file in -short and -race runs
		}
		if head, err := os.ReadFile(p); err == nil && len(head) < 512 && bytes.HasPrefix(head, []byte("../")) {
			return nil // a stand-in for a symbolic link
		}
		if seen++; raceBuild && seen%10 != 0 {
			return nil // a sample under -race, which is slow
		}
		model, err1 := from.Read(p, nil)
		lazy, c, err2 := from.ReadLazy(p, nil)
		if (err1 == nil) != (err2 == nil) {
			t.Errorf("%s: Read: %v, ReadLazy: %v", p, err1, err2)
			return nil
		}
		if err1 != nil {
			return nil
		}
		defer c.Close()
		n++
		for _, f := range to {
			var want, got bytes.Buffer
			errW := f.Write(&want, model, WriteOptions{})
			errG := f.Write(&got, lazy, WriteOptions{})
			if (errW == nil) != (errG == nil) || !bytes.Equal(want.Bytes(), got.Bytes()) {
				t.Errorf("%s as %s: lazy model writes %d bytes (%v), Read's %d (%v)", p, f.Name, got.Len(), errG, want.Len(), errW)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("%d files, %d formats", n, len(to))
}

// FuzzLazyModel: for any bytes, ReadLazy fails exactly when Read does, and
// every format taking its models writes the same bytes from both.
func FuzzLazyModel(f *testing.F) {
	f.Add([]byte("MODULE Linux x86_64 0123 a\nFILE 0 a.c\nINLINE_ORIGIN 0 g\nFUNC 200 10 0 g\n200 4 7 0\nPUBLIC 300 0 p\n204 4 8 0\nINLINE 0 3 0 0 200 4\nFUNC 100 10 0 f\n108 4 2 0\nSTACK CFI INIT 100 10 .cfa: $rsp 8 +\n"))
	f.Add([]byte("MODULE Linux x86 0 a\n100 4 1 0\nSTACK CFI 100 x\nFUNC 1 1 0 f\r\n1 1 1 0\r\nPUBLIC 1 0 p\n"))
	from, err := ByName("breakpad")
	if err != nil {
		f.Fatal(err)
	}
	var to []*Format
	for _, fm := range All() {
		if fm.TakesLazyModels() {
			to = append(to, fm)
		}
	}
	dir := f.TempDir()
	f.Fuzz(func(t *testing.T, data []byte) {
		p := filepath.Join(dir, "fuzz.sym")
		if err := os.WriteFile(p, data, 0o644); err != nil {
			t.Fatal(err)
		}
		model, err1 := from.Read(p, nil)
		lazy, c, err2 := from.ReadLazy(p, nil)
		if (err1 == nil) != (err2 == nil) {
			t.Fatalf("Read: %v, ReadLazy: %v", err1, err2)
		}
		if err1 != nil {
			return
		}
		defer c.Close()
		for _, fm := range to {
			var want, got bytes.Buffer
			errW := fm.Write(&want, model, WriteOptions{})
			errG := fm.Write(&got, lazy, WriteOptions{})
			if (errW == nil) != (errG == nil) || !bytes.Equal(want.Bytes(), got.Bytes()) {
				t.Fatalf("%s: lazy model writes %d bytes (%v), Read's %d (%v)", fm.Name, got.Len(), errG, want.Len(), errW)
			}
		}
	})
}
