// Package symtest is test support for symbol sources: the Breakpad symbols
// dumpsyms/elf makes of an ELF file, the file's build ID, a model's
// Breakpad table, the comparison of two sources' answers over a range of
// addresses or at a model's FUNC and line addresses, and Wine's
// kernelbase.dll (a PE without a CodeView record) and its module.
package symtest

import (
	"bytes"
	"fmt"
	"os"
	"testing"

	"github.com/gobreakpad/gobreakpad/dumpsyms"
	dself "github.com/gobreakpad/gobreakpad/dumpsyms/elf"
	"github.com/gobreakpad/gobreakpad/moduleid"
	"github.com/gobreakpad/gobreakpad/symbols"
	symbreakpad "github.com/gobreakpad/gobreakpad/symbols/breakpad"
	"github.com/gobreakpad/gobreakpad/symfile"
)

// WineKernelbasePath is Wine 8.0's x86_64 kernelbase.dll, trimmed to its
// headers, .pdata, .xdata and .edata (testdata/truth/wincxx/generate.sh):
// a PE without a CodeView record, as Wine's DLLs are. The path is relative
// to a package two directories below the module's root.
const WineKernelbasePath = "../../testdata/truth/wincxx/pe/kernelbase.dll"

// WineKernelbase is kernelbase.dll as Wine's minidumps list it: no debug
// file or identifier, the code identifier of its PE.
var WineKernelbase = symbols.Module{CodeFile: `C:\windows\system32\kernelbase.dll`, CodeID: "63F14E2B5e5000"}

// BuildID returns the build ID of the ELF file at path, in hex.
func BuildID(t testing.TB, path string) string {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	id, err := moduleid.BuildID(f)
	if err != nil {
		t.Fatal(err)
	}
	return fmt.Sprintf("%x", id)
}

// ELF returns the symbols of the ELF file at path as dumpsyms/elf writes
// them (with inlines) and a Breakpad table reads them back.
func ELF(t testing.TB, path string) *symbols.Symbols {
	t.Helper()
	s, err := dself.Dump(path, dumpsyms.Options{Inlines: true})
	if err != nil {
		t.Fatal(err)
	}
	return symbreakpad.Symbols(Table(t, s))
}

// Table returns the Breakpad table of the records s writes.
func Table(t testing.TB, s *dumpsyms.Model) *symfile.Table {
	t.Helper()
	var buf bytes.Buffer
	if err := s.Write(&buf); err != nil {
		t.Fatal(err)
	}
	tab, err := symfile.Parse(buf.Bytes())
	if err != nil {
		t.Fatal(err)
	}
	return tab
}

// AgreeAtFuncs compares the lookups of syms with those of the Breakpad
// table of want at the address of each FUNC and line record of want: the
// same function and line, or nothing found by either. It returns how many
// addresses agree, and an error naming the first that does not.
func AgreeAtFuncs(t testing.TB, syms *symbols.Symbols, want *dumpsyms.Model) (int, error) {
	t.Helper()
	ref := Table(t, want)
	n := 0
	for _, f := range want.Funcs {
		addrs := []uint64{f.Ranges[0].Address}
		for _, l := range f.Lines {
			addrs = append(addrs, l.Address)
		}
		for _, a := range addrs {
			got, ok := syms.Lookup.Lookup(a, false)
			w, wok := ref.Lookup(a)
			if ok != wok || got.Function != w.Name || got.Line != int(w.Line) {
				return n, fmt.Errorf("%#x: got %q line %d, want %q line %d", a, got.Function, got.Line, w.Name, w.Line)
			}
			n++
		}
	}
	return n, nil
}

// Same fails t at the first module-relative address below end where got and
// want answer differently: the function and line lookup (with inlines) and
// the CFI rules (both must have CFI). It returns how many addresses had a
// line, so that a caller can tell that something was compared.
func Same(t testing.TB, got, want *symbols.Symbols, end uint64) (lines int) {
	t.Helper()
	if got.CFI == nil || want.CFI == nil {
		t.Fatalf("CFI: got %v, want %v", got.CFI != nil, want.CFI != nil)
	}
	for rel := uint64(0); rel < end; rel++ {
		g, gok := got.Lookup.Lookup(rel, true)
		w, wok := want.Lookup.Lookup(rel, true)
		if gok != wok || fmt.Sprint(g) != fmt.Sprint(w) {
			t.Fatalf("%#x: got %+v, want %+v", rel, g, w)
		}
		gc, _ := got.CFI.CFIRules(rel, nil)
		wc, _ := want.CFI.CFIRules(rel, nil)
		if fmt.Sprint(gc) != fmt.Sprint(wc) {
			t.Fatalf("%#x: CFI %q, want %q", rel, gc, wc)
		}
		if gok && g.HasLine {
			lines++
		}
	}
	return lines
}
