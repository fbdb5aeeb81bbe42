package main

import (
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/gobreakpad/gobreakpad/internal/testkit/cmdtest"
)

func TestMain(m *testing.M) { cmdtest.Main(m) }

// TestUpload runs the program against a loopback server: what it prints
// on success and on a refusal, its exit statuses, the fields and headers
// the server gets.
func TestUpload(t *testing.T) {
	prog := cmdtest.Build(t, ".")
	var (
		mu   sync.Mutex
		got  *http.Request
		form map[string][]string
	)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if err := r.ParseMultipartForm(1 << 20); err != nil {
			t.Errorf("ParseMultipartForm: %v", err)
		}
		mu.Lock()
		got, form = r, r.MultipartForm.Value
		mu.Unlock()
		if r.URL.Path == "/refuse" {
			http.Error(w, "Discarded=rule_no", 403)
			return
		}
		f, _, err := r.FormFile("upload_file_minidump")
		if err != nil {
			t.Errorf("no dump: %v", err)
		} else if b, _ := io.ReadAll(f); string(b) != "MDMP dump" {
			t.Errorf("dump %q", b)
		}
		io.WriteString(w, "CrashID=bp-1\n")
	}))
	defer srv.Close()
	dump := filepath.Join(t.TempDir(), "c.dmp")
	os.WriteFile(dump, []byte("MDMP dump"), 0o644)

	// Flags after the arguments too, as getopt permutes them.
	r := cmdtest.RunClean(t, prog, nil, "-p", "Prod", dump, srv.URL+"/submit", "-v", "2.0", "-h", "X-Token: abc", "-h", "X-Other:x")
	if r.Code != 0 || r.Stdout != "Successfully sent the minidump file.\nResponse:\nCrashID=bp-1\n\n" || r.Stderr != "" {
		t.Errorf("success: %+v", r)
	}
	mu.Lock()
	defer mu.Unlock()
	if got == nil || got.Header.Get("X-Token") != "abc" || got.Header.Get("X-Other") != "x" || got.UserAgent() != "Breakpad/1.0 (Linux)" ||
		strings.Join(form["prod"], ",") != "Prod" || strings.Join(form["ver"], ",") != "2.0" {
		t.Errorf("server got %+v, form %v", got, form)
	}

	mu.Unlock()
	r = cmdtest.RunClean(t, prog, nil, "-p", "Prod", "-v", "1", dump, srv.URL+"/refuse")
	mu.Lock()
	if r.Code != 1 || r.Stdout != "Failed to send minidump: HTTP response code said error\nResponse:\n\n" ||
		!strings.Contains(r.Stderr, `403 Forbidden: "Discarded=rule_no"`) {
		t.Errorf("refusal: %+v", r)
	}

	// No scheme: http, as libcurl (it was Go's "first path segment in URL
	// cannot contain colon").
	mu.Unlock()
	r = cmdtest.RunClean(t, prog, nil, "-p", "Prod", "-v", "1", dump, strings.TrimPrefix(srv.URL, "http://")+"/submit")
	mu.Lock()
	if r.Code != 0 || !strings.HasPrefix(r.Stdout, "Successfully sent the minidump file.") {
		t.Errorf("URL without http://: %+v", r)
	}
	// A URL that is none: Breakpad's words on stdout, the URL and what is
	// wrong with it on stderr.
	r = cmdtest.RunClean(t, prog, nil, "-p", "Prod", "-v", "1", dump, "http://[::1")
	if r.Code != 1 || r.Stdout != "Failed to send minidump: URL using bad/illegal format or missing URL\nResponse:\n\n" ||
		r.Stderr != `minidump_upload: upload URL "http://[::1": missing ']' in host (want http://HOST[:PORT]/PATH)`+"\n" {
		t.Errorf("bad URL: %+v", r)
	}

	for _, args := range [][]string{
		{"-p", "P", dump},
		{"-p", "P", dump, srv.URL, "extra"},
		{"-h", "no colon", dump, srv.URL},
		{"-x", "http://", dump, srv.URL},
	} {
		r := cmdtest.RunClean(t, prog, nil, args...)
		if r.Code != 2 || r.Stdout != "" || !strings.HasPrefix(r.Stderr, "minidump_upload: ") || strings.Count(r.Stderr, "\n") != 1 {
			t.Errorf("%q: %+v, want one line on stderr and exit 2", args, r)
		}
	}
}
