package elf

import (
	"bufio"
	"bytes"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/gobreakpad/gobreakpad/dumpsyms"
	"github.com/gobreakpad/gobreakpad/internal/testkit/corpus"
	"github.com/gobreakpad/gobreakpad/internal/testkit/symdiff"
)

// parseSym reads a .sym text as symdiff does, without INLINE records when
// noInlines is set and without MODULE and INFO records when noModule is.
func parseSym(text string, noInlines, noModule bool) symdiff.Records {
	return symdiff.Parse(text, func(kind string, _ []string, rec string) string {
		if noInlines && kind == "INLINE" || noModule && (kind == "MODULE" || kind == "INFO") {
			return ""
		}
		return rec
	})
}

func dumpText(t testing.TB, path string, dirs []string, inlines bool) string {
	t.Helper()
	s, err := Dump(path, dumpsyms.Options{Inlines: inlines, DebugDirs: dirs})
	if err != nil {
		t.Fatalf("Dump(%s): %v", path, err)
	}
	var b bytes.Buffer
	if err := s.Write(&b); err != nil {
		t.Fatal(err)
	}
	return b.String()
}

type corpusRow struct {
	name, input string
	dirs        []string
	target      string // x64-dw4, x64-dw5, x86, arm64 ("" for libc)
	variant     string
	file        string
}

func corpusRows(t *testing.T) (string, []corpusRow) {
	root := corpus.Dir(t)
	readme := corpus.File(t, "breakpad/expected-dump_syms/README.md")
	data, err := os.ReadFile(readme)
	if err != nil {
		t.Fatal(err)
	}
	var rows []corpusRow
	sc := bufio.NewScanner(bytes.NewReader(data))
	for sc.Scan() {
		l := sc.Text()
		if !strings.HasPrefix(l, "| elf-") && !strings.HasPrefix(l, "| debian-") {
			continue
		}
		cells := strings.Split(l, "|")
		if len(cells) < 4 {
			continue
		}
		r := corpusRow{name: strings.TrimSpace(cells[1])}
		in := strings.Fields(cells[2])
		if len(in) == 0 {
			continue
		}
		r.input = filepath.Join(root, in[0])
		if d := strings.TrimSpace(cells[3]); d != "" {
			r.dirs = []string{filepath.Join(root, d)}
		}
		if p := strings.Split(in[0], "/"); len(p) == 4 && p[0] == "elf" {
			r.target, r.variant, r.file = p[1], p[2], p[3]
		}
		rows = append(rows, r)
	}
	return root, rows
}

func readExpected(root, name string) (string, bool) {
	b, err := os.ReadFile(filepath.Join(root, "breakpad/expected-dump_syms", name))
	return string(b), err == nil
}

// funcBlocks maps each FUNC address of a .sym text to the records that
// belong to it (the FUNC and its line and INLINE records, normalized).
func funcAddrs(text string) map[string]bool {
	m := map[string]bool{}
	for _, l := range strings.Split(text, "\n") {
		if p := strings.Fields(l); len(p) > 2 && p[0] == "FUNC" {
			m[p[1]] = true
		}
	}
	return m
}

// TestBreakpadCorpus runs Dump on every input of the shared corpus's
// expected dump_syms outputs and compares the records with Breakpad's.
// Where Breakpad gives no output or is wrong, the reference is another
// build of the same code (see docs/dump_syms.md); every tolerated
// difference is of a documented kind and is counted in the log.
func TestBreakpadCorpus(t *testing.T) {
	root, rows := corpusRows(t)
	if len(rows) < 100 {
		t.Fatalf("only %d rows in the expected outputs' README", len(rows))
	}
	for _, r := range rows {
		for _, inl := range []bool{false, true} {
			suffix := ".sym"
			if inl {
				suffix = ".inlines.sym"
			}
			t.Run(r.name+suffix, func(t *testing.T) {
				if r.variant == "split" && r.target == "" {
					t.Skip()
				}
				wantText, ok := readExpected(root, r.name+suffix)
				noModule := false
				refFile := r.file
				// Inputs Breakpad fails on, or reads without their split
				// units: the full build of the same code is the reference.
				if !ok || (r.variant == "split" && r.target != "x64-dw4") {
					noModule = true
					refTarget := r.target
					if refTarget == "x64-dw5" {
						refTarget = "x64-dw4" // the same addresses
					}
					wantText, ok = readExpected(root, "elf-"+refTarget+"-full-"+refFile+suffix)
					if !ok {
						t.Fatalf("no reference output for %s", r.name)
					}
				}
				dw5 := r.target == "x64-dw5" || r.target == "x86" || r.target == "arm64"
				// Breakpad loses the INLINE records of DWARF 5 units; they are
				// checked in TestInlines instead, except where the reference
				// is the DWARF 4 build.
				noInlines := dw5 && !(r.target == "x64-dw5" && noModule)
				if r.target == "x64-dw5" && !noModule && inl {
					noInlines = true
				}
				if r.target == "x64-dw4" && r.variant == "split" {
					// Breakpad loses the INLINE records of .dwp units.
					noInlines = true
				}
				gotText := dumpText(t, r.input, r.dirs, inl)
				want := parseSym(wantText, noInlines, noModule)
				got := parseSym(gotText, noInlines, noModule)
				missing, extra := symdiff.Diff(want, got)
				missing, extra = tolerate(t, r, wantText, gotText, missing, extra)
				for _, m := range missing {
					t.Errorf("missing: %s", m)
				}
				for _, e := range extra {
					t.Errorf("unexpected: %s", e)
				}
			})
		}
	}
}

