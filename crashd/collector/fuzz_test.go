package collector

import (
	"net/http"
	"net/netip"
	"testing"
	"time"

	"github.com/gobreakpad/gobreakpad/crashd/crash"
)

// FuzzParsePayload runs the multipart and annotation parsing of both
// endpoints on arbitrary bodies: no panic, and what is accepted is sane.
func FuzzParsePayload(f *testing.F) {
	basic, ct := form(map[string]any{"ProductName": "Firefox", "Version": "1.0", "upload_file_minidump": dump})
	f.Add(ct, basic)
	j, jct := form(map[string]any{"extra": `{"ProductName":"Firefox","Version":1.5,"a":[1,{"b":null}]}`, "upload_file_minidump": dump})
	f.Add(jct, j)
	s, sct := sentryForm([][3]string{{"sentry[event_id]", "", "0123456789abcdef0123456789abcdef"}, {"sentry", "", `{"release":"a@1"}`}, {"upload_file_minidump", "x.dmp", "MDMPxx"}})
	f.Add(sct, s)
	f.Add("multipart/form-data; boundary=b", []byte("--b\r\nContent-Disposition: form-data; name=\"a\"; filename*=UTF-8''%C3%A9\r\nContent-Transfer-Encoding: binary\r\n\r\nx\r\n--b--"))
	f.Add("multipart/mixed; boundary=\"q;\\\"b\"", []byte("--q;\"b\r\n\r\n\r\n--q;\"b\r\nContent-Disposition: attachment; name=x\r\nContent-Type: text/plain; charset=latin-1\r\n\r\n\xe9\r\n--q;\"b--\r\n"))
	f.Add("application/octet-stream", []byte("MDMP"))
	c, err := New(Config{}, nil2Store(), func(_ ctxT, _ crash.ID) error { return nil }, nil, nil)
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, ct string, body []byte) {
		rep, err := parsePayload(ct, body, c.annotationBudget(nil))
		if err == nil {
			if len(rep.annotations) == 0 {
				t.Fatal("accepted without annotations")
			}
			files := map[string]bool{}
			for name := range rep.dumps {
				n, ok := crash.DumpName(name)
				if !ok || n != name || files[crash.DumpFileName(name)] {
					t.Fatalf("dump name %q accepted", name)
				}
				files[crash.DumpFileName(name)] = true
			}
		}
		if rep, sp, _, reason, _ := c.parseSentry(ct, body, nil); reason == "" {
			defer sp.close()
			md := rep.dumps[crash.MinidumpField]
			if len(md) < 4 || string(md[:4]) != "MDMP" && string(md[:4]) != "PMDM" {
				t.Fatalf("accepted minidump %q", md)
			}
		}
		parseHeader(ct)
	})
}

// FuzzDecodeMinidump runs Sentry's decompression (gzip, bzip2, zstd by
// magic bytes) of arbitrary bytes through the spool, with small bounds: no
// panic, and what comes out is within the size and inflation bounds.
func FuzzDecodeMinidump(f *testing.F) {
	md := append([]byte("MDMP\x93\xa7\x00\x00"), make([]byte, 4096)...)
	f.Add(compress(md))
	f.Add(zstdBytes(md))
	f.Add([]byte("BZh91AY&SY"))
	f.Add([]byte("\x28\xb5\x2f\xfd\x00\x00"))
	f.Add(md)
	c, err := New(Config{MaxDecompressedSize: 4 << 20, MaxInflateRatio: 2}, nil2Store(), func(_ ctxT, _ crash.ID) error { return nil }, nil, nil)
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		sp, err := c.decodeMinidump(b, nil)
		if err != nil || sp == nil {
			return
		}
		defer sp.close()
		if n := int64(len(sp.data)); n > 4<<20 || n > inflateFloor+2*int64(len(b)) {
			t.Fatalf("%d bytes out of %d", n, len(b))
		}
	})
}

// FuzzRateKey: any header value gives a client key without panicking;
// addresses are keyed as addresses.
func FuzzRateKey(f *testing.F) {
	f.Add("192.0.2.1", "10.0.0.1:1234")
	f.Add("10.0.0.1, 2001:db8::1", "[::1]:80")
	f.Add(",,,", "junk")
	l, err := newLimiter(RateLimit{By: RateByHeader, Header: "X-Forwarded-For", PerSecond: 1, Burst: 1}, time.Now)
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, header, remote string) {
		r := &http.Request{Header: http.Header{"X-Forwarded-For": {header}}, RemoteAddr: remote}
		k := l.key(r)
		if a, err := netip.ParseAddr(k); err == nil && a.Is6() && !a.Is4In6() {
			t.Fatalf("IPv6 address %q keyed whole", k)
		}
		l.allow(k)
	})
}
