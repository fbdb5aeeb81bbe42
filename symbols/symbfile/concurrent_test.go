package symbfile

import (
	"testing"

	"github.com/klauspost/compress/zstd"

	"github.com/gobreakpad/gobreakpad/symbols"
	"github.com/gobreakpad/gobreakpad/symbols/symtest"
)

// TestDirsConcurrent loads symbfiles, plain and compressed, from several
// goroutines at once (run with -race).
func TestDirsConcurrent(t *testing.T) {
	plain := testSymbfile(t)
	enc, err := zstd.NewWriter(nil)
	if err != nil {
		t.Fatal(err)
	}
	packed := writeStore(t, ".symbfile.zst", enc.EncodeAll(plain, nil))
	d := NewDirs(writeStore(t, ".symbfile", plain), packed)
	mods := []symbols.Module{{DebugFile: testDebug, DebugID: testID}, {DebugFile: "absent.so", DebugID: testID}}
	first := symtest.Concurrent(t, d, mods, []uint64{0x1000, 0x1008, 0x2000})
	if s, _ := d.Load(mods[0]); s != first[0] || s == nil {
		t.Error("loaded more than once")
	}
	// The compressed file alone.
	d = NewDirs(packed)
	symtest.Concurrent(t, d, mods, []uint64{0x1008})
}
