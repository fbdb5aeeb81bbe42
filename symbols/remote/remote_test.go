package remote

import (
	"bytes"
	"debug/pe"
	"errors"
	"fmt"
	"io/fs"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/gobreakpad/gobreakpad/internal/testkit/corpus"
	"github.com/gobreakpad/gobreakpad/symbols"
	symbreakpad "github.com/gobreakpad/gobreakpad/symbols/breakpad"
	"github.com/gobreakpad/gobreakpad/symbols/cache"
)

// counting serves h on a loopback port and counts requests.
type counting struct {
	*httptest.Server
	n atomic.Int64
}

func serve(t *testing.T, h http.Handler) *counting {
	t.Helper()
	c := &counting{}
	c.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		c.n.Add(1)
		h.ServeHTTP(w, r)
	}))
	t.Cleanup(c.Close)
	return c
}

func newClient(t *testing.T) *Client {
	// The cache lives inside a directory of its own, so that the tests can
	// check nothing was written beside it.
	return &Client{Cache: &cache.Cache{Dir: filepath.Join(t.TempDir(), "cache")}, Backoff: time.Millisecond}
}

// onlyCache fails when anything but the cache is in its parent directory.
func onlyCache(t *testing.T, c *Client) {
	t.Helper()
	ents, err := os.ReadDir(filepath.Dir(c.Cache.Dir))
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range ents {
		if e.Name() != "cache" {
			t.Errorf("%s written beside the cache", e.Name())
		}
	}
	filepath.WalkDir(c.Cache.Dir, func(p string, d fs.DirEntry, err error) error {
		if d != nil && strings.HasPrefix(d.Name(), ".tmp-") {
			t.Errorf("temporary file left: %s", p)
		}
		return nil
	})
}

// putFile writes data to root/elems... (a store tree's NAME/ID/FILE),
// making its directories.
func putFile(t *testing.T, data []byte, root string, elems ...string) {
	t.Helper()
	p := filepath.Join(append([]string{root}, elems...)...)
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, data, 0o644); err != nil {
		t.Fatal(err)
	}
}

var testApp = symbols.Module{DebugFile: `c:\test_app.pdb`, DebugID: "5A9832E5287241C1838ED98914E9B7FF1"}

func TestBreakpadHTTP(t *testing.T) {
	root := corpus.File(t, "breakpad/processor/symbols")
	srv := serve(t, http.FileServer(http.Dir(root)))
	c := newClient(t)
	src := NewBreakpad(srv.URL, c)
	defer src.Close()
	local := symbreakpad.NewDirs(root)
	defer local.Close()

	got, err := src.Load(testApp)
	if err != nil {
		t.Fatal(err)
	}
	want, err := local.Load(testApp)
	if err != nil {
		t.Fatal(err)
	}
	for rel := uint64(0); rel < 0x20000; rel += 0x10 {
		g, gok := got.Lookup.Lookup(rel, true)
		w, wok := want.Lookup.Lookup(rel, true)
		if gok != wok || fmt.Sprint(g) != fmt.Sprint(w) {
			t.Fatalf("%#x: got %v %v, want %v %v", rel, g, gok, w, wok)
		}
	}
	// Stored in Breakpad's layout, byte for byte.
	a, _ := os.ReadFile(filepath.Join(root, "test_app.pdb/5A9832E5287241C1838ED98914E9B7FF1/test_app.sym"))
	b, err := os.ReadFile(filepath.Join(c.Cache.Dir, "test_app.pdb/5A9832E5287241C1838ED98914E9B7FF1/test_app.sym"))
	if err != nil || !bytes.Equal(a, b) {
		t.Errorf("cached file differs from the served one (%v)", err)
	}
	// A miss is remembered: asked again, neither needs a request.
	missing := symbols.Module{DebugFile: "nothere.pdb", DebugID: "0123456789ABCDEF0123456789ABCDEF1"}
	if _, err := src.Load(missing); !errors.Is(err, symbols.ErrNotFound) {
		t.Fatalf("missing module: %v", err)
	}
	n := srv.n.Load()
	src2 := NewBreakpad(srv.URL, &Client{Cache: c.Cache})
	defer src2.Close()
	if _, err := src2.Load(testApp); err != nil {
		t.Fatal(err)
	}
	if _, err := src2.Load(missing); !errors.Is(err, symbols.ErrNotFound) {
		t.Fatalf("missing module: %v", err)
	}
	if srv.n.Load() != n {
		t.Errorf("%d requests for cached files and misses", srv.n.Load()-n)
	}
	onlyCache(t, c)
}

