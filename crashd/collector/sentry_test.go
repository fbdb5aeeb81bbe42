package collector

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"regexp"
	"slices"
	"testing"

	"github.com/klauspost/compress/zstd"
	"github.com/ulikunitz/xz"

	"github.com/gobreakpad/gobreakpad/crashd/crash"
)

var hyphenatedUUID = regexp.MustCompile(`^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$`)

// sentryForm builds a multipart body as sentry-native and Electron send it:
// text fields without Content-Type, files with a filename.
func sentryForm(parts [][3]string) ([]byte, string) {
	const b = "------------------------sentryboundary1234"
	var buf bytes.Buffer
	for _, p := range parts { // name, filename, content
		fmt.Fprintf(&buf, "--%s\r\n", b)
		if p[1] != "" {
			fmt.Fprintf(&buf, "Content-Disposition: form-data; name=%q; filename=%q\r\nContent-Type: application/octet-stream\r\n\r\n", p[0], p[1])
		} else {
			fmt.Fprintf(&buf, "Content-Disposition: form-data; name=%q\r\n\r\n", p[0])
		}
		buf.WriteString(p[2])
		buf.WriteString("\r\n")
	}
	fmt.Fprintf(&buf, "--%s--\r\n", b)
	return buf.Bytes(), "multipart/form-data; boundary=" + b
}

func xzBytes(b []byte) []byte {
	var out bytes.Buffer
	w, _ := xz.NewWriter(&out)
	w.Write(b)
	w.Close()
	return out.Bytes()
}

func zstdBytes(b []byte) []byte {
	e, _ := zstd.NewWriter(nil)
	defer e.Close()
	return e.EncodeAll(b, nil)
}

