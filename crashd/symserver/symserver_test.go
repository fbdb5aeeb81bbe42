package symserver

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"mime/multipart"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/gobreakpad/gobreakpad/crashd/auth"
)

// The regexes of Breakpad's client (symbol_collector_client.cc).
var (
	reUpload = regexp.MustCompile(`"uploadUrl": "([^"]+)"`)
	reKey    = regexp.MustCompile(`"uploadKey": "([^"]+)"`)
)

const testSecret = "0123456789abcdef0123456789abcdef"

// arrived records OnSymbols calls.
type arrived struct {
	mu   sync.Mutex
	mods []string
}

func (a *arrived) add(_ context.Context, f, id string) {
	a.mu.Lock()
	a.mods = append(a.mods, f+"/"+id)
	a.mu.Unlock()
}

func (a *arrived) list() []string {
	a.mu.Lock()
	defer a.mu.Unlock()
	return append([]string(nil), a.mods...)
}

// start runs a symbol server on 127.0.0.1 with one upload token
// (testSecret) and one token without the scope ("noscope").
func start(t testing.TB, open bool) (*Server, *httptest.Server, *arrived) {
	t.Helper()
	a := &arrived{}
	s, err := New(Config{
		Dir: filepath.Join(t.TempDir(), "symbols"),
		Tokens: []auth.Token{
			{Name: "ci", SHA256: auth.HashToken(testSecret), Scopes: []string{auth.ScopeUpload}},
			{Name: "reader", SHA256: auth.HashToken("noscope")},
		},
		OpenV1:    open,
		OnSymbols: a.add,
	}, nil)
	if err != nil {
		t.Fatal(err)
	}
	hs := httptest.NewServer(s)
	t.Cleanup(hs.Close)
	return s, hs, a
}

// v1Body builds a sym-upload-v1 form as Breakpad's Linux sym_upload
// (libcurl's form encoder, fields in std::map order, then the file).
func v1Body(t testing.TB, sym []byte, fields map[string]string) (string, []byte) {
	t.Helper()
	var b bytes.Buffer
	mw := multipart.NewWriter(&b)
	for _, k := range []string{"code_file", "cpu", "debug_file", "debug_identifier", "os", "version"} {
		if v, ok := fields[k]; ok {
			mw.WriteField(k, v)
		}
	}
	fw, _ := mw.CreateFormFile("symbol_file", "x.sym")
	fw.Write(sym)
	mw.Close()
	return mw.FormDataContentType(), b.Bytes()
}

