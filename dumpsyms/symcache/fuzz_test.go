package symcache

import (
	"io"
	"os"
	"path/filepath"
	"testing"

	"github.com/gobreakpad/gobreakpad/internal/testkit/corpus"
	"github.com/gobreakpad/gobreakpad/symcache"
)

// FuzzSymCacheReadBack: any SymCache that parses reads back into the model
// and writes as a .sym without panicking.
func FuzzSymCacheReadBack(f *testing.F) {
	if b, err := os.ReadFile(filepath.Join(corpus.Path(), "symbolic/symcache/current/macos.symc")); err == nil {
		f.Add(b[:min(len(b), 4096)])
	}
	f.Add([]byte("SYMC\x09\x00\x00\x00"))
	f.Fuzz(func(t *testing.T, b []byte) {
		c, err := symcache.Parse(b)
		if err != nil {
			return
		}
		if err := Read(c, "fuzz").Write(io.Discard); err != nil {
			t.Fatal(err)
		}
	})
}
