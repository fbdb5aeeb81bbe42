package symcache

import (
	"testing"

	"github.com/gobreakpad/gobreakpad/symbols"
	"github.com/gobreakpad/gobreakpad/symbols/symtest"
)

// TestDirsConcurrent loads SymCache files from several goroutines at once
// (run with -race): one per root, and one whose debug id is not the
// module's.
func TestDirsConcurrent(t *testing.T) {
	d := NewDirs(writeStore(t, testID, testID), writeStore(t, otherID, otherID), writeStore(t, "0000000000000000000000000000000A0", testID))
	defer d.Close()
	mods := []symbols.Module{
		{DebugFile: testDebug, DebugID: testID},
		{DebugFile: testDebug, DebugID: otherID},
		{DebugFile: testDebug, DebugID: "0000000000000000000000000000000A0"},
		{DebugFile: "absent.pdb", DebugID: testID},
	}
	first := symtest.Concurrent(t, d, mods, []uint64{0x1004, 0x2000})
	for i, m := range mods[:2] {
		if s, _ := d.Load(m); s != first[i] || s == nil {
			t.Errorf("%s %s: loaded more than once", m.DebugFile, m.DebugID)
		}
	}
}