// tolerate removes the differences that are documented improvements over
// Breakpad, logging how many of each kind were seen.
func tolerate(t *testing.T, r corpusRow, wantText, gotText string, missing, extra []string) ([]string, []string) {
	wantFuncs := funcAddrs(wantText)
	gotFuncs := funcAddrs(gotText)
	// Functions Breakpad drops (DWARF 5 DW_AT_ranges it cannot read): their
	// FUNC, line and INLINE records are extra, their PUBLIC missing.
	var extraFuncRanges [][2]uint64
	for _, l := range strings.Split(gotText, "\n") {
		p := strings.Fields(l)
		if len(p) > 3 && p[0] == "FUNC" && !wantFuncs[p[1]] {
			a, _ := strconv.ParseUint(p[1], 16, 64)
			n, _ := strconv.ParseUint(p[2], 16, 64)
			extraFuncRanges = append(extraFuncRanges, [2]uint64{a, a + n})
		}
	}
	inExtraFunc := func(addr string) bool {
		a, err := strconv.ParseUint(addr, 16, 64)
		if err != nil {
			return false
		}
		for _, fr := range extraFuncRanges {
			if a >= fr[0] && a < fr[1] {
				return true
			}
		}
		return false
	}
	counts := map[string]int{}
	// STACK CFI records with rules translated from DWARF expressions, which
	// Breakpad leaves out: equal once those rules are removed.
	extraSet := map[string]bool{}
	stripped := map[string]int{}
	undefRA := map[string]int{} // extra records with .ra: .undef, without that rule
	paired := map[string]int{}  // those matched with a missing record
	for _, e := range extra {
		extraSet[e] = true
		if strings.Contains(e, " .ra: .undef") {
			undefRA[withoutRule(e, ".ra:")]++
			continue
		}
		if strings.HasPrefix(e, "STACK CFI") {
			if n := withoutExprRules(e); n != e {
				stripped[n]++
			}
		}
	}
	var m2, e2 []string
	for _, m := range missing {
		key := m
		if stripped[key] == 0 && strings.HasPrefix(m, "STACK CFI INIT ") {
			// The default ".ra: <return address register>" rule, which an
			// expression rule for .ra replaces.
			f := strings.Fields(m)
			for i := 5; i+1 < len(f); i++ {
				if f[i] == ".ra:" && (i+2 == len(f) || strings.HasSuffix(f[i+2], ":")) {
					key = strings.Join(append(append([]string(nil), f[:i]...), f[i+2:]...), " ")
				}
			}
		}
		if stripped[key] > 0 {
			stripped[key]--
			counts["STACK CFI rules from DWARF expressions Breakpad cannot translate"]++
			continue
		}
		if k := withoutRule(m, ".ra:"); undefRA[k] > 0 {
			// Breakpad keeps the CIE's .ra rule where the FDE makes the
			// return address undefined; we write ".ra: .undef".
			undefRA[k]--
			paired[k]++
			counts["undefined return address (outermost frame) written as .ra: .undef"]++
			continue
		}
		p := strings.Fields(m)
		if len(p) > 2 && p[0] == "PUBLIC" && gotFuncs[p[1]] {
			counts["PUBLIC replaced by a FUNC Breakpad drops"]++
			continue
		}
		m2 = append(m2, m)
	}
	var fullPublics map[string]bool
	for _, e := range extra {
		if !extraSet[e] {
			continue
		}
		p := strings.Fields(e)
		if strings.Contains(e, " .ra: .undef") {
			k := withoutRule(e, ".ra:")
			if paired[k] > 0 {
				paired[k]--
				continue
			}
			if want := parseSym(wantText, true, true); want[k] > 0 || len(strings.Fields(k)) <= 3 {
				// A delta record Breakpad leaves out, or one whose
				// other rules it writes alone.
				counts["undefined return address (outermost frame) written as .ra: .undef"]++
				continue
			}
		}
		switch {
		case p[0] == "INLINE" && r.target == "":
			// libc is DWARF 5: Breakpad cannot read the range lists of
			// inlined calls (dropping them and their children).
			counts["INLINE Breakpad loses (DWARF 5 range lists, lexical blocks)"]++
			continue
		case len(p) > 3 && p[0] == "FUNC" && !wantFuncs[p[1]]:
			counts["FUNC Breakpad drops"]++
			continue
		case len(p) == 4 && p[0] != "PUBLIC" && p[0] != "STACK" && p[0] != "INLINE" && inExtraFunc(p[0]):
			counts["line of a FUNC Breakpad drops"]++
			continue
		case len(p) > 4 && p[0] == "INLINE" && inExtraFunc(p[len(p)-2]):
			counts["INLINE of a FUNC Breakpad drops"]++
			continue
		case p[0] == "STACK" && withoutExprRules(e) != e:
			// Paired with a missing record above, or a record Breakpad
			// leaves out altogether because all its rules are expressions.
			n := withoutExprRules(e)
			if want := parseSym(wantText, true, true); want[n] == 0 || len(strings.Fields(n)) <= 3 {
				counts["STACK CFI rules from DWARF expressions Breakpad cannot translate"]++
				continue
			}
		case len(p) > 3 && p[0] == "PUBLIC" && r.variant == "minidebuginfo":
			if fullPublics == nil {
				fullPublics = symbolsOf(t, r)
			}
			if fullPublics[p[1]+" "+strings.Join(p[3:], " ")] {
				counts["PUBLIC from .gnu_debugdata"]++
				continue
			}
		}
		e2 = append(e2, e)
	}
	for k, n := range counts {
		t.Logf("%d tolerated: %s", n, k)
	}
	return m2, e2
}

