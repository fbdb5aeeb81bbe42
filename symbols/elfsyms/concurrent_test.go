package elfsyms

import (
	"path/filepath"
	"testing"

	"github.com/gobreakpad/gobreakpad/internal/testkit/corpus"
	"github.com/gobreakpad/gobreakpad/symbols"
	"github.com/gobreakpad/gobreakpad/symbols/cache"
	"github.com/gobreakpad/gobreakpad/symbols/symtest"
)

// TestDirsConcurrent loads three stripped binaries with their .build-id
// debug files from several goroutines at once (run with -race): each is
// converted once, and all get the same answers.
func TestDirsConcurrent(t *testing.T) {
	dir := corpus.File(t, "elf/x64-dw4")
	var mods []symbols.Module
	for _, name := range []string{"deep_chain", "inline_chain", "libshapes.so"} {
		id := symtest.BuildID(t, filepath.Join(dir, "buildid", name))
		mods = append(mods, symbols.Module{CodeFile: "/usr/bin/" + name, CodeID: id, DebugFile: name, DebugID: "X"})
	}
	mods = append(mods, symbols.Module{CodeFile: "/usr/bin/other", CodeID: "00112233445566778899aabbccddeeff00112233"})
	d := NewDirs(&cache.Cache{Dir: t.TempDir()}, filepath.Join(dir, "buildid"), filepath.Join(dir, "buildid/debug"))
	defer d.Close()
	first := symtest.Concurrent(t, d, mods, []uint64{0x1100, 0x1200, 0x1300})
	for i, m := range mods[:3] {
		if first[i].Empty() {
			t.Errorf("%s: no symbols", m.DebugFile)
		}
		if s, _ := d.Load(m); s != first[i] {
			t.Errorf("%s: loaded more than once", m.DebugFile)
		}
	}
}
