package symsrc

import (
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/gobreakpad/gobreakpad/symbols"
	symbreakpad "github.com/gobreakpad/gobreakpad/symbols/breakpad"
	"github.com/gobreakpad/gobreakpad/symbols/cache"
	"github.com/gobreakpad/gobreakpad/symbols/cfiindex"
	symsymcache "github.com/gobreakpad/gobreakpad/symbols/symcache"
)

// fastSym exercises what the fast path must answer as the .sym does: file
// names that symbolic would clean, inlined calls, PUBLIC records, CFI
// deltas (one outside its INIT's block), nested STACK WIN records of both
// types, parameter sizes and a corrupt record.
const fastSym = `MODULE windows x86 0123456789ABCDEF0123456789ABCDEF1 fast.pdb
FILE 0 ./src/../src/a.c
FILE 1 b.h
INLINE_ORIGIN 0 inl
FUNC 100 40 8 f
INLINE 0 12 1 0 110 10
100 10 10 0
110 10 3 1
120 20 11 0
FUNC 200 30 c g
200 30 20 0
PUBLIC 180 4 pub
PUBLIC 300 0 tail
STACK CFI INIT 100 40 .cfa: $esp 4 + .ra: .cfa 4 - ^
STACK CFI 101 .cfa: $esp 8 +
STACK CFI 104 $ebp: .cfa 8 - ^
STACK CFI INIT 200 30 .cfa: $esp 4 + .ra: .cfa 4 - ^
STACK CFI 110 .cfa: $esp 12 +
STACK CFI 210 .cfa: $esp 16 +
STACK WIN 4 100 40 1 0 8 0 10 0 1 $T0 $ebp = $eip $T0 4 + ^ =
STACK WIN 4 108 8 1 0 8 0 10 0 1 $T1 $ebp =
STACK WIN 0 200 20 1 0 c 4 10 0 0 1
STACK WIN 0 210 8 1 0 c 4 10 0 0 0
FUNC zz bad
`

