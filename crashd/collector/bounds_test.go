package collector

import (
	"bufio"
	"bytes"
	"context"
	"crypto/rand"
	"encoding/json"
	"fmt"
	"io/fs"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gobreakpad/gobreakpad/crashd/blob"
	"github.com/gobreakpad/gobreakpad/crashd/crash"
	"github.com/gobreakpad/gobreakpad/internal/testkit/corpus"
)

// These tests attack a collector served on a loopback port (httptest's
// net/http server on 127.0.0.1), each bounded in count and time: bombs
// on every endpoint and compression, slow bodies, floods of uploads and of
// annotations. What they check: the answer, that nothing was stored, and
// that the budget is all given back.

// budgetFree fails the test unless every upload has given its budget back.
func budgetFree(t *testing.T, e *env) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for {
		n, u := e.c.budget.InUse()
		if n == 0 && u == 0 {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("budget still held: %d bytes, %d uploads", n, u)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// randomBytes returns n bytes that do not compress (a minidump's stack
// memory and code compress 3-10×; random bytes are the hard case for the
// ratio bound: they must pass).
func randomBytes(n int) []byte {
	b := make([]byte, n)
	rand.Read(b)
	return b
}

// TestInflateRatio: a gzip body inflating more than MaxInflateRatio times
// its compressed size (past the first MiB) is refused 413 with nothing
// stored, well under MaxDecompressedSize; a body of ordinary compression passes.
func TestInflateRatio(t *testing.T) {
	e := newEnv(t, Config{}, nil)
	zeros, ct := form(map[string]any{"ProductName": "Firefox", "Version": "1.0", "upload_file_minidump": fileVal{"x.dmp", make([]byte, 8<<20)}})
	status, got, _ := e.post(t, "/submit", compress(zeros), http.Header{"Content-Type": {ct}, "Content-Encoding": {"gzip"}}, false)
	if status != 413 || got != "Discarded=too_large" {
		t.Errorf("8 MiB of zeros gzipped: %d %q", status, got)
	}
	// Half random, half zeros: about 2×, accepted.
	md := append(randomBytes(2<<20), make([]byte, 2<<20)...)
	ok, ct := form(map[string]any{"ProductName": "Firefox", "Version": "1.0", "upload_file_minidump": fileVal{"x.dmp", md}})
	status, got, _ = e.post(t, "/submit", compress(ok), http.Header{"Content-Type": {ct}, "Content-Encoding": {"gzip"}}, false)
	if status != 200 {
		t.Fatalf("ordinary gzip body: %d %q", status, got)
	}
	id := answerID(t, got, "0")
	if _, _, dumps := stored(t, e.store, id); !bytes.Equal(dumps["upload_file_minidump"], md) {
		t.Error("stored dump differs")
	}
	if n := len(keys(t, e.store)); n != 4 { // dump, dump names, raw crash, queued marker
		t.Errorf("%d keys stored, want 4", n)
	}
	budgetFree(t, e)
}

// compressWith runs a compressor program (bzip2, zstd) over b; the test is
// skipped without it.
func compressWith(t *testing.T, prog string, b []byte, args ...string) []byte {
	t.Helper()
	if _, err := exec.LookPath(prog); err != nil {
		t.Skipf("%s not installed (apt-get install %s)", prog, prog)
	}
	cmd := exec.Command(prog, append(args, "-c")...)
	cmd.Stdin = bytes.NewReader(b)
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("%s: %v", prog, err)
	}
	return out
}

// TestSentryInflationBombs: a minidump of zeros compressed with gzip,
// bzip2 (a few hundred bytes: the 50 MiB dump) or zstd on Sentry's
// endpoint is refused 413 by the ratio bound, nothing stored; the same
// compressors on an ordinary dump are accepted.
func TestSentryInflationBombs(t *testing.T) {
	e := newEnv(t, Config{Sentry: []SentryProject{{ID: "42", Keys: []string{"k"}}}}, nil)
	bomb := append([]byte("MDMP\x93\xa7\x00\x00"), make([]byte, 50<<20)...)
	real := append([]byte("MDMP\x93\xa7\x00\x00"), append(randomBytes(1<<20), make([]byte, 1<<20)...)...)
	for _, c := range []struct {
		name string
		z    func([]byte) []byte
	}{
		{"gzip", compress},
		{"bzip2", func(b []byte) []byte { return compressWith(t, "bzip2", b, "-9") }},
		{"zstd", func(b []byte) []byte { return compressWith(t, "zstd", b, "-19", "-q") }},
	} {
		zb := c.z(bomb)
		body, ct := sentryForm([][3]string{{"upload_file_minidump", "crash.dmp", string(zb)}})
		status, got, _ := e.post(t, "/api/42/minidump/?sentry_key=k", body, http.Header{"Content-Type": {ct}}, false)
		if status != 413 || !strings.Contains(got, "size limits") {
			t.Errorf("%s bomb of %d bytes: %d %s", c.name, len(zb), status, got)
		}
		if n := len(keys(t, e.store)); n != 0 {
			t.Errorf("%s bomb: %d keys stored", c.name, n)
		}
		body, ct = sentryForm([][3]string{{"upload_file_minidump", "crash.dmp", string(c.z(real))}})
		if status, got, _ := e.post(t, "/api/42/minidump/?sentry_key=k", body, http.Header{"Content-Type": {ct}}, false); status != 200 {
			t.Errorf("%s minidump: %d %s", c.name, status, got)
		}
		for _, k := range keys(t, e.store) {
			e.store.Delete(t.Context(), k)
		}
	}
	// A raw (not multipart) body gzipped as a whole, of zeros.
	status, got, _ := e.post(t, "/api/42/minidump/?sentry_key=k", compress(bomb), http.Header{"Content-Type": {"application/octet-stream"}, "Content-Encoding": {"gzip"}}, false)
	if status != 413 {
		t.Errorf("gzip body: %d %s", status, got)
	}
	budgetFree(t, e)
}

// TestConcurrentGzipBombs: 20 gzip bombs at once, each 200 MiB of zeros
// declared, are all refused 413, the budget is given back, and an upload
// meanwhile is accepted.
func TestConcurrentGzipBombs(t *testing.T) {
	e := newEnv(t, Config{}, nil)
	head, ct := form(map[string]any{"ProductName": "Firefox", "Version": "1.0"})
	zb := gzipBomb(t, head[:len(head)-len("--\r\n")-34], 200<<20)
	var wg sync.WaitGroup
	statuses := make([]int, 20)
	for i := range statuses {
		wg.Go(func() {
			statuses[i], _, _ = e.post(t, "/submit", zb, http.Header{"Content-Type": {ct}, "Content-Encoding": {"gzip"}}, false)
		})
	}
	body, ct2 := form(map[string]any{"ProductName": "Firefox", "Version": "1.0", "upload_file_minidump": dump})
	status, got, _ := e.post(t, "/submit", body, http.Header{"Content-Type": {ct2}}, false)
	wg.Wait()
	for i, s := range statuses {
		if s != 413 {
			t.Errorf("bomb %d: %d", i, s)
		}
	}
	if status != 200 {
		t.Errorf("upload among the bombs: %d %q", status, got)
	}
	if n := len(keys(t, e.store)); n != 4 {
		t.Errorf("%d keys stored, want the upload's 4", n)
	}
	budgetFree(t, e)
}

// slowConn sends a request's headers and the first bytes of its body, then
// nothing more; it returns the connection.
func slowConn(t *testing.T, addr, path, ct string, length int, first []byte) net.Conn {
	t.Helper()
	conn, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	fmt.Fprintf(conn, "POST %s HTTP/1.1\r\nHost: x\r\nContent-Type: %s\r\nContent-Length: %d\r\n\r\n", path, ct, length)
	conn.Write(first)
	return conn
}

func readResponse(t *testing.T, conn net.Conn) (*http.Response, string) {
	t.Helper()
	conn.SetReadDeadline(time.Now().Add(30 * time.Second))
	resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
	if err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	b.ReadFrom(resp.Body)
	resp.Body.Close()
	return resp, b.String()
}

// TestSubmitWholeBodyTimeout: a client sending a byte every 50 ms (never
// idle for BodyIdleTimeout) is cut off at BodyTimeout: 408, nothing stored.
func TestSubmitWholeBodyTimeout(t *testing.T) {
	var cfg Config
	if err := json.Unmarshal([]byte(`{"body_timeout": "10s"}`), &cfg); err != nil || cfg.BodyTimeout != Duration(10*time.Second) {
		t.Fatalf("config: %+v %v", cfg, err)
	}
	e := newEnv(t, Config{BodyTimeout: Duration(500 * time.Millisecond), BodyIdleTimeout: Duration(10 * time.Second)}, nil)
	body, ct := form(map[string]any{"ProductName": "Firefox", "Version": "1.0"})
	conn := slowConn(t, e.srv.Listener.Addr().String(), "/submit", ct, 25<<20, body[:10])
	done := make(chan struct{})
	go func() {
		defer close(done)
		for i := 0; i < 200; i++ { // at most 10 s
			select {
			case <-t.Context().Done():
				return
			case <-time.After(50 * time.Millisecond):
			}
			if _, err := conn.Write([]byte{'x'}); err != nil {
				return
			}
		}
	}()
	resp, got := readResponse(t, conn)
	conn.Close()
	<-done
	if resp.StatusCode != 408 || got != "Discarded=timeout" {
		t.Errorf("%d %q", resp.StatusCode, got)
	}
	if n := len(keys(t, e.store)); n != 0 {
		t.Errorf("%d keys stored", n)
	}
	budgetFree(t, e)
}

// TestBudgetBusy: past MaxUploads uploads at once, an upload waits
// BudgetWait and is answered 503 with Retry-After; once the slow uploads
// are gone, uploads are accepted again.
func TestBudgetBusy(t *testing.T) {
	e := newEnv(t, Config{MaxUploads: 3, BudgetWait: Duration(100 * time.Millisecond),
		Sentry: []SentryProject{{ID: "42", Keys: []string{"k"}}}}, nil)
	body, ct := form(map[string]any{"ProductName": "Firefox", "Version": "1.0", "upload_file_minidump": dump})
	var conns []net.Conn
	for range 3 {
		conns = append(conns, slowConn(t, e.srv.Listener.Addr().String(), "/submit", ct, len(body), body[:10]))
	}
	// Wait for the three to hold their slots.
	for deadline := time.Now().Add(5 * time.Second); ; {
		if _, u := e.c.budget.InUse(); u == 3 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("slow uploads never started")
		}
		time.Sleep(5 * time.Millisecond)
	}
	status, got, h := e.post(t, "/submit", body, http.Header{"Content-Type": {ct}}, false)
	if status != 503 || got != "Discarded=busy" || h.Get("Retry-After") == "" {
		t.Errorf("over the budget: %d %q Retry-After %q", status, got, h.Get("Retry-After"))
	}
	md, mdct := sentryForm([][3]string{{"upload_file_minidump", "crash.dmp", "MDMPxxxx"}})
	status, got, h = e.post(t, "/api/42/minidump/?sentry_key=k", md, http.Header{"Content-Type": {mdct}}, false)
	if status != 503 || h.Get("Retry-After") == "" {
		t.Errorf("sentry over the budget: %d %q", status, got)
	}
	// The slow uploads finish: they are stored, and so is the next.
	for _, c := range conns {
		c.Write(body[10:])
		if resp, got := readResponse(t, c); resp.StatusCode != 200 {
			t.Errorf("slow upload: %d %q", resp.StatusCode, got)
		}
	}
	if status, got, _ := e.post(t, "/submit", body, http.Header{"Content-Type": {ct}}, false); status != 200 {
		t.Errorf("after: %d %q", status, got)
	}
	budgetFree(t, e)
}

