package breakpad_test

import (
	"fmt"
	"testing"

	"github.com/gobreakpad/gobreakpad/symbols"
	"github.com/gobreakpad/gobreakpad/symbols/breakpad"
	"github.com/gobreakpad/gobreakpad/symbols/symtest"
)

// TestDirsConcurrent loads a store's modules from several goroutines at
// once (run with -race): the same answers, each file opened once.
func TestDirsConcurrent(t *testing.T) {
	root := t.TempDir()
	const id = "000102030405060708090A0B0C0D0E0F0"
	var mods []symbols.Module
	for i := range 12 {
		name := fmt.Sprintf("lib%d", i)
		writeSym(t, root, name, id, fmt.Sprintf("MODULE Linux x86_64 %s %s\nFILE 0 a.c\nFUNC 1000 10 8 f%d\n1000 10 7 0\n"+
			"STACK CFI INIT 1000 10 .cfa: $rsp 8 + .ra: .cfa -8 + ^\nSTACK WIN 4 1000 10 0 0 0 0 0 0 1 $eip\n", id, name, i))
		mods = append(mods, symbols.Module{DebugFile: name, DebugID: id})
	}
	mods = append(mods, symbols.Module{DebugFile: "absent", DebugID: id}, symbols.Module{DebugFile: "../escape", DebugID: id})
	d := breakpad.NewDirs(root)
	defer d.Close()
	first := symtest.Concurrent(t, d, mods, []uint64{0x1004, 0x2000})
	for i, m := range mods[:12] {
		if s, _ := d.Load(m); s != first[i] || s == nil {
			t.Errorf("%s: loaded more than once", m.DebugFile)
		}
	}
}
