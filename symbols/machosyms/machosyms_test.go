package machosyms

import (
	"errors"
	"strings"
	"testing"

	"github.com/gobreakpad/gobreakpad/internal/testkit/corpus"
	"github.com/gobreakpad/gobreakpad/symbols"
	"github.com/gobreakpad/gobreakpad/symbols/cache"
)

// TestDirs finds a module's binary and dSYM by UUID in a folder of Mach-O
// files: FUNC and line records from the dSYM, STACK CFI from the binary's
// compact unwind, converted once into the cache.
func TestDirs(t *testing.T) {
	dir := corpus.File(t, "macos/built")
	c := &cache.Cache{Dir: t.TempDir()}
	d := NewDirs(c, dir)
	defer d.Close()
	m := symbols.Module{CodeFile: "/Applications/Hello.app/Contents/MacOS/hello-x86_64", DebugFile: "hello-x86_64", DebugID: "4C4C44A555553144A1E6AD1402E0F3C70"}
	s, err := d.Load(m)
	if err != nil {
		t.Fatal(err)
	}
	if sym, ok := s.Lookup.Lookup(0x3f0, true); !ok || sym.Function != "leaf" || sym.Line != 6 || len(sym.Inlines) != 2 || !strings.HasSuffix(sym.File, "hello.c") {
		t.Errorf("0x3f0: %+v, %v", sym, ok)
	}
	rules, ok := s.CFI.CFIRules(0x3f0, nil)
	if !ok || !strings.Contains(strings.Join(rules, " "), ".cfa: $rbp 16 +") {
		t.Errorf("0x3f0: rules %q, %v (want the compact unwind's RBP frame)", rules, ok)
	}
	if _, ok := c.Lookup("macho", m.DebugID, ConvertedName); !ok {
		t.Error("the converted form is not in the cache")
	}
	// arm64 from the universal files, by its UUID.
	s, err = d.Load(symbols.Module{CodeFile: "hello-fat", DebugFile: "hello-fat", DebugID: "4C4C443B55553144A1DB54C239A5B9950"})
	if err != nil {
		t.Fatal(err)
	}
	if sym, ok := s.Lookup.Lookup(0x470, false); !ok || sym.Function != "middle" {
		t.Errorf("arm64 0x470: %+v, %v", sym, ok)
	}
	for _, m := range []symbols.Module{
		{CodeFile: "x", DebugFile: "x", DebugID: "00112233445566778899AABBCCDDEEFF0"},
		{CodeFile: `c:\x.dll`, DebugFile: "x.pdb", DebugID: "00112233445566778899AABBCCDDEEFF1"},
		{CodeFile: "/usr/lib/libc.so.6", CodeID: "0011", DebugID: "0011"},
		{CodeFile: "/usr/lib/libc.so.6", CodeID: "a5444c4c5555443114ade6a1c7f3e00212345678", DebugID: "4C4C44A555553144A1E6AD1402E0F3C70"},
	} {
		if _, err := d.Load(m); !errors.Is(err, symbols.ErrNotFound) {
			t.Errorf("%+v: %v", m, err)
		}
	}
}