func do(t testing.TB, method, url, ctype string, body []byte, hdr ...string) (int, string) {
	t.Helper()
	req, err := http.NewRequest(method, url, bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	if ctype != "" {
		req.Header.Set("Content-Type", ctype)
	}
	for i := 0; i+1 < len(hdr); i += 2 {
		req.Header.Set(hdr[i], hdr[i+1])
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

const symA = "MODULE Linux x86_64 0123456789ABCDEF0123456789ABCDEF0 liba.so\nINFO CODE_ID 67452301AB89EFCD0123456789ABCDEF liba.so\nFUNC 1000 10 0 f\n1000 10 1 1\nPUBLIC 2000 0 g\n"

func TestV1(t *testing.T) {
	s, hs, a := start(t, false)
	fields := map[string]string{"code_file": "liba.so", "cpu": "x86_64", "debug_file": "liba.so",
		"debug_identifier": "0123456789ABCDEF0123456789ABCDEF0", "os": "Linux", "version": "1.0"}
	ct, body := v1Body(t, []byte(symA), fields)
	url := hs.URL + "/symbols/upload"
	for _, c := range []struct {
		name   string
		url    string
		hdr    []string
		status int
		body   string
	}{
		{"no token", url, nil, 401, "an API token is required (Auth-Token header or ?key=)\n"},
		{"wrong token", url, []string{"Auth-Token", "nope"}, 403, "unknown API token\n"},
		{"token without the scope", url + "?key=noscope", nil, 403, "the token has no upload_symbols scope\n"},
		{"header token", url, []string{"Auth-Token", testSecret}, 200, "OK liba.so/0123456789ABCDEF0123456789ABCDEF0\n"},
		{"again: unchanged", url + "?key=" + testSecret, nil, 200, "OK liba.so/0123456789ABCDEF0123456789ABCDEF0 (unchanged)\n"},
	} {
		st, b := do(t, "POST", c.url, ct, body, c.hdr...)
		if st != c.status || b != c.body {
			t.Errorf("%s: got %d %q, want %d %q", c.name, st, b, c.status, c.body)
		}
	}
	got, err := os.ReadFile(filepath.Join(s.Dir(), "liba.so", "0123456789ABCDEF0123456789ABCDEF0", "liba.so.sym"))
	if err != nil || string(got) != symA {
		t.Fatalf("stored: %q %v", got, err)
	}
	if l := a.list(); len(l) != 1 || l[0] != "liba.so/0123456789ABCDEF0123456789ABCDEF0" {
		t.Errorf("OnSymbols calls: %q", l)
	}
	// Downloads, in the Breakpad HTTP layout.
	dl := hs.URL + "/symbols/liba.so/0123456789ABCDEF0123456789ABCDEF0/liba.so.sym"
	if st, b := do(t, "GET", dl, "", nil); st != 200 || b != symA {
		t.Errorf("GET: %d %q", st, b)
	}
	resp, err := http.Head(dl)
	if err != nil || resp.StatusCode != 200 || resp.ContentLength != int64(len(symA)) {
		t.Errorf("HEAD: %v %v", resp, err)
	}
	for _, p := range []string{"/symbols/liba.so/0123456789ABCDEF0123456789ABCDEF0/other.sym", "/symbols/liba.so/0123/liba.so.sym",
		"/symbols/..%2fx/0123/liba.so.sym", "/symbols/liba.so/0123456789ABCDEF0123456789ABCDEF0/liba.so.sym/x"} {
		if st, _ := do(t, "GET", hs.URL+p, "", nil); st != 404 {
			t.Errorf("GET %s: %d, want 404", p, st)
		}
	}
	// By code id (INFO CODE_ID), and syminfo by either.
	if st, b := do(t, "GET", hs.URL+"/symbols/liba.so/67452301AB89EFCD0123456789ABCDEF/liba.so.sym", "", nil); st != 200 || b != symA {
		t.Errorf("GET by code id: %d %q", st, b)
	}
	info := `{"debug_file":"liba.so","debug_id":"0123456789ABCDEF0123456789ABCDEF0","code_file":"liba.so","code_id":"67452301AB89EFCD0123456789ABCDEF","os":"Linux","cpu":"x86_64"}` + "\n"
	for _, p := range []string{"/api/syminfo/liba.so/0123456789ABCDEF0123456789ABCDEF0", "/api/syminfo/liba.so/67452301ab89efcd0123456789abcdef"} {
		if st, b := do(t, "GET", hs.URL+p, "", nil); st != 200 || b != info {
			t.Errorf("GET %s: %d %q", p, st, b)
		}
	}
	if st, _ := do(t, "GET", hs.URL+"/api/syminfo/liba.so/FFFF", "", nil); st != 404 {
		t.Errorf("syminfo of an unknown module: %d", st)
	}
	// Go's client asks for gzip and inflates it.
	req, _ := http.NewRequest("GET", dl, nil)
	req.Header.Set("Accept-Encoding", "gzip")
	resp, err = http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.Header.Get("Content-Encoding") != "gzip" {
		t.Errorf("Accept-Encoding: gzip: Content-Encoding %q", resp.Header.Get("Content-Encoding"))
	}
}

func TestV1Refused(t *testing.T) {
	s, hs, a := start(t, true)
	url := hs.URL + "/symbols/upload"
	ok := map[string]string{"debug_file": "liba.so", "debug_identifier": "0123456789ABCDEF0123456789ABCDEF0"}
	for _, c := range []struct {
		name   string
		sym    string
		fields map[string]string
		status int
		body   string
	}{
		{"MODULE line disagrees (id)", symA, map[string]string{"debug_file": "liba.so", "debug_identifier": "FFFF"}, 400,
			"the symbol file's MODULE line names liba.so 0123456789ABCDEF0123456789ABCDEF0, the upload liba.so FFFF\n"},
		{"MODULE line disagrees (name)", symA, map[string]string{"debug_file": "libb.so"}, 400,
			"the symbol file's MODULE line names liba.so 0123456789ABCDEF0123456789ABCDEF0, the upload libb.so \n"},
		{"traversal in MODULE name", "MODULE Linux x86_64 0123 ..\n", nil, 400, "symbol file: MODULE name: unusable file name: \"..\"\n"},
		{"traversal in MODULE id", "MODULE Linux x86_64 .. liba.so\n", nil, 400, "symbol file: MODULE identifier: unusable file name: \"..\"\n"},
		{"not symbols", "hello\n", ok, 400, "not a Breakpad symbol file (no MODULE line) nor a debug file of a known format\n"},
		{"empty", "", ok, 400, "not a Breakpad symbol file (no MODULE line) nor a debug file of a known format\n"},
	} {
		ct, body := v1Body(t, []byte(c.sym), c.fields)
		st, b := do(t, "POST", url, ct, body)
		if st != c.status || b != c.body {
			t.Errorf("%s: got %d %q, want %d %q", c.name, st, b, c.status, c.body)
		}
	}
	if st, b := do(t, "POST", url, "text/plain", []byte("x")); st != 400 || !strings.Contains(b, "not a multipart/form-data body") {
		t.Errorf("not multipart: %d %q", st, b)
	}
	// A MODULE name with a Windows path is stored under its base name.
	ct, body := v1Body(t, []byte("MODULE windows x86 ABCD1 c:\\src\\test_app.pdb\nPUBLIC 10 0 f\n"), map[string]string{"debug_file": "test_app.pdb"})
	if st, b := do(t, "POST", url, ct, body); st != 200 {
		t.Fatalf("pdb: %d %q", st, b)
	}
	if _, err := os.Stat(filepath.Join(s.Dir(), "test_app.pdb", "ABCD1", "test_app.sym")); err != nil {
		t.Error(err)
	}
	if st, b := do(t, "GET", hs.URL+"/symbols/test_app.pdb/ABCD1/test_app.sym", "", nil); st != 200 || !strings.HasPrefix(b, "MODULE windows") {
		t.Errorf("pdb download: %d %q", st, b)
	}
	// Nothing outside the store.
	ents, _ := os.ReadDir(filepath.Dir(s.Dir()))
	for _, e := range ents {
		if e.Name() != "symbols" && e.Name() != "symbols.incoming" {
			t.Errorf("written outside the store: %s", e.Name())
		}
	}
	if inc, _ := os.ReadDir(s.cfg.Incoming); len(inc) != 0 {
		t.Errorf("incoming files left: %v", inc)
	}
	if l := a.list(); len(l) != 1 {
		t.Errorf("OnSymbols calls: %q", l)
	}
}

func TestV1SizeLimit(t *testing.T) {
	s, hs, _ := start(t, true)
	s.cfg.MaxUpload = 100
	ct, body := v1Body(t, []byte(symA+strings.Repeat("PUBLIC 1 0 x\n", 20)), nil)
	if st, b := do(t, "POST", hs.URL+"/symbols/upload", ct, body); st != 413 {
		t.Errorf("over the limit: %d %q", st, b)
	}
}

// TestV2 checks the sym-upload-v2 answers byte for byte, in the order
// Breakpad's client (symbol_upload.cc SymUploadV2Start) makes its calls.
func TestV2(t *testing.T) {
	_, hs, a := start(t, false)
	key := "?key=" + testSecret
	check := hs.URL + "/v1/symbols/liba.so/0123456789ABCDEF0123456789ABCDEF0:checkStatus"
	exact := func(name string, st int, b string, wantSt int, want string) {
		t.Helper()
		if st != wantSt || b != want {
			t.Errorf("%s: got %d %q, want %d %q", name, st, b, wantSt, want)
		}
	}
	st, b := do(t, "GET", check+key, "", nil)
	exact("checkStatus, missing", st, b, 200, "{\n  \"status\": \"MISSING\"\n}\n")
	st, b = do(t, "GET", check, "", nil)
	exact("checkStatus, no key", st, b, 401, "{\n  \"error\": {\n    \"code\": 401,\n    \"message\": \"an API token is required (Auth-Token header or ?key=)\"\n  }\n}\n")
	st, b = do(t, "GET", check+"?key=bad", "", nil)
	exact("checkStatus, bad key", st, b, 403, "{\n  \"error\": {\n    \"code\": 403,\n    \"message\": \"unknown API token\"\n  }\n}\n")
	st, b = do(t, "POST", hs.URL+"/v1/uploads:create?key=bad", "", nil)
	exact("create, bad key", st, b, 403, "{\n  \"error\": {\n    \"code\": 403,\n    \"message\": \"unknown API token\"\n  }\n}\n")

	upload := func(sym string, complete string) (int, string) {
		t.Helper()
		st, b := do(t, "POST", hs.URL+"/v1/uploads:create"+key, "", nil)
		m := reUpload.FindStringSubmatch(b)
		k := reKey.FindStringSubmatch(b)
		if st != 200 || m == nil || k == nil || b != fmt.Sprintf("{\n  \"uploadKey\": %q,\n  \"uploadUrl\": %q\n}\n", k[1], m[1]) {
			t.Fatalf("create: %d %q", st, b)
		}
		if m[1] != hs.URL+"/v1/uploads/"+k[1] {
			t.Errorf("uploadUrl %s", m[1])
		}
		st, b = do(t, "PUT", m[1], "", []byte(sym))
		exact("PUT", st, b, 200, "")
		return do(t, "POST", hs.URL+"/v1/uploads/"+k[1]+":complete"+key, "application/son", []byte(complete))
	}
	// The body exactly as Breakpad's Linux client writes it.
	linux := `{ symbol_id: {debug_file: "liba.so", debug_id: "0123456789ABCDEF0123456789ABCDEF0" }, symbol_upload_type: "BREAKPAD" }`
	st, b = upload(symA, linux)
	exact("complete", st, b, 200, "{\n  \"result\": \"OK\"\n}\n")
	st, b = do(t, "GET", check+key, "", nil)
	exact("checkStatus, found", st, b, 200, "{\n  \"status\": \"FOUND\"\n}\n")
	// The protocol text's JSON, camelCase.
	st, b = upload(symA, `{"symbol_id":{"debugFile":"liba.so","debugId":"0123456789ABCDEF0123456789ABCDEF0"}}`)
	exact("complete, same bytes", st, b, 200, "{\n  \"result\": \"DUPLICATE_DATA\"\n}\n")
	st, b = upload(symA, `{ symbol_id: {debug_file: "liba.so", debug_id: "FF" }, symbol_upload_type: "BREAKPAD" }`)
	exact("complete, MODULE disagrees", st, b, 400, "{\n  \"error\": {\n    \"code\": 400,\n    \"message\": \"the symbol file's MODULE line names liba.so 0123456789ABCDEF0123456789ABCDEF0, the upload liba.so FF\"\n  }\n}\n")
	st, b = upload(symA, `{ symbol_id: {debug_file: "..", debug_id: "FF" } }`)
	exact("complete, traversal", st, b, 400, "{\n  \"error\": {\n    \"code\": 400,\n    \"message\": \"complete: debug file: unusable file name: \\\"..\\\"\"\n  }\n}\n")
	st, b = do(t, "POST", hs.URL+"/v1/uploads/0000:complete"+key, "application/son", []byte(linux))
	exact("complete, unknown key", st, b, 404, "{\n  \"error\": {\n    \"code\": 404,\n    \"message\": \"unknown or expired upload key\"\n  }\n}\n")
	st, _ = do(t, "PUT", hs.URL+"/v1/uploads/0000", "", []byte(symA))
	exact("PUT, unknown key", st, "", 404, "")
	st, b = do(t, "GET", hs.URL+"/v1/symbols/..%2F..%2Fetc/passwd:checkStatus"+key, "", nil)
	if st != 400 {
		t.Errorf("checkStatus traversal: %d %q", st, b)
	}
	if l := a.list(); len(l) != 1 {
		t.Errorf("OnSymbols calls: %q", l)
	}
}

func TestConcurrentUploads(t *testing.T) {
	_, hs, a := start(t, true)
	var wg sync.WaitGroup
	for i := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			sym := symA
			if i%2 == 1 {
				sym += "PUBLIC 3000 0 h\n"
			}
			ct, body := v1Body(t, []byte(sym), nil)
			if st, b := do(t, "POST", hs.URL+"/symbols/upload", ct, body); st != 200 {
				t.Errorf("upload %d: %d %q", i, st, b)
			}
		}()
	}
	wg.Wait()
	st, b := do(t, "GET", hs.URL+"/symbols/liba.so/0123456789ABCDEF0123456789ABCDEF0/liba.so.sym", "", nil)
	if st != 200 || (b != symA && b != symA+"PUBLIC 3000 0 h\n") {
		t.Errorf("after concurrent uploads: %d %q", st, b)
	}
	if n := len(a.list()); n < 1 || n > 8 {
		t.Errorf("%d OnSymbols calls", n)
	}
}

func TestParseComplete(t *testing.T) {
	for _, c := range []struct {
		in   string
		want Complete
		err  bool
	}{
		{`{ symbol_id: {debug_file: "a.pdb", debug_id: "AB" }, symbol_upload_type: "PDB" }`, Complete{"a.pdb", "AB", "PDB"}, false},
		{`{"symbol_id":{"debug_file":"a","debug_id":"1"},"symbol_upload_type":"breakpad"}`, Complete{"a", "1", "BREAKPAD"}, false},
		{`{symbolId:{debugFile:"a: b, c:",debugId:"1"}}`, Complete{"a: b, c:", "1", ""}, false},
		{`{ symbol_id: {debug_file: "a\" x: y", debug_id: "1" } }`, Complete{"a\" x: y", "1", ""}, false},
		{`{ symbol_id: {debug_file: "a" } }`, Complete{}, true},
		{`{ symbol_id: "x" }`, Complete{}, true},
		{`{ symbol_id: {debug_file: "a`, Complete{}, true},
		{``, Complete{}, true},
	} {
		got, err := ParseComplete([]byte(c.in))
		if (err != nil) != c.err || !c.err && got != c.want {
			t.Errorf("ParseComplete(%q) = %+v, %v; want %+v (error %v)", c.in, got, err, c.want, c.err)
		}
	}
}

func FuzzParseComplete(f *testing.F) {
	f.Add([]byte(`{ symbol_id: {debug_file: "liba.so", debug_id: "0123" }, symbol_upload_type: "BREAKPAD" }`))
	f.Add([]byte(`{"symbol_id":{"debugFile":"a","debugId":"1"}}`))
	f.Fuzz(func(t *testing.T, b []byte) {
		c, err := ParseComplete(b)
		if err == nil && (c.DebugFile == "" || c.DebugID == "") {
			t.Fatalf("accepted without names: %+v", c)
		}
	})
}

func FuzzParseV1(f *testing.F) {
	ct, body := v1Body(f, []byte(symA), map[string]string{"debug_file": "liba.so", "debug_identifier": "0123", "os": "Linux"})
	_, boundary, _ := strings.Cut(ct, "boundary=")
	f.Add(body)
	f.Fuzz(func(t *testing.T, b []byte) {
		n := 0
		_, _ = ParseV1("multipart/form-data; boundary="+boundary, bytes.NewReader(b), func(r io.Reader) error {
			n++
			_, err := io.Copy(io.Discard, r)
			return err
		})
		if n > 1 {
			t.Fatalf("symbol_file handed over %d times", n)
		}
	})
}

// TestIncomingCleaned: files a dead process left in Incoming are removed
// at start when older than an upload key lives; younger ones are kept.
func TestIncomingCleaned(t *testing.T) {
	dir := t.TempDir()
	inc := filepath.Join(dir, "symbols.incoming")
	os.MkdirAll(inc, 0o755)
	old, young := filepath.Join(inc, "up-old"), filepath.Join(inc, "v2-young")
	os.WriteFile(old, []byte("x"), 0o644)
	os.WriteFile(young, []byte("x"), 0o644)
	past := time.Now().Add(-2 * pendingTTL)
	os.Chtimes(old, past, past)
	if _, err := New(Config{Dir: filepath.Join(dir, "symbols")}, nil); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(old); err == nil {
		t.Error("old incoming file kept")
	}
	if _, err := os.Stat(young); err != nil {
		t.Error("young incoming file removed")
	}
}

func TestMetrics(t *testing.T) {
	reg := prometheus.NewRegistry()
	s, err := New(Config{Dir: filepath.Join(t.TempDir(), "symbols"), OpenV1: true, Registerer: reg}, nil)
	if err != nil {
		t.Fatal(err)
	}
	hs := httptest.NewServer(s)
	defer hs.Close()
	ct, body := v1Body(t, []byte(symA), nil)
	for range 2 {
		do(t, "POST", hs.URL+"/symbols/upload", ct, body)
	}
	ct, body = v1Body(t, []byte("junk"), nil)
	do(t, "POST", hs.URL+"/symbols/upload", ct, body)
	do(t, "GET", hs.URL+"/symbols/liba.so/0123456789ABCDEF0123456789ABCDEF0/liba.so.sym", "", nil)
	do(t, "GET", hs.URL+"/symbols/libz.so/0123/libz.so.sym", "", nil)
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]float64{}
	for _, mf := range mfs {
		for _, m := range mf.GetMetric() {
			k := mf.GetName()
			for _, l := range m.GetLabel() {
				k += " " + l.GetValue()
			}
			got[k] = m.GetCounter().GetValue()
		}
	}
	want := map[string]float64{
		"crashd_symbols_uploads_total v1 stored":    1,
		"crashd_symbols_uploads_total v1 duplicate": 1,
		"crashd_symbols_uploads_total v1 refused":   1,
		"crashd_symbols_stored_bytes_total":         float64(len(symA)),
		"crashd_symbols_downloads_total found":      1,
		"crashd_symbols_downloads_total not_found":  1,
	}
	for k, v := range want {
		if got[k] != v {
			t.Errorf("%s: %v, want %v (all: %v)", k, got[k], v, got)
		}
	}
}
