package collector

import (
	"bufio"
	"bytes"
	"compress/flate"
	"compress/gzip"
	"context"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"maps"
	"net"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/gobreakpad/gobreakpad/crashd/blob"
	"github.com/gobreakpad/gobreakpad/crashd/crash"
)

// dump is the fake dump of Antenna's tests.
var dump = fileVal{"fakecrash.dump", []byte("abcd1234")}

// submitCase is one upload to /submit and what must come back.
type submitCase struct {
	name string
	// body, contentType: the request; header adds headers; query is the URL's query.
	body        []byte
	contentType string
	header      http.Header
	query       string
	chunked     bool
	// status and body of the answer; wantBody "CrashID" means any
	// "CrashID=bp-<id>\n" of today with throttle digit 0.
	status   int
	wantBody string
	// check looks at the stored crash of an accepted upload.
	check func(t *testing.T, raw *crash.RawCrash, names []string, dumps map[string][]byte)
}

func form(fields map[string]any) ([]byte, string) { return encode(fields, "") }

// annotationsAre checks the stored annotations.
func annotationsAre(want map[string]any) func(*testing.T, *crash.RawCrash, []string, map[string][]byte) {
	return func(t *testing.T, raw *crash.RawCrash, _ []string, _ map[string][]byte) {
		t.Helper()
		if !maps.EqualFunc(raw.Annotations, want, func(a, b any) bool { return fmt.Sprint(a) == fmt.Sprint(b) }) {
			t.Errorf("annotations %v, want %v", raw.Annotations, want)
		}
	}
}

func sha(b []byte) string {
	h := sha256.Sum256(b)
	return hex.EncodeToString(h[:])
}