func TestServerErrors(t *testing.T) {
	var fails atomic.Int64
	srv := serve(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fails.Add(1)
		http.Error(w, "down", http.StatusInternalServerError)
	}))
	c := newClient(t)
	c.Retries = 2
	src := NewBreakpad(srv.URL, c)
	defer src.Close()
	if _, err := src.Load(testApp); !errors.Is(err, symbols.ErrNotFound) || !strings.Contains(err.Error(), "500") {
		t.Fatalf("got %v, want not found with the status", err)
	}
	if n := fails.Load(); n != 3 {
		t.Errorf("%d requests, want 3 (2 retries)", n)
	}
	// The server is now down for this client: no more requests.
	other := symbols.Module{DebugFile: "other.pdb", DebugID: "0123456789ABCDEF0123456789ABCDEF1"}
	if _, err := src.Load(other); !errors.Is(err, symbols.ErrNotFound) {
		t.Fatal(err)
	}
	if n := fails.Load(); n != 3 {
		t.Errorf("%d requests after the server failed, want none", n-3)
	}
	// 5xx is not remembered as a miss.
	if c.Cache.Missed(srv.URL, "test_app.pdb", testApp.DebugID, "test_app.sym") {
		t.Error("a 500 was remembered as a miss")
	}

	// A 404 is never retried.
	var n404 atomic.Int64
	srv404 := serve(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { n404.Add(1); http.NotFound(w, r) }))
	src404 := NewBreakpad(srv404.URL, newClient(t))
	defer src404.Close()
	if _, err := src404.Load(testApp); !errors.Is(err, symbols.ErrNotFound) {
		t.Fatal(err)
	}
	if n404.Load() != 1 {
		t.Errorf("%d requests for a 404, want 1", n404.Load())
	}

	// Connection refused: retried, then not found.
	dead := httptest.NewServer(http.NotFoundHandler())
	url := dead.URL
	dead.Close()
	c3 := newClient(t)
	if _, err := NewBreakpad(url, c3).Load(testApp); !errors.Is(err, symbols.ErrNotFound) {
		t.Fatal(err)
	}
	if c3.Requests() != 3 {
		t.Errorf("%d attempts on a refused connection, want 3", c3.Requests())
	}
}

func TestHangingServer(t *testing.T) {
	release := make(chan struct{})
	srv := serve(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-r.Context().Done():
		case <-release:
		}
	}))
	defer close(release)
	c := newClient(t)
	c.RequestTimeout = 200 * time.Millisecond
	src := NewBreakpad(srv.URL, c)
	defer src.Close()
	start := time.Now()
	for i := range 5 {
		m := symbols.Module{DebugFile: fmt.Sprintf("m%d.pdb", i), DebugID: "0123456789ABCDEF0123456789ABCDEF1"}
		if _, err := src.Load(m); !errors.Is(err, symbols.ErrNotFound) {
			t.Fatal(err)
		}
	}
	// One timeout, not one per module: the server is down after the first.
	if c.Requests() != 1 {
		t.Errorf("%d requests to a hanging server, want 1", c.Requests())
	}
	t.Logf("5 modules against a hanging server: %v", time.Since(start))
	onlyCache(t, c)
}

