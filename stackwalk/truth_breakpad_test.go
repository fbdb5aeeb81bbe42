package stackwalk_test

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/gobreakpad/gobreakpad/arch"
	"github.com/gobreakpad/gobreakpad/minidump"
)

// breakpadStackwalkEnv names Google Breakpad's own minidump_stackwalk
// (tools/breakpad/build.sh builds it); TestTruthBreakpad skips without it.
const breakpadStackwalkEnv = "GOBREAKPAD_BREAKPAD_STACKWALK"

// breakpadMisses are the truth frames Breakpad finds and we do not: the
// chains ("GROUP/CASE VARIANT CHAIN") a pattern matches, the frames lost
// and why. TestTruthBreakpad fails on any other loss, and on a listed one
// that is gone.
var breakpadMisses = []struct {
	chains *regexp.Regexp
	lost   []string
	why    string
}{
	{regexp.MustCompile(`^threads/segv-arm64-O2nofp nocfi main$`), []string{"__libc_start_main_impl"},
		"both skip main and __libc_start_call_main after wait_for: Breakpad's frame pointer chain lands in " +
			"__libc_start_main_impl, our decoding of wait_for's code in _start (as many truth frames found)"},
}

// TestTruthDumpsBreakpadPairs checks, without Breakpad, that Breakpad
// reads the thread contexts of every dump of the own truth corpus (our
// writer's arm64 dumps were unreadable to it before).
func TestTruthDumpsBreakpadPairs(t *testing.T) {
	for _, c := range noCFICases(t) {
		if err := breakpadPairs(t, filepath.Join(c.dir, "crash.dmp")); err != nil {
			t.Errorf("%s/%s: %v", c.group, c.name, err)
		}
	}
}

// breakpadMiss returns why the chain what may lose the truth frames lost
// to Breakpad, if breakpadMisses says so.
func breakpadMiss(what string, lost []string) (string, bool) {
	for _, m := range breakpadMisses {
		if m.chains.MatchString(what) && slices.Equal(m.lost, lost) {
			return m.why, true
		}
	}
	return "", false
}

// crashThreadIndex returns the crashing thread's index of a -m report (0
// without a Crash line naming one).
func crashThreadIndex(m []byte) int {
	for _, l := range strings.Split(string(m), "\n") {
		p := strings.Split(l, "|")
		if p[0] == "Crash" && len(p) >= 4 && p[3] != "" {
			if n, err := strconv.Atoi(p[3]); err == nil {
				return n
			}
		}
	}
	return 0
}

// breakpadPairs reports whether every thread context of a dump pairs with
// its system info's processor architecture as Breakpad's
// MinidumpContext::CheckAgainstSystemInfo requires, which reads no context
// of a thread that fails it (so no frame): for arm64, ArchARM64 (0xc) with
// the current context (flags 0x400000), ArchARM64Old (0x8003) only with
// the old one (flags 0x80000000). Our reader takes either pairing.
func breakpadPairs(t *testing.T, dump string) error {
	t.Helper()
	f, err := minidump.Open(dump)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	si, err := f.SystemInfo()
	if err != nil {
		return err
	}
	threads, err := f.ThreadList()
	if err != nil {
		return err
	}
	a := si.ProcessorArchitecture
	for _, th := range threads {
		c := th.Context
		if c == nil || c.CPU != arch.ARM64 {
			continue
		}
		if c.ARM64Old != nil && a != minidump.ArchARM64Old || c.ARM64Old == nil && a != minidump.ArchARM64 {
			return fmt.Errorf("thread %d: arm64 context (old layout: %v) beside CPU %#x", th.ThreadID, c.ARM64Old != nil, a)
		}
	}
	return nil
}

// truthFoundSet returns the truth frames (by index) alignTruth's
// alignment of ours with truth finds.
func truthFoundSet(ours, truth []string) map[int]bool {
	dp := alignTable(ours, truth)
	found := map[int]bool{}
	i, j := len(ours), len(truth)
	for i > 0 && j > 0 {
		switch {
		case truth[j-1] != "" && ours[i-1] == truth[j-1] &&
			dp[i][j] == (alignCell{dp[i-1][j-1].hits + 1, dp[i-1][j-1].covered + 1}):
			found[j-1] = true
			i, j = i-1, j-1
		case truth[j-1] == "" && dp[i][j] == (alignCell{dp[i-1][j-1].hits, dp[i-1][j-1].covered + 1}):
			i, j = i-1, j-1
		case dp[i][j] == dp[i-1][j]:
			i--
		default:
			j--
		}
	}
	return found
}

