package main

import (
	"bytes"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"

	"github.com/gobreakpad/gobreakpad/internal/testkit/cmdtest"
	"github.com/gobreakpad/gobreakpad/internal/testkit/wiretest"
)

var boundaryRE = regexp.MustCompile(`boundary=(\S+)`)

// shape is a raw request with its multipart boundary replaced by BOUNDARY,
// the upload key by KEY and its header lines sorted (HTTP gives their
// order no meaning; Go and libcurl order them differently).
func shape(raw []byte, key string) string {
	h, b, _ := bytes.Cut(raw, []byte("\r\n\r\n"))
	s := string(h) + "\r\n\r\n" + string(b)
	if m := boundaryRE.FindSubmatch(h); m != nil {
		s = strings.ReplaceAll(s, string(m[1]), "BOUNDARY")
	}
	if key != "" {
		s = strings.ReplaceAll(s, key, "KEY")
	}
	head, body, _ := strings.Cut(s, "\r\n\r\n")
	lines := strings.Split(head, "\r\n")
	sort.Strings(lines[1:])
	return strings.Join(lines, "\r\n") + "\r\n\r\n" + body
}

// TestSameRequestsAsBreakpad runs Google Breakpad's own sym_upload and
// ours against one recording server on 127.0.0.1 and compares what they
// send, byte for byte but for the multipart boundary (random), the order
// of the header lines, and what docs/crashd.md lists as deliberate: for
// sym-upload-v1 nothing else; for sym-upload-v2 the complete request's
// body and type (ours is JSON) and the Accept-Encoding libcurl does not
// send.
func TestSameRequestsAsBreakpad(t *testing.T) {
	bp := cmdtest.BreakpadSymUpload.Path(t)
	ours := cmdtest.Build(t, ".")
	dir := t.TempDir()
	sym := filepath.Join(dir, "crasher.sym")
	os.WriteFile(sym, []byte("MODULE Linux x86_64 01234567-89AB-CDEF-0123-456789ABCDEF0 crasher\nFUNC 1000 10 0 main\nPUBLIC 2000 0 \xff\r\n--not a boundary\r\n"), 0o644)
	const key = "0123456789abcdef0123456789abcdef"
	srv, rec := wiretest.Server(t, func(w http.ResponseWriter, r *http.Request) {
		switch {
		case strings.HasSuffix(r.URL.Path, ":checkStatus"):
			io.WriteString(w, "{\n  \"status\": \"MISSING\"\n}\n")
		case r.URL.Path == "/v1/uploads:create":
			io.WriteString(w, "{\n  \"uploadKey\": \""+key+"\",\n  \"uploadUrl\": \"http://"+r.Host+"/v1/uploads/"+key+"\"\n}\n")
		case strings.HasSuffix(r.URL.Path, ":complete"):
			io.WriteString(w, "{\n  \"result\": \"OK\"\n}\n")
		}
	})
	clean := []string{"http_proxy=", "HTTP_PROXY=", "https_proxy=", "all_proxy=", "ALL_PROXY="}
	for _, c := range []struct {
		name string
		args []string
		// differs rewrites what is deliberately different in our
		// requests into Breakpad's (per request, in order).
		differs func(i int, s string) string
	}{
		{"v1", []string{sym, srv.URL + "/symbols/upload?key=secret"}, nil},
		{"v1 -v", []string{"-v", "1.2.3", sym, srv.URL + "/symbols/upload"}, nil},
		{"v2", []string{"-p", "sym-upload-v2", "-k", "secret", sym, srv.URL}, func(i int, s string) string {
			if i == 2 {
				return chunked(s)
			}
			if i != 3 {
				return s
			}
			return unquoted(s, "BREAKPAD")
		}},
		{"v2 -t elf", []string{"-p", "sym-upload-v2", "-k", "secret", "-t", "elf", "-c", "crasher", "-i", "0123456789ABCDEF0123456789ABCDEF0", sym, srv.URL}, func(i int, s string) string {
			if i == 2 {
				return chunked(s)
			}
			if i != 3 {
				return s
			}
			return unquoted(s, "ELF")
		}},
	} {
		rb := cmdtest.RunClean(t, bp, clean, c.args...)
		want := rec.Take()
		ro := cmdtest.RunClean(t, ours, clean, c.args...)
		got := rec.Take()
		if rb.Code != ro.Code || rb.Stdout != ro.Stdout {
			t.Errorf("%s: Breakpad's printed %q (exit %d), ours %q (exit %d)", c.name, rb.Stdout, rb.Code, ro.Stdout, ro.Code)
		}
		if len(want) != len(got) || len(want) == 0 {
			t.Errorf("%s: Breakpad's sent %d requests, ours %d", c.name, len(want), len(got))
			continue
		}
		for i := range want {
			w, g := shape(want[i], key), shape(got[i], key)
			if c.differs != nil {
				g = c.differs(i, g)
			}
			if w != g {
				t.Errorf("%s: request %d: Breakpad's\n%q\nours\n%q", c.name, i, w, g)
			}
		}
	}
}

