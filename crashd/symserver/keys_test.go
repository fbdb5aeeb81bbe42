package symserver

import (
	"context"
	"encoding/json"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gobreakpad/gobreakpad/crashd/auth"
	"github.com/gobreakpad/gobreakpad/crashd/blob"
)

// TestV2AcrossProcesses: two servers (collector processes) sharing the
// symbol store and the blob store: an upload created on one is PUT to and
// completed on the other; a key completes once, whichever process two
// racing completes reach; an expired key is refused and swept away with
// its file.
func TestV2AcrossProcesses(t *testing.T) {
	dir := t.TempDir()
	var hs [2]*httptest.Server
	var stores [2]*blob.Dir
	for i := range hs {
		st, err := blob.OpenDir(filepath.Join(dir, "data"))
		if err != nil {
			t.Fatal(err)
		}
		defer st.Close()
		stores[i] = st
		s, err := New(Config{
			Dir:     filepath.Join(dir, "data", "symbols"),
			Tokens:  []auth.Token{{Name: "ci", SHA256: auth.HashToken(testSecret), Scopes: []string{auth.ScopeUpload}}},
			Uploads: st,
		}, nil)
		if err != nil {
			t.Fatal(err)
		}
		hs[i] = httptest.NewServer(s)
		defer hs[i].Close()
	}
	key := "?key=" + testSecret
	create := func(on int) string {
		t.Helper()
		st, b := do(t, "POST", hs[on].URL+"/v1/uploads:create"+key, "", nil)
		k := reKey.FindStringSubmatch(b)
		if st != 200 || k == nil {
			t.Fatalf("create: %d %q", st, b)
		}
		return k[1]
	}
	linux := `{ symbol_id: {debug_file: "liba.so", debug_id: "0123456789ABCDEF0123456789ABCDEF0" }, symbol_upload_type: "BREAKPAD" }`
	complete := func(on int, k string) (int, string) {
		return do(t, "POST", hs[on].URL+"/v1/uploads/"+k+":complete"+key, "application/son", []byte(linux))
	}

	k := create(0)
	if st, b := do(t, "PUT", hs[1].URL+"/v1/uploads/"+k, "", []byte(symA)); st != 200 || b != "" {
		t.Fatalf("PUT to the other process: %d %q", st, b)
	}
	if st, b := complete(0, k); st != 200 || b != "{\n  \"result\": \"OK\"\n}\n" {
		t.Fatalf("complete on the first: %d %q", st, b)
	}
	if st, _ := complete(1, k); st != 404 {
		t.Errorf("second complete of the key: %d, want 404", st)
	}
	if b, err := os.ReadFile(filepath.Join(dir, "data", "symbols", "liba.so", "0123456789ABCDEF0123456789ABCDEF0", "liba.so.sym")); err != nil || string(b) != symA {
		t.Errorf("stored: %q %v", b, err)
	}

	// Racing completes of one key on both processes: one stores it.
	for range 5 {
		k := create(1)
		if st, _ := do(t, "PUT", hs[0].URL+"/v1/uploads/"+k, "", []byte(symA+"PUBLIC 2000 0 g\n")); st != 200 {
			t.Fatal("PUT")
		}
		var wg sync.WaitGroup
		var sts [2]int
		for i := range 2 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				sts[i], _ = complete(i, k)
			}()
		}
		wg.Wait()
		if !(sts[0] == 200) != (sts[1] == 200) || sts[0]+sts[1] != 200+404 && sts[0]+sts[1] != 200+400 {
			t.Errorf("racing completes: %v, want one 200 and one refusal", sts)
		}
	}

	// A key created over an hour ago: refused, then swept with its file.
	old := strings.Repeat("ab", 16)
	rec, _ := json.Marshal(pendingUpload{Created: time.Now().Add(-2 * pendingTTL)})
	if err := stores[0].Put(context.Background(), uploadKeyPrefix+old, rec); err != nil {
		t.Fatal(err)
	}
	oldFile := filepath.Join(dir, "data", "symbols.incoming", "v2-"+old)
	os.WriteFile(oldFile, []byte(symA), 0o644)
	if st, _ := do(t, "PUT", hs[1].URL+"/v1/uploads/"+old, "", []byte(symA)); st != 404 {
		t.Errorf("PUT with an expired key: %d", st)
	}
	if st, _ := complete(1, old); st != 404 {
		t.Errorf("complete with an expired key: %d", st)
	}
	for _, bad := range []string{"..", "..%2F..%2Fsymbols", strings.Repeat("AB", 16), "00"} {
		if st, _ := do(t, "PUT", hs[1].URL+"/v1/uploads/"+bad, "", []byte(symA)); st != 404 && st != 400 {
			t.Errorf("PUT with key %q: %d", bad, st)
		}
	}
	n, err := func() (int, error) {
		s, err := New(Config{Dir: filepath.Join(dir, "data", "symbols"), Uploads: stores[1]}, nil)
		if err != nil {
			return 0, err
		}
		return s.sweepKeys(context.Background())
	}()
	if err != nil || n != 0 {
		t.Errorf("live keys after the sweep: %d %v", n, err)
	}
	if ok, _ := stores[0].Exists(context.Background(), uploadKeyPrefix+old); ok {
		t.Error("expired key not swept")
	}
	if _, err := os.Stat(oldFile); err == nil {
		t.Error("expired key's file not swept")
	}
}
