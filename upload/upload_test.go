package upload_test

import (
	"bytes"
	"errors"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/gobreakpad/gobreakpad/internal/testkit/cmdtest"
	"github.com/gobreakpad/gobreakpad/internal/testkit/wiretest"
	"github.com/gobreakpad/gobreakpad/upload"
)

// server starts a recording server on 127.0.0.1 that answers status and
// body.
func server(t *testing.T, status int, body string) (*httptest.Server, *wiretest.Recorder) {
	t.Helper()
	return wiretest.Server(t, func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(status)
		io.WriteString(w, body)
	})
}

var boundaryRE = regexp.MustCompile(`boundary=(\S+)`)

// shape is a raw request with its boundary replaced by BOUNDARY and its
// header lines sorted (HTTP gives their order no meaning; Go and libcurl
// order them differently).
func shape(t *testing.T, raw []byte) (head []string, body string, boundary string) {
	t.Helper()
	h, b, ok := bytes.Cut(raw, []byte("\r\n\r\n"))
	if !ok {
		t.Fatalf("no end of header in %q", raw)
	}
	m := boundaryRE.FindSubmatch(h)
	if m == nil {
		t.Fatalf("no boundary in %q", h)
	}
	boundary = string(m[1])
	lines := strings.Split(strings.ReplaceAll(string(h), boundary, "BOUNDARY"), "\r\n")
	sort.Strings(lines[1:])
	return lines, strings.ReplaceAll(string(b), boundary, "BOUNDARY"), boundary
}

// dump writes a small file named t.dmp with every byte value in it.
func dump(t *testing.T) (string, []byte) {
	t.Helper()
	b := []byte("MDMP\x93\xa7\x00\x00")
	for i := 0; i < 256; i++ {
		b = append(b, byte(i))
	}
	b = append(b, "\r\n--not a boundary\r\n"...)
	p := filepath.Join(t.TempDir(), "t.dmp")
	if err := os.WriteFile(p, b, 0o644); err != nil {
		t.Fatal(err)
	}
	return p, b
}

// TestMinidumpShape checks the request against the one Breakpad's
// minidump_upload sends (captured from it with libcurl 7.88): the same
// header fields and values, the boundary in libcurl's form, the body byte
// for byte.
func TestMinidumpShape(t *testing.T) {
	srv, rec := server(t, 200, "CrashID=bp-6fe2bd2e-2a4b-4b4e-9a3c-2b0f2c251126\n")
	path, data := dump(t)
	resp, err := (&upload.Client{}).Minidump(t.Context(), srv.URL+"/submit", path, "Prod", "1.0")
	if err != nil {
		t.Fatal(err)
	}
	if resp.StatusCode != 200 || string(resp.Body) != "CrashID=bp-6fe2bd2e-2a4b-4b4e-9a3c-2b0f2c251126\n" {
		t.Errorf("response %d %q", resp.StatusCode, resp.Body)
	}
	head, body, boundary := shape(t, rec.TakeAll())
	if !regexp.MustCompile(`^-{24}[0-9a-f]{16}$`).MatchString(boundary) {
		t.Errorf("boundary %q is not libcurl's form", boundary)
	}
	wantBody := "--BOUNDARY\r\nContent-Disposition: form-data; name=\"prod\"\r\n\r\nProd\r\n" +
		"--BOUNDARY\r\nContent-Disposition: form-data; name=\"ver\"\r\n\r\n1.0\r\n" +
		"--BOUNDARY\r\nContent-Disposition: form-data; name=\"upload_file_minidump\"; filename=\"t.dmp\"\r\nContent-Type: application/octet-stream\r\n\r\n" +
		string(data) + "\r\n--BOUNDARY--\r\n"
	if body != wantBody {
		t.Errorf("body\n%q\nwant\n%q", body, wantBody)
	}
	wantHead := []string{
		"POST /submit HTTP/1.1",
		"Accept: */*",
		"Content-Length: " + strconv.Itoa(len(wantBody)+4*(len(boundary)-len("BOUNDARY"))),
		"Content-Type: multipart/form-data; boundary=BOUNDARY",
		"Host: " + srv.Listener.Addr().String(),
		"User-Agent: Breakpad/1.0 (Linux)",
	}
	if strings.Join(head, "\n") != strings.Join(wantHead, "\n") {
		t.Errorf("header\n%s\nwant\n%s", strings.Join(head, "\n"), strings.Join(wantHead, "\n"))
	}
}

