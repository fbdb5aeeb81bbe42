package stackwalk_test

import (
	"bytes"
	"flag"
	"fmt"
	"os/exec"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/gobreakpad/gobreakpad/minidump"
	"github.com/gobreakpad/gobreakpad/stackwalk"
	"github.com/gobreakpad/gobreakpad/symbols"
	symbreakpad "github.com/gobreakpad/gobreakpad/symbols/breakpad"
	"github.com/gobreakpad/gobreakpad/symbols/elfimage"
)

// noCFIBase is a minidump_stackwalk binary (e.g. /work/base-bin's) whose
// walks TestTruthWithoutCFI measures beside ours; none by default.
var noCFIBase = flag.String("nocfi.base", "", "minidump_stackwalk binary to measure beside ours in TestTruthWithoutCFI")

// noCFICase is one case of the own truth corpus: its group, its name's
// architecture and optimisation, its folder and gdb's chain.
type noCFICase struct {
	group, arch, opt, name, dir string
	truth                       []string
}

// noCFICases returns every case of testdata/truth/{calls,threads,cxx,realign}
// and testdata/signal (built at -O1) with its truth (for calls, without the
// tail call frames gdb makes from DWARF call-site records).
func noCFICases(t *testing.T) []noCFICase {
	var out []noCFICase
	for _, g := range []string{"calls", "threads", "cxx", "realign"} {
		for _, dir := range truthCases(t, g) {
			name := filepath.Base(dir)
			p := strings.Split(name, "-")
			c := noCFICase{group: g, arch: p[1], opt: p[2], name: name, dir: dir}
			c.truth = readTruthFile(t, filepath.Join(dir, "truth.txt"))
			out = append(out, c)
		}
	}
	for _, dir := range caseDirs(t, "../testdata/signal/*-*") {
		name := filepath.Base(dir)
		arch, _, _ := strings.Cut(name, "-")
		out = append(out, noCFICase{group: "signal", arch: arch, opt: "O1", name: name, dir: dir,
			truth: readTruthFile(t, filepath.Join(dir, "truth.txt"))})
	}
	return out
}

// walkM walks a dump as minidump_stackwalk -m does with the symbol path
// symDir ("" for none), with --check-call-sites when checkCalls is set, and
// returns the -m report.
func walkM(t *testing.T, dump, symDir string, checkCalls bool) []byte {
	t.Helper()
	f, err := minidump.Open(dump)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	opt := stackwalk.Options{CheckCallSites: checkCalls}
	if symDir != "" {
		syms := symbreakpad.NewDirs(symDir)
		defer syms.Close()
		opt.Symbols, opt.ImageSymbols = syms, elfimage.Load
	}
	p, err := stackwalk.Process(f, opt)
	if err != nil {
		t.Fatal(err)
	}
	var m bytes.Buffer
	if err := stackwalk.PrintMachineReadable(&m, p); err != nil {
		t.Fatal(err)
	}
	return m.Bytes()
}

// namedCrashChain returns the crashing thread's function names of a -m
// report, naming the frames the walk left without a function from the
// case's own symbol files (symDir): a walk without symbols is judged by
// the frames it found, not by the names it could print.
func namedCrashChain(t *testing.T, m []byte, symDir string) []string {
	t.Helper()
	return namedThreadChain(t, m, symDir, -1)
}