func TestOversizedAndBadNames(t *testing.T) {
	srv := serve(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Write(bytes.Repeat([]byte("MODULE Linux x86_64 0 big\n"), 10000))
	}))
	c := newClient(t)
	c.MaxSize = 1000
	src := NewBreakpad(srv.URL, c)
	defer src.Close()
	if _, err := src.Load(testApp); !errors.Is(err, symbols.ErrNotFound) || !strings.Contains(err.Error(), "too large") {
		t.Fatalf("oversized body: %v", err)
	}
	if _, ok := c.Cache.Lookup("test_app.pdb", testApp.DebugID, "test_app.sym"); ok {
		t.Error("oversized body stored")
	}
	for _, m := range []symbols.Module{
		{DebugFile: "..", DebugID: "0123"},
		{DebugFile: "a.pdb", DebugID: "../../../../tmp"},
		{DebugFile: "a.pdb", DebugID: `..\..`},
		{DebugFile: "a.pdb", DebugID: "x\x00y"},
		{DebugFile: "/etc/..", DebugID: "0123"},
	} {
		if _, err := src.Load(m); !errors.Is(err, symbols.ErrNotFound) {
			t.Errorf("%q %q: %v", m.DebugFile, m.DebugID, err)
		}
	}
	for _, elems := range [][]string{{"..", "x"}, {"a", "/abs"}, {"a/b"}, {`a\b`}, {"c:"}, {""}, {"."}} {
		if _, err := c.Fetch(srv.URL, elems...); !errors.Is(err, symbols.ErrNotFound) {
			t.Errorf("%q: %v", elems, err)
		}
		if _, err := c.Cache.Write(strings.NewReader("x"), 0, elems...); !errors.Is(err, cache.ErrBadName) {
			t.Errorf("cache write %q: %v", elems, err)
		}
	}
	onlyCache(t, c)
}

// peCodeID is a PE's code identifier: its timestamp (%08X) and image size
// (%x), as symbol servers index executables.
func peCodeID(t *testing.T, path string) string {
	f, err := pe.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	size := uint32(0)
	switch oh := f.OptionalHeader.(type) {
	case *pe.OptionalHeader32:
		size = oh.SizeOfImage
	case *pe.OptionalHeader64:
		size = oh.SizeOfImage
	}
	return fmt.Sprintf("%08X%x", f.TimeDateStamp, size)
}