// TestTruthBreakpad walks every case of the own truth corpus
// (testdata/truth/{calls,threads,cxx,realign}, testdata/signal) with
// Breakpad's minidump_stackwalk -m (the binary $GOBREAKPAD_BREAKPAD_STACKWALK
// names) and with ours, with the case's symbols (sym) and with their STACK
// records removed (nocfi), and compares both with gdb's truth: the
// crashing thread's truth.txt and, for threads, the main thread's
// truth-main.txt. It logs a table of truth frames found and spurious
// frames per group, architecture and optimisation (docs/stackwalk.md,
// "Breakpad on our truth corpus") and fails when Breakpad finds a truth
// frame ours misses, but for the breakpadMisses.
func TestTruthBreakpad(t *testing.T) {
	bin := os.Getenv(breakpadStackwalkEnv)
	if bin == "" {
		t.Skipf("$%s is not set (tools/breakpad/build.sh builds Breakpad's minidump_stackwalk)", breakpadStackwalkEnv)
	}
	if _, err := os.Stat(bin); err != nil {
		t.Skipf("$%s: %v", breakpadStackwalkEnv, err)
	}
	type key struct{ variant, group, arch, opt string }
	type pair struct{ bp, ours noCFIScore }
	rows := map[key]*pair{}
	totals := map[string]*pair{}
	get := func(m map[key]*pair, k key) *pair {
		if m[k] == nil {
			m[k] = &pair{}
		}
		return m[k]
	}
	var misses, gains []string
	for _, c := range noCFICases(t) {
		full := filepath.Join(c.dir, "symbols")
		dump := filepath.Join(c.dir, "crash.dmp")
		if err := breakpadPairs(t, dump); err != nil {
			t.Errorf("%s: Breakpad reads no context: %v", dump, err)
		}
		for _, v := range []struct{ name, syms string }{{"sym", full}, {"nocfi", withoutCFI(t, c.dir)}} {
			out, err := exec.Command(bin, "-m", dump, v.syms).Output()
			if err != nil {
				t.Fatalf("%s -m %s %s: %v", bin, dump, v.syms, err)
			}
			m := walkM(t, dump, v.syms, false)
			type chain struct {
				name     string
				truth    []string
				bp, ours []string
			}
			chains := []chain{{name: "crash", truth: c.truth,
				bp: namedCrashChain(t, out, full), ours: namedCrashChain(t, m, full)}}
			if main := filepath.Join(c.dir, "truth-main.txt"); fileExists(main) {
				chains = append(chains, chain{name: "main", truth: readTruthFile(t, main),
					bp:   namedThreadChain(t, out, full, 1-crashThreadIndex(out)),
					ours: namedThreadChain(t, m, full, 1-crashThreadIndex(m))})
			}
			k := key{v.name, c.group, c.arch, c.opt}
			if totals[v.name] == nil {
				totals[v.name] = &pair{}
			}
			for _, ch := range chains {
				for _, p := range []*pair{get(rows, k), totals[v.name]} {
					p.bp.add(ch.truth, ch.bp)
					p.ours.add(ch.truth, ch.ours)
				}
				what := fmt.Sprintf("%s/%s %s %s", c.group, c.name, v.name, ch.name)
				bpSet, ourSet := truthFoundSet(ch.bp, ch.truth), truthFoundSet(ch.ours, ch.truth)
				var lost, won []string
				for j := range ch.truth {
					if bpSet[j] && !ourSet[j] {
						lost = append(lost, ch.truth[j])
					}
					if ourSet[j] && !bpSet[j] {
						won = append(won, ch.truth[j])
					}
				}
				if len(lost) > 0 {
					misses = append(misses, what)
					if why, ok := breakpadMiss(what, lost); ok {
						t.Logf("%s: Breakpad finds %q, ours not (known: %s)", what, lost, why)
					} else {
						t.Errorf("%s: Breakpad finds %q, ours not\n  breakpad %q\n  ours     %q\n  truth    %q",
							what, lost, ch.bp, ch.ours, ch.truth)
					}
				}
				if len(won) > 0 {
					gains = append(gains, fmt.Sprintf("%s: %q", what, won))
				}
				if testing.Verbose() && !slices.Equal(ch.bp, ch.ours) {
					bf, bs := alignTruth(ch.bp, ch.truth)
					of, ospur := alignTruth(ch.ours, ch.truth)
					t.Logf("%s: breakpad %d found %d spurious, ours %d found %d spurious\n  breakpad %q\n  ours     %q\n  truth    %q",
						what, bf, bs, of, ospur, ch.bp, ch.ours, ch.truth)
				}
			}
		}
	}
	for _, m := range breakpadMisses {
		if !slices.ContainsFunc(misses, m.chains.MatchString) {
			t.Errorf("breakpadMisses %s: no such loss any more", m.chains)
		}
	}
	keys := make([]key, 0, len(rows))
	for k := range rows {
		keys = append(keys, k)
	}
	sort.Slice(keys, func(i, j int) bool {
		a, b := keys[i], keys[j]
		return fmt.Sprint(a.variant, a.group, a.arch, a.opt) < fmt.Sprint(b.variant, b.group, b.arch, b.opt)
	})
	var tab strings.Builder
	tab.WriteString("| symbols | group | arch | opt | chains | truth frames | Breakpad found | Breakpad spurious | Breakpad exact | ours found | ours spurious | ours exact |\n")
	tab.WriteString("|---|---|---|---|---:|---:|---:|---:|---:|---:|---:|---:|\n")
	row := func(k key, p *pair) {
		fmt.Fprintf(&tab, "| %s | %s | %s | %s | %d | %d | %d | %d | %d | %d | %d | %d |\n", k.variant, k.group, k.arch, k.opt,
			p.bp.cases, p.bp.named, p.bp.found, p.bp.spurious, p.bp.exact, p.ours.found, p.ours.spurious, p.ours.exact)
	}
	for _, k := range keys {
		row(k, rows[k])
	}
	for _, v := range []string{"sym", "nocfi"} {
		row(key{v, "all", "", ""}, totals[v])
	}
	t.Logf("Breakpad (%s) and ours against gdb's truth:\n%s", bin, tab.String())
	sort.Strings(gains)
	t.Logf("truth frames ours finds and Breakpad does not, in %d chains:\n%s", len(gains), strings.Join(gains, "\n"))
}

func fileExists(path string) bool {
	_, err := os.Stat(path)
	return err == nil
}
