package stackwalk_test

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/gobreakpad/gobreakpad/stackwalk"
)

// truthTop is how many frames of a chain are compared with the truth, as
// the conformance tool does.
const truthTop = 40

// aliases are names glibc gives one function; gdb and a symbol file may
// pick different ones.
var aliases = map[string]string{"gsignal": "raise", "__clone3": "clone3", "__clone": "clone", "___pthread_join": "pthread_join", "__pthread_kill_implementation": "pthread_kill"}

var gdbInternal = regexp.MustCompile(`\\s+`)

// normName is a function name without its parameter list, for comparing
// with gdb's names; "" for an unknown name.
func normName(fn string) string {
	fn = strings.TrimSpace(fn)
	if fn == "" || fn == "??" {
		return ""
	}
	if strings.HasSuffix(fn, ")") || strings.HasSuffix(fn, ") const") {
		depth, cut := 0, len(fn)
		for i := len(fn) - 1; i >= 0; i-- {
			if fn[i] == ')' {
				depth++
			} else if fn[i] == '(' {
				depth--
				if depth == 0 {
					cut = i
					break
				}
			}
		}
		fn = fn[:cut]
	}
	fn = strings.TrimPrefix(fn, "__GI_")
	fn = strings.ReplaceAll(fn, "(anonymous namespace)::", "")
	fn = strings.TrimSpace(gdbInternal.ReplaceAllString(fn, " "))
	if a, ok := aliases[fn]; ok {
		return a
	}
	return fn
}

// readTruth returns gdb's chain of the crashing thread for cases with a
// truth.txt (less gdb's invented tail-call frames, plus the inlined frames
// it hides at the stop pc, both from info.txt), or nil. Cases run without
// symbols have no truth to compare with.
func readTruth(t *testing.T, c walkCase) []string {
	dir := filepath.Dir(c.dump)
	b, err := os.ReadFile(filepath.Join(dir, "truth.txt"))
	if err != nil || strings.Contains(c.name, "-nosym") || len(c.syms) == 0 {
		return nil
	}
	skip := map[int]bool{}
	var out []string
	if info, err := os.ReadFile(filepath.Join(dir, "info.txt")); err == nil {
		for _, l := range strings.Split(string(info), "\n") {
			k, v, _ := strings.Cut(l, "=")
			v, _, _ = strings.Cut(v, "(")
			switch k {
			case "truth_tailcall_frames":
				for _, f := range strings.Fields(v) {
					n, _ := strconv.Atoi(f)
					skip[n] = true
				}
			case "truth_hidden_inline":
				for _, f := range strings.Split(v, ";") {
					if w := strings.Fields(f); len(w) > 0 {
						out = append(out, normName(w[0]))
					}
				}
			}
		}
	}
	sc := bufio.NewScanner(bytes.NewReader(b))
	for sc.Scan() {
		p := strings.Split(sc.Text(), "\t")
		n, err := strconv.Atoi(p[0])
		if len(p) < 2 || err != nil || skip[n] {
			continue
		}
		if p[1] == "<signal handler called>" {
			out = append(out, "") // stands where a walker shows the trampoline
		} else {
			out = append(out, normName(p[1]))
		}
	}
	return out
}

// crashChain returns the function names of the crashing thread's frames
// of -m output, and the output without them and with only the first
// (context) frame of each other thread: no truth is known for their
// callers, which this walker may find where Breakpad does not (realigned
// stacks, the entry point).
func crashChain(m []byte) (chain []string, rest string) {
	thread := "0"
	var keep []string
	lines := strings.Split(string(m), "\n")
	for _, l := range lines {
		p := strings.Split(l, "|")
		if p[0] == "Crash" && len(p) >= 4 && p[3] != "" {
			thread = p[3]
		}
	}
	for _, l := range lines {
		p := strings.Split(l, "|")
		if _, err := strconv.Atoi(p[0]); err == nil && len(p) >= 7 {
			if p[0] == thread {
				chain = append(chain, normName(p[3]))
				continue
			}
			if p[1] != "0" {
				continue
			}
		}
		keep = append(keep, l)
	}
	return chain, strings.Join(keep, "\n")
}

