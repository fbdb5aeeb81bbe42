package formats

import (
	"io"
	"testing"

	"github.com/gobreakpad/gobreakpad/internal/testkit/corpus"
)

// BenchmarkConvertBigSym converts the corpus's perf/big-symbols .sym (65 MB,
// mostly STACK CFI and PUBLIC records) into each lookup format, from Read's
// model ("model") and from ReadLazy's ("lazy", what symconv uses):
// allocations per conversion. Peak memory is measured with /usr/bin/time
// on symconv (docs/gsym.md, docs/symcache.md, docs/symbfile.md).
func BenchmarkConvertBigSym(b *testing.B) {
	p := corpus.File(b, "perf/big-symbols/deep_chain/A34CC23410BCE5A3F062F9443D3440C00/deep_chain.sym")
	from, err := ByName("breakpad")
	if err != nil {
		b.Fatal(err)
	}
	for _, name := range []string{"gsym", "symcache", "symbfile"} {
		to, err := ByName(name)
		if err != nil {
			b.Fatal(err)
		}
		b.Run(name+"/model", func(b *testing.B) {
			for b.Loop() {
				s, err := from.Read(p, nil)
				if err != nil {
					b.Fatal(err)
				}
				if err := to.Write(io.Discard, s, WriteOptions{}); err != nil {
					b.Fatal(err)
				}
			}
		})
		b.Run(name+"/lazy", func(b *testing.B) {
			for b.Loop() {
				s, c, err := from.ReadLazy(p, nil)
				if err != nil {
					b.Fatal(err)
				}
				if err := to.Write(io.Discard, s, WriteOptions{}); err != nil {
					b.Fatal(err)
				}
				c.Close()
			}
		})
	}
}
