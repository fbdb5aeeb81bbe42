package elfsyms

import (
	"errors"
	"path/filepath"
	"testing"

	"github.com/gobreakpad/gobreakpad/internal/testkit/corpus"
	"github.com/gobreakpad/gobreakpad/symbols"
	"github.com/gobreakpad/gobreakpad/symbols/cache"
	"github.com/gobreakpad/gobreakpad/symbols/symtest"
)

// TestDirs finds a stripped binary by name in a folder and its debug file in
// a .build-id tree (Debian's layout): the symbols equal the unstripped
// build's.
func TestDirs(t *testing.T) {
	dir := corpus.File(t, "elf/x64-dw4")
	id := symtest.BuildID(t, filepath.Join(dir, "buildid/deep_chain"))
	c := &cache.Cache{Dir: t.TempDir()}
	d := NewDirs(c, filepath.Join(dir, "buildid"), filepath.Join(dir, "buildid/debug"))
	defer d.Close()
	m := symbols.Module{CodeFile: "/usr/bin/deep_chain", CodeID: id, DebugFile: "deep_chain", DebugID: "X"}
	got, err := d.Load(m)
	if err != nil {
		t.Fatal(err)
	}
	if symtest.Same(t, got, symtest.ELF(t, filepath.Join(dir, "full/deep_chain")), 0x3000) == 0 {
		t.Fatal("no line found: nothing compared")
	}
	if _, ok := c.Lookup("buildid", id, ConvertedName); !ok {
		t.Error("the converted form is not in the cache")
	}

	// Not found: another build ID, a PE module, a name leaving the folder.
	for _, m := range []symbols.Module{
		{CodeFile: "/usr/bin/deep_chain", CodeID: "00112233445566778899aabbccddeeff00112233"},
		{CodeFile: `c:\x.dll`, CodeID: "5A3B2C1D12000", DebugFile: "x.pdb"},
		{CodeFile: "/x/..", CodeID: "00112233445566778899aabbccddeeff00112234"},
	} {
		if _, err := d.Load(m); !errors.Is(err, symbols.ErrNotFound) {
			t.Errorf("%+v: %v", m, err)
		}
	}
}
