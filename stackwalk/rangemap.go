package stackwalk

import "github.com/gobreakpad/gobreakpad/internal/rangemap"

// mergeStrategy is how the module map resolves a module whose range
// overlaps one already stored, as Breakpad's RangeMap merge strategies
// (package internal/rangemap).
type mergeStrategy uint8

const (
	// mergeExclusive drops the later module (kExclusiveRanges): Windows and
	// macOS minidumps (where an overlap makes Breakpad refuse the whole list:
	// mergeRefused), Linux microdumps.
	mergeExclusive mergeStrategy = iota
	// mergeTruncateUpper shrinks the upper module of an overlapping pair
	// from below (kTruncateUpper): Android microdumps, whose modules
	// Breakpad's MicrodumpModules stores so.
	mergeTruncateUpper
	// mergeTruncateLower shrinks the lower module of an overlapping pair so
	// that it ends below the other's base (kTruncateLower): Linux and
	// Android minidumps, and every unloaded module list.
	mergeTruncateLower
	// mergeRefused stores no module: Breakpad's processor refused the
	// whole list (minidump.StrictModuleList), so it lists none and finds
	// no address in any.
	mergeRefused
)

// maxShrinkModules bounds the modules the range map takes: its insertions
// move memory, so a hostile list of many more modules (microdumps have no
// limit; minidump lists stop at minidump.MaxModules) is indexed by the
// exclusive rule (earliest wins) instead.
const maxShrinkModules = 1 << 13

// moduleRange is a module's stored range [Base, High] in a range map.
type moduleRange = rangemap.Range[*Module]

// storeModules stores mods, in order, in a range map with strategy s.
func storeModules(mods []*Module, s rangemap.Strategy) []moduleRange {
	rm := rangemap.Map[*Module]{Strategy: s}
	rm.Reserve(len(mods))
	for _, m := range mods {
		rm.Store(m.Base, m.Size, m)
	}
	return rm.Ranges()
}

// shrinkModules indexes mods as Breakpad does for an Android microdump:
// stored in the dump's order with kTruncateUpper, then stored again, in
// address order, into the processor's copy of the list
// (BasicCodeModules), which shrinks with the same rule.
func shrinkModules(mods []*Module) []moduleRange {
	first := storeModules(mods, rangemap.TruncateUpper)
	byAddr := make([]*Module, len(first))
	for i, r := range first {
		byAddr[i] = r.Entry
	}
	return storeModules(byAddr, rangemap.TruncateUpper)
}
