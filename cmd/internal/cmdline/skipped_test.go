package cmdline

import (
	"strings"
	"testing"
)

func TestSkipped(t *testing.T) {
	var w strings.Builder
	s := &Skipped{Prog: "dump_syms", W: &w}
	s.Warn("%s: STACK CFI: %d rules left out: %s", "a.so", 1, "DWARF expression")
	s.Warn("%s: .gnu_debugdata: %d compressed bytes decompress to more than the limit: skipped", "a.so", 9)
	s.Warn("%s: .gnu_debugdata: %d compressed bytes decompress to more than the limit: skipped", "a.so", 9)
	s.Warn("a.dll: no PDB found: writing what the PE alone holds")
	want := "dump_syms: warning: a.so: .gnu_debugdata: 9 compressed bytes decompress to more than the limit: skipped\n" +
		"dump_syms: warning: a.dll: no PDB found: writing what the PE alone holds\n"
	if w.String() != want {
		t.Errorf("without -v:\n%s\nwant\n%s", w.String(), want)
	}
	w.Reset()
	s = &Skipped{Prog: "dump_syms", W: &w, Verbose: true}
	s.Warn("a.so: STACK CFI: 1 rules left out")
	if w.String() != "dump_syms: a.so: STACK CFI: 1 rules left out\n" {
		t.Errorf("with -v: %q", w.String())
	}
}
