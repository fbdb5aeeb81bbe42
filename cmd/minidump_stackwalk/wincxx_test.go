package main

import (
	"path/filepath"
	"strings"
	"testing"
)

// TestSystemDLLFromSymbolPath: a folder holding a PE without a CodeView
// record (Wine's kernelbase.dll, trimmed: testdata/truth/wincxx/pe) given
// as a symbol path gives that module's unwind rules (symbols/pdbsyms, by
// its code file and identifier), so that the walk of a C++ exception
// raised in RaiseException leaves it by its rules for
// _Unwind_RaiseException, with no scanned frame before main; without the
// folder the caller of RaiseException is scanned for, and the scan passes
// over the words the dump's exception record refutes (its in-stack copy,
// the home space of RaiseException's call) to the same chain, frame 0
// unnamed (docs/stackwalk.md).
func TestSystemDLLFromSymbolPath(t *testing.T) {
	dir := filepath.Join("..", "..", "testdata", "truth", "wincxx")
	dump := filepath.Join(dir, "throw-x64-O2", "crash.dmp")
	syms := filepath.Join(dir, "throw-x64-O2", "symbols")
	chain := func(args ...string) []string {
		var fr []string
		for _, l := range strings.Split(runCmd(t, append([]string{"-m"}, args...)...), "\n") {
			p := strings.Split(l, "|")
			if len(p) == 7 && p[0] == "0" {
				name, _, _ := strings.Cut(p[3], "(")
				fr = append(fr, p[2]+"!"+name)
				if name == "main" {
					break
				}
			}
		}
		return fr
	}
	want := "kernelbase.dll!RaiseException throw.exe!_Unwind_RaiseException throw.exe!__cxa_throw throw.exe!thrower " +
		"throw.exe!level2 throw.exe!level1 throw.exe!run throw.exe!main"
	got := chain("--symbols-cache", t.TempDir(), dump, syms, filepath.Join(dir, "pe"))
	if s := strings.Join(got, " "); s != want {
		t.Errorf("with kernelbase.dll's PE:\n got %s\nwant %s", s, want)
	}
	want = "kernelbase.dll!" + strings.TrimPrefix(want, "kernelbase.dll!RaiseException")
	if s := strings.Join(chain(dump, syms), " "); s != want {
		t.Errorf("without it:\n got %s\nwant %s", s, want)
	}
}
