package symbfile

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/gobreakpad/gobreakpad/internal/testkit/corpus"
)

// FuzzParse checks that any input reads and indexes or fails without
// panicking, and that lookups of what reads stay in bounds.
func FuzzParse(f *testing.F) {
	if b, err := os.ReadFile(filepath.Join(corpus.Path(), "symbfile/inline-no-tco.ranges.symbfile")); err == nil {
		f.Add(b)
	}
	f.Add([]byte(Magic + "\x00\x01"))
	f.Fuzz(func(t *testing.T, b []byte) {
		tb, err := Parse(b)
		if err != nil {
			return
		}
		for _, r := range tb.Ranges[:min(len(tb.Ranges), 32)] {
			tb.Lookup(r.Start)
			tb.Lookup(r.End() - 1)
		}
		for _, p := range tb.Pads[:min(len(tb.Pads), 32)] {
			tb.Lookup(p.Addr)
		}
	})
}