// antennaCases are Antenna's own test cases (tests/test_breakpad_resource.py,
// systemtest/test_discards.py, test_content_length.py, test_25mblimit.py)
// plus crashd's (chunked, URL parameters, gzip bomb, ...).
func antennaCases(t *testing.T) []submitCase {
	basic, basicCT := form(map[string]any{"ProductName": "Firefox", "Version": "1.0", "upload_file_minidump": dump})
	if len(basic) != 486 {
		t.Fatalf("the encoder is not mini_poster's: %d bytes, Antenna's test has 486", len(basic))
	}
	mixed, mixedCT := encode(map[string]any{"ProductName": "Firefox", "Version": "1.0", "upload_file_minidump": dump}, "multipart/mixed")
	two, twoCT := form(map[string]any{
		"ProductName": "Firefox", "Version": "1",
		"upload_file_minidump":        fileVal{"fakecrash.dump", []byte("deadbeef")},
		"upload_file_minidump_flash1": fileVal{"fakecrash2.dump", []byte("abcd1234")},
	})
	many := map[string]any{"ProductName": "Firefox", "Version": "1.0"}
	for _, c1 := range "ABCDEFGHIJKLMNOPQRSTUVWXYZ" {
		for _, c2 := range "12345678" {
			many[fmt.Sprintf("Annotation%c%c", c1, c2)] = "1"
		}
	}
	if len(many) != 210 {
		t.Fatal(len(many))
	}
	manyWant := maps.Clone(many)
	many["upload_file_minidump"] = dump
	manyBody, manyCT := form(many)
	jsonBody, jsonCT := form(map[string]any{"extra": `{"ProductName":"Firefox","Version":"1.0"}`, "upload_file_minidump": dump})
	badJSON, badJSONCT := form(map[string]any{"extra": "{\"ProductName\":\"Firefox\n\"}"})
	notDict, notDictCT := form(map[string]any{"extra": `"badvalue"`})
	both, bothCT := form(map[string]any{
		"extra": `{"ProductName":"Firefox","Version":"1.0"}`, "IgnoredAnnotation": "someval", "upload_file_minidump": dump,
	})
	reserved, reservedCT := form(map[string]any{"processed_crash": dump})
	reserved2, reserved2CT := form(map[string]any{"ProductName": "Firefox", "raw_crash": dump})
	dumpTwice, dumpTwiceCT := form(map[string]any{"ProductName": "Firefox", "upload_file_minidump": dump, "dump": dump})
	empty, emptyCT := form(map[string]any{})
	noDump, noDumpCT := form(map[string]any{"ProductName": "Firefox", "Version": "1.0", "ReleaseChannel": "nightly"})
	nightly, nightlyCT := form(map[string]any{"ProductName": "Firefox", "Version": "60.0a1", "ReleaseChannel": "nightly", "upload_file_minidump": dump})
	if len(nightly) != 632 {
		t.Fatalf("nightly crash: %d bytes, Antenna's test has 632", len(nightly))
	}
	const b = "442e931e47c9474f9bcd9b73e47aa38d"
	filenameNotText := []byte("--" + b + "\r\n" +
		"Content-Disposition: form-data; name=\"ProductName\"\r\n" +
		"Content-Type: text/plain; charset=utf-8\r\n\r\nFirefox\r\n" +
		"--" + b + "\r\n" +
		"Content-Disposition: form-data; name=\"upload_file_minidump\"; filename=\"dump\"\r\n\r\nou812\r\n" +
		"--" + b + "--\r\n")
	nonUTF8 := []byte("--" + b + "\r\n" +
		"Content-Disposition: form-data; name=\"Version\"\r\n" +
		"Content-Type: text/plain; charset=utf-8\r\n\r\n100\r\n" +
		"--" + b + "\r\n" +
		"Content-Disposition: form-data; name=\"ProductName\"\r\n" +
		"Content-Type: text/plain; charset=utf-8\r\n\r\n\xde\xde\xde\r\n" +
		"--" + b + "--\r\n")
	bCT := "multipart/form-data; boundary=" + b
	// Crashpad's form: text parts without Content-Type, the dump named <uuid>.dmp.
	crashpad := []byte("--" + b + "\r\n" +
		"Content-Disposition: form-data; name=\"prod\"\r\n\r\nCrashpadTest\r\n" +
		"--" + b + "\r\n" +
		"Content-Disposition: form-data; name=\"ver\"\r\n\r\n2.0\r\n" +
		"--" + b + "\r\n" +
		"Content-Disposition: form-data; name=\"upload_file_minidump\"; filename=\"3b3a6e2c-6d43-4f2b-a8b5-1cf2d08a0d1e.dmp\"\r\n" +
		"Content-Type: application/octet-stream\r\n\r\nMDMPxxxx\r\n" +
		"--" + b + "--\r\n")

	// Exactly as Crashpad's HTTPMultipartBuilder writes it (the boundary, the
	// order: form fields, then files, the name escaping), gzipped, sent
	// chunked with URL parameters as crash_report_upload_thread.cc does.
	const cpb = "---MultipartBoundary-0aZ9bY8cX7dW6eV5fU4gT3hS2iR1jQ0p---"
	crashpadExact := []byte("--" + cpb + "\r\nContent-Disposition: form-data; name=\"guid\"\r\n\r\n8f2b1f0e-3c1d-4f1a-9d6e-0b7c2a1e4d5f\r\n" +
		"--" + cpb + "\r\nContent-Disposition: form-data; name=\"odd%22name%0d%0a\"\r\n\r\nx\r\n" +
		"--" + cpb + "\r\nContent-Disposition: form-data; name=\"prod\"\r\n\r\nElectron\r\n" +
		"--" + cpb + "\r\nContent-Disposition: form-data; name=\"ver\"\r\n\r\n30.0.1\r\n" +
		"--" + cpb + "\r\nContent-Disposition: form-data; name=\"upload_file_minidump\"; filename=\"8f2b1f0e-3c1d-4f1a-9d6e-0b7c2a1e4d5f.dmp\"\r\nContent-Type: application/octet-stream\r\n\r\nMDMP\x93\xa7\r\n" +
		"--" + cpb + "--\r\n")

	return []submitCase{
		{name: "crashpad exactly: gzip, chunked, URL parameters", body: compress(crashpadExact), contentType: "multipart/form-data; boundary=" + cpb,
			header: http.Header{"Content-Encoding": {"gzip"}, "User-Agent": {"Crashpad/0.8.0"}}, chunked: true,
			query: "?product=Electron&version=30.0.1&guid=8f2b1f0e-3c1d-4f1a-9d6e-0b7c2a1e4d5f", status: 200, wantBody: "CrashID",
			check: func(t *testing.T, raw *crash.RawCrash, names []string, dumps map[string][]byte) {
				annotationsAre(map[string]any{"guid": "8f2b1f0e-3c1d-4f1a-9d6e-0b7c2a1e4d5f", "odd%22name%0d%0a": "x", "prod": "Electron", "ver": "30.0.1",
					"ProductName": "Electron", "Version": "30.0.1"})(t, raw, names, dumps)
				if string(dumps["upload_file_minidump"]) != "MDMP\x93\xa7" || raw.Metadata.PayloadCompressed != "1" || raw.Metadata.UserAgent != "Crashpad/0.8.0" {
					t.Errorf("metadata %+v dumps %q", raw.Metadata, dumps)
				}
			}},
		{name: "multipart/form-data", body: basic, contentType: basicCT, status: 200, wantBody: "CrashID",
			check: func(t *testing.T, raw *crash.RawCrash, names []string, dumps map[string][]byte) {
				annotationsAre(map[string]any{"ProductName": "Firefox", "Version": "1.0"})(t, raw, names, dumps)
				if !slices.Equal(names, []string{"upload_file_minidump"}) || string(dumps["upload_file_minidump"]) != "abcd1234" {
					t.Errorf("dumps %q %q", names, dumps)
				}
				md := raw.Metadata
				if md.Payload != "multipart" || md.PayloadCompressed != "0" || md.PayloadSize != 486 || len(md.CollectorNotes) != 0 ||
					md.ThrottleRule != "accept_everything" || md.DumpChecksums["upload_file_minidump"] != "e9cee71ab932fde863338d08be4de9dfe39ea049bdafb342ce659ec5450b69ae" ||
					md.UserAgent != "Go-http-client/1.1" || raw.Version != 2 {
					t.Errorf("metadata %+v", md)
				}
			}},
		{name: "multipart/mixed", body: mixed, contentType: mixedCT, status: 200, wantBody: "CrashID",
			check: annotationsAre(map[string]any{"ProductName": "Firefox", "Version": "1.0"})},
		{name: "two dumps", body: two, contentType: twoCT, status: 200, wantBody: "CrashID",
			check: func(t *testing.T, raw *crash.RawCrash, names []string, dumps map[string][]byte) {
				if !slices.Equal(names, []string{"upload_file_minidump", "upload_file_minidump_flash1"}) ||
					string(dumps["upload_file_minidump"]) != "deadbeef" || string(dumps["upload_file_minidump_flash1"]) != "abcd1234" {
					t.Errorf("dumps %q %q", names, dumps)
				}
				if raw.Metadata.PayloadSize != 668 || raw.Metadata.DumpChecksums["upload_file_minidump_flash1"] != sha([]byte("abcd1234")) {
					t.Errorf("metadata %+v", raw.Metadata)
				}
			}},
		{name: "210 annotations", body: manyBody, contentType: manyCT, status: 200, wantBody: "CrashID", check: annotationsAre(manyWant)},
		{name: "gzip", body: compress(basic), contentType: basicCT, header: http.Header{"Content-Encoding": {"gzip"}}, status: 200, wantBody: "CrashID",
			check: func(t *testing.T, raw *crash.RawCrash, names []string, dumps map[string][]byte) {
				annotationsAre(map[string]any{"ProductName": "Firefox", "Version": "1.0"})(t, raw, names, dumps)
				if raw.Metadata.PayloadCompressed != "1" || raw.Metadata.PayloadSize != int64(len(compress(basic))) || string(dumps["upload_file_minidump"]) != "abcd1234" {
					t.Errorf("metadata %+v", raw.Metadata)
				}
			}},
		{name: "gzip chunked", body: compress(basic), contentType: basicCT, header: http.Header{"Content-Encoding": {"gzip"}}, chunked: true, status: 200, wantBody: "CrashID",
			check: annotationsAre(map[string]any{"ProductName": "Firefox", "Version": "1.0"})},
		{name: "chunked without Content-Length", body: basic, contentType: basicCT, chunked: true, status: 200, wantBody: "CrashID",
			check: func(t *testing.T, raw *crash.RawCrash, _ []string, _ map[string][]byte) {
				if raw.Metadata.PayloadSize != 486 {
					t.Errorf("payload size %d", raw.Metadata.PayloadSize)
				}
			}},
		{name: "json extra", body: jsonBody, contentType: jsonCT, status: 200, wantBody: "CrashID",
			check: func(t *testing.T, raw *crash.RawCrash, names []string, dumps map[string][]byte) {
				annotationsAre(map[string]any{"ProductName": "Firefox", "Version": "1.0"})(t, raw, names, dumps)
				if raw.Metadata.Payload != "json" || raw.Metadata.PayloadSize != 396 {
					t.Errorf("metadata %+v", raw.Metadata)
				}
			}},
		{name: "bad json", body: badJSON, contentType: badJSONCT, status: 400, wantBody: "Discarded=malformed_invalid_json"},
		{name: "json not an object", body: notDict, contentType: notDictCT, status: 400, wantBody: "Discarded=malformed_invalid_json_value"},
		{name: "json plus fields", body: both, contentType: bothCT, status: 200, wantBody: "CrashID",
			check: func(t *testing.T, raw *crash.RawCrash, names []string, dumps map[string][]byte) {
				annotationsAre(map[string]any{"ProductName": "Firefox", "Version": "1.0"})(t, raw, names, dumps)
				if raw.Metadata.Payload != "json" || raw.Metadata.PayloadSize != 542 ||
					!slices.Equal(raw.Metadata.CollectorNotes, []string{"includes annotations in both json-encoded extra and formdata parts"}) {
					t.Errorf("metadata %+v", raw.Metadata)
				}
			}},
		{name: "non-UTF-8 value", body: nonUTF8, contentType: bCT, status: 200, wantBody: "CrashID",
			check: func(t *testing.T, raw *crash.RawCrash, names []string, dumps map[string][]byte) {
				annotationsAre(map[string]any{"Version": "100"})(t, raw, names, dumps)
				if raw.Metadata.PayloadSize != 306 || !slices.Equal(raw.Metadata.CollectorNotes, []string{"extract payload text part exception: invalid text or charset: utf-8"}) {
					t.Errorf("metadata %+v", raw.Metadata)
				}
			}},
		{name: "file part without Content-Type", body: filenameNotText, contentType: bCT, status: 200, wantBody: "CrashID",
			check: func(t *testing.T, raw *crash.RawCrash, names []string, dumps map[string][]byte) {
				annotationsAre(map[string]any{"ProductName": "Firefox"})(t, raw, names, dumps)
				if string(dumps["upload_file_minidump"]) != "ou812" || raw.Metadata.PayloadSize != 301 ||
					!slices.Equal(raw.Metadata.CollectorNotes, []string{"unknown content type: upload_file_minidump text/plain"}) {
					t.Errorf("metadata %+v dumps %q", raw.Metadata, dumps)
				}
			}},
		{name: "crashpad form, URL parameters", body: crashpad, contentType: bCT, chunked: true, query: "?product=CrashpadTest&version=2.0&guid=abcdef", status: 200, wantBody: "CrashID",
			check: annotationsAre(map[string]any{"prod": "CrashpadTest", "ver": "2.0", "ProductName": "CrashpadTest", "Version": "2.0", "guid": "abcdef"})},
		{name: "URL parameters do not override fields", body: basic, contentType: basicCT, query: "?product=Other&ProductName=Other&version=9&guid=g", status: 200, wantBody: "CrashID",
			check: annotationsAre(map[string]any{"ProductName": "Firefox", "Version": "1.0", "guid": "g"})},
		{name: "reserved dump name", body: reserved, contentType: reservedCT, status: 400, wantBody: "Discarded=malformed_invalid_dump_name"},
		{name: "reserved dump name raw_crash", body: reserved2, contentType: reserved2CT, status: 400, wantBody: "Discarded=malformed_invalid_dump_name"},
		{name: "two dumps for v1/dump", body: dumpTwice, contentType: dumpTwiceCT, status: 400, wantBody: "Discarded=malformed_invalid_dump_name"},
		{name: "wrong content type", body: []byte("{}"), contentType: "application/json", status: 400, wantBody: "Discarded=malformed_wrong_content_type"},
		{name: "no content type", body: noDump, status: 400, wantBody: "Discarded=malformed_no_content_type"},
		{name: "no boundary", body: noDump, contentType: "multipart/form-data", status: 400, wantBody: "Discarded=malformed_no_boundary"},
		{name: "boundary not first", body: noDump, contentType: "multipart/form-data; charset=utf-8; " + noDumpCT[len("multipart/form-data; "):], status: 400, wantBody: "Discarded=malformed_no_boundary"},
		{name: "wrong boundary", body: noDump, contentType: "multipart/form-data; boundary=foo", status: 400, wantBody: "Discarded=malformed_invalid_payload_structure"},
		{name: "junk payload", body: []byte("foobarbaz"), contentType: noDumpCT, status: 400, wantBody: "Discarded=malformed_invalid_payload_structure"},
		{name: "compressed without Content-Encoding", body: compress(noDump), contentType: noDumpCT, status: 400, wantBody: "Discarded=malformed_invalid_payload_structure"},
		{name: "Content-Encoding gzip, not compressed", body: noDump, contentType: noDumpCT, header: http.Header{"Content-Encoding": {"gzip"}}, status: 400, wantBody: "Discarded=malformed_bad_gzip"},
		{name: "truncated gzip", body: compress(noDump)[:40], contentType: noDumpCT, header: http.Header{"Content-Encoding": {"gzip"}}, status: 400, wantBody: "Discarded=malformed_bad_gzip"},
		{name: "no annotations", body: empty, contentType: emptyCT, status: 400, wantBody: "Discarded=malformed_no_annotations"},
		{name: "empty JSON extra", body: func() []byte { b, _ := form(map[string]any{"extra": "{}"}); return b }(), contentType: "", status: 400, wantBody: "Discarded=malformed_no_content_type"},
		{name: "Content-Length 0", body: nil, contentType: noDumpCT, status: 400, wantBody: "Discarded=malformed_no_content_length"},
		{name: "no dump", body: noDump, contentType: noDumpCT, status: 200, wantBody: "CrashID",
			check: func(t *testing.T, raw *crash.RawCrash, names []string, _ map[string][]byte) {
				if len(names) != 0 || len(raw.Metadata.DumpChecksums) != 0 {
					t.Errorf("dumps %q", names)
				}
			}},
		{name: "user agent", body: nightly, contentType: nightlyCT, header: http.Header{"User-Agent": {"wow"}}, status: 200, wantBody: "CrashID",
			check: func(t *testing.T, raw *crash.RawCrash, _ []string, _ map[string][]byte) {
				if raw.Metadata.UserAgent != "wow" || raw.Metadata.PayloadSize != 632 {
					t.Errorf("metadata %+v", raw.Metadata)
				}
			}},
		{name: "unauthorized uuid", body: func() []byte {
			b, _ := encode(map[string]any{"uuid": "de1bb258-cbbf-4589-a673-34f800160918", "ProductName": "Firefox"}, "")
			return b
		}(), status: 400, wantBody: "Discarded=malformed_no_content_type"},
	}
}

