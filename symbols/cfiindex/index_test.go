package cfiindex_test

import (
	"bytes"
	"encoding/binary"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/gobreakpad/gobreakpad/internal/testkit/corpus"
	symbreakpad "github.com/gobreakpad/gobreakpad/symbols/breakpad"
	"github.com/gobreakpad/gobreakpad/symbols/cfiindex"
	"github.com/gobreakpad/gobreakpad/symfile"
)

const sample = `MODULE windows x86 0123456789ABCDEF0123456789ABCDEF1 s.pdb
FUNC 100 40 8 f
FUNC 120 40 4 overlapping
FUNC 200 30 c g
PUBLIC 180 4 pub
STACK CFI INIT 100 40 .cfa: $esp 4 + .ra: .cfa 4 - ^
STACK CFI 101 .cfa: $esp 8 +
STACK CFI 104 $ebp: .cfa 8 - ^
STACK CFI 104 $ebp: .cfa 12 - ^
STACK CFI INIT 120 40 .cfa: $esp 4 + .ra: .cfa 4 - ^
STACK CFI INIT 200 30 .cfa: $esp 4 + .ra: .cfa 4 - ^
STACK CFI 110 .cfa: $esp 12 +
STACK CFI 210 .cfa: $esp 16 +
STACK WIN 4 100 40 1 0 8 0 10 0 1 $T0 $ebp = $eip $T0 4 + ^ =
STACK WIN 4 108 8 1 0 8 0 10 0 1 $T1 $ebp =
STACK WIN 0 200 20 1 0 c 4 10 0 0 1
STACK WIN 0 210 8 1 0 c 4 10 0 0 0
STACK WIN 0 220 8 1 0 c 4 10 0 0 0
`

// build returns the index of a parsed symbol file.
func build(t testing.TB, tab *symfile.Table) *cfiindex.Index {
	t.Helper()
	w := cfiindex.FromTable(tab)
	w.Source = cfiindex.Stamp{Size: 1, ModTime: 2}
	var b bytes.Buffer
	if _, err := w.WriteTo(&b); err != nil {
		t.Fatal(err)
	}
	x, err := cfiindex.New(b.Bytes())
	if err != nil {
		t.Fatal(err)
	}
	if x.Source != w.Source || x.Flags != w.Flags {
		t.Fatalf("header: %+v %#x, want %+v %#x", x.Source, x.Flags, w.Source, w.Flags)
	}
	return x
}

// compare checks the index against the table's own answers at addrs.
func compare(t *testing.T, name string, tab *symfile.Table, x *cfiindex.Index, addrs []uint64) {
	t.Helper()
	ref := &symbreakpad.Table{Table: tab}
	bad := 0
	for _, a := range addrs {
		g, gok := x.CFIRules(a, nil)
		w, wok := ref.CFIRules(a, nil)
		if gok != wok || (gok && !reflect.DeepEqual(g, w)) {
			t.Errorf("%s: CFIRules(%#x) = %q %v, want %q %v", name, a, g, gok, w, wok)
			bad++
		}
		gw, gok := x.StackWin(a)
		ww, wok := ref.StackWin(a)
		if gok != wok || gw != ww {
			t.Errorf("%s: StackWin(%#x) = %+v %v, want %+v %v", name, a, gw, gok, ww, wok)
			bad++
		}
		if bad > 10 {
			t.Fatal("too many differences")
		}
	}
}

func TestSample(t *testing.T) {
	tab, err := symfile.Parse([]byte(sample))
	if err != nil {
		t.Fatal(err)
	}
	x := build(t, tab)
	var addrs []uint64
	for a := uint64(0); a < 0x300; a++ {
		addrs = append(addrs, a)
	}
	compare(t, "sample", tab, x, append(addrs, 1<<40, ^uint64(0)))
	if !x.HasCFI() {
		t.Error("HasCFI = false")
	}
}

// TestCorpus compares the index of the corpus's Breakpad and generated
// symbol files with their tables at every record's bounds.
func TestCorpus(t *testing.T) {
	root := corpus.Dir(t)
	n := 0
	for _, dir := range []string{"breakpad/processor/symbols", "generated/deep_chain-x64-O2/symbols", "generated/inline_chain-x86-O2/symbols", "rust-minidump/testdata/symbols"} {
		filepath.WalkDir(filepath.Join(root, dir), func(p string, d fs.DirEntry, err error) error {
			if err != nil || d.IsDir() || !strings.HasSuffix(p, ".sym") {
				return nil
			}
			tab, err := symfile.Open(p)
			if err != nil {
				return nil
			}
			defer tab.Close()
			x := build(t, tab)
			var addrs []uint64
			near := func(a uint64) { addrs = append(addrs, a-1, a, a+1) }
			tab.EachCFI(func(r symfile.CFIRules) bool {
				near(r.Address)
				near(r.Address + r.Size)
				for _, d := range r.Deltas {
					near(d.Address)
				}
				return true
			})
			for _, b := range tab.StackWinBounds() {
				near(b)
			}
			tab.EachFunc(func(a, s, _ uint64) bool { near(a); near(a + s); return true })
			compare(t, p, tab, x, addrs)
			n++
			return nil
		})
	}
	if n == 0 {
		t.Fatal("no symbol files found")
	}
	t.Logf("%d symbol files", n)
}

