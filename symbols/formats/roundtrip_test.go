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
// compares lookups at every FUNC, line record and PUBLIC address.
//
// crash.inlines.sym (dump_syms of a Mach-O) has INLINE records at depth 1
// whose ranges lie in several depth-0 calls: the inlined C2 constructor of
// MachMsgPortDescriptor is one record under the first of four inlined C1
// calls, with a range inside each. Where a depth-0 and a depth-1 range are
// the same bytes, Breakpad's resolver (and symfile, which answers as it does
// for minidump_stackwalk's sake) nests them by storage order, the later
// record inside the earlier, so the depth-0 call becomes the inner frame;
// symbolic's FunctionBuilder and our SymCache writer nest by depth. The
// depth order is right: at each of the 304 addresses where the answers
// differ, the SymCache's frames have the files and lines of Sentry's
// macos.symc, built by symbolic from the DWARF the .sym came from (at 14 of
// them Sentry's chain stops one frame short: its DWARF has an out-of-line
// function there that the .sym's has inlined).
func TestSymCacheFromSymAgreesWithSymfile(t *testing.T) {
	for _, tc := range []struct {
		rel    string
		differ int
	}{{"symbolic/macos/crash.inlines.sym", 304}, {"symbolic/linux/crash.sym", 0}, {"symbolic/windows/crash.sym", 0}} {
		p := corpus.File(t, tc.rel)
		agree, total, differ, conv := convertAndCompare(t, p, "symcache", tc.differ)
		t.Logf("%s: %d/%d addresses agree", tc.rel, agree, total)
		if total-agree > tc.differ {
			t.Errorf("%s: %d of %d addresses differ (known: %d)", tc.rel, total-agree, total, tc.differ)
		}
		if len(differ) == 0 {
			continue
		}
		// The truth for the differences: Sentry's SymCache of the DWARF
		// (function names there are mangled: compare positions).
		f, _ := ByName("symcache")
		truth, closer, err := f.Open(corpus.File(t, "symbolic/symcache/current/macos.symc"))
		if err != nil {
			t.Fatal(err)
		}
		defer closer.Close()
		wrong := 0
		for _, a := range differ {
			got, want := positions(conv.Lookup(a, true)), positions(truth.Lookup(a, true))
			// At 14 addresses Sentry's root is a function inlined in
			// the .sym's: its frames are the innermost of ours.
			if got != want && !strings.HasPrefix(got, want+" / ") {
				if wrong++; wrong <= 3 {
					t.Errorf("%#x: SymCache from .sym %s, Sentry's macos.symc %s", a, got, want)
				}
			}
		}
		if wrong > 0 {
			t.Errorf("%d of the %d differing addresses disagree with Sentry's SymCache", wrong, len(differ))
		}
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
// compares lookups at every FUNC, line record and PUBLIC address. Beyond
// the 304 inline-ordering differences of crash.inlines.sym (see the SymCache
// test), line 0 records are no line in a symbfile (its line tables use 0
// for code without a line record), which the leaf of 14 inline chains
// shows (its file is then empty), and one more address differs.
func TestSymbfileFromSymAgreesWithSymfile(t *testing.T) {
	for _, tc := range []struct {
		rel    string
		differ int
	}{{"symbolic/macos/crash.inlines.sym", 319}, {"symbolic/linux/crash.sym", 0}, {"symbolic/windows/crash.sym", 0}} {
		agree, total, _, _ := convertAndCompare(t, corpus.File(t, tc.rel), "symbfile", tc.differ)
		t.Logf("%s: %d/%d addresses agree", tc.rel, agree, total)
		if total-agree > tc.differ {
			t.Errorf("%s: %d of %d addresses differ (known: %d)", tc.rel, total-agree, total, tc.differ)
		}
	}
}
