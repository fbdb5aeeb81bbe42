package symgen

import (
	"bytes"
	"testing"

	"github.com/gobreakpad/gobreakpad/symfile"
)

// TestWriteParses checks that a generated file is well-formed, of the asked
// size, reproducible, and that its functions are where Info says.
func TestWriteParses(t *testing.T) {
	var a, b bytes.Buffer
	info, err := Write(&a, 2<<20, 3)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := Write(&b, 2<<20, 3); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(a.Bytes(), b.Bytes()) {
		t.Error("same seed, different output")
	}
	if a.Len() < 2<<20 {
		t.Errorf("wrote %d bytes, want at least %d", a.Len(), 2<<20)
	}
	tab, err := symfile.Parse(a.Bytes())
	if err != nil {
		t.Fatal(err)
	}
	if tab.NumErrors() != 0 {
		t.Fatalf("generated file has errors: %v", tab.Errors())
	}
	if info.Funcs == 0 {
		t.Fatal("no functions")
	}
	sym, ok := tab.Lookup(info.FuncStart)
	if !ok || sym.Address != info.FuncStart || !sym.HasLine {
		t.Errorf("Lookup(first function) = %+v, %v", sym, ok)
	}
	if _, ok := tab.CFIRules(info.FuncStart); !ok {
		t.Error("no CFI for the first function")
	}
}
