package crashdtest

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"io"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"os/exec"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"
)

// received is one request as the server read it off the wire.
type received struct {
	header  http.Header
	uri     string
	chunked bool
	length  int64
	body    []byte // decoded from chunks, still compressed
}

func recordServer(t *testing.T) (*httptest.Server, func() received) {
	t.Helper()
	var mu sync.Mutex
	var last received
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		mu.Lock()
		last = received{r.Header.Clone(), r.RequestURI, len(r.TransferEncoding) > 0 && r.TransferEncoding[0] == "chunked", r.ContentLength, b}
		mu.Unlock()
		io.WriteString(w, "CrashID=bp-3f3b0d0c-5a4e-4c4b-8d1e-5f2a7b251126\n")
	}))
	t.Cleanup(srv.Close)
	return srv, func() received { mu.Lock(); defer mu.Unlock(); return last }
}

func gunzip(t *testing.T, b []byte) []byte {
	t.Helper()
	zr, err := gzip.NewReader(bytes.NewReader(b))
	if err != nil {
		t.Fatalf("body is not gzip: %v", err)
	}
	if zr.OS != 3 {
		t.Errorf("gzip OS %d, want 3 as zlib writes", zr.OS)
	}
	out, err := io.ReadAll(zr)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// TestCrashpadShape checks the request on the wire: chunked with no
// Content-Length, gzip, Crashpad's headers and URL parameters, and the
// body byte for byte.
func TestCrashpadShape(t *testing.T) {
	srv, last := recordServer(t)
	c := &Crashpad{
		URL:         srv.URL + "/submit",
		Annotations: map[string]string{"prod": "My App", "ver": "1.0+b", "guid": "0f1e2d3c-4b5a-6978-8796-a5b4c3d2e1f0", "ptype": "browser", "upload_file_minidump": "dropped"},
		Attachments: map[string][]byte{"log \"x\".txt": []byte("log")},
		Minidump:    []byte("MDMP\x00\x01"),
		ReportID:    "01234567-89ab-cdef-0123-456789abcdef",
	}
	req, err := c.Request(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	resp, err := Do(req)
	if err != nil || resp.Status != 200 {
		t.Fatalf("%+v, %v", resp, err)
	}
	if id, ok := CrashID(resp.Body); !ok || id != "3f3b0d0c-5a4e-4c4b-8d1e-5f2a7b251126" {
		t.Errorf("CrashID(%q) = %q, %v", resp.Body, id, ok)
	}
	r := last()
	if !r.chunked || r.length != -1 || r.header.Get("Content-Length") != "" {
		t.Errorf("not chunked: chunked %v, length %d", r.chunked, r.length)
	}
	if want := "/submit?product=My%20App&version=1.0%2Bb&guid=0f1e2d3c-4b5a-6978-8796-a5b4c3d2e1f0"; r.uri != want {
		t.Errorf("URI %q, want %q", r.uri, want)
	}
	if !regexp.MustCompile(`^multipart/form-data; boundary=---MultipartBoundary-[0-9A-Za-z]{32}---$`).MatchString(r.header.Get("Content-Type")) {
		t.Errorf("Content-Type %q", r.header.Get("Content-Type"))
	}
	for k, v := range map[string]string{"Content-Encoding": "gzip", "User-Agent": CrashpadUserAgent, "Accept": "*/*", "Expect": ""} {
		if got := r.header.Get(k); got != v {
			t.Errorf("%s: %q, want %q", k, got, v)
		}
	}
	b := strings.ReplaceAll(string(gunzip(t, r.body)), c.Boundary, "B")
	want := "--B\r\nContent-Disposition: form-data; name=\"guid\"\r\n\r\n0f1e2d3c-4b5a-6978-8796-a5b4c3d2e1f0\r\n" +
		"--B\r\nContent-Disposition: form-data; name=\"prod\"\r\n\r\nMy App\r\n" +
		"--B\r\nContent-Disposition: form-data; name=\"ptype\"\r\n\r\nbrowser\r\n" +
		"--B\r\nContent-Disposition: form-data; name=\"ver\"\r\n\r\n1.0+b\r\n" +
		"--B\r\nContent-Disposition: form-data; name=\"log %22x%22.txt\"; filename=\"log %22x%22.txt\"\r\nContent-Type: application/octet-stream\r\n\r\nlog\r\n" +
		"--B\r\nContent-Disposition: form-data; name=\"upload_file_minidump\"; filename=\"01234567-89ab-cdef-0123-456789abcdef.dmp\"\r\nContent-Type: application/octet-stream\r\n\r\nMDMP\x00\x01\r\n" +
		"--B--\r\n"
	if b != want {
		t.Errorf("body\n%q\nwant\n%q", b, want)
	}

	// Without gzip and URL parameters.
	c.NoGzip, c.NoURLParameters = true, true
	req, _ = c.Request(t.Context())
	if _, err := Do(req); err != nil {
		t.Fatal(err)
	}
	r = last()
	if r.uri != "/submit" || r.header.Get("Content-Encoding") != "" || !bytes.HasPrefix(r.body, []byte("--"+c.Boundary+"\r\n")) {
		t.Errorf("plain upload: %q %v %q", r.uri, r.header, r.body[:20])
	}
}

// TestCrashpadWire reads the request as bytes to see the chunked framing
// itself.
func TestCrashpadWire(t *testing.T) {
	c := &Crashpad{URL: "http://127.0.0.1:1/submit", Minidump: []byte("MDMP")}
	req, _ := c.Request(t.Context())
	raw, err := httputil.DumpRequestOut(req, true)
	if err != nil {
		t.Fatal(err)
	}
	h, _, _ := bytes.Cut(raw, []byte("\r\n\r\n"))
	if !bytes.Contains(h, []byte("\r\nTransfer-Encoding: chunked")) || bytes.Contains(h, []byte("Content-Length")) {
		t.Errorf("header %q", h)
	}
	if _, err := http.ReadRequest(bufio.NewReader(bytes.NewReader(raw))); err != nil {
		t.Errorf("reading it back: %v", err)
	}
}

// TestElectron checks Electron's fields and URL.
func TestElectron(t *testing.T) {
	e := Electron{SubmitURL: "http://h/submit", ProductName: "YourName", CompanyName: "YourCompany", AppVersion: "2.3.4", Extra: map[string]string{"channel": "beta"}, GUID: "g", Minidump: []byte("MDMP")}
	c := e.Crashpad()
	for k, v := range map[string]string{"_productName": "YourName", "_companyName": "YourCompany", "_version": "2.3.4", "prod": "Electron", "ver": "30.0.1", "platform": "linux", "process_type": "browser", "guid": "g", "channel": "beta"} {
		if c.Annotations[k] != v {
			t.Errorf("%s = %q, want %q", k, c.Annotations[k], v)
		}
	}
	if u := c.UploadURL(); u != "http://h/submit?product=Electron&version=30.0.1&guid=g" {
		t.Errorf("URL %q", u)
	}
	if c.NoGzip {
		t.Error("Electron compresses by default")
	}
}

// TestSentry checks sentry-native's minidump URL, its Crashpad
// attachments and the envelope.
func TestSentry(t *testing.T) {
	dsn := SentryDSN{Base: "http://127.0.0.1:9", Project: "42", PublicKey: "abc"}
	c := SentryCrashpad(dsn, []byte("MDMP"), "cid", map[string]string{"release": "app@1"})
	if u := c.UploadURL(); u != "http://127.0.0.1:9/api/42/minidump/?sentry_client=sentry.native/0.16.3&sentry_key=abc&guid=cid" {
		t.Errorf("URL %q", u)
	}
	body := string(c.Body())
	for _, s := range []string{`name="__sentry-event"; filename="__sentry-event"`, `name="__sentry-breadcrumb1"`, "\xa7release\xa5app@1", `filename="` + c.ReportID + `.dmp"`} {
		if !strings.Contains(body, s) {
			t.Errorf("no %q in %q", s, body)
		}
	}
	if strings.Index(body, "__sentry-event") > strings.Index(body, "upload_file_minidump") {
		t.Error("parts not in name order")
	}
	e := &SentryEnvelope{DSN: dsn, EventID: "e1", Minidump: []byte("MDMP")}
	want := `{"event_id":"e1","dsn":"http://abc@127.0.0.1:9/42"}` + "\n" +
		`{"type":"event","length":53}` + "\n" + `{"event_id":"e1","level":"fatal","platform":"native"}` + "\n" +
		`{"type":"attachment","length":4,"attachment_type":"event.minidump","filename":"e1.dmp"}` + "\nMDMP"
	if got := string(e.Body()); got != want {
		t.Errorf("envelope\n%q\nwant\n%q", got, want)
	}
	req, _ := e.Request(t.Context())
	if req.URL.String() != "http://127.0.0.1:9/api/42/envelope/" || req.Header.Get("X-Sentry-Auth") != "Sentry sentry_key=abc, sentry_version=7, sentry_client=sentry.native/0.16.3" {
		t.Errorf("envelope request %v %v", req.URL, req.Header)
	}
}

// TestStartFails checks that a program that exits at once is reported
// with its output, not waited for.
func TestStartFails(t *testing.T) {
	bin, err := exec.LookPath("false")
	if err != nil {
		t.Skip("no false program")
	}
	begin := time.Now()
	_, err = start(t, Options{Bin: bin, StartTimeout: 10 * time.Second})
	if err == nil || !strings.Contains(err.Error(), "exited before serving") || time.Since(begin) > 5*time.Second {
		t.Errorf("start of /bin/false: %v after %v", err, time.Since(begin))
	}
}
