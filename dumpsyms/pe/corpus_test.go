package pe

import (
	"bytes"
	"fmt"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/gobreakpad/gobreakpad/dumpsyms"
	"github.com/gobreakpad/gobreakpad/internal/corpus"
)

// records reads a .sym text as a multiset of records: line records name
// their file instead of numbering it, as ../shared/tools/symdiff does; FILE and INLINE_ORIGIN records are dropped. keep rewrites or
// drops (returning "") each record.
func records(text string, keep func(kind string, f []string, rec string) string) map[string]int {
	text = strings.ReplaceAll(text, "\r\n", "\n")
	lines := strings.Split(text, "\n")
	files, origins := map[string]string{}, map[string]string{}
	for _, l := range lines {
		p := strings.SplitN(l, " ", 3)
		if len(p) == 3 && p[0] == "FILE" {
			files[p[1]] = p[2]
		} else if len(p) == 3 && p[0] == "INLINE_ORIGIN" {
			origins[p[1]] = p[2]
		}
	}
	out := map[string]int{}
	for _, l := range lines {
		if l == "" {
			continue
		}
		f := strings.Split(l, " ")
		kind, rec := f[0], l
		switch f[0] {
		case "FILE", "INLINE_ORIGIN":
			continue
		case "FUNC":
		case "INLINE":
			if len(f) < 7 {
				continue
			}
			rec = fmt.Sprintf("INLINE %s %s %s %s %s", f[1], f[2], files[f[3]], origins[f[4]], strings.Join(f[5:], " "))
		case "MODULE", "INFO", "PUBLIC", "STACK":
		default:
			kind = "LINE"
			if len(f) == 4 {
				rec = fmt.Sprintf("%s %s %s %s", f[0], f[1], f[2], files[f[3]])
			}
		}
		if keep != nil {
			rec = keep(kind, f, rec)
		}
		if rec != "" {
			out[rec]++
		}
	}
	return out
}

func diffRecords(want, got map[string]int) (missing, extra []string) {
	for r, n := range want {
		for i := got[r]; i < n; i++ {
			missing = append(missing, r)
		}
	}
	for r, n := range got {
		for i := want[r]; i < n; i++ {
			extra = append(extra, r)
		}
	}
	slices.Sort(missing)
	slices.Sort(extra)
	return missing, extra
}

func dumpText(t *testing.T, path string, opts dumpsyms.Options) string {
	t.Helper()
	s, err := Dump(path, opts)
	if err != nil {
		t.Fatalf("Dump(%s): %v", path, err)
	}
	var b bytes.Buffer
	if err := s.Write(&b); err != nil {
		t.Fatal(err)
	}
	return b.String()
}

func readText(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return strings.ReplaceAll(string(b), "\r\n", "\n")
}

func stackWin(text string) []string {
	var out []string
	for l := range strings.SplitSeq(text, "\n") {
		if strings.HasPrefix(l, "STACK WIN ") {
			out = append(out, l)
		}
	}
	return out
}

// TestStackWin: x86 STACK WIN records come out as Breakpad writes them:
// byte for byte for dump_syms_regtest.pdb (281 records); for symbolic's
// crash.pdb, whose reference was written with trailing blanks trimmed, up
// to those blanks (154 records).
func TestStackWin(t *testing.T) {
	pdbPath := corpus.File(t, "windows/breakpad/dump_syms_regtest.pdb")
	want := stackWin(readText(t, corpus.File(t, "windows/breakpad/dump_syms_regtest.sym")))
	got := stackWin(dumpText(t, pdbPath, dumpsyms.Options{}))
	if len(want) != 281 || !slices.Equal(want, got) {
		t.Errorf("dump_syms_regtest.pdb: %d STACK WIN records, want Breakpad's %d byte for byte", len(got), len(want))
	}
	pdbPath = corpus.File(t, "windows/symbolic/crash.pdb")
	want = stackWin(readText(t, corpus.File(t, "windows/symbolic/crash.sym")))
	got = stackWin(dumpText(t, pdbPath, dumpsyms.Options{}))
	for i := range got {
		got[i] = strings.TrimRight(got[i], " ")
	}
	if len(want) != 154 || !slices.Equal(want, got) {
		t.Errorf("crash.pdb: %d STACK WIN records, want the reference's %d", len(got), len(want))
	}
}

