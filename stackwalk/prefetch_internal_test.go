package stackwalk

import (
	"bufio"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gobreakpad/gobreakpad/internal/testkit/corpus"
	"github.com/gobreakpad/gobreakpad/minidump"
	"github.com/gobreakpad/gobreakpad/symbols"
	symbreakpad "github.com/gobreakpad/gobreakpad/symbols/breakpad"
)

// TestPrefetchOrder checks the modules a prefetch lists for the corpus
// cases (one build of each generated program): the requesting thread's first frame's module comes first, and every
// module a frame of the walk is in is listed.
func TestPrefetchOrder(t *testing.T) {
	dir := corpus.Dir(t)
	f, err := os.Open(filepath.Join(dir, "cases.tsv"))
	if err != nil {
		t.Skipf("cases.tsv: %v", err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		fields := strings.Split(sc.Text(), "\t")
		if len(fields) < 4 || strings.HasPrefix(fields[0], "perf-") || strings.HasPrefix(fields[0], "gen-") && !strings.HasSuffix(fields[0], "-O2") {
			// The big perf files, and one build of each generated program.
			continue
		}
		md, err := minidump.Open(filepath.Join(dir, fields[1]))
		if err != nil {
			continue
		}
		var roots []string
		for _, s := range strings.Fields(fields[3]) {
			roots = append(roots, filepath.Join(dir, s))
		}
		dirs := symbreakpad.NewDirs(roots...)
		p, _ := Process(md, Options{Symbols: dirs})
		if p != nil {
			order := p.prefetchOrder(p.moduleMap())
			listed := map[symbols.Module]bool{}
			for _, m := range order {
				listed[m] = true
			}
			key := func(m *Module) symbols.Module {
				return symbols.Module{CodeFile: m.CodeFile, CodeID: m.CodeID, DebugFile: m.DebugFile, DebugID: m.DebugID}
			}
			if r := p.RequestingThread; r >= 0 && r < len(p.Threads) && len(p.Threads[r].Frames) > 0 {
				if m := p.Threads[r].Frames[0].Module; m != nil && order[0] != key(m) {
					t.Errorf("%s: first listed %s, want the crash's %s", fields[0], order[0].DebugFile, m.DebugFile)
				}
			}
			for _, cs := range p.Threads {
				for _, fr := range cs.Frames {
					if fr.Module != nil && !listed[key(fr.Module)] {
						t.Errorf("%s: thread %d: frame in %s, not listed", fields[0], cs.ThreadID, fr.Module.DebugFile)
					}
				}
			}
		}
		dirs.Close()
		md.Close()
	}
}

// TestPrefetchOrderHostile lists the modules of every dump of the corpus,
// the hostile ones included (200,000 threads sharing one context): no
// panic.
func TestPrefetchOrderHostile(t *testing.T) {
	dir := corpus.Dir(t)
	var dumps []string
	filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err == nil && strings.HasSuffix(p, ".dmp") {
			dumps = append(dumps, p)
		}
		return nil
	})
	for _, d := range dumps {
		md, err := minidump.Open(d)
		if err != nil {
			continue
		}
		if p, _ := Read(md); p != nil {
			p.prefetchOrder(p.moduleMap())
		}
		md.Close()
	}
}
