package breakpad_test

import (
	"bytes"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/gobreakpad/gobreakpad/dumpsyms/breakpad"
	"github.com/gobreakpad/gobreakpad/internal/testkit/corpus"
)

// TestRoundTripCorpus reads every well-formed .sym of the corpus into the
// model and writes it back: the same records must come out, in the same
// order where the file had the model's order (Linux dump_syms writes every
// FUNC before every PUBLIC; Windows writers interleave them by address).
func TestRoundTripCorpus(t *testing.T) {
	root := corpus.Dir(t)
	n, reordered := 0, 0
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(p, ".sym") || strings.Contains(p, "/hostile/") {
			return err
		}
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		if len(data) < 512 && bytes.HasPrefix(data, []byte("../")) {
			return nil // a stand-in for a symbolic link
		}
		var warned bool
		s, err := breakpad.Read(bytes.NewReader(data), func(string, ...any) { warned = true })
		if err != nil || warned {
			return nil // malformed on purpose: nothing to reproduce
		}
		var out bytes.Buffer
		if err := s.Write(&out); err != nil {
			t.Fatalf("%s: %v", p, err)
		}
		want := bytes.ReplaceAll(data, []byte("\r\n"), []byte("\n"))
		if len(want) > 0 && want[len(want)-1] != '\n' {
			want = append(want, '\n')
		}
		if !bytes.Equal(out.Bytes(), want) {
			if sameLines(out.Bytes(), want) {
				reordered++
				return nil
			}
			a, b := out.Bytes(), want
			i := 0
			for i < len(a) && i < len(b) && a[i] == b[i] {
				i++
			}
			t.Errorf("%s: written text differs at byte %d: got %q, want %q", p, i, clip(a[i:]), clip(b[i:]))
			return nil
		}
		n++
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if n == 0 {
		t.Fatal("no symbol file reproduced")
	}
	t.Logf("%d symbol files reproduced byte for byte, %d with their records reordered", n, reordered)
}

// sameLines reports whether a and b hold the same lines, in any order.
func sameLines(a, b []byte) bool {
	la, lb := bytes.Split(a, []byte("\n")), bytes.Split(b, []byte("\n"))
	if len(la) != len(lb) {
		return false
	}
	slices.SortFunc(la, bytes.Compare)
	slices.SortFunc(lb, bytes.Compare)
	for i := range la {
		if !bytes.Equal(la[i], lb[i]) {
			return false
		}
	}
	return true
}

func clip(b []byte) []byte {
	if len(b) > 80 {
		return b[:80]
	}
	return b
}

func TestReadProblems(t *testing.T) {
	var warnings []string
	warn := func(f string, a ...any) { warnings = append(warnings, f) }
	s, err := breakpad.Read(strings.NewReader("1000 4 1 0\nMODULE Linux x86 ID n\nFUNC 2000 10 0 b\nFUNC 1000 10 0 a\n1008 4 2 0\n1000 4 1 0\nSTACK CFI 1 .cfa: $esp 4 +\nbad\n"), warn)
	if err != nil {
		t.Fatal(err)
	}
	if len(warnings) != 3 {
		t.Errorf("warnings %q, want 3 (orphan line, orphan CFI, malformed)", warnings)
	}
	if len(s.Funcs) != 2 || s.Funcs[0].Name != "a" || s.Funcs[0].Lines[0].Address != 0x1000 {
		t.Errorf("functions not put in address order: %+v", s.Funcs)
	}
	if _, err := breakpad.Read(strings.NewReader("FUNC 0 1 0 f\n"), nil); err == nil {
		t.Error("a file without MODULE read without error")
	}
}

func FuzzRead(f *testing.F) {
	f.Add([]byte("MODULE Linux x86 ID n\nFILE 0 a\nFUNC 1 2 3 f\n1 1 1 0\nINLINE 0 1 0 0 1 1\nSTACK CFI INIT 1 2 .cfa: $esp 4 +\nSTACK CFI 2 $ebp: .cfa 8 - ^\n"))
	f.Fuzz(func(t *testing.T, b []byte) {
		s, err := breakpad.Read(bytes.NewReader(b), nil)
		if err != nil {
			return
		}
		var out bytes.Buffer
		if err := s.Write(&out); err != nil {
			t.Fatal(err)
		}
	})
}
