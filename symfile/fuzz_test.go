package symfile

import (
	"bytes"
	"reflect"
	"testing"
)

// FuzzParse feeds arbitrary bytes to Parse and checks that it neither panics
// nor reports errors without line numbers inside the file, and that parsing
// in chunks gives the same table as one pass.
func FuzzParse(f *testing.F) {
	f.Add([]byte(sample))
	f.Add([]byte("MODULE a b c d\r\nFUNC 0 10 0 f\r\n0 10 1 0"))
	f.Add([]byte("FUNC m 1 2 3 x\nINLINE 0 1 2 3 4 5\nINLINE_ORIGIN 1 -1 y\nSTACK CFI 5 r\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		tab, err := Parse(data)
		if err != nil {
			t.Fatal(err)
		}
		lines := bytes.Count(data, []byte("\n")) + 1
		for _, e := range tab.Errors() {
			if e.Line < 1 || e.Line > lines {
				t.Fatalf("error at line %d of %d: %v", e.Line, lines, e)
			}
		}
		if tab.NumErrors() < len(tab.Errors()) || (tab.NumErrors() > 0) != (len(tab.Errors()) > 0) {
			t.Fatalf("NumErrors %d with %d errors kept", tab.NumErrors(), len(tab.Errors()))
		}
		seq := tableState(parseChunked(data, 1))
		for _, n := range chunkCounts {
			if !reflect.DeepEqual(seq, tableState(parseChunked(data, n))) {
				t.Fatalf("parse in %d chunks differs from the sequential one", n)
			}
		}
		for _, n := range append(chunkCounts, 1) {
			if !reflect.DeepEqual(seq, tableState(parseLazy(data, n))) {
				t.Fatalf("lazy parse (STACK records skipped, then parsed) in %d chunks differs from the sequential one", n)
			}
		}
	})
}

// FuzzLookup parses arbitrary bytes and runs every lookup at addresses near
// the given one, checking the answers' consistency and comparing them with
// the literal model of Breakpad's resolver in reference_test.go.
func FuzzLookup(f *testing.F) {
	f.Add([]byte(sample), uint64(0x100d))
	f.Add([]byte("MODULE a b c d\nFUNC 10 10 0 f\n18 8 1 0\n10 8 2 0\nINLINE 0 1 0 10 4 11 2\nINLINE 1 1 0 11 1\n"), uint64(0x11))
	f.Add([]byte("STACK WIN 4 10 10 0 0 0 0 0 0 1 a\nSTACK WIN 4 12 2 0 0 0 0 0 0 1 b\nSTACK WIN 0 0 100 0 0 0 0 0 0 0 1\n"), uint64(0x13))
	f.Fuzz(func(t *testing.T, data []byte, addr uint64) {
		tab, err := Parse(data)
		if err != nil {
			t.Fatal(err)
		}
		ref := loadRef(data)
		for _, a := range []uint64{addr, addr - 1, addr + 1, 0, ^uint64(0)} {
			got, ok := tab.Lookup(a)
			got.Inlines = nil
			if want, wok := ref.lookup(a); ok != wok || !reflect.DeepEqual(got, want) {
				t.Fatalf("Lookup(%#x) = %+v, %v; Breakpad model: %+v, %v", a, got, ok, want, wok)
			}
			gc, ok := tab.CFIRules(a)
			if wc, wok := ref.cfi(a); ok != wok || !reflect.DeepEqual(gc, wc) {
				t.Fatalf("CFIRules(%#x) = %+v, %v; Breakpad model: %+v, %v", a, gc, ok, wc, wok)
			}
			gw, ok := tab.StackWin(a)
			if ww, wok := ref.win(a); ok != wok || gw != ww {
				t.Fatalf("StackWin(%#x) = %+v, %v; Breakpad model: %+v, %v", a, gw, ok, ww, wok)
			}
			if sym, ok := tab.Lookup(a); ok {
				if !sym.Public && (a < sym.Address || a-sym.Address >= sym.Size) {
					t.Fatalf("Lookup(%#x) returned FUNC %#x+%#x not covering it", a, sym.Address, sym.Size)
				}
				if sym.Public && sym.Address > a {
					t.Fatalf("Lookup(%#x) returned PUBLIC above it at %#x", a, sym.Address)
				}
				if sym.HasLine && a < sym.LineAddress {
					t.Fatalf("Lookup(%#x) returned line starting above it at %#x", a, sym.LineAddress)
				}
				for _, in := range sym.Inlines {
					if in.Address > a {
						t.Fatalf("Lookup(%#x) returned inline range starting above it at %#x", a, in.Address)
					}
				}
				sym.Frames()
			}
			if r, ok := tab.CFIRules(a); ok {
				if a < r.Address || a-r.Address >= r.Size {
					t.Fatalf("CFIRules(%#x) returned INIT %#x+%#x not covering it", a, r.Address, r.Size)
				}
				for i, d := range r.Deltas {
					if d.Address < r.Address || d.Address > a || (i > 0 && d.Address <= r.Deltas[i-1].Address) {
						t.Fatalf("CFIRules(%#x): bad delta order or range: %+v", a, r.Deltas)
					}
				}
			}
			if w, ok := tab.StackWin(a); ok {
				if a < uint64(w.RVA) || a-uint64(w.RVA) >= uint64(w.CodeSize) {
					t.Fatalf("StackWin(%#x) returned %#x+%#x not covering it", a, w.RVA, w.CodeSize)
				}
			}
		}
	})
}

// FuzzStackLines compares stackLines, the loop skipping STACK records for
// OpenLookups, with a literal reading of its contract, from every line
// start of arbitrary bytes after a STACK line.
func FuzzStackLines(f *testing.F) {
	f.Add([]byte("x\nSTACK CFI 1 r\nSTACK WIN 4\n"), 0)
	f.Add([]byte("STACK CFI 1 r\r\nSTACK \nSTACK\nSTACK CFI 2"), 9)
	f.Add([]byte("\nSTACK \nSTACK \n\nSTACK x"), 3)
	f.Fuzz(func(t *testing.T, rest []byte, stop int) {
		d := append([]byte("STACK "), rest...)
		naive := func(off, stop int) (int, int, bool) {
			lines := 0
			for {
				i := off + 6
				for i < len(d) && d[i] != '\n' {
					i++
				}
				if i == len(d) {
					return len(d), lines, false
				}
				off = i + 1
				if !bytes.HasPrefix(d[off:], []byte("STACK ")) {
					return off, lines, false
				}
				lines++
				if off >= stop {
					return off, lines, true
				}
			}
		}
		for off := 0; off < len(d); off++ {
			if (off > 0 && d[off-1] != '\n') || !stackPrefix(d, off) {
				continue
			}
			gn, gl, gm := stackLines(d, off, stop)
			wn, wl, wm := naive(off, stop)
			if gn != wn || gl != wl || gm != wm {
				t.Fatalf("stackLines(%q, %d, %d) = %d, %d, %v; want %d, %d, %v", d, off, stop, gn, gl, gm, wn, wl, wm)
			}
		}
	})
}
