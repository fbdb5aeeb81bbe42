package main

import (
	"bufio"
	"bytes"
	"io/fs"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/gobreakpad/gobreakpad/internal/testkit/cmdtest"
	"github.com/gobreakpad/gobreakpad/internal/testkit/corpus"
	"github.com/gobreakpad/gobreakpad/symbols"
	"github.com/gobreakpad/gobreakpad/symbols/symsrc"
)

// remoteCases are corpus cases walked through symbol servers: Windows x86
// (STACK WIN), Linux x86-64 (STACK CFI, inlines) with two symbol paths.
var remoteCases = []string{"bp-ascii_read_av", "bp-linux_inline", "gen-deep_chain-x64-O2", "gen-inline_chain-x86-O2"}

type walkCase struct {
	name, dump string
	paths      []string
}

func readCases(t *testing.T, names []string) []walkCase {
	t.Helper()
	root := corpus.Dir(t)
	f, err := os.Open(filepath.Join(root, "cases.tsv"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	want := map[string]bool{}
	for _, n := range names {
		want[n] = true
	}
	var out []walkCase
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		fields := strings.Split(sc.Text(), "\t")
		if len(fields) < 4 || !want[fields[0]] {
			continue
		}
		c := walkCase{name: fields[0], dump: filepath.Join(root, fields[1])}
		for _, p := range strings.Fields(fields[3]) {
			c.paths = append(c.paths, filepath.Join(root, p))
		}
		out = append(out, c)
	}
	if len(out) != len(names) {
		t.Fatalf("found %d of the cases %v in cases.tsv", len(out), names)
	}
	return out
}

// storeServer serves the files of roots (the first that has a path wins) on
// a loopback port, counting requests.
type storeServer struct {
	*httptest.Server
	n atomic.Int64
}

func serveStores(t *testing.T, roots ...string) *storeServer {
	s := &storeServer{}
	s.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s.n.Add(1)
		for _, root := range roots {
			p := filepath.Join(root, filepath.FromSlash(r.URL.Path))
			if st, err := os.Stat(p); err == nil && st.Mode().IsRegular() {
				http.FileServer(http.Dir(root)).ServeHTTP(w, r)
				return
			}
		}
		http.NotFound(w, r)
	}))
	t.Cleanup(s.Close)
	return s
}

func noTempFiles(t *testing.T, dir string) {
	t.Helper()
	filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if d != nil && strings.HasPrefix(d.Name(), ".tmp-") {
			t.Errorf("temporary file left in the cache: %s", p)
		}
		return nil
	})
}

// TestSymbolsURL walks corpus cases through a Breakpad-layout HTTP store
// (--symbols-url, a URL as a symbol path, srv*CACHE*URL, $_NT_SYMBOL_PATH):
// the walks equal those from the local files, and a second walk sends no
// request.
func TestSymbolsURL(t *testing.T) {
	prog := cmdtest.Build(t, ".")
	for _, c := range readCases(t, remoteCases) {
		t.Run(c.name, func(t *testing.T) {
			local := cmdtest.RunClean(t, prog, nil, append([]string{"-m", c.dump}, c.paths...)...)
			if local.Code != 0 {
				t.Fatalf("local walk: %d %s", local.Code, local.Stderr)
			}
			srv := serveStores(t, c.paths...)
			cacheDir := t.TempDir()
			ways := []struct {
				name string
				env  []string
				args []string
			}{
				{"--symbols-url", nil, []string{"--symbols-url", srv.URL, "--symbols-cache", cacheDir}},
				{"URL path", nil, []string{"--symbols-cache", cacheDir, srv.URL + "/"}},
				{"srv*", nil, []string{"srv*" + cacheDir + "*" + srv.URL}},
				{"_NT_SYMBOL_PATH", []string{"_NT_SYMBOL_PATH=cache*" + cacheDir + ";srv*" + srv.URL}, nil},
			}
			for i, w := range ways {
				if i == 2 {
					// srv* with a cold cache of its own.
					cacheDir = t.TempDir()
					w.args[0] = "srv*" + cacheDir + "*" + srv.URL
				}
				before := srv.n.Load()
				r := cmdtest.RunClean(t, prog, w.env, append([]string{"-m", c.dump}, w.args...)...)
				if r.Code != 0 || r.Stdout != local.Stdout {
					t.Fatalf("%s: exit %d, output differs from the local walk:\n%s\nstderr: %s", w.name, r.Code, r.Stdout, r.Stderr)
				}
				if i == 0 && srv.n.Load() == before {
					t.Errorf("%s: no request with a cold cache", w.name)
				}
				again := srv.n.Load()
				r = cmdtest.RunClean(t, prog, w.env, append([]string{"-m", c.dump}, w.args...)...)
				if r.Stdout != local.Stdout {
					t.Fatalf("%s: second walk differs", w.name)
				}
				if n := srv.n.Load() - again; n != 0 {
					t.Errorf("%s: second walk sent %d requests", w.name, n)
				}
			}
			noTempFiles(t, cacheDir)
		})
	}
}

