package cfi

import (
	"bufio"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/gobreakpad/gobreakpad/internal/testkit/corpus"
)

// cpuEvaluator returns an Evaluator for a MODULE line's architecture, with
// the register names Breakpad's dump_syms writes for it.
func cpuEvaluator(t testing.TB, arch string) *Evaluator {
	var names []string
	size := 8
	switch arch {
	case "x86":
		size, names = 4, x86Names
	case "x86_64", "amd64":
		names = amd64Names
	case "arm":
		size = 4
		for i := 0; i <= 12; i++ {
			names = append(names, "r"+strconv.Itoa(i))
		}
		names = append(names, "sp", "lr", "pc")
	case "arm64":
		for i := 0; i <= 30; i++ {
			names = append(names, "x"+strconv.Itoa(i))
		}
		names = append(names, "sp", "pc")
	case "mips", "ppc", "sparc":
		size = 4
	}
	return mustEvaluator(t, size, names...)
}

// symStats counts what the corpus test compiled.
type symStats struct {
	files, cfiInit, cfiDelta, win, winPrograms int
	regRulesFailing                            int
	noCFA, noRA                                int
	distinct                                   int
}

// TestCorpus compiles every STACK CFI and STACK WIN record of every .sym
// file in the shared corpus: each STACK CFI INIT record alone and with each
// of its delta records in turn (the rule sets a walker meets), and each
// STACK WIN program string, which must also pass Check.
func TestCorpus(t *testing.T) {
	root := corpus.Dir(t)
	var st symStats
	evs := map[string]*Evaluator{}           // by architecture, sharing caches across files
	seen := map[*Evaluator]map[string]bool{} // distinct texts checked against Breakpad's semantics
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(path, ".sym") {
			return err
		}
		st.files++
		rel, _ := filepath.Rel(root, path)
		compileSymFile(t, rel, path, evs, seen, &st)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if st.files == 0 {
		t.Fatal("no .sym files in the corpus")
	}
	t.Logf("%d .sym files: %d STACK CFI INIT and %d delta records, %d STACK WIN records (%d program strings) compiled",
		st.files, st.cfiInit, st.cfiDelta, st.win, st.winPrograms)
	t.Logf("%d distinct texts evaluated as Breakpad does", st.distinct)
	t.Logf("unusable rule sets in force: %d without .cfa, %d without .ra; register rules that always fail: %d",
		st.noCFA, st.noRA, st.regRulesFailing)
}

func compileSymFile(t *testing.T, rel, path string, evs map[string]*Evaluator, seen map[*Evaluator]map[string]bool, st *symStats) {
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var ev *Evaluator
	var texts []string // the current INIT record's rules and deltas so far
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 1<<24)
	for line := 1; sc.Scan(); line++ {
		s := strings.TrimRight(sc.Text(), "\r")
		if strings.HasPrefix(s, "MODULE ") {
			f := strings.Fields(s)
			if len(f) < 3 {
				t.Fatalf("%s:%d: bad MODULE line", rel, line)
			}
			if ev = evs[f[2]]; ev == nil {
				ev = cpuEvaluator(t, f[2])
				evs[f[2]] = ev
				seen[ev] = map[string]bool{}
			}
			continue
		}
		if !strings.HasPrefix(s, "STACK ") {
			continue
		}
		if ev == nil {
			t.Fatalf("%s:%d: STACK before MODULE", rel, line)
		}
		switch {
		case strings.HasPrefix(s, "STACK CFI INIT "):
			st.cfiInit++
			rules, ok := afterFields(s, 5)
			if !ok {
				t.Errorf("%s:%d: short STACK CFI INIT line", rel, line)
				continue
			}
			texts = append(texts[:0], rules)
			compareDistinct(t, ev, seen[ev], rules, st)
		case strings.HasPrefix(s, "STACK CFI "):
			st.cfiDelta++
			rules, ok := afterFields(s, 3)
			if !ok || len(texts) == 0 {
				t.Errorf("%s:%d: bad STACK CFI delta line", rel, line)
				continue
			}
			texts = append(texts, rules)
			compareDistinct(t, ev, seen[ev], rules, st)
		case strings.HasPrefix(s, "STACK WIN "):
			st.win++
			f := strings.Fields(s)
			if len(f) < 13 {
				t.Errorf("%s:%d: short STACK WIN line", rel, line)
				continue
			}
			if f[11] != "1" {
				continue // no program string
			}
			st.winPrograms++
			prog, _ := afterFields(s, 12)
			compareDistinct(t, ev, seen[ev], prog, st)
			p, err := ev.Program(prog)
			if err == nil {
				err = p.Check()
			}
			if err != nil {
				t.Errorf("%s:%d: %v", rel, line, err)
			}
			continue
		default:
			t.Errorf("%s:%d: unknown STACK record", rel, line)
			continue
		}
		// The rule set in force after this record, as a walker gets it
		// (cached: the corpus has 1.4 million of these, 40 thousand
		// distinct).
		rs, err := ev.RuleSet(texts...)
		if err != nil {
			t.Errorf("%s:%d: %v", rel, line, err)
			continue
		}
		switch err := rs.Err(); {
		case err == nil:
		case errors.Is(err, ErrNoCFA):
			st.noCFA++ // signal trampolines: ".ra: $rip" alone
		case errors.Is(err, ErrNoRA):
			st.noRA++ // _start: the return address is undefined
		default:
			t.Errorf("%s:%d: %v", rel, line, err)
		}
		for _, r := range rs.regs {
			if r.prog != nil && r.prog.CheckValue() != nil {
				st.regRulesFailing++
			}
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatalf("%s: %v", rel, err)
	}
}

// afterFields returns what follows the first n space-separated fields of s.
func afterFields(s string, n int) (string, bool) {
	for range n {
		_, rest, ok := strings.Cut(s, " ")
		if !ok {
			return "", false
		}
		s = rest
	}
	return s, true
}

// compareDistinct checks a rule text or program string the first time the
// test meets it: evaluated as a program, as a rule text alone and as a delta
// after a usable INIT, on a frame whose registers all point into a stack
// of known words, the results must be Breakpad's (refEvaluator).
func compareDistinct(t *testing.T, ev *Evaluator, seen map[string]bool, text string, st *symStats) {
	if seen[text] {
		return
	}
	seen[text] = true
	st.distinct++
	const base = 0x10000
	var regs Registers
	for i := 0; i < ev.NumRegisters(); i++ {
		regs.Set(i, base+0x100+8*uint64(i))
	}
	words := make([]uint64, 0x400/8)
	for i := range words {
		words[i] = base + 0x200 + uint64(i)*24
	}
	mem := newStack(base, ev.AddrSize(), words...)
	checkProgram(t, ev, text, regs, mem)
	checkRules(t, ev, regs, mem, text)
	sp := "$sp"
	for _, n := range []string{"$rsp", "$esp", "sp"} {
		if _, ok := ev.Index(n); ok {
			sp = n
		}
	}
	checkRules(t, ev, regs, mem, ".cfa: "+sp+" 16 + .ra: .cfa -8 + ^", text)
}
