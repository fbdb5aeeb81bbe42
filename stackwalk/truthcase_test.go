package stackwalk_test

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/gobreakpad/gobreakpad/minidump"
	"github.com/gobreakpad/gobreakpad/stackwalk"
	"github.com/gobreakpad/gobreakpad/symbols"
	symbreakpad "github.com/gobreakpad/gobreakpad/symbols/breakpad"
	"github.com/gobreakpad/gobreakpad/symbols/cache"
	"github.com/gobreakpad/gobreakpad/symbols/elfimage"
	"github.com/gobreakpad/gobreakpad/symbols/pdbsyms"
)

// The case folders of our own truth corpus (testdata/truth/GROUP/CASE and
// testdata/signal/CASE, made by their generate.sh) hold crash.dmp,
// symbols/, truth.txt (gdb's backtrace at the fatal signal as
// "N<TAB>function" lines), and optionally info.txt
// (truth_tailcall_frames=N...: the frames of truth.txt gdb made from DWARF
// call-site records) and other truths (truth-main.txt). walkTruth walks a
// case and compares its crashing thread with truth.txt; matchChain
// compares any chain with a truth.

// truthFile is a truth.txt read as normalised names.
type truthFile struct {
	chain []string // the frames to find, "" where gdb names none (or the signal frame)
	tails []string // the tail call frames info.txt lists, left out of chain
	// full is the whole of truth.txt; optional marks its tail call frames.
	full     []string
	optional []bool
}

// loadTruth reads a truth file with the tail call frames the info.txt
// beside it lists for it (only truth.txt has them).
func loadTruth(t *testing.T, path string) truthFile {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	skip := map[int]bool{}
	if filepath.Base(path) == "truth.txt" {
		if info, err := os.ReadFile(filepath.Join(filepath.Dir(path), "info.txt")); err == nil {
			for _, l := range strings.Split(string(info), "\n") {
				if v, ok := strings.CutPrefix(l, "truth_tailcall_frames="); ok {
					for _, f := range strings.Fields(v) {
						n, _ := strconv.Atoi(f)
						skip[n] = true
					}
				}
			}
		}
	}
	var tf truthFile
	for _, l := range strings.Split(strings.TrimSpace(string(b)), "\n") {
		num, fn, _ := strings.Cut(l, "\t")
		n, err := strconv.Atoi(num)
		if err != nil {
			t.Fatalf("%s: bad line %q", path, l)
		}
		if fn == "<signal handler called>" {
			fn = "" // stands where a walker shows the trampoline
		}
		name := normName(fn)
		tf.full = append(tf.full, name)
		tf.optional = append(tf.optional, skip[n])
		if skip[n] {
			tf.tails = append(tf.tails, name)
			continue
		}
		tf.chain = append(tf.chain, name)
	}
	return tf
}

// readTruthFile returns a truth file's chain: gdb's frames as normalised
// names, less the tail call frames info.txt lists.
func readTruthFile(t *testing.T, path string) []string {
	t.Helper()
	return loadTruth(t, path).chain
}

// truthOptions say how walkTruth walks a case.
type truthOptions struct {
	symbols string            // the symbol folder; the case's symbols/ when empty
	walk    stackwalk.Options // Symbols and ImageSymbols are set by walkTruth
	// peDirs are searched after it for PDBs and PEs (symbols/pdbsyms,
	// converted into a temporary cache), as minidump_stackwalk searches its
	// symbol path.
	peDirs []string
}

// truthWalk is the walk of a case compared with its truth.txt.
type truthWalk struct {
	p     *stackwalk.ProcessState
	m     []byte // the -m report
	truth truthFile
	chainMatch
}

