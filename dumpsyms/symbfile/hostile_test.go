package symbfile

import (
	"bytes"
	"testing"

	"github.com/gobreakpad/gobreakpad/symbfile"
	symsymbfile "github.com/gobreakpad/gobreakpad/symbols/symbfile"
)

// TestHostileSymbfile: ranges nested wrongly, at depths with gaps, with
// empty or overflowing extents, read back into the model and answer
// lookups without panicking.
func TestHostileSymbfile(t *testing.T) {
	var buf bytes.Buffer
	w := symbfile.NewWriter(&buf)
	for _, r := range []symbfile.Range{
		{Start: 0x100, Length: 0x10, Func: "f", File: "a.c", Lines: []symbfile.LineEntry{{Addr: 0x50, Line: 1}, {Addr: 0x108, Line: 2}, {Addr: 0x104, Line: 3}}},
		{Start: 0x108, Length: 0x20, Func: "crosses its parent's end", Depth: 1},
		{Start: 0x104, Length: 0, Func: "empty", Depth: 1},
		{Start: 0x102, Length: 2, Func: "depth 3 under nothing", Depth: 3},
		{Start: 1<<64 - 8, Length: 1 << 63, Func: "wraps", File: "b.c", Lines: []symbfile.LineEntry{{Addr: 1<<64 - 1, Line: 9}}},
		{Start: 0x200, Length: 0x10, Func: "g"},
		{Start: 0x200, Length: 0x10, Func: "g again"},
		{Start: 0x204, Length: 4, Func: "h", Depth: 1, CallLine: 7},
		{Start: 0x204, Length: 4, Func: "h2", Depth: 2, CallLine: 8},
	} {
		w.AddRange(r)
	}
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	tab, err := symbfile.Parse(buf.Bytes())
	if err != nil {
		t.Fatal(err)
	}
	l := &symsymbfile.Table{Table: tab}
	for _, a := range []uint64{0, 0x100, 0x103, 0x104, 0x108, 0x120, 0x205, 1<<64 - 1} {
		l.Lookup(a, true)
	}
	s := Read(tab, "hostile")
	var out bytes.Buffer
	if err := s.Write(&out); err != nil {
		t.Fatal(err)
	}
}

// TestHostileSymbfileDepth: ranges nested far deeper than
// symbfile.MaxInlineDepth give the model at most that many INLINE records
// (and the conversion no quadratic walk over the depths).
func TestHostileSymbfileDepth(t *testing.T) {
	const n = 20000
	var buf bytes.Buffer
	w := symbfile.NewWriter(&buf)
	for d := range n {
		start := uint64(0x1000 + d)
		w.AddRange(symbfile.Range{Start: start, Length: uint64(2*n - 2*d), Func: "f", File: "a.c", CallLine: uint32(d),
			Depth: uint32(d), Lines: []symbfile.LineEntry{{Addr: start, Line: uint32(d + 1)}}})
	}
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	tab, err := symbfile.Parse(buf.Bytes())
	if err != nil {
		t.Fatal(err)
	}
	s := Read(tab, "deep")
	if len(s.Funcs) != 1 || len(s.Funcs[0].Inlines) != symbfile.MaxInlineDepth {
		t.Fatalf("%d functions, %d inlines; want 1 and %d", len(s.Funcs), len(s.Funcs[0].Inlines), symbfile.MaxInlineDepth)
	}
	sym, ok := (&symsymbfile.Table{Table: tab}).Lookup(0x1000+n-1, true)
	if !ok || len(sym.Inlines) != symbfile.MaxInlineDepth {
		t.Fatalf("lookup: %v, %d inlines", ok, len(sym.Inlines))
	}
}

// chainsFile writes a symbfile of chains functions, each holding
// symbfile.MaxInlineDepth ranges nested in it, each in the last (depth d of
// chain c: [c<<20+d, c<<20+2048-d)), each with a line at its start.
func chainsFile(t testing.TB, chains int) []byte {
	var buf bytes.Buffer
	w := symbfile.NewWriter(&buf)
	for c := range chains {
		for d := range symbfile.MaxInlineDepth + 1 {
			start := uint64(c)<<20 + uint64(d)
			w.AddRange(symbfile.Range{Start: start, Length: uint64(2*(symbfile.MaxInlineDepth+1) - 2*d), Func: "f", File: "a.c",
				CallLine: uint32(d), Depth: uint32(d), Lines: []symbfile.LineEntry{{Addr: start, Line: uint32(d + 1)}}})
		}
	}
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// TestHostileSymbfileChains: 200 chains each MaxInlineDepth deep (5 MB)
// convert to the model in one sweep per address order (this took 32 s when
// each range and line looked its chain up from depth 0).
func TestHostileSymbfileChains(t *testing.T) {
	const chains = 200
	tab, err := symbfile.Parse(chainsFile(t, chains))
	if err != nil {
		t.Fatal(err)
	}
	s := Read(tab, "chains")
	if len(s.Funcs) != chains {
		t.Fatalf("%d functions, want %d", len(s.Funcs), chains)
	}
	for _, f := range s.Funcs {
		// A line piece per range start and per range end below the
		// function's: 2*MaxInlineDepth+1.
		if len(f.Inlines) != symbfile.MaxInlineDepth || len(f.Lines) != 2*symbfile.MaxInlineDepth+1 {
			t.Fatalf("%s at %#x: %d inlines, %d lines; want %d and %d", f.Name, f.Ranges[0].Address,
				len(f.Inlines), len(f.Lines), symbfile.MaxInlineDepth, 2*symbfile.MaxInlineDepth+1)
		}
	}
}

// BenchmarkSymbfileChains converts TestHostileSymbfileChains's file to the
// model with the sweep ("sweep") and the old lookups from depth 0 ("old",
// tens of seconds an op: run with -benchtime 1x).
func BenchmarkSymbfileChains(b *testing.B) {
	tab, err := symbfile.Parse(chainsFile(b, 200))
	if err != nil {
		b.Fatal(err)
	}
	b.Run("sweep", func(b *testing.B) {
		for b.Loop() {
			Read(tab, "chains")
		}
	})
	b.Run("old", func(b *testing.B) {
		for b.Loop() {
			symbolsFromSymbfileOld(tab, "chains")
		}
	})
}
