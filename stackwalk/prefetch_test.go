package stackwalk_test

import (
	"bytes"
	"strings"
	"sync"
	"testing"

	"github.com/gobreakpad/gobreakpad/minidump"
	"github.com/gobreakpad/gobreakpad/stackwalk"
	"github.com/gobreakpad/gobreakpad/symbols"
	symbreakpad "github.com/gobreakpad/gobreakpad/symbols/breakpad"
)

// firstAsked records the order in which modules are first asked for.
type firstAsked struct {
	src   symbols.Source
	mu    sync.Mutex
	order []string
	seen  map[string]bool
}

func (f *firstAsked) Load(m symbols.Module) (*symbols.Symbols, error) {
	f.mu.Lock()
	if !f.seen[m.DebugFile] {
		f.seen[m.DebugFile] = true
		f.order = append(f.order, m.DebugFile)
	}
	f.mu.Unlock()
	return f.src.Load(m)
}

// TestPrefetch walks the corpus cases (but the big perf ones, and one build
// of each generated program) with and without prefetching the modules'
// symbols: the reports and the modules' symbol flags are the same, whatever
// order the loads finish in (run with -race to check the sharing).
func TestPrefetch(t *testing.T) {
	for _, c := range loadCases(t) {
		if strings.HasPrefix(c.name, "perf-") || len(c.syms) == 0 || strings.HasPrefix(c.name, "gen-") && !strings.HasSuffix(c.name, "-O2") {
			// The big perf files, and one build of each generated program.
			continue
		}
		t.Run(c.name, func(t *testing.T) {
			report := func(prefetch int) (string, *firstAsked) {
				f, err := minidump.Open(c.dump)
				if err != nil {
					t.Fatal(err)
				}
				defer f.Close()
				dirs := symbreakpad.NewDirs(c.syms...)
				defer dirs.Close()
				src := &firstAsked{src: dirs, seen: map[string]bool{}}
				p, err := stackwalk.Process(f, stackwalk.Options{Symbols: src, Prefetch: prefetch, Workers: 2})
				if p == nil {
					t.Skipf("nothing read: %v", err)
				}
				var b bytes.Buffer
				if err := stackwalk.Print(&b, p, stackwalk.PrintOptions{}); err != nil {
					t.Fatal(err)
				}
				if err := stackwalk.PrintMachineReadable(&b, p); err != nil {
					t.Fatal(err)
				}
				for _, m := range p.Modules {
					b.WriteString(m.CodeFile)
					for _, flag := range []bool{m.SymbolsLoaded, m.MissingSymbols, m.CorruptSymbols} {
						b.WriteString(map[bool]string{true: " 1", false: " 0"}[flag])
					}
					b.WriteString("\n")
				}
				return b.String(), src
			}
			plain, _ := report(0)
			pre, src := report(3)
			if plain != pre {
				compare(t, "prefetch", []byte(pre), []byte(plain))
			}
			if len(src.order) == 0 && len(c.syms) > 0 && strings.Contains(plain, "Module|") {
				t.Error("no module asked for")
			}
		})
	}
}