// TestSlowBodiesHoldLittle: 200 connections declaring 25 MiB bodies and
// sending a few bytes hold a copy buffer and 4 KiB each (not their Content-Length),
// and uploads are still accepted meanwhile.
func TestSlowBodiesHoldLittle(t *testing.T) {
	e := newEnv(t, Config{}, nil)
	body, ct := form(map[string]any{"ProductName": "Firefox", "Version": "1.0", "upload_file_minidump": dump})
	for range 200 {
		slowConn(t, e.srv.Listener.Addr().String(), "/submit", ct, 25<<20, body[:10])
	}
	for deadline := time.Now().Add(10 * time.Second); ; {
		if _, u := e.c.budget.InUse(); u == 200 {
			break
		}
		if time.Now().After(deadline) {
			_, u := e.c.budget.InUse()
			t.Fatalf("%d slow uploads started", u)
		}
		time.Sleep(10 * time.Millisecond)
	}
	if n, _ := e.c.budget.InUse(); n > 200*(copyBufSize+4<<10) { // a copy buffer and the first 4 KiB of memory each

		t.Errorf("200 slow bodies hold %d bytes of the budget", n)
	}
	if status, got, _ := e.post(t, "/submit", body, http.Header{"Content-Type": {ct}}, false); status != 200 {
		t.Errorf("upload among slow bodies: %d %q", status, got)
	}
}