// TestSameAsBreakpad runs Google Breakpad's own minidump_upload and ours
// against the same server and compares the two requests (boundaries
// replaced, header lines sorted) and what the two print, on success and on
// a refusal.
func TestSameAsBreakpad(t *testing.T) {
	bp := cmdtest.BreakpadMinidumpUpload.Path(t)
	ours := cmdtest.Build(t, "github.com/gobreakpad/gobreakpad/cmd/minidump_upload")
	path, _ := dump(t)
	for _, status := range []int{200, 302, 400, 500} {
		srv, rec := server(t, status, "CrashID=bp-x\n")
		var shapes [2][]string
		var outs [2]cmdtest.Result
		for i, prog := range []string{bp, ours} {
			outs[i] = cmdtest.RunClean(t, prog, []string{"http_proxy=", "HTTP_PROXY="}, "-p", "Prod \"q\"", "-v", "1.0", path, srv.URL+"/submit?x=1")
			head, body, _ := shape(t, rec.TakeAll())
			shapes[i] = append(head, body)
		}
		if strings.Join(shapes[0], "\n") != strings.Join(shapes[1], "\n") {
			t.Errorf("status %d: Breakpad's request\n%q\nours\n%q", status, shapes[0], shapes[1])
		}
		if outs[0].Stdout != outs[1].Stdout || outs[0].Code != outs[1].Code {
			t.Errorf("status %d: Breakpad's printed %q (exit %d), ours %q (exit %d)", status, outs[0].Stdout, outs[0].Code, outs[1].Stdout, outs[1].Code)
		}
	}
	// Nobody listening; a dump that is not there (libcurl connects before
	// it opens the file, so the server is up for that one).
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	srv, _ := server(t, 200, "ok")
	for _, args := range [][]string{
		{"-p", "P", "-v", "1", path, "http://" + addr + "/"},
		{"-p", "P", "-v", "1", filepath.Join(t.TempDir(), "missing.dmp"), srv.URL},
		// No scheme: libcurl takes host:port/path as http (our client
		// said Go's "first path segment in URL cannot contain colon").
		{"-p", "P", "-v", "1", path, strings.TrimPrefix(srv.URL, "http://") + "/submit"},
		{"-p", "P", "-v", "1", path, "http://[::1"},
	} {
		a := cmdtest.RunClean(t, bp, nil, args...)
		b := cmdtest.RunClean(t, ours, nil, args...)
		if a.Stdout != b.Stdout || a.Code != b.Code {
			t.Errorf("%q: Breakpad's printed %q (exit %d), ours %q (exit %d)", args, a.Stdout, a.Code, b.Stdout, b.Code)
		}
	}
}

// TestRefused checks an answer of 400 and more: an error holding the
// response.
func TestRefused(t *testing.T) {
	srv, _ := server(t, 400, "Discarded=malformed_no_boundary")
	path, _ := dump(t)
	resp, err := (&upload.Client{}).Minidump(t.Context(), srv.URL, path, "P", "1")
	var se *upload.StatusError
	if !errors.As(err, &se) || resp == nil || resp.StatusCode != 400 || string(se.Response.Body) != "Discarded=malformed_no_boundary" {
		t.Fatalf("got %+v, %v", resp, err)
	}
	if got := upload.CurlError(err); got != "HTTP response code said error" {
		t.Errorf("CurlError %q", got)
	}
}

// TestHeadersAndFields checks extra headers, extra fields in name order,
// quoting of names and file names, libcurl's file content types, and field
// names Breakpad refuses.
func TestHeadersAndFields(t *testing.T) {
	srv, rec := server(t, 200, "ok")
	dir := t.TempDir()
	txt := filepath.Join(dir, "a\"b.txt")
	os.WriteFile(txt, []byte("hello"), 0o644)
	c := &upload.Client{Header: http.Header{"X-Token": {"abc"}, "Host": {"crash.example"}}, Timeout: 10 * time.Second}
	_, err := c.Send(t.Context(), srv.URL, upload.Form{
		Fields: map[string]string{"z": "last", "a": "first", "b": "two\r\nlines \"q\""},
		Files:  map[string]string{"log": txt},
	})
	if err != nil {
		t.Fatal(err)
	}
	head, body, _ := shape(t, rec.TakeAll())
	if h := strings.Join(head, "\n"); !strings.Contains(h, "\nX-Token: abc") || !strings.Contains(h, "\nHost: crash.example") {
		t.Errorf("no X-Token in %q", head)
	}
	want := "--BOUNDARY\r\nContent-Disposition: form-data; name=\"a\"\r\n\r\nfirst\r\n" +
		"--BOUNDARY\r\nContent-Disposition: form-data; name=\"b\"\r\n\r\ntwo\r\nlines \"q\"\r\n" +
		"--BOUNDARY\r\nContent-Disposition: form-data; name=\"z\"\r\n\r\nlast\r\n" +
		"--BOUNDARY\r\nContent-Disposition: form-data; name=\"log\"; filename=\"a%22b.txt\"\r\nContent-Type: text/plain\r\n\r\nhello\r\n" +
		"--BOUNDARY--\r\n"
	if body != want {
		t.Errorf("body\n%q\nwant\n%q", body, want)
	}
	for _, bad := range []string{"", "a\nb", "é", "a\"b"} {
		if _, err := c.Send(t.Context(), srv.URL, upload.Form{Fields: map[string]string{bad: "x"}}); err == nil {
			t.Errorf("field name %q accepted", bad)
		}
	}
}