// withoutRule removes the rule for reg ("NAME:") from a STACK CFI record.
func withoutRule(rec, reg string) string {
	f := strings.Fields(rec)
	var out []string
	for i := 0; i < len(f); {
		j := i + 1
		for j < len(f) && !strings.HasSuffix(f[j], ":") {
			j++
		}
		if f[i] != reg {
			out = append(out, f[i:j]...)
		}
		i = j
	}
	return strings.Join(out, " ")
}

// withoutExprRules removes from a STACK CFI record the rules only a
// translated DWARF expression gives: Breakpad writes a register rule as a
// register name, ".cfa N + ^" or ".cfa N +", and the CFA rule as "reg N +".
func withoutExprRules(rec string) string {
	f := strings.Fields(rec)
	head := 3 // STACK CFI addr
	if len(f) > 2 && f[2] == "INIT" {
		head = 5
	}
	if len(f) < head {
		return rec
	}
	out := append([]string(nil), f[:head]...)
	for i := head; i < len(f); {
		j := i + 1
		for j < len(f) && !strings.HasSuffix(f[j], ":") {
			j++
		}
		reg, rule := f[i], f[i+1:j]
		ok := len(rule) == 1 ||
			len(rule) == 3 && rule[2] == "+" && (reg == ".cfa:" || rule[0] == ".cfa") ||
			len(rule) == 4 && rule[0] == ".cfa" && rule[2] == "+" && rule[3] == "^"
		if ok {
			out = append(out, f[i:j]...)
		}
		i = j
	}
	return strings.Join(out, " ")
}

// symbolsOf returns "address name" for the functions of the full build of
// a minidebuginfo row, FUNC and PUBLIC alike, from our own dump of it.
func symbolsOf(t *testing.T, r corpusRow) map[string]bool {
	full := filepath.Join(filepath.Dir(filepath.Dir(r.input)), "full", r.file)
	m := map[string]bool{}
	for _, l := range strings.Split(dumpText(t, full, nil, false), "\n") {
		p := strings.Fields(l)
		switch {
		case len(p) > 4 && p[0] == "FUNC":
			m[p[1]+" "+strings.Join(p[4:], " ")] = true
		case len(p) > 3 && p[0] == "PUBLIC":
			m[p[1]+" "+strings.Join(p[3:], " ")] = true
		}
	}
	// A FUNC name carries parameters; the symbol table's does not.
	for k := range m {
		if i := strings.IndexByte(k, '('); i > 0 {
			m[k[:i]] = true
		}
	}
	return m
}

// TestMultipleMarker checks -m on libc, whose symbol tables hold many
// aliases: some records get the "m" marker, and without the markers the
// records are those written without -m.
func TestMultipleMarker(t *testing.T) {
	bin := corpus.File(t, "debian/libc/libc.so.6")
	dir := corpus.File(t, "debian/libc/usr-lib-debug/.build-id/93")
	plain := dumpText(t, bin, []string{dir}, false)
	s, err := Dump(bin, dumpsyms.Options{DebugDirs: []string{dir}, Multiple: true})
	if err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	if err := s.Write(&b); err != nil {
		t.Fatal(err)
	}
	marked := strings.Count(b.String(), "\nFUNC m ") + strings.Count(b.String(), "\nPUBLIC m ")
	if marked == 0 {
		t.Fatal("no FUNC m or PUBLIC m records")
	}
	unmarked := strings.NewReplacer("\nFUNC m ", "\nFUNC ", "\nPUBLIC m ", "\nPUBLIC ").Replace(b.String())
	if unmarked != plain {
		t.Error("-m changed more than the markers")
	}
	t.Logf("%d records marked", marked)
}