// TestRateLimits: token buckets by address, by a trusted proxy's header
// and by product answer 429 with Retry-After past their burst.
func TestRateLimits(t *testing.T) {
	var cfg Config
	if err := json.Unmarshal([]byte(`{"rate_limits": [{"by": "header", "header": "X-Forwarded-For", "per_second": 0.01, "burst": 2},
		{"by": "product", "per_second": 0.01, "burst": 3}]}`), &cfg); err != nil {
		t.Fatal(err)
	}
	e := newEnv(t, cfg, nil)
	post := func(xff, product string) (int, string, http.Header) {
		body, ct := form(map[string]any{"ProductName": product, "Version": "1.0", "upload_file_minidump": dump})
		return e.post(t, "/submit", body, http.Header{"Content-Type": {ct}, "X-Forwarded-For": {"10.0.0.1, " + xff}}, false)
	}
	for i, c := range []struct {
		xff, product string
		status       int
	}{
		{"192.0.2.1", "A", 200}, {"192.0.2.1", "A", 200}, {"192.0.2.1", "A", 429}, // the address's burst
		{"2001:db8::1", "A", 200}, {"2001:db8::2", "A", 429}, // the product's burst; one /64 is one client
		{"2001:db8:0:1::1", "B", 200}, {"2001:db8:0:1::2", "B", 200}, {"2001:db8:0:1::3", "B", 429},
	} {
		status, got, h := post(c.xff, c.product)
		if status != c.status {
			t.Errorf("%d (%s, %s): %d %q, want %d", i, c.xff, c.product, status, got, c.status)
		}
		if status == 429 {
			if got != "Discarded=rate_limited" {
				t.Errorf("%d: %q", i, got)
			}
			if s, err := strconv.Atoi(h.Get("Retry-After")); err != nil || s < 1 || s > 101 {
				t.Errorf("%d: Retry-After %q", i, h.Get("Retry-After"))
			}
		}
	}
	if _, err := New(Config{RateLimits: []RateLimit{{By: "header", PerSecond: 1}}}, blob.NewMem(), e.publish, nil, nil); err == nil {
		t.Error("a header limit without a header accepted")
	}
	if _, err := New(Config{RateLimits: []RateLimit{{By: "address"}}}, blob.NewMem(), e.publish, nil, nil); err == nil {
		t.Error("a limit of 0 per second accepted")
	}
	// By address: the connection's.
	e2 := newEnv(t, Config{RateLimits: []RateLimit{{By: RateByAddress, PerSecond: 0.01, Burst: 1}}}, nil)
	body, ct := form(map[string]any{"ProductName": "A", "Version": "1.0"})
	if s, _, _ := e2.post(t, "/submit", body, http.Header{"Content-Type": {ct}}, false); s != 200 {
		t.Errorf("first: %d", s)
	}
	if s, _, _ := e2.post(t, "/submit", body, http.Header{"Content-Type": {ct}, "X-Forwarded-For": {"192.0.2.9"}}, false); s != 429 {
		t.Errorf("second, an untrusted header: %d", s)
	}
}