// noFuncName keeps a FUNC record's address, size and "m", dropping the
// name and the parameter size (Breakpad names and sizes functions with
// DIA; these follow Mozilla's rules).
func noFuncName(kind string, f []string, rec string) string {
	if kind != "FUNC" {
		return rec
	}
	if f[1] == "m" {
		return strings.Join(f[:4], " ")
	}
	return strings.Join(f[:3], " ")
}

// TestBreakpadReferences compares with Breakpad's own outputs: FUNC
// addresses and sizes, line records and STACK WIN records identical, and
// every PUBLIC ours is one of Breakpad's (Mozilla's rules leave out those
// inside functions, and add the "<unknown in ...>" marker). The four OMAP
// PDBs come out in final-image addresses; Breakpad's zero-length lines are
// kept for them (Mozilla's rules drop them elsewhere).
func TestBreakpadReferences(t *testing.T) {
	for _, name := range []string{"omap_reorder_funcs", "omap_reorder_bbs", "omap_stretched", "omap_stretched_filled", "dump_syms_regtest"} {
		t.Run(name, func(t *testing.T) {
			pdbPath := corpus.File(t, "windows/breakpad/"+name+".pdb")
			omap := strings.HasPrefix(name, "omap")
			keep := func(kind string, f []string, rec string) string {
				switch kind {
				case "PUBLIC", "INFO":
					return ""
				case "LINE":
					if !omap && len(f) == 4 && f[1] == "0" {
						return ""
					}
				}
				return noFuncName(kind, f, rec)
			}
			wantText := readText(t, corpus.File(t, "windows/breakpad/"+name+".sym"))
			gotText := dumpText(t, pdbPath, dumpsyms.Options{})
			missing, extra := diffRecords(records(wantText, keep), records(gotText, keep))
			if len(missing)+len(extra) > 0 {
				t.Errorf("%d missing, %d unexpected: %q %q", len(missing), len(extra), first(missing), first(extra))
			}
			pubs := func(kind string, f []string, rec string) string {
				if kind != "PUBLIC" || strings.Contains(rec, "<unknown in ") {
					return ""
				}
				if f[1] == "m" {
					return f[2]
				}
				return f[1]
			}
			_, extra = diffRecords(records(wantText, pubs), records(gotText, pubs))
			if len(extra) > 0 {
				t.Errorf("PUBLIC records not in Breakpad's: %q", extra)
			}
		})
	}
}

// TestMozillaReferences compares with Mozilla dump_syms's outputs: every
// record equal but those this package leaves to others — STACK CFI (x64
// unwind info from the PE), the names of C++-decorated publics (the MSVC
// demangler) — and Mozilla's STACK WIN records, which follow symbolic's
// rules rather than Breakpad's.
func TestMozillaReferences(t *testing.T) {
	for _, name := range []string{"dump_syms_regtest64", "basic32-min"} {
		t.Run(name, func(t *testing.T) {
			pdbPath := corpus.File(t, "windows/mozilla/"+name+".pdb")
			keep := func(kind string, f []string, rec string) string {
				switch {
				case kind == "STACK":
					return ""
				case kind == "PUBLIC":
					i := 3
					if f[1] == "m" {
						i = 4
					}
					if len(f) > i && (strings.HasPrefix(f[i], "?") || strings.ContainsAny(strings.Join(f[i:], " "), ":( ")) {
						return strings.Join(f[:i], " ")
					}
				}
				return rec
			}
			wantText := readText(t, corpus.File(t, "mozilla-dump_syms/windows/"+name+".sym"))
			gotText := dumpText(t, pdbPath, dumpsyms.Options{})
			missing, extra := diffRecords(records(wantText, keep), records(gotText, keep))
			if len(missing)+len(extra) > 0 {
				t.Errorf("%d missing, %d unexpected: %q %q", len(missing), len(extra), first(missing), first(extra))
			}
		})
	}
}

func first(s []string) []string { return s[:min(len(s), 5)] }
