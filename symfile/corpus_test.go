package symfile

import (
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gobreakpad/gobreakpad/internal/testkit/corpus"
)

// corpusSymFiles returns every .sym file in the shared corpus.
func corpusSymFiles(t *testing.T) []string {
	root := corpus.Dir(t)
	var files []string
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() || !strings.HasSuffix(p, ".sym") {
			return nil
		}
		// A few corpus entries are stand-ins for symbolic links: a short
		// file holding the relative path of the real one. Skip those.
		if b, err := os.ReadFile(p); err == nil && len(b) < 512 && strings.HasPrefix(string(b), "../") {
			return nil
		}
		files = append(files, p)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(files) == 0 {
		t.Fatal("no .sym files in the corpus")
	}
	return files
}

func TestCorpusParses(t *testing.T) {
	for _, p := range corpusSymFiles(t) {
		tab, err := Open(p)
		if err != nil {
			t.Errorf("%s: %v", p, err)
			continue
		}
		if n := tab.NumErrors(); n > 0 {
			t.Errorf("%s: %d malformed lines, first: %v", p, n, tab.Errors()[0])
		}
		if _, ok := tab.Module(); !ok {
			t.Errorf("%s: no MODULE", p)
		}
		tab.Close()
	}
}