// TestAnnotationFlood: more annotations than MaxAnnotations, or more
// bytes of them than MaxAnnotationsSize, are refused 413, nothing stored.
func TestAnnotationFlood(t *testing.T) {
	e := newEnv(t, Config{Sentry: []SentryProject{{ID: "42", Keys: []string{"k"}}}}, nil)
	many := map[string]any{"ProductName": "Firefox", "Version": "1.0"}
	for i := range 100000 {
		many[fmt.Sprintf("a%d", i)] = "x"
	}
	extra, _ := json.Marshal(many)
	body, ct := form(map[string]any{"extra": string(extra), "upload_file_minidump": dump})
	status, got, _ := e.post(t, "/submit", body, http.Header{"Content-Type": {ct}}, false)
	if status != 413 || got != "Discarded=too_large" {
		t.Errorf("100,000 annotations: %d %q", status, got)
	}
	fields := map[string]any{"ProductName": "Firefox", "Version": "1.0"}
	for i := range DefaultMaxAnnotations {
		fields[fmt.Sprintf("a%d", i)] = "x"
	}
	body, ct = form(fields)
	if status, got, _ := e.post(t, "/submit", body, http.Header{"Content-Type": {ct}}, false); status != 413 {
		t.Errorf("%d text fields: %d %q", len(fields), status, got)
	}
	body, ct = form(map[string]any{"ProductName": "Firefox", "Version": "1.0", "Big": strings.Repeat("y", DefaultMaxAnnotationsSize)})
	if status, got, _ := e.post(t, "/submit", body, http.Header{"Content-Type": {ct}}, false); status != 413 {
		t.Errorf("8 MiB of text: %d %q", status, got)
	}
	sb, sct := sentryForm([][3]string{{"sentry", "", string(extra)}, {"upload_file_minidump", "crash.dmp", "MDMPxxxx"}})
	if status, got, _ := e.post(t, "/api/42/minidump/?sentry_key=k", sb, http.Header{"Content-Type": {sct}}, false); status != 413 {
		t.Errorf("sentry, 100,000 values in its JSON: %d %q", status, got)
	}
	if n := len(keys(t, e.store)); n != 0 {
		t.Errorf("%d keys stored", n)
	}
	// Just under the bounds: accepted.
	delete(fields, "a0")
	delete(fields, "a1")
	body, ct = form(fields)
	if status, got, _ := e.post(t, "/submit", body, http.Header{"Content-Type": {ct}}, false); status != 200 {
		t.Errorf("%d annotations: %d %q", len(fields), status, got)
	}
	budgetFree(t, e)
}

