package symsrc

import (
	"errors"
	"strings"
	"sync"
	"time"

	"github.com/gobreakpad/gobreakpad/symbols"
)

// misses remembers, for a short while, the modules local sources did not
// have (Config.LocalMissTTL): a long-running walker (crashd's processor)
// asks every source of the chain for every module of every walk, and each
// local source's miss is a file system lookup (a stat per store
// directory) that comes out the same until symbols are stored. Shared by
// the sources of one Sources, so that Forget clears them all at once.
type misses struct {
	ttl time.Duration
	// now is the clock (the tests set it).
	now func() time.Time

	mu sync.Mutex
	// seen holds when each (source, module) missed.
	seen map[missKey]time.Time
	// gen counts forgets: a miss found while one happened is not
	// remembered (the symbols may have been stored during the lookup).
	gen uint64
}

type missKey struct {
	src int
	m   symbols.Module
}

// maxMisses bounds the remembered misses (all sources together): past it
// the memory starts over empty (a variable for the tests).
var maxMisses = 1 << 14

// remembering is a source whose not-found answers are remembered.
type remembering struct {
	id  int
	src symbols.Source
	ms  *misses
}

// errMissed is the error of a remembered miss; it wraps
// symbols.ErrNotFound as the source's own did.
type errMissed struct{ err error }

func (e errMissed) Error() string { return e.err.Error() }
func (e errMissed) Unwrap() error { return e.err }

func (r *remembering) Load(m symbols.Module) (*symbols.Symbols, error) {
	k := missKey{r.id, m}
	now := r.ms.now()
	r.ms.mu.Lock()
	at, ok := r.ms.seen[k]
	gen := r.ms.gen
	r.ms.mu.Unlock()
	if ok && now.Sub(at) < r.ms.ttl && !now.Before(at) {
		return nil, errMissed{symbols.ErrNotFound}
	}
	syms, err := r.src.Load(m)
	if err != nil && errors.Is(err, symbols.ErrNotFound) {
		r.ms.mu.Lock()
		if r.ms.gen == gen {
			if r.ms.seen == nil || len(r.ms.seen) >= maxMisses {
				r.ms.seen = map[missKey]time.Time{}
			}
			r.ms.seen[k] = now
		}
		r.ms.mu.Unlock()
	} else if ok {
		r.ms.mu.Lock()
		delete(r.ms.seen, k)
		r.ms.mu.Unlock()
	}
	return syms, err
}

// forget drops the remembered misses of the module debugFile/debugID
// (every source; "" and "": all modules).
func (ms *misses) forget(debugFile, debugID string) {
	ms.mu.Lock()
	defer ms.mu.Unlock()
	ms.gen++
	if debugFile == "" && debugID == "" {
		ms.seen = nil
		return
	}
	for k := range ms.seen {
		if strings.EqualFold(k.m.DebugFile, debugFile) && strings.EqualFold(k.m.DebugID, debugID) {
			delete(ms.seen, k)
		}
	}
}

// ForgetMisses makes the sources ask their stores again for the module
// debugFile/debugID (case-insensitive; both empty: for every module)
// instead of answering a miss they remember (Config.LocalMissTTL): to be
// called when its symbols were stored (crashd's symbol server's
// OnSymbols), and before a crash is walked again because symbols arrived.
func (s *Sources) ForgetMisses(debugFile, debugID string) {
	if s.misses != nil {
		s.misses.forget(debugFile, debugID)
	}
}
