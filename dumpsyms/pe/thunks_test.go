package pe

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/gobreakpad/gobreakpad/dumpsyms"
	"github.com/gobreakpad/gobreakpad/internal/testkit/corpus"
	"github.com/gobreakpad/gobreakpad/pdb"
)

// thunkRVAs returns the RVAs of a PDB's S_THUNK32 records (none of the
// PDBs read here has OMAP).
func thunkRVAs(t *testing.T, path string) []string {
	t.Helper()
	f, d, secs := openPDB(t, path)
	var out []string
	for i := range d.Modules {
		ms, err := f.ModuleSymbols(&d.Modules[i])
		if err != nil || ms == nil {
			continue
		}
		for it := ms.Iter(); ; {
			s, ok := it.Next()
			if !ok {
				break
			}
			if s.Kind != pdb.S_THUNK32 {
				continue
			}
			th, err := pdb.ParseThunk(s.Data)
			if err != nil || th.Segment == 0 || int(th.Segment) > len(secs) {
				t.Fatalf("%s: thunk %+v: %v", path, th, err)
			}
			out = append(out, fmt.Sprintf("%x", secs[th.Segment-1].VirtualAddress+th.Offset))
		}
	}
	return out
}

// recordsAt returns the FUNC and PUBLIC records of a .sym text starting at
// the given hexadecimal address.
func recordsAt(text, addr string) []string {
	var out []string
	for l := range strings.SplitSeq(text, "\n") {
		f := strings.Fields(l)
		if len(f) > 2 && (f[0] == "FUNC" || f[0] == "PUBLIC") {
			a := f[1]
			if a == "m" {
				a = f[2]
			}
			if strings.EqualFold(a, addr) {
				out = append(out, l)
			}
		}
	}
	return out
}

// TestThunks: S_THUNK32 records (import thunks, adjustor and vcall
// thunks) give no FUNC record, as in Breakpad's dump_syms (DIA's function
// enumeration leaves thunks out) and Mozilla's (symbolic reads procedures
// only): a thunk shows only as the PUBLIC record of the public symbol at
// its address, when it has one. testdata/thunks (made with clang, see
// mkthunks.sh) has an adjustor thunk with a public, one without (internal
// linkage) and a vcall thunk.
func TestThunks(t *testing.T) {
	const path = "testdata/thunks/thunks.pdb"
	text := dumpText(t, path, dumpsyms.Options{})
	want := map[string][]string{
		"10e0": nil, // (anonymous namespace)::L::f's adjustor: no public
		"10f0": {"PUBLIC 10f0 0 B::`vcall'{4, {flat}}"},
		"1110": {"PUBLIC 1110 0 C::f(int)"},
	}
	got := thunkRVAs(t, path)
	if len(got) != len(want) {
		t.Fatalf("%s: thunks at %v, want 3", path, got)
	}
	for _, a := range got {
		if recs := recordsAt(text, a); !slices.Equal(recs, want[a]) {
			t.Errorf("%s: at thunk %s: %q, want %q", path, a, recs, want[a])
		}
	}

	// The corpus: every thunk's records equal the reference's; for the
	// x64 PDBs Breakpad's dump_syms made references of (strip), up to the
	// one leading underscore Breakpad strips from x64 names, which are not
	// decorated (parseWinName): our __std_exception_copy and
	// _CxxThrowException are its _std_exception_copy and CxxThrowException.
	for _, c := range []struct {
		pdb, ref string
		strip    bool
	}{
		{"windows/symbolic/crash.pdb", "windows/symbolic/crash.sym", false},                                     // Breakpad-made, 37 import thunks
		{"windows/symbolic/CrashWithException.pdb", "windows/symbolic/CrashWithException.pdb.sym", true},        // Breakpad-made, 31
		{"windows/breakpad/dump_syms_regtest.pdb", "windows/breakpad/dump_syms_regtest.sym", false},             // Breakpad, 1
		{"windows/mozilla/dump_syms_regtest64.pdb", "mozilla-dump_syms/windows/dump_syms_regtest64.sym", false}, // Mozilla, 2
		{"windows/breakpad/dump_syms_regtest64.pdb", "windows/breakpad/dump_syms_regtest64.sym", true},          // Breakpad, 2
	} {
		p := corpus.File(t, c.pdb)
		ref := readText(t, corpus.File(t, c.ref))
		text := dumpText(t, p, dumpsyms.Options{})
		thunks := thunkRVAs(t, p)
		if len(thunks) == 0 {
			t.Errorf("%s: no thunks", c.pdb)
		}
		for _, a := range thunks {
			want, got := recordsAt(ref, a), recordsAt(text, a)
			if c.strip {
				for i, r := range got {
					f := strings.SplitN(r, " ", 4)
					if len(f) == 4 && f[0] == "PUBLIC" && strings.HasPrefix(f[3], "_") {
						got[i] = strings.Join(f[:3], " ") + " " + f[3][1:]
					}
				}
			}
			if !slices.Equal(want, got) || len(got) != 1 || !strings.HasPrefix(got[0], "PUBLIC ") {
				t.Errorf("%s: at thunk %s: %q, want %q", c.pdb, a, got, want)
			}
		}
	}
}

// openPDB opens the PDB at path with its DBI stream and section headers
// (closed when the test ends).
func openPDB(t *testing.T, path string) (*pdb.File, *pdb.DBI, []pdb.SectionHeader) {
	t.Helper()
	f, err := pdb.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
	d, err := f.DBI()
	if err != nil {
		t.Fatal(err)
	}
	b, err := f.DebugStream(pdb.DbgSectionHdr)
	if err != nil {
		t.Fatal(err)
	}
	secs, err := pdb.ParseSectionHeaders(b)
	if err != nil {
		t.Fatal(err)
	}
	return f, d, secs
}
