package stackwalk_test

import (
	"path/filepath"
	"testing"
)

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
//     whose chain's save slot holds the true one, and by the dump's
//     exception record, which passes over the two words in modules
//     without rules below them: kernelbase's, the ExceptionAddress of
//     the record's copy RaiseException built on its stack, and kernel32's,
//     a stale word in the home space RaiseException allocated for its
//     call to RtlRaiseException (the record's address is the context's
//     pc: the frame made that call). Each case is the truth, frame for
//     frame, with nothing spurious (each was 7 of 7 with 2 spurious
//     before the record's rules, 6 of 7 with 4 before the save-slot rule);
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
				checkChain(t, "crashing thread up to main", ours, w.truth.chain, knownMiss{}, false)
			})
		}
	}
}
