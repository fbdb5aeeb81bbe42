package unwindinfo

import (
	"debug/pe"
	"testing"

	"github.com/gobreakpad/gobreakpad/internal/corpus"
)

// BenchmarkRules reads basic64.dll's 1502 functions' unwind information and
// writes their rules.
func BenchmarkRules(b *testing.B) {
	f, err := pe.Open(corpus.File(b, "windows/mozilla/basic64.dll"))
	if err != nil {
		b.Fatal(err)
	}
	defer f.Close()
	b.ReportAllocs()
	for range b.N {
		t, err := New(f)
		if err != nil {
			b.Fatal(err)
		}
		if _, err := t.Rules(StyleSymbolic); err != nil {
			b.Fatal(err)
		}
	}
}
