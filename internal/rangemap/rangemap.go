// Package rangemap is Breakpad's RangeMap (processor/range_map-inl.h): address
// ranges keyed by their highest address, with the three ways Breakpad resolves
// a range that overlaps one already stored. The module lists of minidumps and
// microdumps are stored in such maps, and which module an address belongs to,
// which modules are listed and in what order all follow from them.
package rangemap

import (
	"slices"
	"sort"
)

// Strategy is how Store resolves a range overlapping a stored one
// (Breakpad's MergeRangeStrategy).
type Strategy uint8

const (
	// Exclusive refuses a range that overlaps a stored one
	// (kExclusiveRanges): the earlier range wins.
	Exclusive Strategy = iota
	// TruncateLower shrinks whichever of the two ranges starts lower so
	// that it ends just below the other's base (kTruncateLower); a range
	// starting where a stored one starts is refused. Breakpad's minidump
	// module lists of Linux and Android dumps and every unloaded module
	// list.
	TruncateLower
	// TruncateUpper shrinks whichever of the two ranges starts higher, from
	// below, so that it starts just above the other's end (kTruncateUpper); a
	// range ending where a stored one ends is refused. Breakpad's Android
	// microdump modules.
	TruncateUpper
)

// Range is one stored range [Base, High] and its entry.
type Range[E any] struct {
	Base, High uint64
	Entry      E
}

// Map is a RangeMap. The zero value is an empty map with the Exclusive
// strategy. It is not safe for concurrent modification.
type Map[E any] struct {
	Strategy Strategy
	r        []Range[E] // sorted by High; ranges do not overlap
}

// lowerBound returns the index of the first range whose High is at or above addr.
func (m *Map[E]) lowerBound(addr uint64) int {
	return sort.Search(len(m.r), func(i int) bool { return m.r[i].High >= addr })
}

// Store stores [base, base+size-1] with entry e, as
// RangeMap::StoreRangeInternal does with m's strategy, and reports whether it
// was stored (possibly shrunk). An empty range, or one that wraps past the top
// of the address space, is never stored. Storing may shrink ranges stored
// before. Each call costs O(n) at worst (the insertion moves the ranges above).
func (m *Map[E]) Store(base, size uint64, e E) bool {
	for {
		if size == 0 || base+(size-1) < base {
			return false
		}
		high := base + (size - 1)
		lo, hi := m.lowerBound(base), m.lowerBound(high)
		if lo != hi {
			// A stored range ends inside this one.
			switch m.Strategy {
			case TruncateLower:
				var ok bool
				if size, ok = m.truncateLower(lo, base, size); !ok {
					return false
				}
				continue
			case TruncateUpper:
				add := m.r[lo].High - base + 1
				base += add
				size -= add
				continue
			default:
				return false
			}
		}
		if hi < len(m.r) && m.r[hi].Base <= high {
			// The range above starts inside this one (or holds it).
			switch {
			case m.Strategy == TruncateLower:
				var ok bool
				if size, ok = m.truncateLower(hi, base, size); !ok {
					return false
				}
				continue
			case m.Strategy == TruncateUpper && m.r[hi].High > high:
				m.r[hi].Base = high + 1
				continue
			default:
				return false
			}
		}
		m.r = append(m.r, Range[E]{})
		copy(m.r[hi+1:], m.r[hi:])
		m.r[hi] = Range[E]{Base: base, High: high, Entry: e}
		return true
	}
}

// truncateLower resolves, as TruncateLower does, the overlap of a new range
// at base of size bytes with stored range j: the lower of the two is
// shrunk to end below the other's base. It returns the new range's size,
// or false when both start at base.
func (m *Map[E]) truncateLower(j int, base, size uint64) (uint64, bool) {
	switch other := m.r[j].Base; {
	case base < other:
		return other - base, true
	case other < base:
		m.r[j].High = base - 1
		return size, true
	}
	return 0, false
}

// Reserve makes room for n more ranges without growing the map again.
func (m *Map[E]) Reserve(n int) { m.r = slices.Grow(m.r, n) }

// Retrieve returns the range holding addr (RangeMap::RetrieveRange).
func (m *Map[E]) Retrieve(addr uint64) (Range[E], bool) {
	i := m.lowerBound(addr)
	if i == len(m.r) || addr < m.r[i].Base {
		return Range[E]{}, false
	}
	return m.r[i], true
}

// Len returns how many ranges are stored.
func (m *Map[E]) Len() int { return len(m.r) }

// Ranges returns the stored ranges in Breakpad's "sequence" order (by their
// highest address, which is also by base since they do not overlap). The slice
// is the map's own: do not modify it.
func (m *Map[E]) Ranges() []Range[E] { return m.r }
