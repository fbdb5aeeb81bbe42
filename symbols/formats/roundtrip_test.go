package formats

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gobreakpad/gobreakpad/dumpsyms"
	dsbreakpad "github.com/gobreakpad/gobreakpad/dumpsyms/breakpad"
	"github.com/gobreakpad/gobreakpad/internal/testkit/corpus"
	"github.com/gobreakpad/gobreakpad/symbols"
	symbreakpad "github.com/gobreakpad/gobreakpad/symbols/breakpad"
	"github.com/gobreakpad/gobreakpad/symfile"
)

// chainString describes a lookup's function, position and inline chain.
func chainString(s symbols.Symbol, ok bool) string {
	if !ok {
		return "none"
	}
	var b strings.Builder
	for _, in := range s.Inlines {
		fmt.Fprintf(&b, "%s %s:%d / ", in.Function, in.File, in.Line)
	}
	fmt.Fprintf(&b, "%s %s:%d", s.Function, s.File, s.Line)
	return b.String()
}

// lineAddresses returns every line record's, FUNC's and PUBLIC's address.
func lineAddresses(s *dumpsyms.Model) []uint64 {
	var out []uint64
	for _, f := range s.Funcs {
		for _, r := range f.Ranges {
			out = append(out, r.Address)
		}
		for _, l := range f.Lines {
			out = append(out, l.Address)
		}
	}
	for _, p := range s.Publics {
		out = append(out, p.Address)
	}
	return out
}

// convertAndCompare writes the .sym file's model in format name, opens the
// result for lookups and compares every line-record address's answer with
// symfile's. It returns the numbers of addresses agreeing and compared.
func convertAndCompare(t *testing.T, symPath, name string, known int) (agree, total int, differ []uint64, conv symbols.Lookuper) {
	t.Helper()
	return convertAndCompareFiles(t, symPath, name, known, nil)
}

// convertAndCompareFiles is convertAndCompare with the .sym file's file
// names given through clean (the form the converted format returns them
// in), when not nil.
func convertAndCompareFiles(t *testing.T, symPath, name string, known int, clean func(string) string) (agree, total int, differ []uint64, conv symbols.Lookuper) {
	t.Helper()
	model, err := dsbreakpad.ReadFile(symPath, nil)
	if err != nil {
		t.Fatal(err)
	}
	f, err := ByName(name)
	if err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(t.TempDir(), "out"+f.Exts[0])
	w, err := os.Create(out)
	if err != nil {
		t.Fatal(err)
	}
	if err := f.Write(w, model, WriteOptions{}); err != nil {
		t.Fatal(err)
	}
	w.Close()
	l, closer, err := f.Open(out)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { closer.Close() })
	tab, err := symfile.Open(symPath)
	if err != nil {
		t.Fatal(err)
	}
	defer tab.Close()
	ref := &symbreakpad.Table{Table: tab}
	shown := 0
	for _, a := range lineAddresses(model) {
		ws, wok := ref.Lookup(a, true)
		if clean != nil {
			ws.File = clean(ws.File)
			for i := range ws.Inlines {
				ws.Inlines[i].File = clean(ws.Inlines[i].File)
			}
		}
		total++
		want := chainString(ws, wok)
		got := chainString(l.Lookup(a, true))
		if got == want {
			agree++
			continue
		}
		differ = append(differ, a)
		if shown++; shown <= 3 && (known == 0 || os.Getenv("SHOWDIFF") != "") {
			t.Errorf("%s %s %#x:\n got %s\nwant %s", filepath.Base(symPath), name, a, got, want)
		}
	}
	return agree, total, differ, l
}