// TestSymSrv serves a Microsoft-layout store made from the corpus's Windows
// files: a PDB stored plainly, one as a gcab-made .pd_, one behind a
// file.ptr, and a PE; each comes out of the client byte for byte.
func TestSymSrv(t *testing.T) {
	win := corpus.File(t, "windows")
	store := t.TempDir()
	put := func(name, id, file string, data []byte) { putFile(t, data, store, name, id, file) }
	read := func(rel string) []byte {
		b, err := os.ReadFile(filepath.Join(win, rel))
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	plain := symbols.Module{DebugFile: `c:\build\dump_syms_regtest.pdb`, DebugID: "9214611565FA4C538FE724A797B860F71"}
	put("dump_syms_regtest.pdb", plain.DebugID, "dump_syms_regtest.pdb", read("breakpad/dump_syms_regtest.pdb"))
	ptr := symbols.Module{DebugFile: "omap_stretched.pdb", DebugID: "0123456789ABCDEF0123456789ABCDEF1"}
	put("omap_stretched.pdb", ptr.DebugID, "file.ptr", []byte("PATH:SRV/elsewhere/omap_stretched.pdb\r\n"))
	put("elsewhere", "", "omap_stretched.pdb", read("breakpad/omap_stretched.pdb"))
	msg := symbols.Module{DebugFile: "gone.pdb", DebugID: "0123456789ABCDEF0123456789ABCDEF1"}
	put("gone.pdb", msg.DebugID, "file.ptr", []byte("MSG: withdrawn"))
	local := symbols.Module{DebugFile: "evil.pdb", DebugID: "0123456789ABCDEF0123456789ABCDEF1"}
	put("evil.pdb", local.DebugID, "file.ptr", []byte(`PATH:..\..\..\etc\passwd`))
	exe := "breakpad/dump_syms_regtest64.exe"
	pem := symbols.Module{CodeFile: `C:\x\dump_syms_regtest64.exe`, CodeID: peCodeID(t, filepath.Join(win, exe))}
	put("dump_syms_regtest64.exe", pem.CodeID, "dump_syms_regtest64.exe", read(exe))
	var packed symbols.Module
	if _, err := exec.LookPath("gcab"); err == nil {
		packed = symbols.Module{DebugFile: "CrashWithException.pdb", DebugID: "3249D99D0C4049318610F4E4FB0B69361"}
		tmp := t.TempDir()
		os.WriteFile(filepath.Join(tmp, "CrashWithException.pdb"), read("symbolic/CrashWithException.pdb"), 0o644)
		cmd := exec.Command("gcab", "-c", "-z", "out.cab", "CrashWithException.pdb")
		cmd.Dir = tmp
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("gcab: %v: %s", err, out)
		}
		cabData, _ := os.ReadFile(filepath.Join(tmp, "out.cab"))
		put("CrashWithException.pdb", packed.DebugID, "CrashWithException.pd_", cabData)
	} else {
		t.Log("gcab not installed (apt-get install gcab): no .pd_ made")
	}

	var srvURL string
	srv := serve(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if strings.HasSuffix(r.URL.Path, "/file.ptr") {
			b, err := os.ReadFile(filepath.Join(store, filepath.FromSlash(r.URL.Path)))
			if err != nil {
				http.NotFound(w, r)
				return
			}
			w.Write(bytes.ReplaceAll(b, []byte("PATH:SRV"), []byte("PATH:"+srvURL)))
			return
		}
		http.FileServer(http.Dir(store)).ServeHTTP(w, r)
	}))
	srvURL = srv.URL
	c := newClient(t)
	s := NewSymSrv(srv.URL, c)
	check := func(name string, got string, err error, want []byte) {
		t.Helper()
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		b, err := os.ReadFile(got)
		if err != nil || !bytes.Equal(b, want) {
			t.Errorf("%s: %s differs from the original (%d bytes, want %d)", name, got, len(b), len(want))
		}
	}
	p, err := s.FetchPDB(plain)
	check("plain PDB", p, err, read("breakpad/dump_syms_regtest.pdb"))
	if want := filepath.Join(c.Cache.Dir, "dump_syms_regtest.pdb", plain.DebugID, "dump_syms_regtest.pdb"); p != want {
		t.Errorf("stored as %s, want %s", p, want)
	}
	p, err = s.FetchPDB(ptr)
	check("file.ptr PDB", p, err, read("breakpad/omap_stretched.pdb"))
	p, err = s.FetchPE(pem)
	check("PE", p, err, read(exe))
	if packed.DebugFile != "" {
		p, err = s.FetchPDB(packed)
		check(".pd_ PDB", p, err, read("symbolic/CrashWithException.pdb"))
		if _, ok := c.Cache.Lookup("CrashWithException.pdb", packed.DebugID, "CrashWithException.pd_"); ok {
			t.Error("the .pd_ was kept beside the PDB")
		}
	}
	if _, err := s.FetchPDB(msg); !errors.Is(err, symbols.ErrNotFound) || !strings.Contains(err.Error(), "withdrawn") {
		t.Errorf("file.ptr MSG: %v", err)
	}
	if _, err := s.FetchPDB(local); !errors.Is(err, symbols.ErrNotFound) || !strings.Contains(err.Error(), "not followed") {
		t.Errorf("file.ptr to a local path: %v", err)
	}
	// Without a PDB reader, Load asks nothing.
	n := srv.n.Load()
	if _, err := s.Load(plain); !errors.Is(err, symbols.ErrNotFound) {
		t.Errorf("Load without Convert: %v", err)
	}
	// Fetched again: from the cache.
	if _, err := s.FetchPDB(plain); err != nil {
		t.Fatal(err)
	}
	if srv.n.Load() != n {
		t.Errorf("%d requests without need", srv.n.Load()-n)
	}
	// Convert receives the files.
	s.Convert = func(m symbols.Module, pdb, pe string) (*symbols.Symbols, error) {
		if pdb == "" {
			return nil, symbols.ErrNotFound
		}
		return &symbols.Symbols{Lookup: fakeLookup(pdb)}, nil
	}
	if got, err := s.Load(plain); err != nil || got.Lookup == nil {
		t.Errorf("Load with Convert: %v", err)
	}
	onlyCache(t, c)
}