// alignTruth returns how many frames of truth ours shows in order, and
// how many frames of ours match nothing in it (a truth frame gdb could
// not name matches any one frame without counting as found).
func alignTruth(ours, truth []string) (found, spurious int) {
	dp := alignTable(ours, truth)
	end := dp[len(ours)][len(truth)]
	return end.hits, len(ours) - end.covered
}

// alignCell is the best alignment of prefixes of ours and truth: the named
// truth frames found, and the frames of ours paired with a truth frame.
type alignCell struct{ hits, covered int }

// alignTable is alignTruth's table: cell [i][j] aligns ours[:i] with
// truth[:j] (truthDiff walks it back).
func alignTable(ours, truth []string) [][]alignCell {
	better := func(a, b alignCell) alignCell {
		if a.hits != b.hits {
			if a.hits > b.hits {
				return a
			}
			return b
		}
		if a.covered >= b.covered {
			return a
		}
		return b
	}
	dp := make([][]alignCell, len(ours)+1)
	for i := range dp {
		dp[i] = make([]alignCell, len(truth)+1)
	}
	for i := range ours {
		for j := range truth {
			best := better(dp[i][j+1], dp[i+1][j])
			c := dp[i][j]
			if truth[j] != "" && ours[i] == truth[j] {
				best = better(best, alignCell{c.hits + 1, c.covered + 1})
			} else if truth[j] == "" {
				best = better(best, alignCell{c.hits, c.covered + 1})
			}
			dp[i+1][j+1] = best
		}
	}
	return dp
}

func top(s []string) []string {
	if len(s) > truthTop {
		return s[:truthTop]
	}
	return s
}

// compareTruth checks a case with a truth: the crashing thread finds at
// least the truth frames Breakpad finds and shows no more spurious frames
// than Breakpad, and the rest of the -m report (header, modules, the other
// threads' context frames) equals Breakpad's, but for the context frames
// named __kernel_vsyscall from the auxiliary vector (docs/compat.md B17),
// which Breakpad leaves unnamed.
func compareTruth(t *testing.T, c walkCase, p *stackwalk.ProcessState, wantM []byte, truth []string) {
	var got bytes.Buffer
	if err := stackwalk.PrintMachineReadable(&got, p); err != nil {
		t.Fatal(err)
	}
	gotM := got.String()
	for i, cs := range p.Threads {
		if i == p.RequestingThread || len(cs.Frames) == 0 {
			continue
		}
		if f := cs.Frames[0]; f.Function == "__kernel_vsyscall" && f.Module != nil && f.Module.MissingSymbols {
			ours := fmt.Sprintf("\n%d|0|%s|__kernel_vsyscall|||0x%x\n", i, f.Module.CodeFile, f.Instruction-f.FunctionBase)
			bp := fmt.Sprintf("\n%d|0|%s||||0x%x\n", i, f.Module.CodeFile, f.Instruction-f.Module.Base)
			if !strings.Contains(gotM, ours) {
				t.Fatalf("thread %d: no line %q", i, ours)
			}
			gotM = strings.Replace(gotM, ours, bp, 1)
		}
	}
	compareTruthM(t, []byte(gotM), wantM, truth)
}

// compareTruthM is compareTruth over our -m report.
func compareTruthM(t *testing.T, gotM, wantM []byte, truth []string) {
	ours, gotRest := crashChain(gotM)
	ref, wantRest := crashChain(wantM)
	truth = top(truth)
	of, os := alignTruth(top(ours), truth)
	bf, bs := alignTruth(top(ref), truth)
	t.Logf("truth: ours %d found, %d spurious; Breakpad %d found, %d spurious", of, os, bf, bs)
	if of < bf || os > bs {
		t.Errorf("truth: ours %d found, %d spurious; Breakpad %d found, %d spurious\\nours %q\\ntruth %q", of, os, bf, bs, ours, truth)
	}
	compare(t, "-m (crashing thread left out)", []byte(gotRest), []byte(wantRest))
}
