package main

import (
	"archive/zip"
	"encoding/base64"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/gobreakpad/gobreakpad/crashd/auth"
	"github.com/gobreakpad/gobreakpad/crashd/symserver"
	"github.com/gobreakpad/gobreakpad/internal/testkit/cmdtest"
	"github.com/gobreakpad/gobreakpad/internal/testkit/corpus"
)

func TestMain(m *testing.M) { cmdtest.Main(m) }

const symA = "MODULE Linux x86_64 0123456789ABCDEF0123456789ABCDEF0 liba.so\nFUNC 1000 10 0 f\n"

// TestAgainstSymserver runs the program against crashd's symbol server on
// 127.0.0.1 through both protocols, expecting Breakpad's sym_upload's
// messages and exit statuses (crashd/symserver's TestBreakpadSymUpload runs
// Breakpad's own through the same steps).
func TestAgainstSymserver(t *testing.T) {
	prog := cmdtest.Build(t, ".")
	secret, tok, _ := auth.NewToken("ci", auth.ScopeUpload)
	dir := t.TempDir()
	s, err := symserver.New(symserver.Config{Dir: filepath.Join(dir, "store"), Tokens: []auth.Token{tok}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	hs := httptest.NewServer(s)
	defer hs.Close()
	symPath := filepath.Join(dir, "liba.so.sym")
	os.WriteFile(symPath, []byte(symA), 0o644)
	symB := filepath.Join(dir, "libb.so.sym")
	os.WriteFile(symB, []byte(strings.Replace(symA, "0 liba.so", "0 libb.so", 1)), 0o644)
	bad := filepath.Join(dir, "bad.sym")
	os.WriteFile(bad, []byte("hello\n"), 0o644)

	for _, c := range []struct {
		name string
		args []string
		out  string
		code int
	}{
		{"v1 without a token", []string{symPath, hs.URL + "/symbols/upload"}, "Failed to send symbol file: HTTP response code said error\nResponse code: 401\nResponse:\n\n", 1},
		{"v1", []string{"-v", "1.0", symPath, hs.URL + "/symbols/upload?key=" + secret}, "Successfully sent the symbol file.\n", 0},
		{"v1, not a symbol file", []string{bad, hs.URL + "/symbols/upload?key=" + secret}, "", 1},
		{"v2, already there", []string{"-p", "sym-upload-v2", "-k", secret, symPath, hs.URL}, "Symbol file already exists, upload aborted. Use \"-f\" to overwrite.\n", 0},
		{"v2, forced", []string{"-p", "sym-upload-v2", "-k", secret, "--force", symPath, hs.URL}, "Uploaded file checksum matched existing file checksum, no change necessary.\n", 0},
		{"v2, wrong key", []string{"-p", "sym-upload-v2", "-k", "bad", symB, hs.URL}, "Failed to check for existing symbol.\n", 1},
		{"v2", []string{"-p", "sym-upload-v2", "-k", secret, symB, hs.URL}, "Successfully sent the symbol file.\n", 0},
		{"-t without -c", []string{"-p", "sym-upload-v2", "-t", "elf", symB, hs.URL}, "", 2},
		{"unknown protocol", []string{"-p", "v3", symB, hs.URL}, "", 2},
	} {
		r := cmdtest.Run(t, prog, c.args...)
		if r.Code != c.code || !strings.HasSuffix(r.Stdout, c.out) {
			t.Errorf("%s: exit %d, stdout %q, stderr %q; want %d, %q", c.name, r.Code, r.Stdout, r.Stderr, c.code, c.out)
		}
	}
	if b, err := os.ReadFile(filepath.Join(dir, "store", "libb.so", "0123456789ABCDEF0123456789ABCDEF0", "libb.so.sym")); err != nil || !strings.HasPrefix(string(b), "MODULE Linux x86_64 0123456789ABCDEF0123456789ABCDEF0 libb.so\n") {
		t.Errorf("v2 upload not stored: %v", err)
	}
	elf := corpus.File(t, "generated/threads-x64-O2/threads")
	r := cmdtest.Run(t, prog, "-p", "sym-upload-v2", "-k", secret, "-t", "elf", "-c", "threads", "-i", "144AFBA2676A2231983B3DCC7FE8C9FE0", elf, hs.URL)
	if r.Code != 0 || r.Stdout != "Successfully sent the symbol file.\n" {
		t.Errorf("-t elf: %d %q %q", r.Code, r.Stdout, r.Stderr)
	}
	// A bundle: the ELF in a zip (its debug file would go beside it).
	elfBytes, _ := os.ReadFile(elf)
	zpath := filepath.Join(dir, "threads.zip")
	zf, _ := os.Create(zpath)
	zw := zip.NewWriter(zf)
	w, _ := zw.Create("threads")
	w.Write(elfBytes)
	zw.Close()
	zf.Close()
	os.RemoveAll(filepath.Join(dir, "store", "threads"))
	r = cmdtest.Run(t, prog, "-p", "sym-upload-v2", "-k", secret, "-t", "elf", "-c", "threads", "-i", "144AFBA2676A2231983B3DCC7FE8C9FE0", zpath, hs.URL)
	if r.Code != 0 || r.Stdout != "Successfully sent the symbol file.\n" {
		t.Errorf("-t elf, a zip bundle: %d %q %q", r.Code, r.Stdout, r.Stderr)
	}
	if _, err := os.Stat(filepath.Join(dir, "store", "threads", "144AFBA2676A2231983B3DCC7FE8C9FE0", "threads.sym")); err != nil {
		t.Errorf("bundle not stored: %v", err)
	}
}

// TestV2Proxy: -x and -u apply to sym-upload-v2 as to v1 (they once did
// not: v2 built its own HTTP client). The server's name does not resolve;
// every request must reach the proxy on 127.0.0.1, with the credentials,
// which hands it to the symbol server.
func TestV2Proxy(t *testing.T) {
	prog := cmdtest.Build(t, ".")
	secret, tok, _ := auth.NewToken("ci", auth.ScopeUpload)
	dir := t.TempDir()
	s, err := symserver.New(symserver.Config{Dir: filepath.Join(dir, "store"), Tokens: []auth.Token{tok}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	var seen []string
	proxy := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		seen = append(seen, r.Method+" "+r.URL.Scheme+"://"+r.URL.Host+r.URL.Path+" "+r.Header.Get("Proxy-Authorization"))
		mu.Unlock()
		if r.URL.Host != "symbols.invalid" {
			http.Error(w, "not through the proxy", http.StatusBadGateway)
			return
		}
		s.ServeHTTP(w, r)
	}))
	defer proxy.Close()
	symPath := filepath.Join(dir, "liba.so.sym")
	os.WriteFile(symPath, []byte(symA), 0o644)
	auth := "Basic " + base64.StdEncoding.EncodeToString([]byte("user:pw"))
	for _, c := range []struct {
		name string
		args []string
		out  string
		want []string
	}{
		{"v1", []string{"-x", proxy.Listener.Addr().String(), "-u", "user:pw", symPath, "http://symbols.invalid/symbols/upload?key=" + secret},
			"Successfully sent the symbol file.\n",
			[]string{"POST http://symbols.invalid/symbols/upload " + auth}},
		{"v2", []string{"-p", "sym-upload-v2", "-k", secret, "-f", "-x", proxy.Listener.Addr().String(), "-u", "user:pw", symPath, "http://symbols.invalid"},
			"Uploaded file checksum matched existing file checksum, no change necessary.\n",
			[]string{"POST http://symbols.invalid/v1/uploads:create " + auth, "PUT http://symbols.invalid/v1/uploads/KEY " + auth, "POST http://symbols.invalid/v1/uploads/KEY:complete " + auth}},
	} {
		mu.Lock()
		seen = nil
		mu.Unlock()
		r := cmdtest.Run(t, prog, c.args...)
		if r.Code != 0 || r.Stdout != c.out {
			t.Errorf("%s: exit %d, stdout %q, stderr %q; want %q", c.name, r.Code, r.Stdout, r.Stderr, c.out)
		}
		mu.Lock()
		got := slices.Clone(seen)
		mu.Unlock()
		for i := range got {
			got[i] = regexp.MustCompile(`/v1/uploads/[^/: ]+`).ReplaceAllString(got[i], "/v1/uploads/KEY")
		}
		if !slices.Equal(got, c.want) {
			t.Errorf("%s: the proxy saw\n%q\nwant\n%q", c.name, got, c.want)
		}
	}
}
