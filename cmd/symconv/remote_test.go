package main

import (
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/gobreakpad/gobreakpad/dumpsyms"
	dspe "github.com/gobreakpad/gobreakpad/dumpsyms/pe"
	"github.com/gobreakpad/gobreakpad/internal/testkit/corpus"
)

// serve serves root's files on a loopback port, counting requests.
func serve(t *testing.T, root string) (*httptest.Server, *atomic.Int64) {
	var n atomic.Int64
	files := http.FileServer(http.Dir(root))
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		n.Add(1)
		files.ServeHTTP(w, r)
	}))
	t.Cleanup(srv.Close)
	return srv, &n
}

// TestModuleFromServer converts a module's symbols fetched from a
// Breakpad-layout HTTP store (a URL and srv*CACHE*URL) and from a local
// store: each output equals the conversion of the local file; a second
// conversion over the warm cache sends no request.
func TestModuleFromServer(t *testing.T) {
	store := "../../testdata/capture/x64-segv/symbols"
	mod := "crasher-x64/18BAFF1081380C82C6A55BB5BDB2732F0"
	want, _, err := runCmd(t, "-f", "symcache", sym, "-")
	if err != nil {
		t.Fatal(err)
	}
	srv, n := serve(t, store)
	cacheDir := t.TempDir()
	for _, in := range [][]string{
		{"--symbols-cache", cacheDir, srv.URL},
		{"srv*" + t.TempDir() + "*" + srv.URL},
		{store},
	} {
		for round := range 2 {
			before := n.Load()
			out, stderr, err := runCmd(t, append([]string{"--module", mod, "-f", "symcache"}, append(in, "-")...)...)
			if err != nil || out != want {
				t.Fatalf("%v: err %v, stderr %q, output equal: %v", in, err, stderr, out == want)
			}
			if round == 1 && n.Load() != before {
				t.Errorf("%v: second conversion sent %d requests", in, n.Load()-before)
			}
		}
	}
	_, _, err = runCmd(t, "--module", "crasher-x64/00000000000000000000000000000000A", "--symbols-cache", cacheDir, srv.URL, "-f", "breakpad", "-")
	if err == nil || !strings.Contains(err.Error(), "not found") {
		t.Errorf("missing module: %v", err)
	}
	for _, bad := range [][]string{{"--module", "nameonly", srv.URL, "x.sym"}, {"--code-id", "AB", sym, "x.sym"}} {
		if _, _, err := runCmd(t, bad...); err == nil {
			t.Errorf("%v: no usage error", bad)
		}
	}
}

// TestModuleFromSymbolServer converts a corpus PDB fetched from a
// Microsoft-layout store over HTTP (srv*CACHE*URL): the output equals the
// conversion of the PDB file itself.
func TestModuleFromSymbolServer(t *testing.T) {
	pdb := filepath.Join(corpus.Dir(t), "windows", "breakpad", "dump_syms_regtest.pdb")
	if _, err := os.Stat(pdb); err != nil {
		t.Skip(err)
	}
	id := "9214611565FA4C538FE724A797B860F71"
	store := t.TempDir()
	dir := filepath.Join(store, "dump_syms_regtest.pdb", id)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(pdb, filepath.Join(dir, "dump_syms_regtest.pdb")); err != nil {
		t.Fatal(err)
	}
	// symconv reads no PDB itself: the reference is dump_syms's conversion,
	// read back and written as symconv does.
	s, err := dspe.Dump(pdb, dumpsyms.Options{Inlines: true})
	if err != nil {
		t.Fatal(err)
	}
	ref := filepath.Join(t.TempDir(), "ref.sym")
	f, err := os.Create(ref)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Write(f); err != nil {
		t.Fatal(err)
	}
	f.Close()
	want, _, err := runCmd(t, "-f", "breakpad", ref, "-")
	if err != nil {
		t.Fatal(err)
	}
	srv, _ := serve(t, store)
	out, stderr, err := runCmd(t, "--module", "dump_syms_regtest.pdb/"+id, "-f", "breakpad", "srv*"+t.TempDir()+"*"+srv.URL, "-")
	if err != nil || out != want {
		t.Fatalf("err %v, stderr %q, output equal: %v (%d bytes, want %d)", err, stderr, out == want, len(out), len(want))
	}
}

// TestModuleServerDown: --module through a server that refuses connections
// says so (the server and the reason), not only "not found".
func TestModuleServerDown(t *testing.T) {
	dead := httptest.NewServer(http.NotFoundHandler())
	u := dead.URL
	dead.Close()
	_, stderr, err := runCmd(t, "--module", "crasher-x64/18BAFF1081380C82C6A55BB5BDB2732F0", "--symbols-cache", t.TempDir(), u, "-f", "breakpad", "-")
	if err == nil || !strings.Contains(err.Error(), "connection refused") || !strings.Contains(err.Error(), u) {
		t.Errorf("err %v, want one naming %s and the refused connection", err, u)
	}
	if !strings.Contains(stderr, "warning: symbol server "+u+": connection refused") {
		t.Errorf("stderr %q: no warning naming the server", stderr)
	}
}