func TestSentryMinidump(t *testing.T) {
	e := newEnv(t, Config{Sentry: []SentryProject{{ID: "42", Keys: []string{"pubkey"}, Product: "MyApp"}}}, nil)
	md := []byte("MDMP\x93\xa7\x00\x00 minidump bytes")
	const eventID = "0123456789abcdef0123456789abcdef"
	const eventIDH = "01234567-89ab-cdef-0123-456789abcdef"
	const eventID2 = "11234567-89ab-cdef-0123-456789abcdef"
	withEvent, withEventCT := sentryForm([][3]string{
		{"sentry", "", `{"event_id":"` + eventID + `","release":"myapp@1.2.3","tags":{"a":"b"}}`},
		{"upload_file_minidump", "crash.dmp", string(md)},
		{"__sentry-breadcrumb1", "__sentry-breadcrumb1", "crumbs"},
	})
	brackets, bracketsCT := sentryForm([][3]string{
		{"sentry[event_id]", "", eventID2},
		{"sentry[release]", "", "myapp@2.0"},
		{"sentry[tags][mood]", "", "grumpy"},
		{"_productName", "", "ElectronApp"},
		{"upload_file_minidump", "crash.dmp.gz", string(compress(md))},
	})
	embedded, _ := sentryForm([][3]string{{"upload_file_minidump", "x.dmp", string(md)}})
	nested, nestedCT := sentryForm([][3]string{{"upload_file_minidump", "", string(embedded)}})
	noDump, noDumpCT := sentryForm([][3]string{{"sentry", "", `{}`}})
	notMD, notMDCT := sentryForm([][3]string{{"upload_file_minidump", "crash.dmp", "not a minidump"}})
	for _, c := range []struct {
		name, path, ct string
		header         http.Header
		body           []byte
		status         int
		want           string // exact body, or "" for a new event id
		check          func(t *testing.T, raw *crash.RawCrash, dumps map[string][]byte)
	}{
		{name: "raw octet-stream", path: "/api/42/minidump/?sentry_key=pubkey", ct: "application/octet-stream", body: md, status: 200,
			check: func(t *testing.T, raw *crash.RawCrash, dumps map[string][]byte) {
				if !bytes.Equal(dumps["upload_file_minidump"], md) || raw.Annotation("ProductName") != "MyApp" ||
					raw.Metadata.Endpoint != "sentry" || raw.Metadata.SentryProject != "42" || raw.Metadata.Payload != "sentry" {
					t.Errorf("raw %+v", raw)
				}
			}},
		{name: "raw x-dmp, no slash, X-Sentry-Auth", path: "/api/42/minidump", ct: "application/x-dmp",
			header: http.Header{"X-Sentry-Auth": {"Sentry sentry_version=7, sentry_key=pubkey, sentry_client=sentry.native/0.7.0"}}, body: md, status: 200},
		{name: "raw xz refused", path: "/api/42/minidump/?sentry_key=pubkey", ct: "application/octet-stream", body: xzBytes(md), status: 400, want: `{"detail":"invalid compression container"}`},
		{name: "raw zstd", path: "/api/42/minidump/?sentry_key=pubkey", ct: "application/octet-stream", body: zstdBytes(md), status: 200},
		{name: "multipart with sentry JSON", path: "/api/42/minidump/?sentry_key=pubkey", ct: withEventCT, body: withEvent, status: 200, want: eventIDH,
			check: func(t *testing.T, raw *crash.RawCrash, dumps map[string][]byte) {
				ev, _ := raw.Annotations["sentry"].(map[string]any)
				if ev["release"] != "myapp@1.2.3" || raw.Annotation("Version") != "1.2.3" || raw.Metadata.SentryEventID != eventIDH {
					t.Errorf("annotations %v metadata %+v", raw.Annotations, raw.Metadata)
				}
				if string(dumps["__sentrybreadcrumb1"]) != "crumbs" || !bytes.Equal(dumps["upload_file_minidump"], md) {
					t.Errorf("dumps %q", slices.Collect(func(y func(string) bool) {
						for k := range dumps {
							y(k)
						}
					}))
				}
			}},
		{name: "multipart with bracket fields, gzip minidump", path: "/api/42/minidump?sentry_key=pubkey", ct: bracketsCT, body: brackets, status: 200, want: eventID2,
			check: func(t *testing.T, raw *crash.RawCrash, dumps map[string][]byte) {
				ev, _ := raw.Annotations["sentry"].(map[string]any)
				tags, _ := ev["tags"].(map[string]any)
				if tags["mood"] != "grumpy" || raw.Annotation("Version") != "2.0" || raw.Annotation("ProductName") != "" || raw.Annotation("_productName") != "ElectronApp" {
					t.Errorf("annotations %v", raw.Annotations)
				}
				if !bytes.Equal(dumps["upload_file_minidump"], md) {
					t.Errorf("dump %q", dumps["upload_file_minidump"])
				}
			}},
		{name: "minidump in a nested multipart", path: "/api/42/minidump/?sentry_key=pubkey", ct: nestedCT, body: nested, status: 200,
			check: func(t *testing.T, _ *crash.RawCrash, dumps map[string][]byte) {
				if !bytes.Equal(dumps["upload_file_minidump"], md) {
					t.Errorf("dump %q", dumps["upload_file_minidump"])
				}
			}},
		{name: "no key", path: "/api/42/minidump/", ct: "application/octet-stream", body: md, status: 401, want: `{"detail":"missing authorization information"}`},
		{name: "wrong key", path: "/api/42/minidump/?sentry_key=nope", ct: "application/octet-stream", body: md, status: 403, want: `{"detail":"invalid project or key"}`},
		{name: "unknown project", path: "/api/43/minidump/?sentry_key=pubkey", ct: "application/octet-stream", body: md, status: 403, want: `{"detail":"invalid project or key"}`},
		{name: "not a minidump", path: "/api/42/minidump/?sentry_key=pubkey", ct: notMDCT, body: notMD, status: 400, want: `{"detail":"invalid minidump"}`},
		{name: "missing minidump", path: "/api/42/minidump/?sentry_key=pubkey", ct: noDumpCT, body: noDump, status: 400, want: `{"detail":"missing minidump"}`},
		{name: "not multipart", path: "/api/42/minidump/?sentry_key=pubkey", ct: "text/plain", body: md, status: 400, want: `{"detail":"invalid multipart data"}`},
		{name: "bad compression", path: "/api/42/minidump/?sentry_key=pubkey", ct: "application/octet-stream", body: compress(md)[:20], status: 400, want: `{"detail":"invalid compression container"}`},
	} {
		t.Run(c.name, func(t *testing.T) {
			h := http.Header{"Content-Type": {c.ct}}
			for k, v := range c.header {
				h[k] = v
			}
			status, got, _ := e.post(t, c.path, c.body, h, false)
			if status != c.status {
				t.Fatalf("status %d, want %d (%q)", status, c.status, got)
			}
			if c.want != "" && got != c.want {
				t.Errorf("body %q, want %q", got, c.want)
			}
			if status != 200 {
				return
			}
			if !hyphenatedUUID.MatchString(got) {
				t.Fatalf("body %q: not a hyphenated UUID", got)
			}
			var id crash.ID
			for k := range e.store.List(context.Background(), crash.RawCrashPrefix) {
				i, _ := crash.IDFromKey(k)
				b, _ := e.store.Get(context.Background(), k)
				var raw crash.RawCrash
				json.Unmarshal(b, &raw)
				if raw.Metadata.SentryEventID == got {
					id = i
				}
			}
			if id == "" {
				t.Fatalf("no stored crash has event id %s", got)
			}
			raw, _, dumps := stored(t, e.store, id)
			if c.check != nil {
				c.check(t, raw, dumps)
			}
		})
	}
	// Sentry's routes exist only with projects configured.
	plain := newEnv(t, Config{}, nil)
	if status, _, _ := plain.post(t, "/api/42/minidump/?sentry_key=pubkey", md, http.Header{"Content-Type": {"application/octet-stream"}}, false); status != 404 {
		t.Errorf("without projects: %d", status)
	}
	if got := e.counter(t, "crashd_collector_accepted_total", map[string]string{"endpoint": "sentry"}); got != 6 {
		t.Errorf("sentry accepted %v", got)
	}
}

func TestSentryKey(t *testing.T) {
	for _, c := range []struct {
		url, header, auth, want string
	}{
		{"/?sentry_key=abc", "", "", "abc"},
		{"/", "Sentry sentry_key=def,sentry_version=7", "", "def"},
		{"/", "", "Sentry sentry_version=7, sentry_key=ghi", "ghi"},
		{"/", "Bearer x", "", ""},
	} {
		r, _ := http.NewRequest("POST", c.url, nil)
		if c.header != "" {
			r.Header.Set("X-Sentry-Auth", c.header)
		}
		if c.auth != "" {
			r.Header.Set("Authorization", c.auth)
		}
		if got := sentryKey(r); got != c.want {
			t.Errorf("%+v: %q", c, got)
		}
	}
	if parseEventID("0123456789ABCDEF0123456789abcdef") != "01234567-89ab-cdef-0123-456789abcdef" || parseEventID("xyz") != "" {
		t.Error("parseEventID")
	}
}
