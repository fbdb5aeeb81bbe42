package pe

import (
	"io"
	"os"
	"testing"

	"github.com/gobreakpad/gobreakpad/dumpsyms"
	"github.com/gobreakpad/gobreakpad/internal/testkit/corpus"
)

func benchDump(b *testing.B, path string, opts dumpsyms.Options) {
	st, err := os.Stat(path)
	if err != nil {
		b.Skip(err)
	}
	b.SetBytes(st.Size())
	b.ReportAllocs()
	for b.Loop() {
		s, err := Dump(path, opts)
		if err != nil {
			b.Fatal(err)
		}
		if err := s.Write(io.Discard); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkDumpPDB: Mozilla's basic32-min.pdb (1.2 MB), with inlines.
func BenchmarkDumpPDB(b *testing.B) {
	benchDump(b, corpus.File(b, "windows/mozilla/basic32-min.pdb"), dumpsyms.Options{Inlines: true})
}

// BenchmarkDumpHugePDB: the PDB that testdata/mkhuge.sh makes (about
// 57 MB), named by GOBREAKPAD_HUGE_PDB, with inlines.
func BenchmarkDumpHugePDB(b *testing.B) {
	p := os.Getenv("GOBREAKPAD_HUGE_PDB")
	if p == "" {
		b.Skip("GOBREAKPAD_HUGE_PDB not set (make one with testdata/mkhuge.sh)")
	}
	benchDump(b, p, dumpsyms.Options{Inlines: true})
}
