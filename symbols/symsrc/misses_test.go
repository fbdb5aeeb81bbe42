package symsrc

import (
	"errors"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/gobreakpad/gobreakpad/symbols"
)

// TestLocalMisses: with LocalMissTTL, a module the store lacks stays a miss
// after its .sym is stored, until ForgetMisses (of that module, or of all)
// or until the TTL has passed; without it the .sym is found at once. A
// module found is not remembered as a miss, and the memory is bounded.
func TestLocalMisses(t *testing.T) {
	const id = "0123456789ABCDEF0123456789ABCDEF0"
	m := symbols.Module{DebugFile: "late.so", DebugID: id}
	other := symbols.Module{DebugFile: "other.so", DebugID: id}
	store := func(t *testing.T, dir string, mod symbols.Module) {
		p := filepath.Join(dir, mod.DebugFile, id, mod.DebugFile+".sym")
		os.MkdirAll(filepath.Dir(p), 0o755)
		text := "MODULE Linux x86_64 " + id + " " + mod.DebugFile + "\nFUNC 1000 10 0 f\n1000 10 1 0\nFILE 0 a.c\n"
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	open := func(t *testing.T, ttl time.Duration) (*Sources, string, *time.Time) {
		dir := t.TempDir()
		s, err := Open(Config{Paths: []string{dir}, CacheDir: t.TempDir(), LocalMissTTL: ttl})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { s.Close() })
		clock := time.Date(2026, 11, 26, 12, 0, 0, 0, time.UTC)
		if s.misses != nil {
			s.misses.now = func() time.Time { return clock }
		}
		return s, dir, &clock
	}
	found := func(s *Sources, mod symbols.Module) bool {
		syms, err := s.Load(mod)
		if err != nil && !errors.Is(err, symbols.ErrNotFound) {
			t.Fatalf("Load %s: %v", mod.DebugFile, err)
		}
		return err == nil && syms.Lookup != nil
	}

	t.Run("off", func(t *testing.T) {
		s, dir, _ := open(t, 0)
		if found(s, m) {
			t.Fatal("found before it was stored")
		}
		store(t, dir, m)
		if !found(s, m) {
			t.Fatal("not found once stored, without LocalMissTTL")
		}
	})
	t.Run("forget module", func(t *testing.T) {
		s, dir, _ := open(t, time.Minute)
		if found(s, m) || found(s, other) {
			t.Fatal("found before it was stored")
		}
		store(t, dir, m)
		store(t, dir, other)
		if found(s, m) {
			t.Fatal("a remembered miss was looked up again")
		}
		s.ForgetMisses("LATE.SO", id) // case-insensitive
		if !found(s, m) {
			t.Fatal("not found after ForgetMisses")
		}
		if found(s, other) {
			t.Fatal("ForgetMisses of one module forgot another's miss")
		}
		s.ForgetMisses("", "")
		if !found(s, other) {
			t.Fatal("not found after ForgetMisses of all")
		}
	})
	t.Run("ttl", func(t *testing.T) {
		s, dir, clock := open(t, time.Minute)
		if found(s, m) {
			t.Fatal("found before it was stored")
		}
		store(t, dir, m)
		*clock = clock.Add(59 * time.Second)
		if found(s, m) {
			t.Fatal("a remembered miss was looked up again before its TTL")
		}
		*clock = clock.Add(time.Second)
		if !found(s, m) {
			t.Fatal("not found after the TTL")
		}
	})
	t.Run("bounded", func(t *testing.T) {
		defer func(n int) { maxMisses = n }(maxMisses)
		maxMisses = 10
		s, _, _ := open(t, time.Minute)
		for i := range 100 {
			found(s, symbols.Module{DebugFile: "x.so", DebugID: string(rune('A'+i%26)) + id[1:]})
			if n := len(s.misses.seen); n > maxMisses {
				t.Fatalf("%d misses remembered, bound %d", n, maxMisses)
			}
		}
	})
}
