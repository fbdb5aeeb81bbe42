package stackwalk

import "sort"

// mergeStrategy is how the module map resolves a module whose range
// overlaps one already stored, as Breakpad's RangeMap merge strategies.
type mergeStrategy uint8

const (
	// mergeExclusive drops the later module (kExclusiveRanges): Windows and
	// macOS minidumps, Linux microdumps.
	mergeExclusive mergeStrategy = iota
	// mergeTruncateUpper shrinks the upper module of an overlapping pair
	// from below (kTruncateUpper): Android microdumps, whose modules
	// Breakpad's MicrodumpModules stores so.
	mergeTruncateUpper
)

// maxShrinkModules bounds the modules the shrinking range map takes: its
// insertions move memory, so a hostile list of many more modules is
// indexed by the exclusive rule (earliest wins) instead.
const maxShrinkModules = 1 << 13

// moduleRange is a module's stored range [base, high] in a rangeMap.
type moduleRange struct {
	base, high uint64
	m          *Module
}

// rangeMap is Breakpad's RangeMap of modules, keyed by the high address of
// each stored range, with the truncate-upper merge strategy.
type rangeMap struct {
	r []moduleRange // sorted by high; ranges do not overlap
}

// lowerBound returns the index of the first range whose high is at or
// above addr.
func (rm *rangeMap) lowerBound(addr uint64) int {
	return sort.Search(len(rm.r), func(i int) bool { return rm.r[i].high >= addr })
}

// store stores m's range, shrinking it or the range above it where they
// overlap, as RangeMap::StoreRangeInternal with kTruncateUpper. It reports
// whether the module was stored: it is not when it is empty, wraps, or
// ends where another stored range ends.
func (rm *rangeMap) store(m *Module) bool {
	if m.Size == 0 || m.Base+(m.Size-1) < m.Base {
		return false
	}
	base, high := m.Base, m.Base+(m.Size-1)
	for {
		lo, hi := rm.lowerBound(base), rm.lowerBound(high)
		if lo != hi {
			// A stored range ends inside this one: drop this one's part
			// up to that end.
			base = rm.r[lo].high + 1
			continue
		}
		if hi < len(rm.r) && rm.r[hi].base <= high {
			if rm.r[hi].high == high {
				return false
			}
			// The range above starts inside this one: shrink it.
			rm.r[hi].base = high + 1
		}
		rm.r = append(rm.r, moduleRange{})
		copy(rm.r[hi+1:], rm.r[hi:])
		rm.r[hi] = moduleRange{base: base, high: high, m: m}
		return true
	}
}

// shrinkModules indexes mods as Breakpad does for an Android microdump:
// stored in the dump's order with kTruncateUpper, then stored again, in
// address order, into the processor's copy of the list
// (BasicCodeModules), which shrinks with the same rule.
func shrinkModules(mods []*Module) []moduleRange {
	var first rangeMap
	for _, m := range mods {
		first.store(m)
	}
	var second rangeMap
	for _, r := range first.r {
		second.store(r.m)
	}
	return second.r
}