// TestProxy sends through a proxy given as curl takes it and checks the
// proxy saw the absolute URL and the credentials.
func TestProxy(t *testing.T) {
	var got *http.Request
	proxy := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		got = r
		io.WriteString(w, "via proxy")
	}))
	defer proxy.Close()
	path, _ := dump(t)
	c := &upload.Client{Proxy: strings.TrimPrefix(proxy.URL, "http://"), ProxyUserPassword: "me:secret"}
	resp, err := c.Minidump(t.Context(), "http://crash.invalid/submit", path, "P", "1")
	if err != nil {
		t.Fatal(err)
	}
	if string(resp.Body) != "via proxy" || got == nil || got.RequestURI != "http://crash.invalid/submit" || got.Header.Get("Proxy-Authorization") != "Basic bWU6c2VjcmV0" {
		t.Errorf("proxy saw %+v", got)
	}
	if u, err := upload.ProxyURL("proxy.example", ""); err != nil || u.String() != "http://proxy.example:1080" {
		t.Errorf("ProxyURL(proxy.example) = %v, %v", u, err)
	}
}

// TestCurlErrors checks libcurl's words for failures.
func TestCurlErrors(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	path, _ := dump(t)
	c := &upload.Client{}
	for _, tc := range []struct{ url, dump, want string }{
		{"http://" + addr + "/", path, "Couldn't connect to server"},
		{"ftp://" + addr + "/", path, "Unsupported protocol"},
		{addr + "/submit", path, "Couldn't connect to server"}, // no scheme: http, as libcurl
		{"http://[::1", path, "URL using bad/illegal format or missing URL"},
		{"http:///x", path, "URL using bad/illegal format or missing URL"},
		{"http://" + addr + "/", path + ".missing", "Failed to open/read local data from file/application"},
	} {
		_, err := c.Minidump(t.Context(), tc.url, tc.dump, "P", "1")
		if got := upload.CurlError(err); got != tc.want {
			t.Errorf("%s %s: %q (%v), want %q", tc.url, tc.dump, got, err, tc.want)
		}
	}
}

func TestMain(m *testing.M) {
	if _, err := exec.LookPath("go"); err != nil {
		os.Exit(m.Run())
	}
	cmdtest.Main(m)
}

// TestSymUploadShape checks that a Form carries what Google Breakpad's
// sym_upload (its default sym-upload-v1 protocol, SymUploadV1Start in
// src/common/linux/symbol_upload.cc) sends, through the same HTTPUpload:
// run both against one server and compare the requests.
func TestSymUploadShape(t *testing.T) {
	bp := cmdtest.BreakpadSymUpload.Path(t)
	srv, rec := server(t, 200, "")
	sym := filepath.Join(t.TempDir(), "crasher.sym")
	os.WriteFile(sym, []byte("MODULE Linux x86_64 0123456789ABCDEF0123456789ABCDEF0 crasher\nFUNC 1000 10 0 main\n"), 0o644)
	r := cmdtest.RunClean(t, bp, []string{"http_proxy=", "HTTP_PROXY="}, sym, srv.URL+"/symbols")
	if r.Code != 0 || r.Stdout != "Successfully sent the symbol file.\n" {
		t.Fatalf("Breakpad's sym_upload: %+v", r)
	}
	h1, b1, _ := shape(t, rec.TakeAll())
	_, err := (&upload.Client{}).Send(t.Context(), srv.URL+"/symbols", upload.Form{
		Fields: map[string]string{"os": "Linux", "cpu": "x86_64", "debug_file": "crasher", "code_file": "crasher", "debug_identifier": "0123456789ABCDEF0123456789ABCDEF0"},
		Files:  map[string]string{"symbol_file": sym},
	})
	if err != nil {
		t.Fatal(err)
	}
	h2, b2, _ := shape(t, rec.TakeAll())
	if strings.Join(h1, "\n") != strings.Join(h2, "\n") || b1 != b2 {
		t.Errorf("Breakpad's sym_upload sent\n%q\n%q\nthe Form\n%q\n%q", h1, b1, h2, b2)
	}
}
