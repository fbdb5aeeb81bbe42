package signature_test

import (
	"bufio"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/gobreakpad/gobreakpad/internal/testkit/corpus"
	"github.com/gobreakpad/gobreakpad/minidump"
	"github.com/gobreakpad/gobreakpad/stackwalk"
	"github.com/gobreakpad/gobreakpad/stackwalk/signature"
	symbreakpad "github.com/gobreakpad/gobreakpad/symbols/breakpad"
)

// corpusCase is one dump of the corpus with its symbol directories (none for
// dumps outside cases.tsv).
type corpusCase struct {
	name, dump string
	syms       []string
}

// corpusCases lists cases.tsv and then every other .dmp of the corpus.
func corpusCases(t *testing.T) []corpusCase {
	dir := corpus.Dir(t)
	f, err := os.Open(filepath.Join(dir, "cases.tsv"))
	if err != nil {
		t.Skipf("corpus cases.tsv: %v", err)
	}
	defer f.Close()
	var out []corpusCase
	seen := map[string]bool{}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		cols := strings.Split(sc.Text(), "\t")
		if len(cols) < 4 {
			continue
		}
		c := corpusCase{name: cols[0], dump: filepath.Join(dir, cols[1])}
		for _, s := range strings.Fields(cols[3]) {
			c.syms = append(c.syms, filepath.Join(dir, s))
		}
		seen[c.dump] = true
		out = append(out, c)
	}
	var rest []string
	filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() && strings.HasSuffix(p, ".dmp") && !seen[p] {
			rest = append(rest, p)
		}
		return nil
	})
	sort.Strings(rest)
	for _, p := range rest {
		rel, _ := filepath.Rel(dir, p)
		out = append(out, corpusCase{name: rel, dump: p})
	}
	return out
}

// symbolDirs shares one breakpad.Dirs per list of symbol directories among
// the walks of a test (the corpus's system-library symbols load once).
type symbolDirs map[string]*symbreakpad.Dirs

func (s symbolDirs) get(paths []string) *symbreakpad.Dirs {
	k := strings.Join(paths, "\x00")
	if s[k] == nil {
		s[k] = symbreakpad.NewDirs(paths...)
	}
	return s[k]
}

func (s symbolDirs) close() {
	for _, d := range s {
		d.Close()
	}
}

// walk returns the signature of a corpus dump walked with n workers, or ""
// when the dump cannot be read.
func walk(t *testing.T, c corpusCase, syms symbolDirs, workers int) string {
	f, err := minidump.Open(c.dump)
	if err != nil {
		return ""
	}
	defer f.Close()
	opt := stackwalk.Options{Workers: workers}
	if len(c.syms) > 0 {
		opt.Symbols = syms.get(c.syms)
	}
	st, err := stackwalk.Process(f, opt)
	if err != nil {
		return ""
	}
	return signature.Of(st)
}

// TestCorpusStable: every corpus dump's signature is the same on a second
// walk and with another number of workers, and never empty.
func TestCorpusStable(t *testing.T) {
	cases := corpusCases(t)
	syms := symbolDirs{}
	defer syms.close()
	sigs := map[string]int{}
	for _, c := range cases {
		a := walk(t, c, syms, 1)
		b := walk(t, c, syms, 4)
		if a != b {
			t.Errorf("%s: signature %q with 1 worker, %q with 4", c.name, a, b)
		}
		if a != "" {
			sigs[a]++
		}
		if testing.Verbose() {
			t.Logf("%-50s %s", c.name, a)
		}
	}
	t.Logf("%d dumps, %d distinct signatures", len(cases), len(sigs))
}

// TestProcessAnnotations: the signature of a walked corpus dump takes the
// dump's Crashpad annotations from the ProcessState, as stackwalk.Read
// carried them (an abort message given as one makes an "Abort |" mark).
func TestProcessAnnotations(t *testing.T) {
	f, err := minidump.Open(corpus.File(t, "breakpad/processor/minidump_crashpad_annotation.dmp"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	st, err := stackwalk.Process(f, stackwalk.Options{})
	if err != nil {
		t.Fatal(err)
	}
	g := signature.Default()
	if got := g.Process(st).Signature; strings.HasPrefix(got, "Abort |") {
		t.Errorf("without an abort message: %q", got)
	}
	st.Annotations = map[string]string{signature.AnnotationAbortMessage: "out of cheese"}
	if got := g.Process(st).Signature; !strings.HasPrefix(got, "Abort | out of cheese | ") {
		t.Errorf("with an abort message: %q", got)
	}
}

// TestSocorroDumps: real dumps signed as Socorro signs their --json
// reports: a call through a null pointer keeps its "@0x0" frame (gdb's
// truth: frame 0 at address 0, called from call_through), and a dump
// without a crashing thread (no exception stream) is signed by thread 0.
func TestSocorroDumps(t *testing.T) {
	for _, c := range []struct {
		name string
		dump string
		syms []string
		want string
	}{
		{"null call", "../../testdata/truth/calls/null-x64-O0/crash.dmp", []string{"../../testdata/truth/calls/null-x64-O0/symbols"}, "@0x0 | call_through"},
		// i386 natively, Breakpad's kind of dump: frame 0 is named
		// __kernel_vsyscall from the auxiliary vector, an irrelevant frame
		// as linux-gate.so's unnamed ones are.
		{"i386 abort in __kernel_vsyscall", "../../testdata/signal/x86-native-abort-nocode/crash.dmp",
			[]string{"../../testdata/signal/x86-native-abort-nocode/symbols"}, "gsignal | abort | on_segv_abort | level2"},
		{"no crashing thread", corpus.File(t, "breakpad/processor/tiny-exe-with-cet-xsave.dmp"), nil,
			"ntdll.dll@0xa39e4 | ntdll.dll@0x5b4c2 | kernelbase.dll@0x4b280 | tiny.exe@0x2923c"},
	} {
		syms := symbolDirs{}
		got := walk(t, corpusCase{name: c.name, dump: c.dump, syms: c.syms}, syms, 1)
		syms.close()
		if got != c.want {
			t.Errorf("%s: %q, want %q", c.name, got, c.want)
		}
	}
}