// namedThreadChain is namedCrashChain for thread index (the crashing
// thread when index is negative).
func namedThreadChain(t *testing.T, m []byte, symDir string, index int) []string {
	t.Helper()
	lines := strings.Split(string(m), "\n")
	thread, cpu := "0", ""
	mods := map[string]symbols.Module{}
	for _, l := range lines {
		p := strings.Split(l, "|")
		switch {
		case p[0] == "Crash" && len(p) >= 4 && p[3] != "" && index < 0:
			thread = p[3]
		case p[0] == "CPU" && len(p) >= 2:
			cpu = p[1]
		case p[0] == "Module" && len(p) >= 5:
			mods[p[1]] = symbols.Module{CodeFile: p[1], DebugFile: p[3], DebugID: p[4]}
		}
	}
	if index >= 0 {
		thread = strconv.Itoa(index)
	}
	src := symbreakpad.NewDirs(symDir)
	defer src.Close()
	var chain []string
	for _, l := range lines {
		p := strings.Split(l, "|")
		if len(p) < 7 || p[0] != thread {
			continue
		}
		n, err := strconv.Atoi(p[1])
		if err != nil {
			continue
		}
		fn := p[3]
		if mod, ok := mods[p[2]]; ok && fn == "" {
			off, err := strconv.ParseUint(strings.TrimPrefix(p[6], "0x"), 16, 64)
			if err == nil {
				// x86 and amd64 print a caller's return address; the
				// call is the byte before.
				if n > 0 && (cpu == "x86" || cpu == "amd64") {
					off--
				}
				if s, err := src.Load(mod); err == nil && s.Lookup != nil {
					if sym, ok := s.Lookup.Lookup(off, false); ok {
						fn = sym.Function
					}
				}
			}
		}
		chain = append(chain, normName(fn))
	}
	return chain
}

// noCFIScore is frames of the truth found and spurious frames, summed.
type noCFIScore struct{ cases, named, found, spurious, exact int }

func (s *noCFIScore) add(truth, ours []string) {
	found, spurious := alignTruth(ours, truth)
	named := 0
	for _, n := range truth {
		if n != "" {
			named++
		}
	}
	s.cases++
	s.named += named
	s.found += found
	s.spurious += spurious
	if found == named && spurious == 0 {
		s.exact++
	}
}

// noCFIFloor is what TestTruthWithoutCFI requires of our walks, summed
// over all 155 cases (3072 truth frames): at least found truth frames, at
// most spurious frames. The session's base build finds 2290 (738
// spurious) without STACK records, 2289 (892) without symbols, 2278 (665)
// and 2277 (761) with --check-call-sites (docs/stackwalk.md), over the 142
// cases (2967 truth frames) there were then. With the symbol files trimmed
// before trim.go kept an end to each range, nocfi was 2749 (536) and
// nocfi+cc 2774 (164): stale words in dropped code named _start ended
// walks early, before the true frames that follow and the spurious ones a
// scan finds beside them (symbol files of every function's name give 2796
// (746) and 2803 (213)). The floors are this walker's sums since the 13
// signal/*-nocode cases (105 truth frames) came: their signal frames are
// recognised from the stack, and the walks go on past them as those of
// the other signal cases do, finding more true frames and the spurious
// ones those find; the build before that rule gives 2840 (753), 2338
// (911), 2849 (214) and 2353 (258) on the same 155 cases, and the same
// chains on the other cases. A signal handler's frame found by frame
// pointer is no longer taken for the trampoline (unwind/arm64
// markHandler): one more each with symbols (arm64-abort-nocode's
// on_segv_abort).
var noCFIFloor = map[string]struct{ found, spurious int }{
	"nocfi":    {2868, 784},
	"nosym":    {2353, 948},
	"nocfi+cc": {2881, 227},
	"nosym+cc": {2370, 275},
}

