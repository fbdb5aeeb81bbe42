package unwindinfo

import (
	"debug/pe"
	"testing"

	"github.com/gobreakpad/gobreakpad/internal/testkit/corpus"
)

// BenchmarkRules reads basic64.dll's 1502 functions' unwind information and
// writes their rules, in symbolic's style and in ours (StyleExact, which
// also decodes the functions' code for epilogs).
func BenchmarkRules(b *testing.B) {
	b.Run("symbolic", func(b *testing.B) { benchRules(b, StyleSymbolic) })
	b.Run("exact", func(b *testing.B) { benchRules(b, StyleExact) })
}

func benchRules(b *testing.B, style Style) {
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
		if _, err := t.Rules(style); err != nil {
			b.Fatal(err)
		}
	}
}