// TestSymCacheFromSymAgreesWithSymfile converts .sym files to SymCache and
// compares lookups at every FUNC, line record and PUBLIC address: all agree
// (TestSymCacheAnswersAsSym does it for every .sym file of the corpus with
// INLINE records).
//
// crash.inlines.sym (dump_syms of a Mach-O) has INLINE records at depth 1
// whose ranges lie in several depth-0 calls (the inlined C2 constructor of
// MachMsgPortDescriptor is one record under the first of four inlined C1
// calls, with a range inside each) or reach past their depth-0 call's range.
// Breakpad's resolver nests INLINE ranges by containment and, for equal
// ranges, by storage order, so the depth-0 call became the inner frame at
// 304 addresses, where the SymCache (nesting by depth, as symbolic's
// FunctionBuilder) answered otherwise. symfile nests by depth now: its
// answers are those of Sentry's macos.symc, built by symbolic from the DWARF
// the .sym came from, at every address but where Sentry's chain stops
// short: its DWARF has an out-of-line function there that the .sym's has
// inlined (14 addresses, and none more), or its line 0 is the .sym's
// function's own line.
func TestSymCacheFromSymAgreesWithSymfile(t *testing.T) {
	for _, rel := range []string{"symbolic/macos/crash.inlines.sym", "symbolic/linux/crash.sym", "symbolic/windows/crash.sym"} {
		p := corpus.File(t, rel)
		agree, total, _, _ := convertAndCompare(t, p, "symcache", 0)
		t.Logf("%s: %d/%d addresses agree", rel, agree, total)
		if agree != total {
			t.Errorf("%s: %d of %d addresses differ", rel, total-agree, total)
		}
	}
	// The truth: Sentry's SymCache of the DWARF (function names there
	// are mangled: compare positions).
	p := corpus.File(t, "symbolic/macos/crash.inlines.sym")
	model, err := dsbreakpad.ReadFile(p, nil)
	if err != nil {
		t.Fatal(err)
	}
	tab, err := symfile.Open(p)
	if err != nil {
		t.Fatal(err)
	}
	defer tab.Close()
	ref := &symbreakpad.Table{Table: tab}
	f, _ := ByName("symcache")
	truth, closer, err := f.Open(corpus.File(t, "symbolic/symcache/current/macos.symc"))
	if err != nil {
		t.Fatal(err)
	}
	defer closer.Close()
	same, short, wrong := 0, 0, 0
	for _, a := range lineAddresses(model) {
		got, want := positions(ref.Lookup(a, true)), positions(truth.Lookup(a, true))
		switch {
		case got == want:
			same++
		case strings.HasPrefix(got, want+" / "):
			short++
			if os.Getenv("SHOWSHORT") != "" {
				t.Logf("short %#x", a)
			}
		case a == 0:
			// Sentry's has _mh_execute_header; Breakpad's resolver
			// ignores PUBLIC records at 0.
		default:
			if wrong++; wrong <= 3 {
				t.Errorf("%#x: .sym %s, Sentry's macos.symc %s", a, got, want)
			}
		}
	}
	t.Logf("crash.inlines.sym against Sentry's macos.symc: %d addresses the same, %d where Sentry's chain stops short, %d wrong", same, short, wrong)
	if wrong > 0 || same < 4000 {
		t.Errorf("%d addresses the same, %d wrong", same, wrong)
	}
}

// positions lists a lookup's frames' files and lines, innermost first.
func positions(s symbols.Symbol, ok bool) string {
	if !ok {
		return "none"
	}
	var b strings.Builder
	for _, in := range s.Inlines {
		fmt.Fprintf(&b, "%s:%d / ", in.File, in.Line)
	}
	fmt.Fprintf(&b, "%s:%d", s.File, s.Line)
	return b.String()
}

// TestSymbfileFromSymAgreesWithSymfile converts .sym files to symbfiles and
// compares lookups at every FUNC, line record and PUBLIC address. In
// crash.inlines.sym (see the SymCache test), 124 addresses differ: at 108
// an INLINE range reaches past the range of the call it is inlined into
// (a depth-1 ~vector at 0x277e, 0x5a bytes, under a depth-0 ~vector of 0x1b
// bytes), which a symbfile's ranges, nested by containment, cannot hold:
// its chain stops at the outer call (it had lost these frames before the
// .sym's lookups nested by depth too, when they were counted among 304
// ordering differences); line 0 records are no line in a symbfile (its
// line tables use 0 for code without a line record), which the leaf of 15
// inline chains shows (its file is then empty), and one more address
// differs.
func TestSymbfileFromSymAgreesWithSymfile(t *testing.T) {
	for _, tc := range []struct {
		rel    string
		differ int
	}{{"symbolic/macos/crash.inlines.sym", 124}, {"symbolic/linux/crash.sym", 0}, {"symbolic/windows/crash.sym", 0}} {
		agree, total, _, _ := convertAndCompare(t, corpus.File(t, tc.rel), "symbfile", tc.differ)
		t.Logf("%s: %d/%d addresses agree", tc.rel, agree, total)
		if total-agree > tc.differ {
			t.Errorf("%s: %d of %d addresses differ (known: %d)", tc.rel, total-agree, total, tc.differ)
		}
	}
}
