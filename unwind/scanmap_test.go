package unwind_test

import (
	"testing"

	"github.com/gobreakpad/gobreakpad/unwind"
	amd64unwind "github.com/gobreakpad/gobreakpad/unwind/amd64"
	"github.com/gobreakpad/gobreakpad/unwind/unwindtest"
)

// TestScanSkipsData: with call sites checked, a scanned word inside a
// module but in memory the dump's map says is not executable (a pointer to
// the module's data or read-only data) is no return address and is passed
// over; without a map, or without the check, it is taken, as Breakpad
// takes it. Past such a word the scan looks as far as Breakpad's walk
// would have (a new scan from it).
func TestScanSkipsData(t *testing.T) {
	unknown := func(unwind.Env, uint64) unwind.CallSite { return unwind.CallUnknown }
	for _, tc := range []struct {
		withMap bool
		check   unwind.CallCheck
	}{{false, unknown}, {true, nil}, {true, unknown}} {
		withMap := tc.withMap
		env := unwindtest.New(amd64unwind.Unwinder{}, 0x7fff0000)
		env.Modules = []unwindtest.Module{{Base: 0x400000, Size: 0x10000}}
		if withMap {
			env.Maps = []unwindtest.Mapping{{Start: 0x400000, End: 0x408000, Exec: true}, {Start: 0x408000, End: 0x410000}}
		}
		words := []uint64{0, 0x408010} // a data pointer, then 40 words of nothing
		for i := 0; i < 40; i++ {
			words = append(words, 0)
		}
		words = append(words, 0x401234) // past the first scan's reach
		env.Push(words...)
		loc, ip, _, ok := unwind.ScanForCaller(env, 0x7fff0000, 40, 8, tc.check)
		if !withMap || tc.check == nil {
			if !ok || ip != 0x408010 || loc != 0x7fff0008 {
				t.Errorf("no map: %#x at %#x (%v); want Breakpad's 0x408010 at 0x7fff0008", ip, loc, ok)
			}
			continue
		}
		if !ok || ip != 0x401234 || loc != 0x7fff0000+42*8 {
			t.Errorf("map: %#x at %#x (%v); want 0x401234 at %#x", ip, loc, ok, 0x7fff0000+42*8)
		}
	}
}
