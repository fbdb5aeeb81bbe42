package gsym_test

import (
	"fmt"
	"path/filepath"
	"testing"

	"github.com/gobreakpad/gobreakpad/symbols"
	symgsym "github.com/gobreakpad/gobreakpad/symbols/gsym"
	"github.com/gobreakpad/gobreakpad/symbols/symtest"
)

// TestDirsConcurrent loads GSYM files, from a store and by name, from
// several goroutines at once (run with -race).
func TestDirsConcurrent(t *testing.T) {
	store, flat := t.TempDir(), t.TempDir()
	const id = "000102030405060708090A0B0C0D0E0F0"
	var mods []symbols.Module
	for i := range 6 {
		name := fmt.Sprintf("prog%d", i)
		file(t, filepath.Join(store, name, id, name+".gsym"), "f"+name, nil)
		mods = append(mods, symbols.Module{DebugFile: name, DebugID: id})
		lib := fmt.Sprintf("lib%d.so", i)
		file(t, filepath.Join(flat, lib+".gsym"), "g"+lib, []byte{0xab, byte(i)})
		mods = append(mods, symbols.Module{CodeFile: "/usr/lib/" + lib, CodeID: fmt.Sprintf("ab%02x", i), DebugFile: lib, DebugID: id})
	}
	mods = append(mods, symbols.Module{DebugFile: "absent", DebugID: id})
	d := symgsym.NewDirs(store, flat)
	defer d.Close()
	first := symtest.Concurrent(t, d, mods, []uint64{0x112, 0x2000})
	for i, m := range mods[:len(mods)-1] {
		if s, _ := d.Load(m); s != first[i] || s == nil {
			t.Errorf("%s: loaded more than once", m.DebugFile)
		}
	}
}