func TestWriterOrder(t *testing.T) {
	for _, add := range []func(w *cfiindex.Writer){
		func(w *cfiindex.Writer) {
			w.AddInit(cfiindex.Init{Address: 0x10, Size: 0x10})
			w.AddInit(cfiindex.Init{Address: 0x18, Size: 4})
		},
		func(w *cfiindex.Writer) { w.AddFunc(cfiindex.Func{Address: 0x10, Size: 0}) },
		func(w *cfiindex.Writer) {
			w.AddInit(cfiindex.Init{Address: 0x10, Size: 0x10, Deltas: []cfiindex.Delta{{Address: 0x30}}})
		},
		func(w *cfiindex.Writer) { w.AddWin(cfiindex.Win{Address: ^uint64(0), Size: 2}) },
	} {
		w := &cfiindex.Writer{}
		add(w)
		if _, err := w.WriteTo(&bytes.Buffer{}); err == nil {
			t.Error("bad records written without an error")
		}
	}
}

// TestHostile: damaged files give errors or no answers, never panics.
func TestHostile(t *testing.T) {
	tab, err := symfile.Parse([]byte(sample))
	if err != nil {
		t.Fatal(err)
	}
	w := cfiindex.FromTable(tab)
	var buf bytes.Buffer
	w.WriteTo(&buf)
	good := buf.Bytes()
	for i := 0; i < len(good); i++ {
		if _, err := cfiindex.New(good[:i]); err == nil {
			t.Fatalf("truncated to %d bytes: no error", i)
		} else if !errors.Is(err, cfiindex.ErrFormat) {
			t.Fatalf("truncated to %d bytes: %v, want ErrFormat", i, err)
		}
	}
	// Huge counts.
	b := bytes.Clone(good)
	binary.LittleEndian.PutUint32(b[36:], 0xffffffff)
	if _, err := cfiindex.New(b); err == nil {
		t.Error("huge delta count: no error")
	}
	// Every byte of the records flipped: lookups must not panic.
	for i := 64; i < len(good); i++ {
		b := bytes.Clone(good)
		b[i] ^= 0xff
		x, err := cfiindex.New(b)
		if err != nil {
			continue
		}
		for _, a := range []uint64{0, 0x100, 0x104, 0x10a, 0x130, 0x200, 0x210, 0x228, ^uint64(0)} {
			x.CFIRules(a, nil)
			x.StackWin(a)
		}
	}
	// A delta range outside the section.
	b = bytes.Clone(good)
	binary.LittleEndian.PutUint32(b[64+24:], 0xfffffff0)
	if x, err := cfiindex.New(b); err == nil {
		if _, ok := x.CFIRules(0x104, nil); ok {
			t.Error("INIT with deltas out of bounds answered")
		}
	}
}

func FuzzIndex(f *testing.F) {
	tab, err := symfile.Parse([]byte(sample))
	if err != nil {
		f.Fatal(err)
	}
	var buf bytes.Buffer
	cfiindex.FromTable(tab).WriteTo(&buf)
	f.Add(buf.Bytes())
	f.Add([]byte(cfiindex.Magic))
	f.Fuzz(func(t *testing.T, b []byte) {
		x, err := cfiindex.New(b)
		if err != nil {
			return
		}
		for _, a := range []uint64{0, 1, 0x100, 0x104, 0x110, 0x200, 0x210, 1 << 32, ^uint64(0)} {
			x.CFIRules(a, nil)
			x.StackWin(a)
		}
	})
}

func TestOpen(t *testing.T) {
	p := filepath.Join(t.TempDir(), "x.cfidx")
	tab, _ := symfile.Parse([]byte(sample))
	var buf bytes.Buffer
	cfiindex.FromTable(tab).WriteTo(&buf)
	os.WriteFile(p, buf.Bytes(), 0o644)
	x, err := cfiindex.Open(p)
	if err != nil {
		t.Fatal(err)
	}
	if r, ok := x.CFIRules(0x105, nil); !ok || len(r) != 3 {
		t.Errorf("CFIRules(0x105) = %q %v", r, ok)
	}
	if err := x.Close(); err != nil {
		t.Fatal(err)
	}
	os.WriteFile(p, []byte("nope"), 0o644)
	if _, err := cfiindex.Open(p); err == nil {
		t.Error("bad file opened")
	}
}
