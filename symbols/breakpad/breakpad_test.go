package breakpad_test

import (
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/gobreakpad/gobreakpad/symbols"
	"github.com/gobreakpad/gobreakpad/symbols/breakpad"
)

func writeSym(t *testing.T, root, name, id, text string) {
	t.Helper()
	dir := filepath.Join(root, name, id)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, name+".sym"), []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
}

func TestDirs(t *testing.T) {
	root := t.TempDir()
	const id = "000102030405060708090A0B0C0D0E0F0"
	writeSym(t, root, "nocfi", id, "MODULE Linux x86_64 "+id+" nocfi\nFILE 0 a.c\nFUNC 1000 10 8 f\n1000 10 7 0\n")
	writeSym(t, root, "cfi", id, "MODULE Linux x86_64 "+id+" cfi\nFUNC 1000 10 0 g\n"+
		"STACK CFI INIT 1000 10 .cfa: $rsp 8 + .ra: .cfa -8 + ^\nSTACK CFI 1004 .cfa: $rsp 16 +\nbad line\n")
	d := breakpad.NewDirs(filepath.Join(root, "absent"), root)
	defer d.Close()

	if _, err := d.Load(symbols.Module{DebugFile: "other", DebugID: id}); !errors.Is(err, symbols.ErrNotFound) {
		t.Errorf("absent module: err = %v, want ErrNotFound", err)
	}
	if _, err := d.Load(symbols.Module{DebugFile: "../../etc/passwd", DebugID: id}); !errors.Is(err, symbols.ErrNotFound) {
		t.Errorf("escaping name: err = %v, want ErrNotFound", err)
	}

	s, err := d.Load(symbols.Module{DebugFile: "nocfi", DebugID: id})
	if err != nil {
		t.Fatal(err)
	}
	if s.CFI != nil || s.Lookup == nil || s.Win == nil || s.Corrupt {
		t.Errorf("nocfi: %+v; want lookups and STACK WIN only, not corrupt", s)
	}
	if sym, ok := s.Lookup.Lookup(0x1004, true); !ok || sym.Function != "f" || sym.File != "a.c" || sym.Line != 7 || !sym.HasLine {
		t.Errorf("Lookup = %+v, %v", sym, ok)
	}
	if w, ok := s.Win.StackWin(0x1004); !ok || !w.ParamSizeOnly || w.ParameterSize != 8 {
		t.Errorf("StackWin = %+v, %v; want the FUNC's parameter size", w, ok)
	}
	if again, _ := d.Load(symbols.Module{DebugFile: "nocfi", DebugID: id}); again != s {
		t.Error("the file was loaded twice")
	}

	s, err = d.Load(symbols.Module{DebugFile: "cfi", DebugID: id})
	if err != nil {
		t.Fatal(err)
	}
	if !s.Corrupt || s.CFI == nil {
		t.Fatalf("cfi: %+v; want CFI and the corrupt mark", s)
	}
	rules, ok := s.CFI.CFIRules(0x1008, nil)
	if !ok || len(rules) != 2 || rules[0] != ".cfa: $rsp 8 + .ra: .cfa -8 + ^" || rules[1] != ".cfa: $rsp 16 +" {
		t.Errorf("CFIRules = %q, %v", rules, ok)
	}
	if _, ok := s.CFI.CFIRules(0x2000, nil); ok {
		t.Error("CFIRules outside every INIT record reported rules")
	}

	// STACK records only: no lookups, so a later source of a chain gives them.
	writeSym(t, root, "stackonly", id, "MODULE Linux x86_64 "+id+" stackonly\nSTACK CFI INIT 1000 10 .cfa: $rsp 8 + .ra: .cfa -8 + ^\n")
	s, err = d.Load(symbols.Module{DebugFile: "stackonly", DebugID: id})
	if err != nil {
		t.Fatal(err)
	}
	if s.Lookup != nil || s.CFI == nil {
		t.Errorf("stackonly: %+v; want CFI and no lookups", s)
	}
}
