package server

import (
	"errors"
	"fmt"
	"log/slog"
	"sync"
)

// group runs the parts of a process together, as Prometheus runs its
// own with oklog/run: every part runs until it returns; the first to
// return (an error, or a part that should have run until told to stop)
// has every part's stop called, in the order they were added, and run
// returns once all have returned. A part's error is logged and handed to
// onError, and the first one is run's.
type group struct {
	parts []part
}

type part struct {
	name string
	run  func() error
	stop func()
	// ends: run returning nil is the normal end of the group (the
	// signal), not a failure.
	ends bool
}

// add adds a part: run runs it, stop makes run return.
func (g *group) add(name string, run func() error, stop func()) {
	g.parts = append(g.parts, part{name: name, run: run, stop: stop})
}

// addEnd adds the part whose return ends the group normally (the signal).
func (g *group) addEnd(name string, run func() error, stop func()) {
	g.parts = append(g.parts, part{name: name, run: run, stop: stop, ends: true})
}

// errStopped is the error of a part that returned without being told to
// stop and without an error of its own.
var errStopped = errors.New("stopped on its own")

// run runs the parts (see group).
func (g *group) run(log *slog.Logger, onError func(part string, err error)) error {
	type result struct {
		i   int
		err error
	}
	done := make(chan result, len(g.parts))
	for i, p := range g.parts {
		go func() { done <- result{i, p.run()} }()
	}
	var (
		mu       sync.Mutex
		stopping bool
		first    error
	)
	report := func(r result) {
		mu.Lock()
		defer mu.Unlock()
		err := r.err
		if err == nil && !stopping && !g.parts[r.i].ends {
			err = errStopped
		}
		if err != nil {
			name := g.parts[r.i].name
			log.Error("crashd: "+name+" failed; stopping", "part", name, "err", err)
			onError(name, err)
			if first == nil {
				first = fmt.Errorf("%s: %w", name, err)
			}
		}
		stopping = true
	}
	report(<-done)
	for _, p := range g.parts {
		p.stop()
	}
	for range len(g.parts) - 1 {
		report(<-done)
	}
	return first
}
