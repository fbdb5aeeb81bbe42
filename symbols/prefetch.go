package symbols

import (
	"sync"
	"sync/atomic"
)

// Prefetch is a Source that loads the symbols of a list of modules ahead of
// use, on a bounded number of goroutines, as rust-minidump fetches every
// module's symbols before walking: with symbol servers, a walk then waits
// for one round of requests instead of one per module, one after another.
//
// Load of a listed module returns the result of its one load through the
// wrapped source: it waits for the load when it is running, and runs it at
// once (on the caller's goroutine, ahead of the queue) when it has not
// started. Other modules are asked of the wrapped source directly. The
// answers are the wrapped source's, whichever order the loads finish in.
type Prefetch struct {
	src   Source
	mods  []Module
	loads map[Module]*prefetchLoad
	next  atomic.Int64 // index in mods of the next module to start
	stop  atomic.Bool
	wg    sync.WaitGroup
}

type prefetchLoad struct {
	started atomic.Bool // a goroutine has begun it
	once    sync.Once
	syms    *Symbols
	err     error
}

// NewPrefetch starts loading the symbols of mods through src, in order, on
// up to n goroutines (at least 1). Modules listed twice are loaded once.
// Call Wait when the walk is done (every listed module loaded), or Stop when
// the symbols of the modules not yet started are no longer wanted.
func NewPrefetch(src Source, mods []Module, n int) *Prefetch {
	p := &Prefetch{src: src, loads: make(map[Module]*prefetchLoad, len(mods))}
	for _, m := range mods {
		if p.loads[m] == nil {
			p.loads[m] = &prefetchLoad{}
			p.mods = append(p.mods, m)
		}
	}
	for range min(max(n, 1), len(p.mods)) {
		p.wg.Add(1)
		go p.work()
	}
	return p
}

// work loads the listed modules not yet started, in order.
func (p *Prefetch) work() {
	defer p.wg.Done()
	for !p.stop.Load() {
		i := p.next.Add(1) - 1
		if i >= int64(len(p.mods)) {
			return
		}
		m := p.mods[i]
		if l := p.loads[m]; !l.started.Load() { // else a Load took it ahead of the queue
			p.load(l, m)
		}
	}
}

func (p *Prefetch) load(l *prefetchLoad, m Module) {
	l.started.Store(true)
	l.once.Do(func() { l.syms, l.err = p.src.Load(m) })
}

// Load implements Source. It is safe for concurrent use when the wrapped
// source is (every Source must be).
func (p *Prefetch) Load(m Module) (*Symbols, error) {
	l := p.loads[m]
	if l == nil {
		return p.src.Load(m)
	}
	p.load(l, m)
	return l.syms, l.err
}

// Wait waits until every listed module is loaded (by the prefetch or by
// Load). The set of modules a walk loads is then the list, whatever the
// timing: a second walk through a cache warmed by the first sends no
// request, where stopping would leave out the modules not started yet,
// which a faster second walk (its loads served by the cache) starts.
func (p *Prefetch) Wait() {
	p.wg.Wait()
}

// Stop starts no more loads and waits for those running. Load keeps
// working afterwards: a listed module not loaded yet is loaded when asked.
func (p *Prefetch) Stop() {
	p.stop.Store(true)
	p.wg.Wait()
}
