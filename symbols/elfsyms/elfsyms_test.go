package elfsyms

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/gobreakpad/gobreakpad/dumpsyms"
	"github.com/gobreakpad/gobreakpad/dumpsyms/elf"
	"github.com/gobreakpad/gobreakpad/internal/corpus"
	"github.com/gobreakpad/gobreakpad/moduleid"
	"github.com/gobreakpad/gobreakpad/symbols"
	"github.com/gobreakpad/gobreakpad/symbols/breakpad"
	"github.com/gobreakpad/gobreakpad/symbols/cache"
	"github.com/gobreakpad/gobreakpad/symfile"
)

func buildID(t *testing.T, path string) string {
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

// TestDirs finds a stripped binary by name in a folder and its debug file in
// a .build-id tree (Debian's layout): the symbols equal the unstripped
// build's.
func TestDirs(t *testing.T) {
	dir := corpus.File(t, "elf/x64-dw4")
	id := buildID(t, filepath.Join(dir, "buildid/deep_chain"))
	c := &cache.Cache{Dir: t.TempDir()}
	d := NewDirs(c, filepath.Join(dir, "buildid"), filepath.Join(dir, "buildid/debug"))
	defer d.Close()
	m := symbols.Module{CodeFile: "/usr/bin/deep_chain", CodeID: id, DebugFile: "deep_chain", DebugID: "X"}
	got, err := d.Load(m)
	if err != nil {
		t.Fatal(err)
	}
	full, err := elf.Dump(filepath.Join(dir, "full/deep_chain"), dumpsyms.Options{Inlines: true})
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	full.Write(&buf)
	tab, err := symfile.Parse(buf.Bytes())
	if err != nil {
		t.Fatal(err)
	}
	want := breakpad.Symbols(tab)
	lines := 0
	for rel := uint64(0); rel < 0x3000; rel++ {
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
		if g.HasLine {
			lines++
		}
	}
	if lines == 0 {
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
