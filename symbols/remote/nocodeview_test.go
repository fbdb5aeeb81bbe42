package remote

import (
	"net/http"
	"os"
	"testing"

	"github.com/gobreakpad/gobreakpad/symbols/pdbsyms"
	"github.com/gobreakpad/gobreakpad/symbols/symtest"
)

// TestSymSrvWithoutCodeView: a module without a debug file (Wine's
// kernelbase.dll, a PE without a CodeView record; testdata/truth/wincxx)
// is fetched from a symbol server by its code file and code identifier
// (NAME.dll/TIMESTAMPSIZE/NAME.dll) and converted from the PE alone: its
// exports and its unwind rules.
func TestSymSrvWithoutCodeView(t *testing.T) {
	pe, err := os.ReadFile(symtest.WineKernelbasePath)
	if err != nil {
		t.Fatal(err)
	}
	m := symtest.WineKernelbase
	store := t.TempDir()
	putFile(t, pe, store, "kernelbase.dll", m.CodeID, "kernelbase.dll")
	srv := serve(t, http.FileServer(http.Dir(store)))
	c := newClient(t)
	s := NewSymSrv(srv.URL, c)
	conv := &pdbsyms.Converter{Cache: c.Cache}
	defer conv.Close()
	s.Convert = conv.Convert
	syms, err := s.Load(m)
	if err != nil {
		t.Fatal(err)
	}
	if sy, ok := syms.Lookup.Lookup(0x13d7e, false); !ok || sy.Function != "RaiseException" {
		t.Errorf("0x13d7e is %q, want RaiseException", sy.Function)
	}
	if syms.CFI == nil {
		t.Fatal("no unwind rules")
	}
	if _, ok := syms.CFI.CFIRules(0x13d7e, nil); !ok {
		t.Error("no unwind rule covers RaiseException + 0x4e")
	}
	onlyCache(t, c)
}
