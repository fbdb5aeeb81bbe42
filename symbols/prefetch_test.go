package symbols_test

import (
	"errors"
	"fmt"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/gobreakpad/gobreakpad/symbols"
)

// gated is a source whose loads block until released, counting the loads
// of each module and the most running at once.
type gated struct {
	release chan struct{}
	mu      sync.Mutex
	calls   map[string]int
	cur     atomic.Int32
	peak    atomic.Int32
}

func (g *gated) Load(m symbols.Module) (*symbols.Symbols, error) {
	c := g.cur.Add(1)
	for {
		p := g.peak.Load()
		if c <= p || g.peak.CompareAndSwap(p, c) {
			break
		}
	}
	g.mu.Lock()
	g.calls[m.DebugFile]++
	g.mu.Unlock()
	<-g.release
	g.cur.Add(-1)
	if m.DebugFile == "missing" {
		return nil, fmt.Errorf("%s: %w", m.DebugFile, symbols.ErrNotFound)
	}
	return &symbols.Symbols{Lookup: named(m.DebugFile)}, nil
}

func mods(n int) []symbols.Module {
	var out []symbols.Module
	for i := range n {
		out = append(out, symbols.Module{DebugFile: fmt.Sprintf("m%d", i), DebugID: "ID"})
	}
	return append(out, symbols.Module{DebugFile: "missing", DebugID: "ID"}, symbols.Module{DebugFile: "m0", DebugID: "ID"})
}

func TestPrefetch(t *testing.T) {
	g := &gated{release: make(chan struct{}), calls: map[string]int{}}
	list := mods(20)
	p := symbols.NewPrefetch(g, list, 4)
	// Every module, asked by several goroutines while the prefetch runs:
	// each is loaded once, with the wrapped source's answer.
	var wg sync.WaitGroup
	for i := range 3 * len(list) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			m := list[len(list)-1-i%len(list)] // from the end: ahead of the queue
			s, err := p.Load(m)
			if m.DebugFile == "missing" {
				if !errors.Is(err, symbols.ErrNotFound) {
					t.Errorf("missing: %v", err)
				}
				return
			}
			if err != nil {
				t.Errorf("%s: %v", m.DebugFile, err)
				return
			}
			if sym, _ := s.Lookup.Lookup(0, false); sym.Function != m.DebugFile {
				t.Errorf("%s: symbols of %s", m.DebugFile, sym.Function)
			}
		}()
	}
	close(g.release)
	wg.Wait()
	p.Stop()
	for _, m := range list {
		if n := g.calls[m.DebugFile]; n != 1 {
			t.Errorf("%s loaded %d times", m.DebugFile, n)
		}
	}
	// A module not listed goes to the source.
	if _, err := p.Load(symbols.Module{DebugFile: "other"}); err != nil || g.calls["other"] != 1 {
		t.Errorf("unlisted module: %v, %d loads", err, g.calls["other"])
	}
}

func TestPrefetchBound(t *testing.T) {
	g := &gated{release: make(chan struct{}), calls: map[string]int{}}
	p := symbols.NewPrefetch(g, mods(30), 5)
	for g.cur.Load() < 5 { // the five goroutines start their first loads
		runtime.Gosched()
	}
	close(g.release)
	total := func() int {
		g.mu.Lock()
		defer g.mu.Unlock()
		n := 0
		for _, c := range g.calls {
			n += c
		}
		return n
	}
	for total() < 31 { // every distinct module, without being asked
		runtime.Gosched()
	}
	p.Stop()
	if n := g.peak.Load(); n != 5 {
		t.Errorf("%d loads at once, want 5", n)
	}
	if n := total(); n != 31 {
		t.Errorf("%d loads, want the 31 distinct modules once each", n)
	}
}

func TestPrefetchStop(t *testing.T) {
	g := &gated{release: make(chan struct{}), calls: map[string]int{}}
	list := mods(10)
	p := symbols.NewPrefetch(g, list, 2)
	for g.cur.Load() < 2 {
		runtime.Gosched()
	}
	p.Cancel()
	done := make(chan struct{})
	go func() { p.Stop(); close(done) }()
	close(g.release)
	<-done
	started := len(g.calls)
	if started != 2 {
		t.Errorf("%d modules loaded, want the 2 running when it stopped", started)
	}
	// Listed modules not started load when asked, once.
	last := list[len(list)-3]
	if _, err := p.Load(last); err != nil {
		t.Fatal(err)
	}
	p.Load(last)
	if g.calls[last.DebugFile] != 1 {
		t.Errorf("%s loaded %d times after Stop", last.DebugFile, g.calls[last.DebugFile])
	}
}

// TestPrefetchWait: Wait returns once every listed module is loaded, once
// each, whether the workers or Load took them.
func TestPrefetchWait(t *testing.T) {
	g := &gated{release: make(chan struct{}), calls: map[string]int{}}
	list := mods(10)
	p := symbols.NewPrefetch(g, list, 2)
	close(g.release)
	p.Load(list[7])
	p.Wait()
	if len(g.calls) != 11 { // m0..m9 and "missing"; m0 listed twice
		t.Errorf("%d modules loaded, want all 11 listed", len(g.calls))
	}
	for m, n := range g.calls {
		if n != 1 {
			t.Errorf("%s loaded %d times", m, n)
		}
	}
}
