package stackwalk_test

import (
	"path/filepath"
	"testing"
)

// cxxMisses are the C++ exception cases whose walks do not reach the truth.
var cxxMisses = map[string]knownMiss{}

// TestTruthCxx walks the C++ exception crashes of testdata/truth/cxx
// (generate.sh there): an uncaught exception (std::terminate called from
// __cxa_throw with the thrower's frames below), a crash in a catch block
// a crash in a destructor run from a landing pad, and std::terminate called
// by the personality routine for a noexcept frame (the unwinder's own
// frames, _Unwind_Resume and _Unwind_RaiseException_Phase2, on the stack),
// each compared with gdb's backtrace down to _start.
func TestTruthCxx(t *testing.T) {
	for _, dir := range truthCases(t, "cxx") {
		name := filepath.Base(dir)
		t.Run(name, func(t *testing.T) {
			miss, isMiss := cxxMisses[name]
			checkMatch(t, "crashing thread", walkTruth(t, dir, truthOptions{}).chainMatch, miss, isMiss)
		})
	}
}
