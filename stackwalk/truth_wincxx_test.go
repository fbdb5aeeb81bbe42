package stackwalk_test

import (
	"path/filepath"
	"testing"
)

// wincxxMisses are the Windows C++ exception cases whose walks do not reach
// the truth when the system DLL's PE is not in the symbol path, with the
// reason.
var wincxxMisses = map[string]knownMiss{
	"throw-x64-O0":    {6, 4, wincxxWhy},
	"throw-x64-O2":    {6, 4, wincxxWhy},
	"throw-x64-gccO0": {6, 4, wincxxWhy},
	"throw-x64-gccO2": {6, 4, wincxxWhy},
}

const wincxxWhy = "without kernelbase.dll's PE, RaiseException's frame has no unwind rules (Wine's kernelbase has " +
	"no PDB and no CodeView record): its caller is scanned for, and the stack below _Unwind_RaiseException's return " +
	"address holds kernel32 and kernelbase words (no rules: nothing to check them with) and the return addresses " +
	"of calls __cxa_throw made before (__mingwthr_key_dtor or, built by g++, a static function after " +
	"_Unwind_Backtrace, after its call; __emutls_get_address after its call), " +
	"whose rules lead to __cxa_throw's true frame: without the code (not in the dump) nothing tells them from " +
	"_Unwind_RaiseException's (docs/stackwalk.md)"

// TestTruthWindowsCxx walks testdata/truth/wincxx (generate.sh there): a
// C++ exception thrown in a mingw program (built by clang and lld, and by
// mingw-w64's g++ and GNU ld) under wine64, the dump written by
// a vectored exception handler with the thread in kernelbase's
// RaiseException, symbols from our dump_syms of the PDB (STACK CFI from
// the PE's .pdata). The crashing thread's chain up to main is compared
// with the chain the code shows (truth.txt), twice:
//
//   - with the program's symbols alone: RaiseException's caller is
//     scanned for; the scan of Windows x64 walks checks its candidates by
//     their functions' rules (winScan in unwind/amd64), which passes over
//     the .data word Breakpad's scan takes, but not the stale return
//     addresses (a known miss, wincxxMisses);
//   - with Wine's kernelbase.dll (trimmed to its unwind data and exports,
//     testdata/truth/wincxx/pe) in the symbol path: symbols/pdbsyms finds
//     it by its code file and code identifier and makes its STACK CFI from
//     .pdata, RaiseException's frame is unwound by its rules, and the walk
//     is the truth, frame for frame, with nothing spurious.
func TestTruthWindowsCxx(t *testing.T) {
	for _, dir := range truthCases(t, "wincxx") {
		name := filepath.Base(dir)
		for _, pe := range []bool{false, true} {
			sub := name
			var o truthOptions
			if pe {
				sub += "/with-kernelbase-pe"
				o.peDirs = []string{filepath.Join(filepath.Dir(dir), "pe")}
			}
			t.Run(sub, func(t *testing.T) {
				w := walkTruth(t, dir, o)
				ours, _ := crashChain(w.m)
				for i, f := range ours {
					if f == "main" {
						ours = ours[:i+1]
						break
					}
				}
				miss, isMiss := wincxxMisses[name]
				if pe {
					isMiss = false
				}
				checkChain(t, "crashing thread up to main", ours, w.truth.chain, miss, isMiss)
			})
		}
	}
}