// TestSymbolsServerDown: a server answering 500 or hanging delays the walk
// by at most about the timeout, and the walk completes as without symbols.
func TestSymbolsServerDown(t *testing.T) {
	prog := cmdtest.Build(t, ".")
	c := readCases(t, []string{"gen-deep_chain-x64-O2"})[0]
	empty := t.TempDir()
	want := cmdtest.RunClean(t, prog, nil, "-m", c.dump, empty)
	release := make(chan struct{})
	defer close(release)
	servers := map[string]http.HandlerFunc{
		"500": func(w http.ResponseWriter, r *http.Request) { http.Error(w, "down", 500) },
		"hang": func(w http.ResponseWriter, r *http.Request) {
			select {
			case <-r.Context().Done():
			case <-release:
			}
		},
	}
	for name, h := range servers {
		srv := httptest.NewServer(h)
		defer srv.Close()
		start := time.Now()
		r := cmdtest.RunClean(t, prog, []string{"DEBUGINFOD_URLS=" + srv.URL}, "-m", "-v", "--symbols-timeout", "1s",
			"--symbols-url", srv.URL, "--symbols-cache", t.TempDir(), c.dump, empty)
		el := time.Since(start)
		if r.Code != 0 || r.Stdout != want.Stdout {
			t.Errorf("%s: exit %d, output differs from the walk without symbols:\n%s", name, r.Code, r.Stderr)
		}
		if !strings.Contains(r.Stderr, "none (") {
			t.Errorf("%s: -v gives no reason:\n%s", name, r.Stderr)
		}
		// One warning line for the server, not one per module.
		if n := strings.Count(r.Stderr, "warning: symbol server "+srv.URL+": "); n != 1 {
			t.Errorf("%s: %d warning lines naming the server, want 1:\n%s", name, n, r.Stderr)
		}
		// The walk waits for a hanging server once (1s), not per module or
		// per source; a generous bound, for loaded machines.
		if el > 15*time.Second {
			t.Errorf("%s: the walk took %v with a 1s timeout", name, el)
		}
		t.Logf("%s: %v\n%s", name, el, r.Stderr)
	}
}

// TestSymbolsSharedCache runs several walks at once in separate processes
// sharing one cold cache: all give the local walk, and the cache holds whole
// files only.
func TestSymbolsSharedCache(t *testing.T) {
	prog := cmdtest.Build(t, ".")
	c := readCases(t, []string{"gen-deep_chain-x64-O2"})[0]
	local := cmdtest.RunClean(t, prog, nil, append([]string{"-m", c.dump}, c.paths...)...)
	srv := serveStores(t, c.paths...)
	cacheDir := t.TempDir()
	var wg sync.WaitGroup
	results := make([]cmdtest.Result, 4)
	for i := range results {
		wg.Go(func() {
			results[i] = cmdtest.RunClean(t, prog, nil, "-m", "--symbols-url", srv.URL, "--symbols-cache", cacheDir, c.dump)
		})
	}
	wg.Wait()
	for i, r := range results {
		if r.Code != 0 || r.Stdout != local.Stdout || r.Stderr != "" {
			t.Errorf("walk %d: exit %d, stderr %q, output equal: %v", i, r.Code, r.Stderr, r.Stdout == local.Stdout)
		}
	}
	noTempFiles(t, cacheDir)
	// Every cached .sym equals the served one.
	filepath.WalkDir(cacheDir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(p, ".sym") {
			return err
		}
		rel, _ := filepath.Rel(cacheDir, p)
		got, _ := os.ReadFile(p)
		for _, root := range c.paths {
			if want, err := os.ReadFile(filepath.Join(root, rel)); err == nil {
				if !bytes.Equal(got, want) {
					t.Errorf("%s: torn or changed", rel)
				}
				return nil
			}
		}
		t.Errorf("%s: not a served file", rel)
		return nil
	})
}

// startDebuginfod runs debuginfod over dir behind a counting reverse proxy
// and returns the proxy.
func startDebuginfod(t *testing.T, dir, buildID string) *storeServer {
	u, _ := url.Parse(cmdtest.Debuginfod(t, dir, buildID))
	s := &storeServer{}
	proxy := httputil.NewSingleHostReverseProxy(u)
	s.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s.n.Add(1)
		proxy.ServeHTTP(w, r)
	}))
	t.Cleanup(s.Close)
	return s
}