func TestSubmitAntennaCases(t *testing.T) {
	e := newEnv(t, Config{}, nil)
	for _, c := range antennaCases(t) {
		t.Run(c.name, func(t *testing.T) {
			h := http.Header{}
			if c.contentType != "" {
				h.Set("Content-Type", c.contentType)
			}
			for k, v := range c.header {
				h[k] = v
			}
			if h.Get("User-Agent") == "" {
				h.Set("User-Agent", "Go-http-client/1.1")
			}
			before := len(keys(t, e.store))
			status, body, rh := e.post(t, "/submit"+c.query, c.body, h, c.chunked)
			if status != c.status {
				t.Errorf("status %d, want %d (body %q)", status, c.status, body)
			}
			if ct := rh.Get("Content-Type"); ct != "text/plain" {
				t.Errorf("Content-Type %q", ct)
			}
			if c.wantBody != "CrashID" {
				if body != c.wantBody {
					t.Errorf("body %q, want %q", body, c.wantBody)
				}
				if n := len(keys(t, e.store)); n != before {
					t.Errorf("a refused upload stored %d keys", n-before)
				}
				return
			}
			id := answerID(t, body, "0")
			raw, names, dumps := stored(t, e.store, id)
			if raw.UUID != id || time.Since(raw.SubmittedTimestamp) > time.Minute {
				t.Errorf("raw crash uuid %q submitted %v", raw.UUID, raw.SubmittedTimestamp)
			}
			if !slices.Contains(e.pubs(), id) {
				t.Error("not published")
			}
			if ok, _ := e.store.Exists(context.Background(), crash.QueuedKey(id)); !ok {
				t.Error("no queued marker")
			}
			if c.check != nil {
				c.check(t, raw, names, dumps)
			}
		})
	}
	if got := e.counter(t, "crashd_collector_rejected_total", map[string]string{"reason": "malformed_invalid_payload_structure"}); got != 3 {
		t.Errorf("rejected invalid_payload_structure = %v, want 3", got)
	}
	if got := e.counter(t, "crashd_collector_accepted_total", map[string]string{"endpoint": "submit"}); got != 16 {
		t.Errorf("accepted = %v, want 16", got)
	}
}

