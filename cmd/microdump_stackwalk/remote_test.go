package main

import (
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/gobreakpad/gobreakpad/internal/testkit/cmdtest"
	"github.com/gobreakpad/gobreakpad/internal/testkit/corpus"
)

// TestSymbolsURL walks the corpus microdumps through a Breakpad-layout HTTP
// store on a loopback port (Go's file server over the corpus's
// symbols/microdump): --symbols-url, a URL symbol path, srv*CACHE*URL and
// $_NT_SYMBOL_PATH give the local walk's output, with the modules' symbols
// prefetched (the default) or not; a second walk over the warm cache sends
// no request.
func TestSymbolsURL(t *testing.T) {
	dir := filepath.Join(corpus.Dir(t), "breakpad/processor")
	syms := filepath.Join(dir, "symbols/microdump")
	prog := cmdtest.Build(t, ".")
	var n atomic.Int64
	files := http.FileServer(http.Dir(syms))
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		n.Add(1)
		files.ServeHTTP(w, r)
	}))
	defer srv.Close()
	for _, a := range []string{"arm", "arm64"} {
		dump := filepath.Join(dir, "microdump-"+a+".dmp")
		for _, m := range [][]string{nil, {"-m"}} {
			local := cmdtest.RunClean(t, prog, nil, append(append(m[:len(m):len(m)], dump), syms)...)
			if local.Code != 0 || local.Stderr != "" || !strings.Contains(local.Stdout, "MicrodumpWriterTest") {
				t.Fatalf("%s %v: local walk: exit %d, stderr %q", a, m, local.Code, local.Stderr)
			}
			cacheDir := t.TempDir()
			for i, w := range []struct {
				name string
				env  []string
				args []string
			}{
				{"--symbols-url", nil, []string{"--symbols-url", srv.URL, "--symbols-cache", cacheDir}},
				{"URL path", nil, []string{"--symbols-cache", cacheDir, srv.URL + "/"}},
				{"srv*", nil, []string{"srv*" + t.TempDir() + "*" + srv.URL}},
				{"_NT_SYMBOL_PATH", []string{"_NT_SYMBOL_PATH=cache*" + t.TempDir() + ";srv*" + srv.URL}, nil},
				{"--prefetch 0", nil, []string{"--prefetch", "0", "--symbols-url", srv.URL, "--symbols-cache", t.TempDir()}},
			} {
				args := append(append(m[:len(m):len(m)], dump), w.args...)
				before := n.Load()
				r := cmdtest.RunClean(t, prog, w.env, args...)
				if r.Code != 0 || r.Stderr != "" || r.Stdout != local.Stdout {
					t.Fatalf("%s %v %s: exit %d, stderr %q, output differs from the local walk:\n%s", a, m, w.name, r.Code, r.Stderr, r.Stdout)
				}
				if i != 1 && n.Load() == before {
					t.Errorf("%s %v %s: no request with a cold cache", a, m, w.name)
				}
				before = n.Load()
				if r := cmdtest.RunClean(t, prog, w.env, args...); r.Stdout != local.Stdout {
					t.Errorf("%s %v %s: second walk differs", a, m, w.name)
				}
				if d := n.Load() - before; d != 0 {
					t.Errorf("%s %v %s: second walk sent %d requests", a, m, w.name, d)
				}
			}
		}
	}
}

// TestVerbose: -v says where each module's symbols came from.
func TestVerbose(t *testing.T) {
	dir := filepath.Join(corpus.Dir(t), "breakpad/processor")
	syms := filepath.Join(dir, "symbols/microdump")
	prog := cmdtest.Build(t, ".")
	srv := httptest.NewServer(http.FileServer(http.Dir(syms)))
	defer srv.Close()
	r := cmdtest.RunClean(t, prog, nil, "-v", "--symbols-cache", t.TempDir(), "--symbols-url", srv.URL, filepath.Join(dir, "microdump-arm64.dmp"))
	if r.Code != 0 || !strings.Contains(r.Stderr, "microdump_stackwalk: symbols: breakpad_unittests ") ||
		!strings.Contains(r.Stderr, ": from "+srv.URL) || !strings.Contains(r.Stderr, ": none (") {
		t.Errorf("exit %d, stderr:\n%s", r.Code, r.Stderr)
	}
}
