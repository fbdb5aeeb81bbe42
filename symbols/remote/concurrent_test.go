package remote

import (
	"io/fs"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/gobreakpad/gobreakpad/internal/testkit/corpus"
	"github.com/gobreakpad/gobreakpad/symbols"
	"github.com/gobreakpad/gobreakpad/symbols/pdbsyms"
	"github.com/gobreakpad/gobreakpad/symbols/symtest"
)

// TestConcurrentLoads loads modules through a chain of the three remote
// sources sharing one client (two downloads at once) from several
// goroutines at once (run with -race): a Breakpad store of the corpus's
// .sym files, a Microsoft symbol server holding a PE and a CAB-packed PDB,
// and a debuginfod-layout server of stripped ELF files with their debug
// files. Every goroutine gets the same answers, and no file is requested
// twice.
func TestConcurrentLoads(t *testing.T) {
	syms := corpus.File(t, "breakpad/processor/symbols")
	win := corpus.File(t, "windows")
	elfDir := corpus.File(t, "elf/x64-dw4/buildid")

	var mods []symbols.Module
	filepath.WalkDir(syms, func(p string, d fs.DirEntry, err error) error {
		if err == nil && strings.HasSuffix(p, ".sym") && !strings.Contains(p, "linux_inline") && !strings.Contains(p, "microdump") {
			rel, _ := filepath.Rel(syms, p)
			e := strings.Split(rel, string(filepath.Separator))
			mods = append(mods, symbols.Module{DebugFile: e[0], DebugID: e[1]})
		}
		return nil
	})
	if len(mods) < 7 {
		t.Fatalf("%d .sym files in %s", len(mods), syms)
	}

	// The symbol server's tree: a PE, and a PDB as its CAB.
	ms := t.TempDir()
	put := func(src string, elems ...string) {
		b, err := os.ReadFile(src)
		if err != nil {
			t.Skip(err)
		}
		putFile(t, b, ms, elems...)
	}
	basicID := "34060D222DBB44E5AA72243CE8326C2F2"
	put(filepath.Join(win, "mozilla", "basic32.pd_"), "basic32.pdb", basicID, "basic32.pd_")
	put(filepath.Join(win, "breakpad", "pe_only_symbol_test.dll"), "pe_only_symbol_test.dll", "5C8AD05F12000", "pe_only_symbol_test.dll")
	mods = append(mods, symbols.Module{DebugFile: "basic32.pdb", DebugID: basicID, CodeFile: "basic32.dll"},
		symbols.Module{DebugFile: "pe_only_symbol_test.pdb", DebugID: "2A5EAB481FAB4A17A9761CDC14FE531A1",
			CodeFile: `C:\app\pe_only_symbol_test.dll`, CodeID: "5C8AD05F12000"})

	// The debuginfod server's files, by build ID.
	elfFiles := map[string]string{}
	for _, name := range []string{"deep_chain", "inline_chain", "libshapes.so"} {
		id := symtest.BuildID(t, filepath.Join(elfDir, name))
		elfFiles[id] = name
		mods = append(mods, symbols.Module{CodeFile: "/usr/lib/" + name, CodeID: id, DebugFile: name, DebugID: "X"})
	}
	mods = append(mods, symbols.Module{DebugFile: "nothere.pdb", DebugID: "0123456789ABCDEF0123456789ABCDEF1"})

	var mu sync.Mutex
	asked := map[string]int{}
	count := func(h http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			mu.Lock()
			asked[r.Host+r.URL.Path]++
			mu.Unlock()
			h.ServeHTTP(w, r)
		})
	}
	bp := serve(t, count(http.FileServer(http.Dir(syms))))
	sv := serve(t, count(http.FileServer(http.Dir(ms))))
	di := serve(t, count(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		e := strings.Split(strings.TrimPrefix(r.URL.Path, "/"), "/")
		name, ok := elfFiles[e[len(e)-2]]
		switch {
		case !ok || len(e) != 3 || e[0] != "buildid":
			http.NotFound(w, r)
		case e[2] == "executable":
			http.ServeFile(w, r, filepath.Join(elfDir, name))
		case e[2] == "debuginfo":
			http.ServeFile(w, r, filepath.Join(elfDir, "debug", name))
		default:
			http.NotFound(w, r)
		}
	})))

	c := newClient(t)
	c.Parallel = 2
	conv := &pdbsyms.Converter{Cache: c.Cache}
	defer conv.Close()
	b := NewBreakpad(bp.URL, c)
	defer b.Close()
	s := NewSymSrv(sv.URL, c)
	s.Convert = conv.Convert
	d := NewDebuginfod(di.URL, c)
	defer d.Close()
	first := symtest.Concurrent(t, symbols.Chain{b, s, d}, mods, []uint64{0x1000, 0x1100, 0x1200, 0x2000})
	for i, m := range mods[:len(mods)-1] {
		if first[i].Empty() {
			t.Errorf("%s %s: no symbols", m.DebugFile, m.DebugID)
		}
	}
	for p, n := range asked {
		if n > 1 {
			t.Errorf("%s requested %d times", p, n)
		}
	}
	onlyCache(t, c)
}
