package symbfile

import (
	"bytes"
	"io"
	"os"
	"path/filepath"
	"testing"

	"github.com/gobreakpad/gobreakpad/internal/testkit/corpus"
	"github.com/gobreakpad/gobreakpad/symbfile"
)

// FuzzSymbfileReadBack: any symbfile that parses reads back into the model
// and writes as a .sym without panicking, and (up to 256 ranges) into the
// model the old conversion made.
func FuzzSymbfileReadBack(f *testing.F) {
	if b, err := os.ReadFile(filepath.Join(corpus.Path(), "symbfile/inline-no-tco.ranges.symbfile")); err == nil {
		f.Add(b)
	}
	var buf bytes.Buffer
	w := symbfile.NewWriter(&buf)
	w.AddRange(symbfile.Range{Start: 0x10, Length: 8, Func: "f", File: "a.c", Lines: []symbfile.LineEntry{{Addr: 0x10, Line: 1}}})
	w.AddRange(symbfile.Range{Start: 0x12, Length: 2, Func: "g", Depth: 1, CallLine: 1})
	w.Flush()
	f.Add(buf.Bytes())
	f.Fuzz(func(t *testing.T, b []byte) {
		if len(b) > 1<<16 {
			return
		}
		tab, err := symbfile.Parse(b)
		if err != nil {
			return
		}
		s := Read(tab, "fuzz")
		if err := s.Write(io.Discard); err != nil {
			t.Fatal(err)
		}
		if len(tab.Ranges) <= 256 { // the old conversion is quadratic in the depth
			if got, want := canonSymbols(s), canonSymbols(symbolsFromSymbfileOld(tab, "fuzz")); got != want {
				t.Fatalf("sweep:\n%s\nold:\n%s", got, want)
			}
		}
	})
}
