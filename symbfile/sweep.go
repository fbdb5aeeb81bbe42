package symbfile

import (
	"cmp"
	"slices"
)

// Sweep answers Covering for addresses given in nondecreasing order, each
// answer reusing the previous one's outer part: a range at depth d covers
// the same addresses of the sweep until a range of depth d starts or ends
// between them, so only the depths from the shallowest such range down are
// looked up again. In a well-nested file (each range inside one range of the
// depth above, none overlapping another of its depth) a sweep over a
// function's ranges and lines costs about one lookup per range and address,
// where Covering costs one per depth at each address.
type Sweep struct {
	t      *Table
	events []sweepEvent // starts and ends of the indexed ranges, by address
	next   int          // events[next:] are after the last address
	last   uint64
	begun  bool
	chain  []int
}

// sweepEvent is where a range of depth starts or ends: the set of ranges of
// that depth covering an address changes there, and only there.
type sweepEvent struct {
	addr  uint64
	depth int
}

// NewSweep starts a sweep of t from address 0.
func (t *Table) NewSweep() *Sweep {
	s := &Sweep{t: t}
	if len(t.depths) > 0 {
		s.events = make([]sweepEvent, 0, 2*t.depths[len(t.depths)-1].hi)
	}
	for d := range t.depths {
		di := &t.depths[d]
		for i := di.lo; i < di.hi; i++ {
			r := &t.Ranges[i]
			if r.Start == r.End() {
				continue // covers nothing
			}
			s.events = append(s.events, sweepEvent{r.Start, d}, sweepEvent{r.End(), d})
		}
	}
	slices.SortFunc(s.events, func(a, b sweepEvent) int { return cmp.Compare(a.addr, b.addr) })
	return s
}

// Covering returns t.Covering(addr); addr must not be below the previous
// call's. The slice is the sweep's: valid until the next call.
func (s *Sweep) Covering(addr uint64) []int {
	if s.begun && addr < s.last {
		panic("symbfile: Sweep.Covering: address below the previous one")
	}
	from := 0
	if s.begun {
		from = len(s.t.depths) // nothing changed
		for s.next < len(s.events) && s.events[s.next].addr <= addr {
			if s.events[s.next].addr > s.last {
				from = min(from, s.events[s.next].depth)
			}
			s.next++
		}
	} else {
		for s.next < len(s.events) && s.events[s.next].addr <= addr {
			s.next++
		}
	}
	s.begun, s.last = true, addr
	if from > len(s.chain) {
		return s.chain // the chain ended above every depth that changed
	}
	s.chain = s.chain[:from]
	lo, hi := uint64(0), ^uint64(0)
	if from > 0 {
		r := &s.t.Ranges[s.chain[from-1]]
		lo, hi = r.Start, r.End()
	}
	for d := from; d < len(s.t.depths); d++ {
		i := s.t.covering(d, addr, lo, hi)
		if i < 0 {
			break
		}
		s.chain = append(s.chain, i)
		lo, hi = s.t.Ranges[i].Start, s.t.Ranges[i].End()
	}
	return s.chain
}