type fakeLookup string

func (fakeLookup) Lookup(uint64, bool) (symbols.Symbol, bool) { return symbols.Symbol{}, false }

// TestProgress: a slow download says so on the progress writer.
func TestProgress(t *testing.T) {
	srv := serve(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Length", "40")
		for range 4 {
			w.Write([]byte("MODULE Linux x86_64 0 slow\n"[:10]))
			w.(http.Flusher).Flush()
			time.Sleep(40 * time.Millisecond)
		}
	}))
	c := newClient(t)
	var out bytes.Buffer
	c.Progress, c.SlowAfter = &out, 30*time.Millisecond
	if _, err := c.Fetch(srv.URL, "slow"); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out.String(), "downloading "+srv.URL+"/slow") || !strings.Contains(out.String(), "downloaded ") {
		t.Errorf("progress:\n%s", out.String())
	}
}

// TestWalkDeadline: past the walk's deadline no request is sent and the
// module is not found.
func TestWalkDeadline(t *testing.T) {
	srv := serve(t, http.FileServer(http.Dir(corpus.File(t, "breakpad/processor/symbols"))))
	c := newClient(t)
	c.Deadline = time.Now().Add(-time.Second)
	src := NewBreakpad(srv.URL, c)
	defer src.Close()
	if _, err := src.Load(testApp); !errors.Is(err, symbols.ErrNotFound) || !strings.Contains(err.Error(), "deadline") {
		t.Errorf("past the deadline: %v", err)
	}
	if srv.n.Load() != 0 {
		t.Errorf("%d requests past the deadline", srv.n.Load())
	}
}

// syncBuffer is a bytes.Buffer safe for the client's goroutines.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// TestServerWarnings: a server that answers 5xx, refuses connections or
// does not answer gets one warning line naming it and the reason, however
// many modules asked for it; a hanging one a line while it keeps a request
// waiting.
func TestServerWarnings(t *testing.T) {
	release := make(chan struct{})
	defer close(release)
	s500 := serve(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { http.Error(w, "down", 503) }))
	hang := serve(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-r.Context().Done():
		case <-release:
		}
	}))
	dead := httptest.NewServer(http.NotFoundHandler())
	deadURL := dead.URL
	dead.Close()
	for _, c := range []struct{ url, reason string }{
		{s500.URL, "HTTP 503 Service Unavailable"},
		{deadURL, "connection refused"},
		{hang.URL, "no answer within the time-out"},
	} {
		cl := newClient(t)
		cl.Backoff, cl.RequestTimeout, cl.SlowAfter = time.Millisecond, 300*time.Millisecond, 100*time.Millisecond
		var out syncBuffer
		cl.Progress = &out
		src := NewBreakpad(c.url, cl)
		for i := range 4 {
			m := symbols.Module{DebugFile: fmt.Sprintf("m%d.pdb", i), DebugID: "0123456789ABCDEF0123456789ABCDEF1"}
			if _, err := src.Load(m); !errors.Is(err, symbols.ErrNotFound) {
				t.Fatal(err)
			}
		}
		src.Close()
		want := "warning: symbol server " + c.url + ": " + c.reason + "; going on without it\n"
		if got := out.String(); strings.Count(got, "warning: ") != 1 || !strings.Contains(got, want) {
			t.Errorf("%s: got\n%s\nwant one line %q", c.url, got, want)
		}
		if c.url == hang.URL && !strings.Contains(out.String(), "waiting for symbol server "+hang.URL+": no answer for") {
			t.Errorf("hanging server: no line while waiting:\n%s", out.String())
		}
	}
}
