package symbfile

import (
	"cmp"
	"slices"
)

// Sweep answers Covering for addresses given in nondecreasing order, each
// answer reusing the previous one's: the range a depth's lookup finds
// depends only on the range above and on which ranges of the depth, from
// the lowest one the lookup examined on, cover the address, a set that
// changes only where one of them starts or ends. So between two addresses
// only the depths where such a range starts or ends are looked up again, and
// the depths below one whose answer changed. In a well-nested file (each
// range inside one range of the depth above, none overlapping another of its
// depth) a sweep over a function's ranges and lines costs about one lookup
// per range and address, where Covering costs one per depth at each address.
type Sweep struct {
	t      *Table
	events []sweepEvent // starts and ends of the indexed ranges, by address
	next   int          // events[next:] are after the last address
	last   uint64
	begun  bool
	chain  []int
	seen   []int  // per depth looked up, the lowest index the lookup examined
	dirty  []bool // per depth, to look up again
	redo   []int  // the dirty depths
}

// sweepEvent is where the range Ranges[index] of depth starts or ends: the
// set of ranges of that depth covering an address changes there, and only
// there.
type sweepEvent struct {
	addr         uint64
	depth, index int
}

// NewSweep starts a sweep of t from address 0.
func (t *Table) NewSweep() *Sweep {
	s := &Sweep{t: t, dirty: make([]bool, len(t.depths))}
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
			s.events = append(s.events, sweepEvent{r.Start, d, i}, sweepEvent{r.End(), d, i})
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
	if !s.begun {
		for s.next < len(s.events) && s.events[s.next].addr <= addr {
			s.next++
		}
		s.begun, s.last = true, addr
		s.grow(addr)
		return s.chain
	}
	for ; s.next < len(s.events) && s.events[s.next].addr <= addr; s.next++ {
		e := &s.events[s.next]
		if e.depth < len(s.seen) && e.index >= s.seen[e.depth] && !s.dirty[e.depth] {
			s.dirty[e.depth] = true
			s.redo = append(s.redo, e.depth)
		}
	}
	s.last = addr
	slices.Sort(s.redo)
	for _, d := range s.redo {
		lo, hi := uint64(0), ^uint64(0)
		if d > 0 {
			r := &s.t.Ranges[s.chain[d-1]]
			lo, hi = r.Start, r.End()
		}
		i, seen := s.t.coveringSeen(d, addr, lo, hi)
		if (d < len(s.chain) && i == s.chain[d]) || (d == len(s.chain) && i < 0) {
			s.seen[d] = seen // same answer: the depths below stand
			continue
		}
		s.chain, s.seen = s.chain[:d], s.seen[:d]
		s.grow(addr) // every depth below looked up again
		break
	}
	for _, d := range s.redo {
		s.dirty[d] = false
	}
	s.redo = s.redo[:0]
	return s.chain
}

// grow looks up the depths from len(s.chain) on.
func (s *Sweep) grow(addr uint64) {
	lo, hi := uint64(0), ^uint64(0)
	if n := len(s.chain); n > 0 {
		r := &s.t.Ranges[s.chain[n-1]]
		lo, hi = r.Start, r.End()
	}
	for d := len(s.chain); d < len(s.t.depths); d++ {
		i, seen := s.t.coveringSeen(d, addr, lo, hi)
		s.seen = append(s.seen, seen)
		if i < 0 {
			break
		}
		s.chain = append(s.chain, i)
		lo, hi = s.t.Ranges[i].Start, s.t.Ranges[i].End()
	}
}
