package symtest

import (
	"errors"
	"fmt"
	"sync"
	"testing"

	"github.com/gobreakpad/gobreakpad/symbols"
)

// Concurrent checks that src is safe for concurrent use, as the symbols.Source
// contract requires (run with -race): 8 goroutines load every module of mods
// at once, each in its own order, and ask the symbols they get at addrs
// (module-relative). Every goroutine must get the same answer for a module:
// the same kinds of information, corrupt mark and error kind (missing or
// unreadable), and the same lookups, CFI rules and STACK WIN records at
// addrs. It returns what each module's first load gave, in the order of
// mods.
func Concurrent(t testing.TB, src symbols.Source, mods []symbols.Module, addrs []uint64) []*symbols.Symbols {
	t.Helper()
	const workers = 8
	got := make([][]string, workers)
	syms := make([][]*symbols.Symbols, workers)
	var wg sync.WaitGroup
	for w := range workers {
		got[w] = make([]string, len(mods))
		syms[w] = make([]*symbols.Symbols, len(mods))
		wg.Add(1)
		go func() {
			defer wg.Done()
			for k := range mods {
				i := (k + w*len(mods)/workers) % len(mods)
				s, err := src.Load(mods[i])
				syms[w][i] = s
				got[w][i] = Describe(s, err, addrs)
			}
		}()
	}
	wg.Wait()
	for i, m := range mods {
		for w := 1; w < workers; w++ {
			if got[w][i] != got[0][i] {
				t.Errorf("%s %s: goroutine %d got\n%s\ngoroutine 0 got\n%s", m.DebugFile, m.DebugID, w, got[w][i], got[0][i])
			}
		}
	}
	return syms[0]
}

// Describe is what a load gave, as text to compare: the error's kind, or
// the kinds of information and the answers at addrs (module-relative).
func Describe(s *symbols.Symbols, err error, addrs []uint64) string {
	switch {
	case errors.Is(err, symbols.ErrNotFound):
		return "missing"
	case err != nil:
		return "unreadable"
	case s.Empty():
		return "empty"
	}
	out := fmt.Sprintf("lookups %v, CFI %v, STACK WIN %v, corrupt %v\n", s.Lookup != nil, s.CFI != nil, s.Win != nil, s.Corrupt)
	for _, a := range addrs {
		if s.Lookup != nil {
			sym, ok := s.Lookup.Lookup(a, true)
			out += fmt.Sprintf("%#x: %v %#v\n", a, ok, sym)
		}
		if s.CFI != nil {
			r, ok := s.CFI.CFIRules(a, nil)
			out += fmt.Sprintf("%#x: CFI %v %q\n", a, ok, r)
		}
		if s.Win != nil {
			w, ok := s.Win.StackWin(a)
			out += fmt.Sprintf("%#x: WIN %v %#v\n", a, ok, w)
		}
	}
	return out
}
