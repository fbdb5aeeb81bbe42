package symsrc

import (
	"io/fs"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gobreakpad/gobreakpad/internal/testkit/corpus"
	"github.com/gobreakpad/gobreakpad/symbols"
	"github.com/gobreakpad/gobreakpad/symbols/symtest"
)

// TestConcurrent loads the modules of a corpus store through the programs'
// chain (every local format's store, the fast path of a named cache, the
// -v trace) from several goroutines at once, twice: cold (the .sym files
// read, converted into the cache on Close) and warm (the cache's SymCache
// and unwind index read). Run with -race. Every goroutine gets the same
// answers, and the warm chain gives the cold one's.
func TestConcurrent(t *testing.T) {
	store := corpus.File(t, "breakpad/processor/symbols")
	var mods []symbols.Module
	filepath.WalkDir(store, func(p string, d fs.DirEntry, err error) error {
		if err == nil && strings.HasSuffix(p, ".sym") && !strings.Contains(p, "linux_inline") && !strings.Contains(p, "microdump") {
			rel, _ := filepath.Rel(store, p)
			e := strings.Split(rel, string(filepath.Separator))
			mods = append(mods, symbols.Module{DebugFile: e[0], DebugID: e[1]})
		}
		return nil
	})
	mods = append(mods, symbols.Module{DebugFile: "nothere.pdb", DebugID: "0123456789ABCDEF0123456789ABCDEF1"})
	addrs := []uint64{0x1000, 0x1100, 0x1200, 0x2000, 0x10000}
	cacheDir := t.TempDir()
	var answers [2][]string
	for round := range answers {
		s, err := Open(Config{Paths: []string{store}, CacheDir: cacheDir})
		if err != nil {
			t.Fatal(err)
		}
		first := symtest.Concurrent(t, s, mods, addrs)
		for i, sy := range first {
			answers[round] = append(answers[round], symtest.Describe(sy, nil, addrs))
			if i < len(mods)-1 && sy.Empty() {
				t.Errorf("%s: no symbols", mods[i].DebugFile)
			}
		}
		if err := s.Close(); err != nil {
			t.Fatal(err)
		}
	}
	for i := range mods {
		if answers[0][i] != answers[1][i] {
			t.Errorf("%s: the warm cache answers\n%s\nthe .sym answered\n%s", mods[i].DebugFile, answers[1][i], answers[0][i])
		}
	}
}
