package symcache

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"

	"github.com/gobreakpad/gobreakpad/internal/testkit/corpus"
)

// FuzzParse checks that any input parses or fails without panicking, and
// that lookups, function lists and re-encoding of what parses stay in
// bounds.
func FuzzParse(f *testing.F) {
	{
		p := filepath.Join(corpus.Path(), "symbolic/symcache/current/macos.symc")
		if b, err := os.ReadFile(p); err == nil {
			f.Add(b[:min(len(b), 4096)])
		}
	}
	f.Add([]byte("SYMC\x07\x00\x00\x00"))
	f.Fuzz(func(t *testing.T, b []byte) {
		c, err := Parse(b)
		if err != nil {
			return
		}
		for _, a := range []uint64{0, 1, 0x1000, 0xdc15, uint64(None), 1 << 40} {
			c.Lookup(a)
		}
		for i := uint32(0); i < c.NumRanges && i < 64; i++ {
			s, _ := c.RangeStart(i)
			c.Lookup(uint64(s))
		}
		c.Functions()
		var out bytes.Buffer
		if _, err := c.Raw().WriteTo(&out); err != nil {
			t.Fatal(err)
		}
		if c2, err := Parse(out.Bytes()); err != nil || c2.NumRanges != c.NumRanges {
			t.Fatalf("re-encoded cache does not parse: %v", err)
		}
	})
}