func TestFastPath(t *testing.T) {
	store, cdir := t.TempDir(), t.TempDir()
	m := symbols.Module{DebugFile: "fast.pdb", DebugID: "0123456789ABCDEF0123456789ABCDEF1"}
	sym := filepath.Join(store, "fast.pdb", m.DebugID, "fast.sym")
	if err := os.MkdirAll(filepath.Dir(sym), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(sym, []byte(fastSym), 0o644); err != nil {
		t.Fatal(err)
	}
	ref := symbreakpad.NewDirs(store)
	defer ref.Close()
	want, err := ref.Load(m)
	if err != nil {
		t.Fatal(err)
	}
	load := func() (*fastDirs, *symbols.Symbols) {
		d := newFastDirs(&cache.Cache{Dir: cdir}, store)
		s, err := d.Load(m)
		if err != nil {
			t.Fatal(err)
		}
		return d, s
	}
	cold, s := load()
	if _, ok := s.Lookup.(*symbreakpad.Table); !ok {
		t.Fatalf("cold load: lookups from %T, want the .sym", s.Lookup)
	}
	cold.Close() // writes the cache
	warm, s := load()
	if _, ok := s.Lookup.(*symsymcache.Table); !ok {
		t.Fatalf("warm load: lookups from %T, want the SymCache", s.Lookup)
	}
	if _, ok := s.CFI.(*cfiindex.Index); !ok {
		t.Fatalf("warm load: CFI from %T, want the index", s.CFI)
	}
	if s.Corrupt != want.Corrupt || !want.Corrupt {
		t.Errorf("corrupt = %v, want %v (true)", s.Corrupt, want.Corrupt)
	}
	for a := uint64(0); a < 0x340; a++ {
		for _, inl := range []bool{false, true} {
			g, gok := s.Lookup.Lookup(a, inl)
			w, wok := want.Lookup.Lookup(a, inl)
			if gok != wok || !reflect.DeepEqual(g, w) {
				t.Errorf("Lookup(%#x, %v) = %+v %v, want %+v %v", a, inl, g, gok, w, wok)
			}
		}
		g, gok := s.CFI.CFIRules(a, nil)
		w, wok := want.CFI.CFIRules(a, nil)
		if gok != wok || !reflect.DeepEqual(g, w) {
			t.Errorf("CFIRules(%#x) = %q %v, want %q %v", a, g, gok, w, wok)
		}
		gw, gok := s.Win.StackWin(a)
		ww, wok := want.Win.StackWin(a)
		if gok != wok || gw != ww {
			t.Errorf("StackWin(%#x) = %+v %v, want %+v %v", a, gw, gok, ww, wok)
		}
	}
	warm.Close()

	// A changed .sym (another modification time) is read again and the
	// cache rewritten.
	later := time.Now().Add(time.Hour)
	if err := os.Chtimes(sym, later, later); err != nil {
		t.Fatal(err)
	}
	stale, s := load()
	if _, ok := s.Lookup.(*symbreakpad.Table); !ok {
		t.Errorf("stale cache used: lookups from %T", s.Lookup)
	}
	stale.Close()
	again, s := load()
	if _, ok := s.Lookup.(*symsymcache.Table); !ok {
		t.Errorf("cache not rewritten: lookups from %T", s.Lookup)
	}
	again.Close()
}

// TestFastPathHighAddresses: a .sym with addresses at or above 4 GiB keeps
// its lookups from the .sym (a SymCache cannot hold them); only the index
// is written, and says so.
func TestFastPathHighAddresses(t *testing.T) {
	store, cdir := t.TempDir(), t.TempDir()
	m := symbols.Module{DebugFile: "high", DebugID: "0123456789ABCDEF0123456789ABCDEF0"}
	sym := filepath.Join(store, "high", m.DebugID, "high.sym")
	os.MkdirAll(filepath.Dir(sym), 0o755)
	text := "MODULE Linux x86_64 0123456789ABCDEF0123456789ABCDEF0 high\nFILE 0 a.c\nFUNC 100000000 10 0 f\n100000000 10 1 0\nSTACK CFI INIT 100000000 10 .cfa: $rsp 8 + .ra: .cfa 8 - ^\n"
	if err := os.WriteFile(sym, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 2; i++ {
		d := newFastDirs(&cache.Cache{Dir: cdir}, store)
		s, err := d.Load(m)
		if err != nil {
			t.Fatal(err)
		}
		if sym, ok := s.Lookup.Lookup(0x100000004, false); !ok || sym.Function != "f" {
			t.Errorf("pass %d: Lookup = %+v %v, want f", i, sym, ok)
		}
		if _, ok := s.Lookup.(*symbreakpad.Table); !ok {
			t.Errorf("pass %d: lookups from %T, want the .sym", i, s.Lookup)
		}
		d.Close()
	}
	if _, err := os.Stat(filepath.Join(cdir, "high", m.DebugID, "high.symc")); err == nil {
		t.Error("a SymCache was written for addresses above 4 GiB")
	}
	x, err := cfiindex.Open(filepath.Join(cdir, "high", m.DebugID, "high.cfidx"))
	if err != nil {
		t.Fatal(err)
	}
	defer x.Close()
	if x.Flags&cfiindex.FlagNoLookups == 0 {
		t.Error("index does not say the lookups need the .sym")
	}
}

// TestWriteFast: the fast forms WriteFast makes ahead of any walk are
// what the fast path then answers from, without parsing the .sym.
func TestWriteFast(t *testing.T) {
	store, cdir := t.TempDir(), t.TempDir()
	m := symbols.Module{DebugFile: "fast.pdb", DebugID: "0123456789ABCDEF0123456789ABCDEF1"}
	p := filepath.Join(store, "fast.pdb", m.DebugID, "fast.sym")
	os.MkdirAll(filepath.Dir(p), 0o755)
	if err := os.WriteFile(p, []byte(fastSym), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := WriteFast(cdir, p, m.DebugFile, m.DebugID); err != nil {
		t.Fatal(err)
	}
	d := newFastDirs(&cache.Cache{Dir: cdir}, store)
	defer d.Close()
	s, err := d.Load(m)
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := s.Lookup.(*symsymcache.Table); !ok {
		t.Errorf("lookups from %T, want the SymCache WriteFast wrote", s.Lookup)
	}
	if _, ok := s.CFI.(*cfiindex.Index); !ok {
		t.Errorf("unwind rules from %T, want the index WriteFast wrote", s.CFI)
	}
	if err := WriteFast(cdir, p, "..", m.DebugID); err == nil {
		t.Error("WriteFast took the name \"..\"")
	}
}

// TestReplacedSym: a module's .sym replaced in the store (a symbol
// server's upload of changed symbols for the same debug id) is seen by a
// Sources that loaded the old one, at most recheck later: first the new
// .sym itself, then, once its fast forms are written, those. Symbols
// handed out before stay usable.
func TestReplacedSym(t *testing.T) {
	old := recheck
	recheck = 0
	defer func() { recheck = old }()
	store, cdir := t.TempDir(), t.TempDir()
	m := symbols.Module{DebugFile: "fast.pdb", DebugID: "0123456789ABCDEF0123456789ABCDEF1"}
	sym := filepath.Join(store, "fast.pdb", m.DebugID, "fast.sym")
	os.MkdirAll(filepath.Dir(sym), 0o755)
	put := func(name string) {
		t.Helper()
		tmp := sym + ".tmp"
		if err := os.WriteFile(tmp, []byte(strings.Replace(fastSym, "FUNC 100 40 8 f\n", "FUNC 100 40 8 "+name+"\n", 1)), 0o644); err != nil {
			t.Fatal(err)
		}
		if err := os.Rename(tmp, sym); err != nil {
			t.Fatal(err)
		}
	}
	put("first")
	s, err := Open(Config{Paths: []string{store}, CacheDir: cdir})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	name := func(syms *symbols.Symbols) string {
		t.Helper()
		sy, ok := syms.Lookup.Lookup(0x104, false)
		if !ok {
			t.Fatal("no symbol at 0x104")
		}
		return sy.Function
	}
	load := func() *symbols.Symbols {
		t.Helper()
		syms, err := s.Load(m)
		if err != nil {
			t.Fatal(err)
		}
		return syms
	}
	first := load()
	if got := name(first); got != "first" {
		t.Fatalf("first load: %q", got)
	}
	if got := name(load()); got != "first" {
		t.Errorf("unchanged: %q", got)
	}
	put("second")
	second := load()
	if got := name(second); got != "second" {
		t.Errorf("after the .sym was replaced: %q, want second", got)
	}
	if got := name(first); got != "first" {
		t.Errorf("the symbols handed out before: %q", got)
	}
	put("third")
	if err := WriteFast(cdir, sym, m.DebugFile, m.DebugID); err != nil {
		t.Fatal(err)
	}
	third := load()
	if _, ok := third.Lookup.(*symsymcache.Table); !ok {
		t.Errorf("after the fast forms were written: lookups from %T, want the SymCache", third.Lookup)
	}
	if got := name(third); got != "third" {
		t.Errorf("after the fast forms were written: %q, want third", got)
	}
	if got := name(second); got != "second" {
		t.Errorf("the symbols handed out before: %q", got)
	}
}

// TestTraceBounded: a Sources asked for ever more modules, each many
// times (crashd's processor over months), keeps a bounded trace.
func TestTraceBounded(t *testing.T) {
	defer func(n int) { maxTraced = n }(maxTraced)
	maxTraced = 100
	s, err := Open(Config{Paths: []string{t.TempDir()}, CacheDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	for i := range maxTraced + 50 {
		m := symbols.Module{DebugFile: fmt.Sprintf("m%d.pdb", i), DebugID: "0123456789ABCDEF0123456789ABCDEF1"}
		s.Load(m)
		if i == 0 {
			for range 100 {
				s.Load(m)
			}
		}
	}
	s.trace.mu.Lock()
	defer s.trace.mu.Unlock()
	if n := len(s.trace.recs); n > maxTraced || n < maxTraced*9/10 || len(s.trace.order) != n {
		t.Errorf("trace holds %d records, %d in order; want %d to %d", n, len(s.trace.order), maxTraced*9/10, maxTraced)
	}
	if _, ok := s.trace.recs[symbols.Module{DebugFile: "m0.pdb", DebugID: "0123456789ABCDEF0123456789ABCDEF1"}]; ok {
		t.Error("the oldest module's record was kept")
	}
	for m, r := range s.trace.recs {
		if len(r.from) > maxAnswers || len(r.reasons) > maxAnswers {
			t.Errorf("%v: %d answers", m, len(r.from)+len(r.reasons))
		}
	}
}

// TestFillInstallFast: fast forms made on one machine (WriteFast) and
// installed on another beside a copy of the .sym (InstallFast, through
// Config.Fill as crashd's blob store fills them) answer lookups there
// without the .sym being parsed; fast forms of another .sym are refused.
func TestFillInstallFast(t *testing.T) {
	up, upCache := t.TempDir(), t.TempDir()
	m := symbols.Module{DebugFile: "fast.pdb", DebugID: "0123456789ABCDEF0123456789ABCDEF1"}
	rel := filepath.Join("fast.pdb", m.DebugID, "fast.sym")
	sym := filepath.Join(up, rel)
	os.MkdirAll(filepath.Dir(sym), 0o755)
	if err := os.WriteFile(sym, []byte(fastSym), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := WriteFast(upCache, sym, m.DebugFile, m.DebugID); err != nil {
		t.Fatal(err)
	}
	symc, idx, err := FastFiles(upCache, m.DebugFile, m.DebugID)
	if err != nil {
		t.Fatal(err)
	}
	store, cdir := t.TempDir(), t.TempDir()
	fills := 0
	fill := func(mod symbols.Module) error {
		fills++
		if mod != m {
			return fmt.Errorf("%w: %v", symbols.ErrNotFound, mod)
		}
		dst := filepath.Join(store, rel)
		os.MkdirAll(filepath.Dir(dst), 0o755)
		if err := os.WriteFile(dst, []byte(fastSym), 0o644); err != nil {
			return err
		}
		sf, _ := os.Open(symc)
		xf, _ := os.Open(idx)
		defer sf.Close()
		defer xf.Close()
		return InstallFast(cdir, dst, mod.DebugFile, mod.DebugID, sf, xf, 1<<20)
	}
	s, err := Open(Config{Paths: []string{store}, CacheDir: cdir, Fill: fill, LocalMissTTL: time.Minute})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	got, err := s.Load(m)
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := got.Lookup.(*symsymcache.Table); !ok {
		t.Errorf("lookups from %T, want the installed SymCache", got.Lookup)
	}
	if _, err := s.Load(symbols.Module{DebugFile: "other.pdb", DebugID: "AB"}); err == nil {
		t.Error("a module the filler lacks: found")
	}
	// A miss is remembered: the filler is not asked again until forgotten.
	s.Load(symbols.Module{DebugFile: "other.pdb", DebugID: "AB"})
	if fills != 2 {
		t.Errorf("%d fills, want 2 (the miss remembered)", fills)
	}
	s.ForgetMisses("other.pdb", "AB")
	s.Load(symbols.Module{DebugFile: "other.pdb", DebugID: "AB"})
	if fills != 3 {
		t.Errorf("%d fills after ForgetMisses, want 3", fills)
	}
	// Fast forms of another .sym (a different size) are not installed.
	other := filepath.Join(t.TempDir(), "x.sym")
	os.WriteFile(other, []byte(fastSym+"PUBLIC 400 0 more\n"), 0o644)
	sf, _ := os.Open(symc)
	xf, _ := os.Open(idx)
	defer sf.Close()
	defer xf.Close()
	c2 := t.TempDir()
	if err := InstallFast(c2, other, m.DebugFile, m.DebugID, sf, xf, 1<<20); err == nil {
		t.Error("fast forms of another .sym installed")
	}
	if p, _, _ := FastFiles(c2, m.DebugFile, m.DebugID); fileExists(p) {
		t.Error("refused fast forms left in the cache")
	}
}

func fileExists(p string) bool { _, err := os.Stat(p); return err == nil }
