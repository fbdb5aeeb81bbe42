package stackwalk_test

import (
	"path/filepath"
	"testing"
)

// wincxxMisses are the Windows C++ exception cases whose walks do not reach
// the truth, with the reason.
var wincxxMisses = map[string]knownMiss{
	"throw-x64-O0": {6, 4, wincxxWhy},
	"throw-x64-O2": {6, 4, wincxxWhy},
}

const wincxxWhy = "RaiseException's frame in Wine's kernelbase.dll has no unwind rules (no PDB, no CodeView " +
	"record to find its PE by): its caller is scanned for, and the stack below _Unwind_RaiseException's return " +
	"address holds kernel32 and kernelbase words (no rules: nothing to check them with) and the return addresses " +
	"of calls __cxa_throw made before (__mingwthr_key_dtor after its call, __emutls_get_address after its call), " +
	"whose rules lead to __cxa_throw's true frame: without the code (not in the dump) nothing tells them from " +
	"_Unwind_RaiseException's (docs/stackwalk.md)"

// TestTruthWindowsCxx walks testdata/truth/wincxx (generate.sh there): a
// C++ exception thrown in a mingw program under wine64, the dump written by
// a vectored exception handler with the thread in kernelbase's
// RaiseException, symbols from our dump_syms of the PDB (STACK CFI from
// the PE's .pdata). The crashing thread's chain up to main is compared
// with the chain the code shows (truth.txt). The scan of Windows x64 walks
// checks its candidates by their functions' rules (winScan in
// unwind/amd64): the .data word Breakpad's scan takes (a pointer into the
// exe's .data, under the last PUBLIC) is passed over, its leaf rule giving
// no plausible caller.
func TestTruthWindowsCxx(t *testing.T) {
	for _, dir := range truthCases(t, "wincxx") {
		name := filepath.Base(dir)
		t.Run(name, func(t *testing.T) {
			w := walkTruth(t, dir, truthOptions{})
			ours, _ := crashChain(w.m)
			for i, f := range ours {
				if f == "main" {
					ours = ours[:i+1]
					break
				}
			}
			miss, isMiss := wincxxMisses[name]
			checkChain(t, "crashing thread up to main", ours, w.truth.chain, miss, isMiss)
		})
	}
}