// walkTruth walks dir/crash.dmp with the case's symbols (as
// minidump_stackwalk does with a symbol path, with the images' own symbols
// for modules without a file: the vDSO) and compares the crashing thread
// with dir/truth.txt.
func walkTruth(t *testing.T, dir string, o truthOptions) *truthWalk {
	t.Helper()
	f, err := minidump.Open(filepath.Join(dir, "crash.dmp"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
	if o.symbols == "" {
		o.symbols = filepath.Join(dir, "symbols")
	}
	syms := symbreakpad.NewDirs(o.symbols)
	t.Cleanup(func() { syms.Close() })
	opt := o.walk
	opt.Symbols, opt.ImageSymbols = syms, elfimage.Load
	if len(o.peDirs) > 0 {
		conv := &pdbsyms.Converter{Cache: &cache.Cache{Dir: t.TempDir()}}
		t.Cleanup(func() { conv.Close() })
		opt.Symbols = symbols.Chain{syms, pdbsyms.NewDirs(conv, o.peDirs...)}
	}
	p, err := stackwalk.Process(f, opt)
	if err != nil {
		t.Fatal(err)
	}
	var m bytes.Buffer
	if err := stackwalk.PrintMachineReadable(&m, p); err != nil {
		t.Fatal(err)
	}
	w := &truthWalk{p: p, m: m.Bytes(), truth: loadTruth(t, filepath.Join(dir, "truth.txt"))}
	ours, _ := crashChain(w.m)
	w.chainMatch = matchChain(ours, w.truth.chain)
	return w
}

// chainMatch is a walked chain aligned with a truth (alignTruth).
type chainMatch struct {
	ours, truth            []string
	found, spurious, named int // named: the truth frames with a name
}

func matchChain(ours, truth []string) chainMatch {
	c := chainMatch{ours: ours, truth: truth}
	c.found, c.spurious = alignTruth(ours, truth)
	for _, n := range truth {
		if n != "" {
			c.named++
		}
	}
	return c
}

// allFound says whether every named truth frame was found and no frame of
// ours is spurious.
func (c chainMatch) allFound() bool { return c.found == c.named && c.spurious == 0 }

// exact is allFound with as many frames as the truth (its unnamed frames
// matched too).
func (c chainMatch) exact() bool { return c.allFound() && len(c.ours) == len(c.truth) }

func (c chainMatch) String() string {
	return fmt.Sprintf("%d of %d found, %d spurious\n%s", c.found, c.named, c.spurious, truthDiff(c.ours, c.truth))
}

// truthDiff shows ours beside the truth as alignTruth aligns them: "=" a
// frame found, "?" a frame of ours where gdb names none, "+" a spurious
// frame of ours, "-" a truth frame not found.
func truthDiff(ours, truth []string) string {
	dp := alignTable(ours, truth)
	var rows []string
	i, j := len(ours), len(truth)
	for i > 0 || j > 0 {
		switch {
		case i > 0 && j > 0 && truth[j-1] != "" && ours[i-1] == truth[j-1] &&
			dp[i][j] == (alignCell{dp[i-1][j-1].hits + 1, dp[i-1][j-1].covered + 1}):
			rows = append(rows, fmt.Sprintf("= %-40s %s", ours[i-1], truth[j-1]))
			i, j = i-1, j-1
		case i > 0 && j > 0 && truth[j-1] == "" && dp[i][j] == (alignCell{dp[i-1][j-1].hits, dp[i-1][j-1].covered + 1}):
			rows = append(rows, fmt.Sprintf("? %-40s ??", ours[i-1]))
			i, j = i-1, j-1
		case i > 0 && (j == 0 || dp[i][j] == dp[i-1][j]):
			rows = append(rows, fmt.Sprintf("+ %-40s", ours[i-1]))
			i--
		default:
			name := truth[j-1]
			if name == "" {
				name = "??"
			}
			rows = append(rows, fmt.Sprintf("- %-40s %s", "", name))
			j--
		}
	}
	var b strings.Builder
	fmt.Fprintf(&b, "  %-40s %s\n", "ours", "truth")
	for k := len(rows) - 1; k >= 0; k-- {
		b.WriteString(strings.TrimRight(rows[k], " ") + "\n")
	}
	return b.String()
}

// knownMiss is the result a truth case is known to have instead of the
// whole truth, and why.
type knownMiss struct {
	found, spurious int
	why             string
}

// checkMatch checks a chain against its truth: every truth frame found in
// order and nothing else (exact), unless the case is a known miss, which
// must then give exactly the recorded counts (a change either way is news).
func checkMatch(t *testing.T, what string, c chainMatch, miss knownMiss, isMiss bool) {
	t.Helper()
	t.Logf("%s: %d of %d found, %d spurious", what, c.found, c.named, c.spurious)
	if isMiss {
		if c.found != miss.found || c.spurious != miss.spurious {
			t.Errorf("%s: known miss says %d found, %d spurious (%s); %s", what, miss.found, miss.spurious, miss.why, c)
		}
		return
	}
	if !c.exact() {
		t.Errorf("%s: %s", what, c)
	}
}

// checkChain is checkMatch of ours against truth.
func checkChain(t *testing.T, what string, ours, truth []string, miss knownMiss, isMiss bool) {
	t.Helper()
	checkMatch(t, what, matchChain(ours, truth), miss, isMiss)
}

// threadChain returns the function names of thread index's frames in -m
// output.
func threadChain(m []byte, index int) []string {
	var chain []string
	want := strconv.Itoa(index)
	for _, l := range strings.Split(string(m), "\n") {
		p := strings.Split(l, "|")
		if len(p) >= 7 && p[0] == want {
			if _, err := strconv.Atoi(p[1]); err == nil {
				chain = append(chain, normName(p[3]))
			}
		}
	}
	return chain
}

// truthCases returns the case folders of testdata/truth/GROUP.
func truthCases(t *testing.T, group string) []string {
	return caseDirs(t, filepath.Join("../testdata/truth", group, "*-*-*"))
}

// caseDirs returns the case folders matching a pattern.
func caseDirs(t *testing.T, pattern string) []string {
	t.Helper()
	dirs, _ := filepath.Glob(pattern)
	var out []string
	for _, d := range dirs {
		if fi, err := os.Stat(d); err == nil && fi.IsDir() {
			out = append(out, d)
		}
	}
	if len(out) == 0 {
		t.Fatalf("no cases %s", pattern)
	}
	return out
}

// TestTruthDiff checks that truthDiff shows alignTruth's alignment: as many
// "=" rows as frames found and "+" rows as spurious frames.
func TestTruthDiff(t *testing.T) {
	ours := []string{"crash", "extra", "level2", "x", "main", "_start"}
	truth := []string{"crash", "level1", "level2", "", "main"}
	got := truthDiff(ours, truth)
	want := `  ours                                     truth
= crash                                    crash
-                                          level1
+ extra
= level2                                   level2
? x                                        ??
= main                                     main
+ _start
`
	if got != want {
		t.Errorf("truthDiff:\n%s\nwant\n%s", got, want)
	}
	c := matchChain(ours, truth)
	if c.found != 3 || c.spurious != 2 || c.named != 4 || c.allFound() {
		t.Errorf("matchChain: %+v", c)
	}
}
