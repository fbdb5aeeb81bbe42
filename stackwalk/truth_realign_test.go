package stackwalk_test

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// realignMisses are the realigned-stack cases (CASE/VARIANT) whose walks
// do not reach the truth.
var realignMisses = map[string]knownMiss{}

// plainRule matches the STACK CFI rules Breakpad's dump_syms writes too:
// a register saved at the CFA plus an offset, a register's value plus an
// offset, a register's own value, or undefined. The others come from
// DWARF expressions (DW_CFA_def_cfa_expression, DW_CFA_expression), which
// Breakpad's dump_syms leaves out.
var plainRule = regexp.MustCompile(`^(\.cfa -?\d+ \+ \^|\$?[\w.]+ -?\d+ \+|\$?[\w.]+)$`)

// withoutExpressions returns a .sym file's text with the STACK CFI rules
// made from DWARF expressions left out, as Breakpad's dump_syms leaves
// them out: the rule in force before stays in force.
func withoutExpressions(sym string) string {
	var out []string
	for _, l := range strings.Split(sym, "\n") {
		if !strings.HasPrefix(l, "STACK CFI ") {
			out = append(out, l)
			continue
		}
		f := strings.Fields(l)
		head := 3 // STACK CFI ADDR
		if f[2] == "INIT" {
			head = 5 // STACK CFI INIT ADDR SIZE
		}
		kept := f[:head:head]
		var reg string
		var expr []string
		flush := func() {
			if reg != "" && plainRule.MatchString(strings.Join(expr, " ")) {
				kept = append(append(kept, reg), expr...)
			}
		}
		for _, w := range f[head:] {
			if strings.HasSuffix(w, ":") {
				flush()
				reg, expr = w, nil
				continue
			}
			expr = append(expr, w)
		}
		flush()
		if len(kept) > head {
			out = append(out, strings.Join(kept, " "))
		}
	}
	return strings.Join(out, "\n")
}

// withoutRealignedCFI returns a .sym file's text without the STACK CFI
// records of the functions whose rules use DWARF expressions (the
// realigned ones): a walk must then find their callers from their frame
// records alone.
func withoutRealignedCFI(sym string) string {
	lines := strings.Split(sym, "\n")
	var out, block []string
	expr := false
	flush := func() {
		if !expr {
			out = append(out, block...)
		}
		block, expr = nil, false
	}
	for _, l := range lines {
		if !strings.HasPrefix(l, "STACK CFI ") {
			flush()
			out = append(out, l)
			continue
		}
		if strings.HasPrefix(l, "STACK CFI INIT ") {
			flush()
		}
		block = append(block, l)
		if withoutExpressions(l) != l {
			expr = true
		}
	}
	flush()
	return strings.Join(out, "\n")
}

// copySymbols copies a case's symbols, rewritten by edit, into a
// temporary symbol folder.
func copySymbols(t *testing.T, dir string, edit func(string) string) string {
	t.Helper()
	tmp := t.TempDir()
	syms, _ := filepath.Glob(filepath.Join(dir, "symbols", "*", "*", "*.sym"))
	for _, s := range syms {
		rel, _ := filepath.Rel(filepath.Join(dir, "symbols"), s)
		b, err := os.ReadFile(s)
		if err != nil {
			t.Fatal(err)
		}
		out := filepath.Join(tmp, rel)
		if err := os.MkdirAll(filepath.Dir(out), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(out, []byte(edit(string(b))), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return tmp
}

// TestTruthRealign walks the crashes below stack-realigning functions of
// testdata/truth/realign (generate.sh there): a 64-byte-aligned local
// (over), the same beside a variable-length array (drap: a DRAP register
// on x86-64 and i386, the CFA read back by a DWARF expression),
// force_align_arg_pointer (force), all below i386's realigning main. Each
// case is walked with its symbols as our dump_syms writes them (expression
// rules included), with the expression rules left out as Breakpad's
// dump_syms leaves them out (noexpr), and with no STACK CFI for the
// functions whose rules use expressions (nocfi); each walk must equal
// gdb's backtrace.
func TestTruthRealign(t *testing.T) {
	variants := []struct {
		name string
		edit func(string) string
	}{
		{"cfi", nil},
		{"noexpr", withoutExpressions},
		{"nocfi", withoutRealignedCFI},
	}
	for _, dir := range truthCases(t, "realign") {
		name := filepath.Base(dir)
		for _, v := range variants {
			t.Run(name+"/"+v.name, func(t *testing.T) {
				var o truthOptions
				if v.edit != nil {
					o.symbols = copySymbols(t, dir, v.edit)
				}
				miss, isMiss := realignMisses[name+"/"+v.name]
				checkMatch(t, "crashing thread", walkTruth(t, dir, o).chainMatch, miss, isMiss)
			})
		}
	}
}