// TestSpoolFailure: a body that cannot be spooled (the server's disk) is
// answered as a crash not stored, never 200, and nothing is left behind.
func TestSpoolFailure(t *testing.T) {
	dir := t.TempDir()
	store, err := blob.OpenDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	e := newEnv(t, Config{Sentry: []SentryProject{{ID: "42", Keys: []string{"k"}}}}, store)
	spool := filepath.Join(dir, ".spool")
	if e.c.spoolDir != spool {
		t.Fatalf("spool dir %s, want %s", e.c.spoolDir, spool)
	}
	body, ct := form(map[string]any{"ProductName": "Firefox", "Version": "1.0", "upload_file_minidump": dump})
	if status, got, _ := e.post(t, "/submit", body, http.Header{"Content-Type": {ct}}, false); status != 200 {
		t.Fatalf("%d %q", status, got)
	}
	if ents, _ := os.ReadDir(spool); len(ents) != 0 {
		t.Errorf("spool files left: %v", ents)
	}
	// The spool directory replaced by a file: no spool file can be made
	// (for bodies over what is kept in memory).
	body, ct = form(map[string]any{"ProductName": "Firefox", "Version": "1.0", "upload_file_minidump": fileVal{"x.dmp", randomBytes(2 << 20)}})
	if err := os.Remove(spool); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(spool, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	if status, got, h := e.post(t, "/submit", body, http.Header{"Content-Type": {ct}}, false); status != 503 || h.Get("Retry-After") == "" {
		t.Errorf("spool failure: %d %q %v", status, got, h)
	}
	md, mdct := sentryForm([][3]string{{"upload_file_minidump", "crash.dmp", "MDMP" + string(randomBytes(2<<20))}})
	if status, got, _ := e.post(t, "/api/42/minidump/?sentry_key=k", md, http.Header{"Content-Type": {mdct}}, false); status != 503 {
		t.Errorf("sentry spool failure: %d %q", status, got)
	}
	if v := e.counter(t, "crashd_collector_rejected_total", map[string]string{"endpoint": "submit", "reason": "store_error"}); v != 1 {
		t.Errorf("store_error count %v", v)
	}
	budgetFree(t, e)
}

// TestCorpusInflation: every minidump of the shared corpus (up to 10 MB),
// gzipped as Crashpad sends it, inflates within the default ratio bound
// through the collector's spooling (the bound refuses bombs, not dumps).
func TestCorpusInflation(t *testing.T) {
	dir := corpus.Dir(t)
	c, err := New(Config{}, blob.NewMem(), func(context.Context, crash.ID) error { return nil }, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(p, ".dmp") {
			return nil
		}
		if st, err := d.Info(); err != nil || st.Size() > 10<<20 {
			return nil
		}
		data, err := os.ReadFile(p)
		if err != nil || !bytes.HasPrefix(data, []byte("MDMP")) {
			return nil
		}
		n++
		sp, err := c.decodeMinidump(compress(data), nil)
		if err != nil {
			t.Errorf("%s (%d bytes): %v", p, len(data), err)
			return nil
		}
		if !bytes.Equal(sp.data, data) {
			t.Errorf("%s: inflated differs", p)
		}
		sp.close()
		return nil
	})
	if n == 0 {
		t.Skip("no corpus minidumps")
	}
}
