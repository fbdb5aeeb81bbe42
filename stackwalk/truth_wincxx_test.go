package stackwalk_test

import (
	"path/filepath"
	"testing"
)

// wincxxMisses are the Windows C++ exception cases whose walks do not reach
// the truth when the system DLL's PE is not in the symbol path, with the
// reason.
var wincxxMisses = map[string]knownMiss{
	"throw-x64-O0":    {7, 2, wincxxWhy},
	"throw-x64-O2":    {7, 2, wincxxWhy},
	"throw-x64-gccO0": {7, 2, wincxxWhy},
	"throw-x64-gccO2": {7, 2, wincxxWhy},
}

const wincxxWhy = "without kernelbase.dll's PE, RaiseException's frame has no unwind rules (Wine's kernelbase has " +
	"no PDB and no CodeView record): its caller is scanned for, and the stack below _Unwind_RaiseException's return " +
	"address holds a kernel32 word and the exception record's ExceptionAddress (kernelbase): modules without rules, " +
	"nothing to check them with, taken as Breakpad takes them. The stale return addresses of calls __cxa_throw made " +
	"before, above them, are passed over: a save slot of their chain holds _Unwind_RaiseException's return address, " +
	"whose rules rejoin it (winScan's save-slot check, docs/stackwalk.md)"

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
//     the .data word Breakpad's scan takes and the stale return addresses
//     whose chain's save slot holds the true one; the two words in
//     modules without rules below them stay (a known miss, wincxxMisses);
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