// chunked rewrites our PUT (with a Content-Length) as libcurl sends
// Breakpad's (chunked, one chunk for a small file): a deliberate
// difference (docs/crashd.md).
func chunked(s string) string {
	head, body, _ := strings.Cut(s, "\r\n\r\n")
	var lines []string
	for _, l := range strings.Split(head, "\r\n") {
		if !strings.HasPrefix(l, "Content-Length: ") {
			lines = append(lines, l)
		}
	}
	lines = append(lines, "Transfer-Encoding: chunked")
	sort.Strings(lines[1:])
	return strings.Join(lines, "\r\n") + "\r\n\r\n" + fmt.Sprintf("%x\r\n%s\r\n0\r\n\r\n", len(body), body)
}

// unquoted rewrites our complete request (JSON) as Breakpad's Linux client
// writes it (keys unquoted, "application/son"): a deliberate difference
// (docs/crashd.md).
func unquoted(s, typ string) string {
	head, body, _ := strings.Cut(s, "\r\n\r\n")
	want := `{"symbol_id":{"debug_file":"crasher","debug_id":"0123456789ABCDEF0123456789ABCDEF0"},"symbol_upload_type":"` + typ + `"}`
	if body != want {
		return s
	}
	body = `{ symbol_id: {debug_file: "crasher", debug_id: "0123456789ABCDEF0123456789ABCDEF0" }, symbol_upload_type: "` + typ + `" }`
	head = strings.Replace(head, "Content-Type: application/json", "Content-Type: application/son", 1)
	head = regexp.MustCompile(`Content-Length: \d+`).ReplaceAllString(head, fmt.Sprintf("Content-Length: %d", len(body)))
	return head + "\r\n\r\n" + body
}

// TestFailuresAsBreakpad runs Breakpad's sym_upload and ours where they
// fail: a symbol file that is not there, a server that is down (v1 and v2),
// a sym-upload-v1 URL given to -p sym-upload-v2. Both print the same on
// standard output with the same exit status, and every line Breakpad's
// prints on standard error is among ours; ours adds what Breakpad's leaves
// unsaid (which file and why; that v2 wants the base URL).
func TestFailuresAsBreakpad(t *testing.T) {
	bp := cmdtest.BreakpadSymUpload.Path(t)
	ours := cmdtest.Build(t, ".")
	dir := t.TempDir()
	sym := filepath.Join(dir, "crasher.sym")
	os.WriteFile(sym, []byte("MODULE Linux x86_64 0123456789ABCDEF0123456789ABCDEF0 crasher\nFUNC 1000 10 0 main\n"), 0o644)
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	down := "http://" + l.Addr().String()
	l.Close()
	srv, _ := wiretest.Server(t, func(w http.ResponseWriter, r *http.Request) { http.NotFound(w, r) })
	clean := []string{"http_proxy=", "HTTP_PROXY=", "https_proxy=", "all_proxy=", "ALL_PROXY="}
	for _, c := range []struct {
		name string
		args []string
		want string // in our standard error
	}{
		{"no file", []string{filepath.Join(dir, "nope.sym"), down}, "sym_upload: open " + filepath.Join(dir, "nope.sym") + ": no such file or directory\n"},
		{"v1 down", []string{sym, down + "/symbols/upload"}, "Failed to send http request to " + down + "/symbols/upload, error: Couldn't connect to server\n"},
		{"v2 down", []string{"-p", "sym-upload-v2", sym, down}, "Failed to send http request to " + down + "/v1/symbols/crasher/0123456789ABCDEF0123456789ABCDEF0:checkStatus, error: Couldn't connect to server\n"},
		{"v2 v1 URL", []string{"-p", "sym-upload-v2", sym, srv.URL + "/symbols/upload"}, "sym_upload: " + srv.URL + "/symbols/upload answered 404, not with sym-upload-v2's JSON: -p sym-upload-v2 takes the base URL of the server's API, to which it adds /v1/symbols/..., not the sym-upload-v1 upload URL (" + srv.URL + "?)\n"},
	} {
		rb := cmdtest.RunClean(t, bp, clean, c.args...)
		ro := cmdtest.RunClean(t, ours, clean, c.args...)
		if rb.Code != ro.Code || rb.Stdout != ro.Stdout {
			t.Errorf("%s: Breakpad's printed %q (exit %d), ours %q (exit %d)", c.name, rb.Stdout, rb.Code, ro.Stdout, ro.Code)
		}
		for _, line := range strings.Split(strings.TrimSpace(rb.Stderr), "\n") {
			if line != "" && !strings.HasPrefix(line, "Failed to open curl lib") && !strings.Contains(ro.Stderr, line+"\n") {
				t.Errorf("%s: Breakpad's stderr line %q is not in ours:\n%s", c.name, line, ro.Stderr)
			}
		}
		if !strings.Contains(ro.Stderr, c.want) {
			t.Errorf("%s: stderr\n%s\nwant it to hold\n%s", c.name, ro.Stderr, c.want)
		}
	}
	// The API key stays out of standard error.
	ro := cmdtest.RunClean(t, ours, clean, "-p", "sym-upload-v2", "-k", "s3cret", sym, down)
	if ro.Code != 1 || strings.Contains(ro.Stderr, "s3cret") || !strings.Contains(ro.Stderr, "Couldn't connect to server") {
		t.Errorf("v2 -k, server down: %+v", ro)
	}
}