// TestTruthWithoutCFI walks every case of the own truth corpus as a dump
// whose modules have no CFI: with the STACK records removed from every
// symbol file (nocfi), and with no symbol file at all (nosym; frames are
// named afterwards from the case's symbol files, to be compared with gdb's
// chain), each as minidump_stackwalk walks by default and with
// --check-call-sites (+cc). It logs a table of truth frames found and spurious frames per
// group, architecture and optimisation (with -nocfi.base BINARY, the same
// for that minidump_stackwalk, e.g. the session's base build) and checks
// the sums against noCFIFloor.
func TestTruthWithoutCFI(t *testing.T) {
	cases := noCFICases(t)
	type key struct{ variant, group, arch, opt string }
	ours, base := map[key]*noCFIScore{}, map[key]*noCFIScore{}
	total := map[string]*noCFIScore{}
	get := func(m map[key]*noCFIScore, k key) *noCFIScore {
		if m[k] == nil {
			m[k] = &noCFIScore{}
		}
		return m[k]
	}
	for _, c := range cases {
		full := filepath.Join(c.dir, "symbols")
		dump := filepath.Join(c.dir, "crash.dmp")
		stripped := withoutCFI(t, c.dir)
		for _, v := range []struct {
			name, syms string
			checkCalls bool
		}{{"nocfi", stripped, false}, {"nosym", "", false}, {"nocfi+cc", stripped, true}, {"nosym+cc", "", true}} {
			k := key{v.name, c.group, c.arch, c.opt}
			chain := namedCrashChain(t, walkM(t, dump, v.syms, v.checkCalls), full)
			get(ours, k).add(c.truth, chain)
			if total[v.name] == nil {
				total[v.name] = &noCFIScore{}
			}
			total[v.name].add(c.truth, chain)
			if testing.Verbose() {
				f, s := alignTruth(chain, c.truth)
				t.Logf("%s %s/%s: %d found, %d spurious\n  ours  %q\n  truth %q", v.name, c.group, c.name, f, s, chain, c.truth)
			}
			if *noCFIBase == "" {
				continue
			}
			args := []string{"-m", dump}
			if v.checkCalls {
				args = []string{"-m", "--check-call-sites", dump}
			}
			if v.syms != "" {
				args = append(args, v.syms)
			}
			out, err := exec.Command(*noCFIBase, args...).Output()
			if err != nil {
				t.Fatalf("%s %s: %v", *noCFIBase, strings.Join(args, " "), err)
			}
			bchain := namedCrashChain(t, out, full)
			get(base, k).add(c.truth, bchain)
			if testing.Verbose() && !slices.Equal(bchain, chain) {
				f, s := alignTruth(bchain, c.truth)
				t.Logf("%s %s/%s base: %d found, %d spurious\n  base  %q", v.name, c.group, c.name, f, s, bchain)
			}
		}
	}
	keys := make([]key, 0, len(ours))
	for k := range ours {
		keys = append(keys, k)
	}
	sort.Slice(keys, func(i, j int) bool {
		a, b := keys[i], keys[j]
		return fmt.Sprint(a.variant, a.group, a.arch, a.opt) < fmt.Sprint(b.variant, b.group, b.arch, b.opt)
	})
	var tab strings.Builder
	tab.WriteString("| symbols | group | arch | opt | cases | truth frames | found | spurious | cases exact |")
	if *noCFIBase != "" {
		tab.WriteString(" base found | base spurious | base exact |")
	}
	tab.WriteString("\n")
	row := func(k key, o, b *noCFIScore) {
		fmt.Fprintf(&tab, "| %s | %s | %s | %s | %d | %d | %d | %d | %d |", k.variant, k.group, k.arch, k.opt, o.cases, o.named, o.found, o.spurious, o.exact)
		if b != nil {
			fmt.Fprintf(&tab, " %d | %d | %d |", b.found, b.spurious, b.exact)
		}
		tab.WriteString("\n")
	}
	sums := map[string]*noCFIScore{}
	for _, k := range keys {
		row(k, ours[k], base[k])
		if base[k] != nil {
			s := sums[k.variant]
			if s == nil {
				s = &noCFIScore{}
				sums[k.variant] = s
			}
			s.found += base[k].found
			s.spurious += base[k].spurious
			s.exact += base[k].exact
		}
	}
	for _, v := range []string{"nocfi", "nosym", "nocfi+cc", "nosym+cc"} {
		row(key{v, "all", "", ""}, total[v], sums[v])
	}
	t.Logf("truth frames found without CFI:\n%s", tab.String())
	for v, want := range noCFIFloor {
		got := total[v]
		if got.found < want.found || got.spurious > want.spurious {
			t.Errorf("%s: %d truth frames found, %d spurious; want at least %d found and at most %d spurious",
				v, got.found, got.spurious, want.found, want.spurious)
		}
	}
}
