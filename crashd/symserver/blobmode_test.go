package symserver

import (
	"compress/gzip"
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/gobreakpad/gobreakpad/crashd/auth"
	"github.com/gobreakpad/gobreakpad/crashd/blob"
	"github.com/gobreakpad/gobreakpad/crashd/symblob"
)

// blobServers starts n symbol servers with data directories of their own
// sharing the blob store bs (Config.Symbols): processes on several
// machines.
func blobServers(t *testing.T, bs blob.Store, n int) ([]*httptest.Server, []*arrived) {
	t.Helper()
	var hs []*httptest.Server
	var as []*arrived
	for range n {
		a := &arrived{}
		dir := t.TempDir()
		s, err := New(Config{
			Dir:       filepath.Join(dir, "symbols"),
			FastCache: filepath.Join(dir, "cache"),
			Tokens:    []auth.Token{{Name: "ci", SHA256: auth.HashToken(testSecret), Scopes: []string{auth.ScopeUpload}}},
			Uploads:   bs, Symbols: &symblob.Store{Blobs: bs}, OnSymbols: a.add,
		}, nil)
		if err != nil {
			t.Fatal(err)
		}
		h := httptest.NewServer(s)
		t.Cleanup(h.Close)
		hs, as = append(hs, h), append(as, a)
	}
	return hs, as
}

