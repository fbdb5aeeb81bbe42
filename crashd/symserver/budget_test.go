package symserver

import (
	"context"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/gobreakpad/gobreakpad/crashd/auth"
	"github.com/gobreakpad/gobreakpad/crashd/budget"
)

// TestUploadBudget: a symbol upload takes its slot and memory from the
// uploads' budget it shares with the collector (at most half of it) and
// its files from the spool disk's; with either taken by others it is
// answered 503 with Retry-After and leaves nothing; every byte is given
// back after each upload, v1 and v2 (whose PUT file holds its spool until
// its complete).
func TestUploadBudget(t *testing.T) {
	ctx := context.Background()
	shared := budget.New(64<<20, 8, 50*time.Millisecond)
	dir := filepath.Join(t.TempDir(), "symbols")
	s, err := New(Config{Dir: dir, MaxUpload: 1 << 20, MaxSpool: 2 << 20, Budget: shared,
		Tokens: []auth.Token{{Name: "ci", SHA256: auth.HashToken(testSecret), Scopes: []string{auth.ScopeUpload}}}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	hs := httptest.NewServer(s)
	defer hs.Close()
	if _, err := New(Config{Dir: filepath.Join(t.TempDir(), "s"), MaxUpload: 2 << 20, MaxSpool: 1 << 20}, nil); err == nil {
		t.Error("max_spool below max_upload accepted")
	}
	if s.mem.Max() != 32<<20 || s.mem.MaxUploads() != 4 {
		t.Errorf("the symbol uploads' share: %d bytes, %d slots; want half", s.mem.Max(), s.mem.MaxUploads())
	}
	idle := func(when string) {
		t.Helper()
		if n, u := shared.InUse(); n != 0 || u != 0 {
			t.Errorf("%s: the shared budget holds %d bytes, %d uploads", when, n, u)
		}
		if n, _ := s.disk.InUse(); n != 0 {
			t.Errorf("%s: the spool disk holds %d bytes", when, n)
		}
		if ents, _ := os.ReadDir(s.cfg.Incoming); len(ents) != 0 {
			t.Errorf("%s: %d files in Incoming", when, len(ents))
		}
	}
	v1 := func(id string) (int, http.Header, string) {
		t.Helper()
		ct, body := v1Body(t, []byte(strings.Replace(symA, "0123456789ABCDEF0123456789ABCDEF0", id, 1)), nil)
		req, _ := http.NewRequest("POST", hs.URL+"/symbols/upload", strings.NewReader(string(body)))
		req.Header.Set("Content-Type", ct)
		req.Header.Set("Auth-Token", testSecret)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b := make([]byte, 512)
		n, _ := resp.Body.Read(b)
		return resp.StatusCode, resp.Header, string(b[:n])
	}
	busy := func(name string, st int, h http.Header, b string) {
		t.Helper()
		if st != 503 || h.Get("Retry-After") != "1" || !strings.Contains(b, "budget exhausted") {
			t.Errorf("%s: %d Retry-After %q %q; want 503, Retry-After 1", name, st, h.Get("Retry-After"), b)
		}
	}

	if st, _, b := v1("0123456789ABCDEF0123456789ABCDEF0"); st != 200 {
		t.Fatalf("upload: %d %q", st, b)
	}
	idle("after an upload")

	// The crash uploads hold the whole budget: no slot's memory for a
	// symbol upload.
	crashes, err := shared.Begin(ctx, shared.Max())
	if err != nil {
		t.Fatal(err)
	}
	st, h, b := v1("1123456789ABCDEF0123456789ABCDEF0")
	busy("budget taken by crash uploads", st, h, b)
	crashes.Done()
	// The symbol uploads' half is taken: the crash uploads still get the rest.
	syms, err := s.mem.Begin(ctx, s.mem.Max())
	if err != nil {
		t.Fatal(err)
	}
	st, h, b = v1("2123456789ABCDEF0123456789ABCDEF0")
	busy("the symbol uploads' share taken", st, h, b)
	c2, err := shared.Begin(ctx, shared.Max()-s.mem.Max())
	if err != nil {
		t.Errorf("the crash uploads' half: %v", err)
	} else {
		c2.Done()
	}
	syms.Done()
	// The spool disk taken (uploads in progress).
	disk, err := s.disk.Begin(ctx, s.disk.Max())
	if err != nil {
		t.Fatal(err)
	}
	st, h, b = v1("3123456789ABCDEF0123456789ABCDEF0")
	busy("spool disk taken", st, h, b)
	disk.Done()
	idle("after the refusals")
	if st, _, b := v1("4123456789ABCDEF0123456789ABCDEF0"); st != 200 {
		t.Fatalf("upload after the refusals: %d %q", st, b)
	}

	// v2: the PUT file holds its spool disk until the complete.
	key := "?key=" + testSecret
	_, cb := do(t, "POST", hs.URL+"/v1/uploads:create"+key, "", nil)
	k := regexp.MustCompile(`"uploadKey": "([0-9a-f]+)"`).FindStringSubmatch(cb)
	if k == nil {
		t.Fatalf("create: %q", cb)
	}
	sym := strings.Replace(symA, "0123456789ABCDEF0123456789ABCDEF0", "5123456789ABCDEF0123456789ABCDEF0", 1)
	if st, b := do(t, "PUT", hs.URL+"/v1/uploads/"+k[1], "", []byte(sym)); st != 200 {
		t.Fatalf("PUT: %d %q", st, b)
	}
	if n, _ := s.disk.InUse(); n < int64(len(sym)) {
		t.Errorf("the PUT's file waiting: the spool disk holds %d bytes", n)
	}
	if n, u := shared.InUse(); n != 0 || u != 0 {
		t.Errorf("after the PUT: the shared budget holds %d bytes, %d uploads", n, u)
	}
	st, b = do(t, "POST", hs.URL+"/v1/uploads/"+k[1]+":complete"+key, "application/json",
		[]byte(`{"symbol_id":{"debug_file":"liba.so","debug_id":"5123456789ABCDEF0123456789ABCDEF0"}}`))
	if st != 200 {
		t.Fatalf("complete: %d %q", st, b)
	}
	idle("after a v2 upload")
}
