package peexports

import (
	"bytes"
	"debug/pe"
	"os"
	"testing"

	"github.com/gobreakpad/gobreakpad/dumpsyms"
	"github.com/gobreakpad/gobreakpad/internal/testkit/corpus"
	"github.com/gobreakpad/gobreakpad/pe/unwindinfo"
)

// TestPEOnly checks Breakpad's output for a PE without PDB: byte-identical.
func TestPEOnly(t *testing.T) {
	path := corpus.File(t, "windows/breakpad/pe_only_symbol_test.dll")
	want, err := os.ReadFile(corpus.File(t, "windows/breakpad/pe_only_symbol_test.sym"))
	if err != nil {
		t.Fatal(err)
	}
	f, err := pe.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	s, err := Dump(f, path, Options{Style: unwindinfo.StyleBreakpad})
	if err != nil {
		t.Fatal(err)
	}
	var got bytes.Buffer
	if err := s.Write(&got); err != nil {
		t.Fatal(err)
	}
	want = bytes.ReplaceAll(want, []byte("\r\n"), []byte("\n"))
	if !bytes.Equal(got.Bytes(), want) {
		gl, wl := bytes.Split(got.Bytes(), []byte("\n")), bytes.Split(want, []byte("\n"))
		for i := 0; i < min(len(gl), len(wl)); i++ {
			if !bytes.Equal(gl[i], wl[i]) {
				t.Fatalf("line %d:\n got %s\nwant %s", i+1, gl[i], wl[i])
			}
		}
		t.Fatalf("%d lines, want %d", len(gl), len(wl))
	}
}

// TestModule checks MODULE and INFO CODE_ID of the corpus's PEs against
// their reference symbol files.
func TestModule(t *testing.T) {
	for _, c := range []struct{ pe, module, codeID string }{
		{"windows/mozilla/basic64.dll", "windows x86_64 D09EA7D6D2C24C1EBFFE78B0C866BB7F2 basic64.pdb", "5DDC1E998C000 basic64.dll"},
		{"windows/mozilla/basic-opt64.dll", "windows x86_64 2B02EEDFFB7C497B9F3A107E5193B3652 basic-opt64.pdb", "5DDC1E9E8B000 basic-opt64.dll"},
		{"windows/mozilla/basic32.dll", "windows x86 34060D222DBB44E5AA72243CE8326C2F2 basic32.pdb", "5DDC1E9A6C000 basic32.dll"},
		{"windows/symbolic/CrashWithException.exe", "windows x86_64 F535C5FB2AE84BB8AA206C30BE566C5A1 CrashWithException.pdb", "5C9E09599000 CrashWithException.exe"},
	} {
		path := corpus.File(t, c.pe)
		f, err := pe.Open(path)
		if err != nil {
			t.Fatal(err)
		}
		m, cid, err := Module(f, path)
		f.Close()
		if err != nil {
			t.Errorf("%s: %v", c.pe, err)
			continue
		}
		if got := m.OS + " " + m.Arch + " " + m.ID + " " + m.Name; got != c.module {
			t.Errorf("%s: MODULE %s, want %s", c.pe, got, c.module)
		}
		if got := cid.ID + " " + cid.File; got != c.codeID {
			t.Errorf("%s: INFO CODE_ID %s, want %s", c.pe, got, c.codeID)
		}
	}
}

// TestExports reads basic64.dll's exports (decorated C++ names) and
// mozwer.dll's (C names).
func TestExports(t *testing.T) {
	for _, c := range []struct {
		pe   string
		want map[uint64]string
		n    int
	}{
		{"windows/mozilla/basic64.dll", map[uint64]string{0x35ee: "A::A(A&&)", 0x2c07: "A::A(void)", 0x2bdf: "A::~A(void)", 0x2e28: "A::meth1(short, signed char)"}, 10},
		{"windows/mozilla/mozwer.dll", map[uint64]string{0x1000: "OutOfProcessExceptionEventCallback", 0x1380: "OutOfProcessExceptionEventDebuggerLaunchCallback"}, 3},
	} {
		f, err := pe.Open(corpus.File(t, c.pe))
		if err != nil {
			t.Fatal(err)
		}
		pubs, err := Exports(f)
		f.Close()
		if err != nil {
			t.Fatalf("%s: %v", c.pe, err)
		}
		if len(pubs) != c.n {
			t.Errorf("%s: %d exports, want %d: %v", c.pe, len(pubs), c.n, pubs)
		}
		for _, p := range pubs {
			if w, ok := c.want[p.Address]; ok && p.Name != w {
				t.Errorf("%s: %#x: %q, want %q", c.pe, p.Address, p.Name, w)
			}
		}
	}
}

// FuzzDump reads hostile PE files: never panics.
func FuzzDump(f *testing.F) {
	if b, err := os.ReadFile(corpus.Path() + "/windows/breakpad/pe_only_symbol_test.dll"); err == nil {
		f.Add(b)
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		pf, err := pe.NewFile(bytes.NewReader(b))
		if err != nil {
			return
		}
		Dump(pf, "x.dll", Options{Options: dumpsyms.Options{Multiple: true}})
		Exports(pf)
	})
}
