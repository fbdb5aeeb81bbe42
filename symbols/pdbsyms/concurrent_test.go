package pdbsyms

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/gobreakpad/gobreakpad/internal/testkit/corpus"
	"github.com/gobreakpad/gobreakpad/symbols"
	"github.com/gobreakpad/gobreakpad/symbols/cache"
	"github.com/gobreakpad/gobreakpad/symbols/symtest"
)

// TestDirsConcurrent loads a store tree's PDB (from its CAB form) and PE
// from several goroutines at once (run with -race): each is extracted and
// converted once, and all get the same answers.
func TestDirsConcurrent(t *testing.T) {
	win := filepath.Join(corpus.Dir(t), "windows")
	peOnly := filepath.Join(win, "breakpad", "pe_only_symbol_test.dll")
	basic := filepath.Join(win, "mozilla", "basic32.pd_")
	basicID := "34060D222DBB44E5AA72243CE8326C2F2"
	for _, p := range []string{peOnly, basic} {
		if _, err := os.Stat(p); err != nil {
			t.Skip(err)
		}
	}
	tree := t.TempDir()
	link(t, basic, tree, "basic32.pdb", basicID, "basic32.pd_")
	link(t, peOnly, tree, "pe_only_symbol_test.dll", "5C8AD05F12000", "pe_only_symbol_test.dll")
	mods := []symbols.Module{
		{DebugFile: "basic32.pdb", DebugID: basicID, CodeFile: "basic32.dll"},
		{DebugFile: "pe_only_symbol_test.pdb", DebugID: "2A5EAB481FAB4A17A9761CDC14FE531A1",
			CodeFile: `C:\app\pe_only_symbol_test.dll`, CodeID: "5C8AD05F12000"},
		{DebugFile: "basic32.pdb", DebugID: "00000000000000000000000000000000A"},
	}
	conv := &Converter{Cache: &cache.Cache{Dir: t.TempDir()}}
	defer conv.Close()
	d := NewDirs(conv, tree)
	first := symtest.Concurrent(t, d, mods, []uint64{0x1000, 0x1010, 0x1100})
	for i, m := range mods[:2] {
		if first[i].Empty() {
			t.Errorf("%s: no symbols", m.DebugFile)
		}
		if s, _ := d.Load(m); s != first[i] {
			t.Errorf("%s: loaded more than once", m.DebugFile)
		}
	}
}