// TestSymbolsOnBlobStore: with the symbols on the blob store, a v1 upload
// to one process is downloaded (plain and gzipped) and found by
// checkStatus on another, whose data directory never saw it; the same
// file uploaded to the other is a duplicate; a v2 upload is created on
// one, PUT to the second and completed on the third (the file waiting on
// the blob store); a name that is no blob key (libstdc++) works; the
// .sym and fast forms are under symbols/ in Breakpad's layout.
func TestSymbolsOnBlobStore(t *testing.T) {
	ctx := context.Background()
	bs := blob.NewMem()
	hs, as := blobServers(t, bs, 3)
	id := "0123456789ABCDEF0123456789ABCDEF0"
	fields := map[string]string{"debug_file": "liba.so", "debug_identifier": id, "code_file": "liba.so"}
	ct, body := v1Body(t, []byte(symA), fields)
	if st, b := do(t, "POST", hs[0].URL+"/symbols/upload?key="+testSecret, ct, body); st != 200 {
		t.Fatalf("v1 upload: %d %q", st, b)
	}
	for _, k := range []string{"symbols/liba.so/" + id + "/liba.so.sym", "symbols/liba.so/" + id + "/liba.so.symc", "symbols/liba.so/" + id + "/liba.so.cfidx"} {
		if ok, _ := bs.Exists(ctx, k); !ok {
			t.Errorf("%s: not on the blob store", k)
		}
	}
	dl := hs[1].URL + "/symbols/liba.so/" + id + "/liba.so.sym"
	if st, b := do(t, "GET", dl, "", nil); st != 200 || b != symA {
		t.Errorf("download from another process: %d %q", st, b)
	}
	req, _ := http.NewRequest("GET", dl, nil)
	req.Header.Set("Accept-Encoding", "gzip")
	resp, err := http.DefaultTransport.RoundTrip(req)
	if err != nil {
		t.Fatal(err)
	}
	zr, err := gzip.NewReader(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	got, _ := io.ReadAll(zr)
	resp.Body.Close()
	if string(got) != symA || resp.Header.Get("Content-Encoding") != "gzip" {
		t.Errorf("gzipped download: %q", got)
	}
	if st, _ := do(t, "GET", hs[1].URL+"/symbols/liba.so/"+id+"/other.sym", "", nil); st != 404 {
		t.Errorf("download under another name: %d", st)
	}
	if st, b := do(t, "GET", hs[2].URL+"/v1/symbols/liba.so/"+id+":checkStatus?key="+testSecret, "", nil); st != 200 || !strings.Contains(b, "FOUND") || strings.Contains(b, "MISSING") {
		t.Errorf("checkStatus on another process: %d %q", st, b)
	}
	if st, b := do(t, "POST", hs[1].URL+"/symbols/upload?key="+testSecret, ct, body); st != 200 || !strings.Contains(b, "unchanged") {
		t.Errorf("the same file to another process: %d %q, want unchanged", st, b)
	}
	if n := len(as[1].list()); n != 0 {
		t.Errorf("a duplicate reported as arrived: %v", as[1].list())
	}

	// v2 across three processes.
	symB := strings.Replace(symA, "liba.so", "libstdc++.so.6", 1)
	st, b := do(t, "POST", hs[0].URL+"/v1/uploads:create?key="+testSecret, "", nil)
	k := reKey.FindStringSubmatch(b)
	if st != 200 || k == nil {
		t.Fatalf("create: %d %q", st, b)
	}
	if st, b := do(t, "PUT", hs[1].URL+"/v1/uploads/"+k[1], "", []byte(symB)); st != 200 {
		t.Fatalf("PUT: %d %q", st, b)
	}
	if st, b := do(t, "POST", hs[2].URL+"/v1/uploads/"+k[1]+":complete?key="+testSecret, "application/json",
		[]byte(`{"symbol_id":{"debug_file":"libstdc++.so.6","debug_id":"`+id+`"},"symbol_upload_type":"BREAKPAD"}`)); st != 200 || !strings.Contains(b, `"OK"`) {
		t.Fatalf("complete on a third process: %d %q", st, b)
	}
	if ok, _ := bs.Exists(ctx, pendingFilePrefix+k[1]); ok {
		t.Error("the upload's file left on the blob store")
	}
	if st, b := do(t, "GET", hs[0].URL+"/symbols/libstdc++.so.6/"+id+"/libstdc++.so.6.sym", "", nil); st != 200 || b != symB {
		t.Errorf("download of libstdc++.so.6 from the first: %d %q", st, b)
	}
	if l := as[2].list(); len(l) != 1 || l[0] != "libstdc++.so.6/"+id {
		t.Errorf("arrived on the third: %v", l)
	}
}

// presigner is a Mem store handing out "presigned" URLs of a test server
// serving its blobs, as S3 does.
type presigner struct {
	*blob.Mem
	base string
}

func (p presigner) PresignGet(_ context.Context, key string, _ time.Duration) (*url.URL, error) {
	return url.Parse(p.base + "/" + key + "?X-Amz-Signature=test")
}

// TestDownloadRedirect: with Redirect set and a store that presigns, a
// download is a 302 to the store's URL, which serves the file; a module
// not there is a 404, not a redirect.
func TestDownloadRedirect(t *testing.T) {
	mem := blob.NewMem()
	objs := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, err := mem.Get(r.Context(), strings.TrimPrefix(r.URL.Path, "/"))
		if err != nil || r.URL.Query().Get("X-Amz-Signature") != "test" {
			http.NotFound(w, r)
			return
		}
		w.Write(b)
	}))
	defer objs.Close()
	bs := presigner{mem, objs.URL}
	dir := t.TempDir()
	s, err := New(Config{Dir: filepath.Join(dir, "symbols"), Tokens: []auth.Token{{Name: "ci", SHA256: auth.HashToken(testSecret), Scopes: []string{auth.ScopeUpload}}},
		Uploads: bs, Symbols: &symblob.Store{Blobs: bs}, Redirect: time.Minute}, nil)
	if err != nil {
		t.Fatal(err)
	}
	hs := httptest.NewServer(s)
	defer hs.Close()
	id := "0123456789ABCDEF0123456789ABCDEF0"
	ct, body := v1Body(t, []byte(symA), map[string]string{"debug_file": "liba.so", "debug_identifier": id})
	if st, b := do(t, "POST", hs.URL+"/symbols/upload?key="+testSecret, ct, body); st != 200 {
		t.Fatalf("upload: %d %q", st, b)
	}
	resp, err := http.DefaultTransport.RoundTrip(mustReq(t, hs.URL+"/symbols/liba.so/"+id+"/liba.so.sym"))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	loc := resp.Header.Get("Location")
	if resp.StatusCode != 302 || !strings.HasPrefix(loc, objs.URL+"/symbols/liba.so/"+id+"/liba.so.sym") {
		t.Fatalf("download: %s to %q, want a 302 to the store", resp.Status, loc)
	}
	if st, b := do(t, "GET", hs.URL+"/symbols/liba.so/"+id+"/liba.so.sym", "", nil); st != 200 || b != symA {
		t.Errorf("following the redirect: %d %q", st, b)
	}
	if st, _ := do(t, "GET", hs.URL+"/symbols/libb.so/"+id+"/libb.so.sym", "", nil); st != 404 {
		t.Errorf("a missing module: %d, want 404", st)
	}
}

func mustReq(t *testing.T, u string) *http.Request {
	r, err := http.NewRequest("GET", u, nil)
	if err != nil {
		t.Fatal(err)
	}
	return r
}
