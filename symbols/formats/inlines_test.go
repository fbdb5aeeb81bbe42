package formats

import (
	"bytes"
	"crypto/sha256"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gobreakpad/gobreakpad/internal/testkit/corpus"
	"github.com/gobreakpad/gobreakpad/symcache"
)

// symsWithInlines returns the corpus's .sym files with INLINE records, each
// content once, smallest first.
func symsWithInlines(t *testing.T) []string {
	t.Helper()
	root := corpus.Dir(t)
	seen := map[[32]byte]bool{}
	var out []string
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(p, ".sym") {
			return err
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		if !bytes.Contains(b, []byte("\nINLINE ")) {
			return nil
		}
		if h := sha256.Sum256(b); !seen[h] {
			seen[h] = true
			out = append(out, p)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// TestSymCacheAnswersAsSym: a SymCache converted from a .sym file answers
// every FUNC, line record and PUBLIC address of it as the .sym file does
// (function, file and line of each frame, inlined ones included), for every
// .sym file of the corpus with INLINE records (issue 28, item 4: a function
// inlined into itself in crash.inlines.sym swapped call lines at 302
// addresses, because the .sym's lookups nested INLINE records by their
// ranges and the SymCache by their depths; both follow the depths now,
// which is what the DWARF says: docs/symfile.md).
func TestSymCacheAnswersAsSym(t *testing.T) {
	files := symsWithInlines(t)
	if len(files) < 20 {
		t.Fatalf("%d .sym files with INLINE records in the corpus, want the 20 and more it has", len(files))
	}
	total := 0
	for _, p := range files {
		st, err := os.Stat(p)
		if err != nil {
			t.Fatal(err)
		}
		if raceBuild && st.Size() > 1<<20 {
			continue // the big ones take minutes under -race
		}
		rel, _ := filepath.Rel(corpus.Dir(t), p)
		// SymCache lookups clean paths as symbolic's do
		// (./csu/init-first.c is csu/init-first.c).
		agree, n, differ, _ := convertAndCompareFiles(t, p, "symcache", 0, symcache.CleanPath)
		total += n
		if agree != n {
			t.Errorf("%s: %d of %d addresses answered otherwise (first %#x)", rel, n-agree, n, differ[0])
		}
	}
	t.Logf("%d files, %d addresses", len(files), total)
}
