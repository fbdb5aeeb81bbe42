package formats

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gobreakpad/gobreakpad/dumpsyms"
	"github.com/gobreakpad/gobreakpad/dumpsyms/breakpad"
	"github.com/gobreakpad/gobreakpad/internal/corpus"
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
func lineAddresses(s *dumpsyms.Symbols) []uint64 {
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
func convertAndCompare(t *testing.T, symPath, name string, known int) (agree, total int) {
	t.Helper()
	model, err := breakpad.ReadFile(symPath, nil)
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
	if err := f.Write(w, model); err != nil {
		t.Fatal(err)
	}
	w.Close()
	l, closer, err := f.Open(out)
	if err != nil {
		t.Fatal(err)
	}
	defer closer.Close()
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
		if shown++; shown <= 3 && known == 0 {
			t.Errorf("%s %s %#x:\n got %s\nwant %s", filepath.Base(symPath), name, a, got, want)
		}
	}
	return agree, total
}

// TestSymCacheFromSymAgreesWithSymfile converts .sym files to SymCache and
// compares lookups at every FUNC, line record and PUBLIC address.
// crash.inlines.sym has INLINE records at depth 1 whose ranges lie in several
// depth-0 calls (and outside their own parent's): where two calls span the
// same bytes, symfile orders them by range nesting and the SymCache by
// depth, so the middle frames' call sites swap at 304 addresses; those are
// the known differences and the count must not grow.
func TestSymCacheFromSymAgreesWithSymfile(t *testing.T) {
	for _, tc := range []struct {
		rel    string
		differ int
	}{{"symbolic/macos/crash.inlines.sym", 304}, {"symbolic/linux/crash.sym", 0}, {"symbolic/windows/crash.sym", 0}} {
		p := corpus.File(t, tc.rel)
		agree, total := convertAndCompare(t, p, "symcache", tc.differ)
		t.Logf("%s: %d/%d addresses agree", tc.rel, agree, total)
		if total-agree > tc.differ {
			t.Errorf("%s: %d of %d addresses differ (known: %d)", tc.rel, total-agree, total, tc.differ)
		}
	}
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
		agree, total := convertAndCompare(t, corpus.File(t, tc.rel), "symbfile", tc.differ)
		t.Logf("%s: %d/%d addresses agree", tc.rel, agree, total)
		if total-agree > tc.differ {
			t.Errorf("%s: %d of %d addresses differ (known: %d)", tc.rel, total-agree, total, tc.differ)
		}
	}
}
