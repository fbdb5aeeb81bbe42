package elf

import (
	"io"
	"os"
	"testing"

	"github.com/gobreakpad/gobreakpad/dumpsyms"
	"github.com/gobreakpad/gobreakpad/internal/testkit/corpus"
)

// BenchmarkDumpLibc dumps Debian 12's libc.so.6 with its separate debug
// file (DWARF 5, 3700 functions, 130 000 lines), as
// `dump_syms libc.so.6 DEBUG_DIR` does.
func BenchmarkDumpLibc(b *testing.B) {
	bin := corpus.File(b, "debian/libc/libc.so.6")
	dir := corpus.File(b, "debian/libc/usr-lib-debug/.build-id/93")
	for _, inl := range []bool{false, true} {
		name := "plain"
		if inl {
			name = "inlines"
		}
		b.Run(name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				s, err := Dump(bin, dumpsyms.Options{DebugDirs: []string{dir}, Inlines: inl})
				if err != nil {
					b.Fatal(err)
				}
				if err := s.Write(io.Discard); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkDumpGoBinary dumps a large Go binary with DWARF, named by
// GOBREAKPAD_BENCH_GO_BINARY (for example one built with
// `go build -o compile cmd/compile`); skipped when unset.
func BenchmarkDumpGoBinary(b *testing.B) {
	bin := os.Getenv("GOBREAKPAD_BENCH_GO_BINARY")
	if bin == "" {
		b.Skip("GOBREAKPAD_BENCH_GO_BINARY not set")
	}
	b.ReportAllocs()
	for b.Loop() {
		s, err := Dump(bin, dumpsyms.Options{})
		if err != nil {
			b.Fatal(err)
		}
		if err := s.Write(io.Discard); err != nil {
			b.Fatal(err)
		}
	}
}