// rawRequest sends bytes on a TCP connection and reads one response.
func rawRequest(t *testing.T, addr string, req []byte) (int, string) {
	t.Helper()
	conn, err := net.DialTimeout("tcp", addr, 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	conn.SetDeadline(time.Now().Add(10 * time.Second))
	if _, err := conn.Write(req); err != nil {
		t.Fatal(err)
	}
	resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var b bytes.Buffer
	b.ReadFrom(resp.Body)
	return resp.StatusCode, b.String()
}

// TestSubmitLyingContentLength: a Content-Length shorter than the body
// (Antenna's test_content_length_20) cuts the form: malformed.
func TestSubmitLyingContentLength(t *testing.T) {
	e := newEnv(t, Config{}, nil)
	body, ct := form(map[string]any{"ProductName": "Firefox", "Version": "1.0"})
	req := fmt.Appendf(nil, "POST /submit HTTP/1.1\r\nHost: x\r\nContent-Type: %s\r\nContent-Length: 20\r\n\r\n%s", ct, body)
	status, got := rawRequest(t, e.srv.Listener.Addr().String(), req)
	if status != 400 || got != "Discarded=malformed_invalid_payload_structure" {
		t.Errorf("%d %q", status, got)
	}
	// A Content-Length that is not a number is refused by the server.
	req = fmt.Appendf(nil, "POST /submit HTTP/1.1\r\nHost: x\r\nContent-Type: %s\r\nContent-Length: foo\r\n\r\n%s", ct, body)
	if status, _ := rawRequest(t, e.srv.Listener.Addr().String(), req); status != 400 {
		t.Errorf("Content-Length foo: %d", status)
	}
	if n := len(keys(t, e.store)); n != 0 {
		t.Errorf("%d keys stored", n)
	}
}

// TestSubmitBodyTimeout: a Content-Length longer than the body sent (Antenna's
// test_content_length_1000, where nginx's timeout answers) is answered 408.
func TestSubmitBodyTimeout(t *testing.T) {
	var cfg Config
	if err := json.Unmarshal([]byte(`{"body_idle_timeout": "1m30s", "max_body_size": 1000}`), &cfg); err != nil || cfg.BodyIdleTimeout != Duration(90*time.Second) || cfg.MaxBodySize != 1000 {
		t.Errorf("config: %+v %v", cfg, err)
	}
	if err := json.Unmarshal([]byte(`{"body_idle_timeout": 2.5}`), &cfg); err != nil || cfg.BodyIdleTimeout != Duration(2500*time.Millisecond) {
		t.Errorf("config: %+v %v", cfg, err)
	}
	if b, _ := json.Marshal(Duration(time.Minute)); string(b) != `"1m0s"` {
		t.Errorf("marshal %s", b)
	}
	e := newEnv(t, Config{BodyIdleTimeout: Duration(200 * time.Millisecond)}, nil)
	body, ct := form(map[string]any{"ProductName": "Firefox", "Version": "1.0"})
	req := fmt.Appendf(nil, "POST /submit HTTP/1.1\r\nHost: x\r\nContent-Type: %s\r\nContent-Length: 1000\r\n\r\n%s", ct, body)
	start := time.Now()
	status, got := rawRequest(t, e.srv.Listener.Addr().String(), req)
	if status != 408 || got != "Discarded=timeout" {
		t.Errorf("%d %q", status, got)
	}
	if d := time.Since(start); d > 30*time.Second {
		t.Errorf("answered after %v: not the 200 ms idle timeout (the default is 90 s)", d)
	}
	// A slow client that keeps sending is not cut off: four pieces a
	// second apart, the whole body taking longer than the idle timeout
	// (3 s) and each gap well within it. (It was 100 ms gaps for a 200 ms
	// timeout: a busy machine's scheduler could stretch one past it.)
	e = newEnv(t, Config{BodyIdleTimeout: Duration(3 * time.Second)}, nil)
	conn, err := net.Dial("tcp", e.srv.Listener.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	fmt.Fprintf(conn, "POST /submit HTTP/1.1\r\nHost: x\r\nContent-Type: %s\r\nContent-Length: %d\r\n\r\n", ct, len(body))
	for i := 0; i < len(body); i += len(body) / 4 {
		time.Sleep(time.Second)
		conn.Write(body[i:min(i+len(body)/4, len(body))])
	}
	resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
	if err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	b.ReadFrom(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 {
		t.Errorf("slow client: %d %q", resp.StatusCode, b.String())
	}
}

// sized returns an upload of exactly size bytes (Antenna's _generate_sized_crash).
func sized(t *testing.T, size int) ([]byte, string) {
	fields := map[string]any{"ProductName": "Firefox", "Version": "1.0", "upload_file_minidump": fileVal{"fakecrash.dump", nil}}
	b, _ := form(fields)
	fields["upload_file_minidump"] = fileVal{"fakecrash.dump", bytes.Repeat([]byte("a"), size-len(b))}
	b, ct := form(fields)
	if len(b) != size {
		t.Fatalf("sized %d: %d", size, len(b))
	}
	return b, ct
}

// TestSubmitSizeLimit: Antenna's test_25mblimit at the default limit, with
// and without Content-Length, and a Content-Length that lies low.
func TestSubmitSizeLimit(t *testing.T) {
	e := newEnv(t, Config{}, nil)
	for _, c := range []struct {
		size    int
		chunked bool
		status  int
	}{
		{25<<20 - 1, false, 200}, {25 << 20, false, 200}, {25<<20 + 1, false, 413},
		{25 << 20, true, 200}, {25<<20 + 1, true, 413},
	} {
		body, ct := sized(t, c.size)
		status, got, _ := e.post(t, "/submit", body, http.Header{"Content-Type": {ct}}, c.chunked)
		if status != c.status {
			t.Errorf("size %d chunked %v: status %d, want %d", c.size, c.chunked, status, c.status)
		}
		if c.status == 413 && got != "Discarded=too_large" {
			t.Errorf("size %d: body %q", c.size, got)
		}
		if c.status == 200 {
			answerID(t, got, "0")
		}
	}
	// 26 MiB sent with a Content-Length of 25 MiB: the body read is cut at
	// 25 MiB, which is no longer a form (Antenna's nginx answers 413).
	body, ct := sized(t, 26<<20)
	req := fmt.Appendf(nil, "POST /submit HTTP/1.1\r\nHost: x\r\nContent-Type: %s\r\nContent-Length: %d\r\n\r\n", ct, 25<<20)
	status, got := rawRequest(t, e.srv.Listener.Addr().String(), append(req, body...))
	if status != 400 || got != "Discarded=malformed_invalid_payload_structure" {
		t.Errorf("lying 26 MiB: %d %q", status, got)
	}
}

// TestSubmitGzipBomb: a small gzip body that inflates past the bound is
// refused with 413 without being inflated whole.
func TestSubmitGzipBomb(t *testing.T) {
	const max = 4 << 20
	// A ratio bound that lets 4 MiB of "a"s through: the size bound alone.
	e := newEnv(t, Config{MaxDecompressedSize: max, MaxInflateRatio: 1 << 20}, nil)
	head, ct := form(map[string]any{"ProductName": "Firefox", "Version": "1.0"})
	open := head[:len(head)-len("--\r\n")-34]
	zr, err := gzip.NewReader(bytes.NewReader(gzipBomb(t, open, 4<<20))) // the bomb is a good gzip member
	if err != nil {
		t.Fatal(err)
	}
	small, err := io.ReadAll(zr)
	if err != nil || len(small) != len(open)+4<<20 || !bytes.HasPrefix(small, open) {
		t.Fatalf("small bomb: %d bytes, %v", len(small), err)
	}
	zb := gzipBomb(t, open, 256<<20) // an open form and 256 MiB of zeros
	start := time.Now()
	status, got, _ := e.post(t, "/submit", zb, http.Header{"Content-Type": {ct}, "Content-Encoding": {"gzip"}}, false)
	if status != 413 || got != "Discarded=too_large" {
		t.Errorf("gzip bomb: %d %q", status, got)
	}
	if d := time.Since(start); d > 60*time.Second { // inflating 256 MiB under -race on a loaded machine: minutes
		t.Errorf("gzip bomb took %v: inflated too far", d)
	}
	// Exactly the bound inflates; one byte more does not.
	for _, c := range []struct {
		extra  int
		status int
	}{{0, 200}, {1, 413}} {
		body, ct := sized(t, max+c.extra)
		status, _, _ := e.post(t, "/submit", compress(body), http.Header{"Content-Type": {ct}, "Content-Encoding": {"gzip"}}, false)
		if status != c.status {
			t.Errorf("inflated size max+%d: status %d, want %d", c.extra, status, c.status)
		}
	}
}

// gzipBomb returns a gzip member of prefix followed by n zeros (n a multiple
// of 1 MiB), made without compressing them all: deflate blocks of 1 MiB of
// zeros after the first need nothing but zeros before them, so one is
// repeated.
func gzipBomb(t *testing.T, prefix []byte, n int) []byte {
	const mib = 1 << 20
	zeros := make([]byte, mib)
	var buf bytes.Buffer
	fw, _ := flate.NewWriter(&buf, flate.BestCompression)
	fw.Write(prefix)
	fw.Write(zeros)
	fw.Flush()
	first := bytes.Clone(buf.Bytes())
	buf.Reset()
	fw.Write(zeros)
	fw.Flush()
	rep := bytes.Clone(buf.Bytes())
	buf.Reset()
	fw.Close()
	last := buf.Bytes()
	out := []byte{0x1f, 0x8b, 8, 0, 0, 0, 0, 0, 0, 0xff}
	out = append(out, first...)
	crc := crc32.Update(crc32.ChecksumIEEE(prefix), crc32.IEEETable, zeros)
	for range n/mib - 1 {
		out = append(out, rep...)
		crc = crc32.Update(crc, crc32.IEEETable, zeros)
	}
	out = append(out, last...)
	out = binary.LittleEndian.AppendUint32(out, crc)
	out = binary.LittleEndian.AppendUint32(out, uint32(len(prefix)+n))
	if len(out) > 2<<20 {
		t.Fatalf("bomb of %d bytes", len(out))
	}
	return out
}

func ptr[T any](v T) *T { return &v }

func TestSubmitThrottle(t *testing.T) {
	e := newEnv(t, Config{
		Throttle: []Rule{
			{Name: "has_hangid_and_browser", When: []Condition{{Field: "HangID", Exists: ptr(true)}, {Field: "ProcessType", Equals: ptr("browser")}}, Result: ResultReject},
			{Name: "b2g", When: []Condition{{Field: "ProductName", Regexp: "(?i)^b2g$"}}, Result: ResultFakeAccept},
			{Name: "is_nightly", When: []Condition{{Field: "ReleaseChannel", Prefix: ptr("nightly")}}, Result: ResultAccept},
			{Name: "is_shutdownkill", When: []Condition{{Field: "ipc_channel_error", Equals: ptr("ShutDownKill")}}, Percent: ptr(0.0), Result: ResultContinue, Otherwise: ResultReject},
			{Name: "is_firefox_release", When: []Condition{{Field: "ProductName", In: []string{"Firefox"}}, {Field: "ReleaseChannel", Equals: ptr("release")}}, Percent: ptr(100.0), Result: ResultAccept},
			{Name: "only_firefox", When: []Condition{{Field: "ProductName", NotEquals: ptr("Firefox")}}, Result: ResultReject},
		},
	}, nil)
	for _, c := range []struct {
		fields map[string]any
		want   string
		stored bool
	}{
		{map[string]any{"ProductName": "Firefox", "HangID": "x", "ProcessType": "browser"}, "Discarded=rule_has_hangid_and_browser", false},
		{map[string]any{"ProductName": "B2G"}, "CrashID 3", false},
		{map[string]any{"ProductName": "Firefox", "ReleaseChannel": "nightly-try"}, "CrashID 0", true},
		{map[string]any{"ProductName": "Firefox", "ipc_channel_error": "ShutDownKill", "ReleaseChannel": "release"}, "Discarded=rule_is_shutdownkill", false},
		{map[string]any{"ProductName": "Firefox", "ReleaseChannel": "release"}, "CrashID 0", true},
		{map[string]any{"ProductName": "Thunderbird", "ReleaseChannel": "release"}, "Discarded=rule_only_firefox", false},
		{map[string]any{"ProductName": "Firefox", "ReleaseChannel": "beta"}, "Discarded=rule_NO_MATCH", false},
	} {
		body, ct := form(c.fields)
		status, got, _ := e.post(t, "/submit", body, http.Header{"Content-Type": {ct}}, false)
		if status != 200 {
			t.Errorf("%v: status %d", c.fields, status)
		}
		if digit, ok := strings.CutPrefix(c.want, "CrashID "); ok {
			id := answerID(t, got, digit)
			if ok, _ := e.store.Exists(context.Background(), crash.RawCrashKey(id)); ok != c.stored {
				t.Errorf("%v: stored %v, want %v", c.fields, ok, c.stored)
			}
			if c.stored {
				raw, _, _ := stored(t, e.store, id)
				if raw.Metadata.ThrottleRule == "" {
					t.Error("no throttle rule in metadata")
				}
			}
		} else if got != c.want {
			t.Errorf("%v: %q, want %q", c.fields, got, c.want)
		}
	}
	if got := e.counter(t, "crashd_collector_rejected_total", map[string]string{"reason": "fakeaccept_b2g"}); got != 1 {
		t.Errorf("fake accepts counted %v", got)
	}
	for _, bad := range [][]Rule{
		{{Name: "bad name", Result: ResultAccept}},
		{{Name: "x", Result: "maybe"}},
		{{Name: "x", Result: ResultContinue}},
		{{Name: "x", Result: ResultAccept, Percent: ptr(101.0)}},
		{{Name: "x", Result: ResultAccept, When: []Condition{{Field: "a", Regexp: "("}}}},
		{{Name: "x", Result: ResultAccept, When: []Condition{{}}}},
	} {
		if _, err := New(Config{Throttle: bad}, blob.NewMem(), func(context.Context, crash.ID) error { return nil }, nil, nil); err == nil {
			t.Errorf("rules %+v accepted", bad)
		}
	}
}

func TestSubmitPersonalData(t *testing.T) {
	for _, c := range []struct {
		pd           *PersonalData
		kept         []string
		restricted   []string
		removedNotes []string
	}{
		{nil, []string{"ProductName", "URL", "Comments"}, []string{"Comments", "URL"}, []string{"Removed Email from raw crash.", "Removed TelemetryClientId from raw crash."}},
		{&PersonalData{Drop: []string{"URL"}, Restrict: []string{"Email"}}, []string{"ProductName", "Email", "Comments", "TelemetryClientId"}, []string{"Email"}, []string{"Removed URL from raw crash."}},
	} {
		e := newEnv(t, Config{PersonalData: c.pd}, nil)
		body, ct := form(map[string]any{"ProductName": "Firefox", "Email": "a@b.c", "URL": "https://x", "Comments": "hi", "TelemetryClientId": "t"})
		status, got, _ := e.post(t, "/submit", body, http.Header{"Content-Type": {ct}}, false)
		if status != 200 {
			t.Fatalf("%d %q", status, got)
		}
		raw, _, _ := stored(t, e.store, answerID(t, got, "0"))
		if k := slices.Sorted(maps.Keys(raw.Annotations)); !slices.Equal(k, slices.Sorted(slices.Values(c.kept))) {
			t.Errorf("kept %q, want %q", k, c.kept)
		}
		if !slices.Equal(raw.Metadata.Restricted, c.restricted) || !slices.Equal(raw.Metadata.CollectorNotes, c.removedNotes) {
			t.Errorf("restricted %q notes %q", raw.Metadata.Restricted, raw.Metadata.CollectorNotes)
		}
		for _, r := range c.restricted {
			if _, ok := raw.Public().Annotations[r]; ok {
				t.Errorf("Public shows %s", r)
			}
		}
	}
}

func TestSubmitUUID(t *testing.T) {
	e := newEnv(t, Config{SubmitterToken: "123"}, nil)
	const id = "de1bb258-cbbf-4589-a673-34f800160918"
	fields := map[string]any{"uuid": id, "ProductName": "Firefox", "upload_file_minidump": dump}
	body, ct := form(fields)
	auth := http.Header{"Content-Type": {ct}, "Authorization": {"Bearer 123"}}
	if status, got, _ := e.post(t, "/submit", body, auth, false); status != 200 || got != "CrashID=bp-"+id+"\n" {
		t.Errorf("with token: %d %q", status, got)
	}
	raw, _, _ := stored(t, e.store, id)
	if raw.UUID != id {
		t.Errorf("uuid %q", raw.UUID)
	}
	if status, got, _ := e.post(t, "/submit", body, http.Header{"Content-Type": {ct}}, false); status != 401 || got != "Discarded=unauthorized_uuid" {
		t.Errorf("without token: %d %q", status, got)
	}
	if status, got, _ := e.post(t, "/submit", body, http.Header{"Content-Type": {ct}, "Authorization": {"Bearer 12"}}, false); status != 401 || got != "Discarded=unauthorized_uuid" {
		t.Errorf("wrong token: %d %q", status, got)
	}
	fields["uuid"] = "456"
	body, ct = form(fields)
	if status, got, _ := e.post(t, "/submit", body, http.Header{"Content-Type": {ct}, "Authorization": {"Bearer 123"}}, false); status != 400 || got != "Discarded=malformed_invalid_uuid" {
		t.Errorf("invalid uuid: %d %q", status, got)
	}
	// Without a configured token nobody may choose the id.
	e2 := newEnv(t, Config{}, nil)
	body, ct = form(map[string]any{"uuid": id, "ProductName": "Firefox"})
	if status, got, _ := e2.post(t, "/submit", body, http.Header{"Content-Type": {ct}, "Authorization": {"Bearer "}}, false); status != 401 || got != "Discarded=unauthorized_uuid" {
		t.Errorf("no token configured: %d %q", status, got)
	}
}

// chromiumLinuxBody is an upload as Chromium's Linux uploader writes it
// (components/crash/core/app/breakpad_linux.cc, MimeWriter): a boundary of
// 28 hyphens and 16 hex digits, text parts without Content-Type, the dump
// named upload_file_minidump with filename "dump"; the whole body gzipped
// and posted by wget with Content-Encoding: gzip and Content-Length.
func chromiumLinuxBody(dump []byte) ([]byte, string) {
	const boundary = "----------------------------0123456789abcdef"
	var b bytes.Buffer
	b.WriteString(boundary + "\r\n")
	for _, kv := range [][2]string{{"prod", "Chrome_Linux"}, {"ver", "120.0.6099.109"}, {"pid", "4242"}, {"ptype", "renderer"}} {
		b.WriteString(`Content-Disposition: form-data; name="` + kv[0] + `"` + "\r\n\r\n" + kv[1] + "\r\n")
		b.WriteString(boundary + "\r\n")
	}
	b.WriteString(`Content-Disposition: form-data; name="upload_file_minidump"; filename="dump"` + "\r\n")
	b.WriteString("Content-Type: application/octet-stream\r\n\r\n")
	b.Write(dump)
	b.WriteString("\r\n" + boundary + "--\r\n")
	return compress(b.Bytes()), "multipart/form-data; boundary=" + boundary[2:]
}

func TestSubmitHex16(t *testing.T) {
	e := newEnv(t, Config{Products: map[string]Product{"Chrome_Linux": {Response: ResponseHex16}}}, nil)
	body, ct := chromiumLinuxBody([]byte("MDMP chromium dump"))
	status, got, _ := e.post(t, "/submit", body, http.Header{"Content-Type": {ct}, "Content-Encoding": {"gzip"}, "User-Agent": {"Wget/1.21.3"}}, false)
	if status != 200 || len(got) != 16 || strings.Trim(got, "0123456789abcdef") != "" {
		t.Fatalf("%d %q: want 16 hexadecimal digits", status, got)
	}
	var id crash.ID
	for k := range e.store.List(context.Background(), crash.RawCrashPrefix) {
		id, _ = crash.IDFromKey(k)
	}
	if strings.ReplaceAll(string(id), "-", "")[:16] != got {
		t.Errorf("answer %q is not the start of %s", got, id)
	}
	raw, _, dumps := stored(t, e.store, id)
	if raw.ProductName() != "Chrome_Linux" || raw.ProductVersion() != "120.0.6099.109" || raw.Annotation("ptype") != "renderer" ||
		string(dumps["upload_file_minidump"]) != "MDMP chromium dump" || len(raw.Metadata.CollectorNotes) != 0 {
		t.Errorf("stored %+v %q", raw, dumps)
	}
	if _, err := New(Config{Products: map[string]Product{"x": {Response: "hex"}}}, blob.NewMem(), e.publish, nil, nil); err == nil {
		t.Error("response hex accepted")
	}
}

// TestSubmitNeverLoses: a crash whose publication fails is still stored
// and answered 200, and Recover queues it; a crash that cannot be stored is
// answered 503 with Retry-After and a reason (the client retries; Antenna's
// empty 500 says nothing).
func TestSubmitNeverLoses(t *testing.T) {
	dir, err := blob.OpenDir(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	defer dir.Close()
	e := newEnv(t, Config{}, dir)
	e.failPub = errors.New("queue down")
	body, ct := form(map[string]any{"ProductName": "Firefox", "upload_file_minidump": dump})
	status, got, _ := e.post(t, "/submit", body, http.Header{"Content-Type": {ct}}, false)
	if status != 200 {
		t.Fatalf("%d %q", status, got)
	}
	id := answerID(t, got, "0")
	stored(t, dir, id)
	if ok, _ := dir.Exists(context.Background(), crash.QueuedKey(id)); ok {
		t.Error("queued marker without publication")
	}
	if got := e.counter(t, "crashd_collector_errors_total", map[string]string{"step": "publish"}); got != 1 {
		t.Errorf("publish errors %v", got)
	}
	e.failPub = nil
	// A crash published normally is not published again.
	status, got, _ = e.post(t, "/submit", body, http.Header{"Content-Type": {ct}}, false)
	id2 := answerID(t, got, "0")
	n, err := Recover(context.Background(), dir, e.publish, time.Now().Add(-24*time.Hour), nil)
	if err != nil || n != 1 {
		t.Fatalf("Recover = %d, %v", n, err)
	}
	if p := e.pubs(); !slices.Equal(p, []crash.ID{id2, id}) {
		t.Errorf("published %q, want %q", p, []crash.ID{id2, id})
	}
	if n, _ := Recover(context.Background(), dir, e.publish, time.Time{}, nil); n != 0 {
		t.Errorf("second Recover published %d", n)
	}
	if n, _ := Recover(context.Background(), dir, e.publish, time.Now().Add(48*time.Hour), nil); n != 0 {
		t.Errorf("Recover from the future published %d", n)
	}

	f := newEnv(t, Config{}, failStore{blob.NewMem()})
	status, got, hdr := f.post(t, "/submit", body, http.Header{"Content-Type": {ct}}, false)
	if status != 503 || got == "" || hdr.Get("Retry-After") == "" {
		t.Errorf("store failure: %d %q, Retry-After %q", status, got, hdr.Get("Retry-After"))
	}
	if len(f.pubs()) != 0 {
		t.Error("published a crash not stored")
	}
}