// TestDebuginfod walks a corpus case whose program comes from a debuginfod
// server ($DEBUGINFOD_URLS): the walk equals the one from the local .sym
// file (Breakpad's dump_syms output), and a second walk sends no request.
func TestDebuginfod(t *testing.T) {
	prog := cmdtest.Build(t, ".")
	c := readCases(t, []string{"gen-deep_chain-x64-O2"})[0]
	const buildID = "34c24ca3bc10a3e5f062f9443d3440c0ae260199"
	srv := startDebuginfod(t, filepath.Dir(c.dump), buildID)
	local := cmdtest.RunClean(t, prog, nil, append([]string{"-m", c.dump}, c.paths...)...)
	cacheDir := t.TempDir()
	syslib := c.paths[1:] // the system libraries' .sym files stay local
	for i := range 2 {
		before := srv.n.Load()
		r := cmdtest.RunClean(t, prog, []string{"DEBUGINFOD_URLS=" + srv.URL}, append([]string{"-m", "-v", "--symbols-cache", cacheDir, c.dump}, syslib...)...)
		if r.Code != 0 || r.Stdout != local.Stdout {
			t.Fatalf("walk %d: exit %d, output differs from the local walk:\n%s\nstderr: %s", i, r.Code, r.Stdout, r.Stderr)
		}
		if !strings.Contains(r.Stderr, "(debuginfod)") {
			t.Errorf("walk %d: -v does not name debuginfod:\n%s", i, r.Stderr)
		}
		n := srv.n.Load() - before
		if i == 0 && n == 0 || i == 1 && n != 0 {
			t.Errorf("walk %d: %d requests", i, n)
		}
	}
	for _, f := range []string{"debuginfo", "executable", "breakpad.sym"} {
		if _, err := os.Stat(filepath.Join(cacheDir, "buildid", buildID, f)); err != nil {
			t.Error(err)
		}
	}
	noTempFiles(t, cacheDir)
}

// TestNativeFiles walks a corpus case with the folder holding its program
// (an ELF binary with DWARF) as a symbol path: the symbols are converted
// into the cache, and the walk equals the one from Breakpad's .sym file.
func TestNativeFiles(t *testing.T) {
	prog := cmdtest.Build(t, ".")
	c := readCases(t, []string{"gen-deep_chain-x64-O2"})[0]
	local := cmdtest.RunClean(t, prog, nil, append([]string{"-m", c.dump}, c.paths...)...)
	cacheDir := t.TempDir()
	args := append([]string{"-m", "-v", "--symbols-cache", cacheDir, c.dump, filepath.Dir(c.dump)}, c.paths[1:]...)
	for i := range 2 {
		r := cmdtest.RunClean(t, prog, nil, args...)
		if r.Code != 0 || r.Stdout != local.Stdout {
			t.Fatalf("walk %d: exit %d, output differs from the local walk:\n%s\nstderr: %s", i, r.Code, r.Stdout, r.Stderr)
		}
		if !strings.Contains(r.Stderr, "(ELF files)") {
			t.Errorf("walk %d: -v does not name the ELF files:\n%s", i, r.Stderr)
		}
	}
	if _, err := os.Stat(filepath.Join(cacheDir, "buildid", "34c24ca3bc10a3e5f062f9443d3440c0ae260199", "breakpad.sym")); err != nil {
		t.Error(err)
	}
}

// localSources is minidump_stackwalk's chain over local symbol paths (no
// servers, whatever the environment), and a function closing it.
func localSources(t *testing.T, paths ...string) (symbols.Source, func()) {
	t.Helper()
	src, err := symsrc.Open(symsrc.Config{Paths: paths, CacheDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	return src, func() { src.Close() }
}

// TestSecondWalkNoRequest: with a slow server, the first walk's prefetch
// has not started every listed module when the walk is done; the second,
// served by the cache, would run through the list faster and ask the
// server for the rest (TestSymbolsURL failed so about 2 runs in 100).
// The walk now loads every listed module, so the second sends nothing.
func TestSecondWalkNoRequest(t *testing.T) {
	prog := cmdtest.Build(t, ".")
	c := readCases(t, []string{"gen-inline_chain-x86-O2"})[0]
	files := serveStores(t, c.paths...)
	defer files.Close()
	var n atomic.Int64
	slow := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		n.Add(1)
		time.Sleep(150 * time.Millisecond)
		files.Config.Handler.ServeHTTP(w, r)
	}))
	defer slow.Close()
	cacheDir := t.TempDir()
	args := []string{"-m", "--prefetch", "1", "--symbols-url", slow.URL, "--symbols-cache", cacheDir, c.dump}
	first := cmdtest.RunClean(t, prog, nil, args...)
	if first.Code != 0 {
		t.Fatalf("exit %d: %s", first.Code, first.Stderr)
	}
	before := n.Load()
	second := cmdtest.RunClean(t, prog, nil, args...)
	if second.Stdout != first.Stdout {
		t.Error("the second walk differs")
	}
	if d := n.Load() - before; d != 0 {
		t.Errorf("the second walk sent %d requests (the first %d)", d, before)
	}
}
