// Package crashdtest is the crash server's test kit: uploads shaped exactly
// as the real clients send them, and a crashd started on a loopback port.
//
// The request builders follow the clients' sources, each named in its doc
// comment: Crashpad's handler (Chrome, Electron ≥ 16, sentry-native's
// crashpad backend), sentry-native's own envelope transport (its breakpad
// and inproc backends), and Electron's crashReporter fields over Crashpad.
// Breakpad's own sender is package upload (and Google Breakpad's
// minidump_upload, internal/testkit/cmdtest.BreakpadMinidumpUpload).
package crashdtest

import (
	"bytes"
	"compress/gzip"
	"context"
	"crypto/rand"
	"fmt"
	"io"
	"math/big"
	"net/http"
	"sort"
	"strings"
)

// CrashpadUserAgent is a User-Agent as Crashpad's libcurl transport makes
// it (util/net/http_transport_libcurl.cc UserAgent(): PACKAGE_NAME/
// PACKAGE_VERSION from package.h, libcurl's curl_version(), then the
// kernel's name, release and the architecture), for a Crashpad 0.8.0 on
// Debian 12's libcurl 7.88.1.
const CrashpadUserAgent = "Crashpad/0.8.0 libcurl/7.88.1 OpenSSL/3.0.17 zlib/1.2.13 brotli/1.0.9 zstd/1.5.4 libidn2/2.3.3 libpsl/0.21.2 (+libidn2/2.3.3) libssh2/1.10.0 nghttp2/1.52.0 librtmp/2.3 OpenLDAP/2.5.13 Linux/6.1.0-28-amd64 (x86_64)"

// CrashpadMinidumpKey is the part Crashpad sends the minidump in
// (kMinidumpKey in handler/crash_report_upload_thread.cc).
const CrashpadMinidumpKey = "upload_file_minidump"

// Crashpad is one crash report as Crashpad's handler uploads it
// (handler/crash_report_upload_thread.cc CrashReportUploadThread::UploadReport,
// with the body of util/net/http_multipart_builder.cc and the transport of
// util/net/http_transport_libcurl.cc):
//
//   - the text parts are the report's parameters (BreakpadHTTPFormParametersFromMinidump:
//     the simple annotations, "list_annotations", "guid"), in the order of
//     their names, each "Content-Disposition: form-data; name=..." with no
//     Content-Type; then the file parts, attachments and the minidump
//     together in the order of their names, each with
//     "Content-Type: application/octet-stream", the minidump named
//     "<report uuid>.dmp";
//   - names and filenames have CR, LF, '"' and '%' %-escaped (EncodeMIMEField);
//   - the boundary is "---MultipartBoundary-", 32 random alphanumerics,
//     "---" (GenerateBoundaryString);
//   - the body is gzip-compressed (Content-Encoding: gzip; crashpad_handler's
//     --no-upload-gzip turns it off) and sent chunked, with no
//     Content-Length, no "Expect", "Accept-Encoding" for what libcurl decodes;
//   - the URL gets product, version and guid parameters from the prod, ver
//     and guid parameters, URL-encoded with upper-case hex (util/net/url.cc
//     URLEncode; --no-identify-client-via-url turns it off).
type Crashpad struct {
	// URL is the upload URL crashpad_handler was given (--url).
	URL string
	// Annotations are the report's text parameters; a
	// CrashpadMinidumpKey entry is dropped, as Crashpad drops it.
	Annotations map[string]string
	// Attachments are files attached to the report, by name (the name is
	// also the filename).
	Attachments map[string][]byte
	// Minidump is the dump.
	Minidump []byte
	// ReportID is the report's UUID, lower-case and hyphenated; random
	// when empty.
	ReportID string
	// NoGzip sends the body uncompressed (--no-upload-gzip).
	NoGzip bool
	// NoURLParameters leaves the URL as it is
	// (--no-identify-client-via-url).
	NoURLParameters bool
	// UserAgent replaces CrashpadUserAgent.
	UserAgent string
	// Boundary replaces the random boundary.
	Boundary string
}

// NewUUID returns a random (version 4) UUID, lower-case and hyphenated as
// Crashpad's UUID::ToString and sentry-native print them.
func NewUUID() string {
	var b [16]byte
	rand.Read(b[:])
	b[6] = b[6]&0x0f | 0x40
	b[8] = b[8]&0x3f | 0x80
	return fmt.Sprintf("%x-%x-%x-%x-%x", b[0:4], b[4:6], b[6:8], b[8:10], b[10:16])
}

// CrashpadBoundary returns a boundary as Crashpad's GenerateBoundaryString.
func CrashpadBoundary() string {
	const chars = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
	var sb strings.Builder
	sb.WriteString("---MultipartBoundary-")
	for i := 0; i < 32; i++ {
		n, _ := rand.Int(rand.Reader, big.NewInt(int64(len(chars))))
		sb.WriteByte(chars[n.Int64()])
	}
	sb.WriteString("---")
	return sb.String()
}

// encodeMIMEField is Crashpad's EncodeMIMEField: CR, LF, '"' and '%' as
// %-escapes with lower-case hex ("%%%02x").
func encodeMIMEField(s string) string {
	var sb strings.Builder
	for i := 0; i < len(s); i++ {
		switch c := s[i]; c {
		case '\r', '\n', '"', '%':
			fmt.Fprintf(&sb, "%%%02x", c)
		default:
			sb.WriteByte(c)
		}
	}
	return sb.String()
}

// CrashpadURLEncode is Crashpad's URLEncode (util/net/url.cc): everything
// but ASCII letters, digits and "-_.~" as %XX with upper-case hex.
func CrashpadURLEncode(s string) string {
	var sb strings.Builder
	for i := 0; i < len(s); i++ {
		c := s[i]
		if 'A' <= c && c <= 'Z' || 'a' <= c && c <= 'z' || '0' <= c && c <= '9' || strings.IndexByte("-_.~", c) >= 0 {
			sb.WriteByte(c)
		} else {
			fmt.Fprintf(&sb, "%%%02X", c)
		}
	}
	return sb.String()
}

// UploadURL returns the URL Crashpad posts to: URL with product, version
// and guid appended from the prod, ver and guid annotations, each with '?'
// when the URL has none yet, else '&'.
func (c *Crashpad) UploadURL() string {
	u := c.URL
	if c.NoURLParameters {
		return u
	}
	for _, m := range [][2]string{{"prod", "product"}, {"ver", "version"}, {"guid", "guid"}} {
		v, ok := c.Annotations[m[0]]
		if !ok {
			continue
		}
		sep := "&"
		if !strings.Contains(u, "?") {
			sep = "?"
		}
		u += sep + m[1] + "=" + CrashpadURLEncode(v)
	}
	return u
}

// MinidumpFilename is the minidump part's filename: "<report uuid>.dmp".
func (c *Crashpad) MinidumpFilename() string {
	return c.ReportID + ".dmp"
}

func (c *Crashpad) fill() {
	if c.ReportID == "" {
		c.ReportID = NewUUID()
	}
	if c.Boundary == "" {
		c.Boundary = CrashpadBoundary()
	}
}

// Body returns the multipart body before compression, and fills in
// ReportID and Boundary when they are empty.
func (c *Crashpad) Body() []byte {
	c.fill()
	var b bytes.Buffer
	names := make([]string, 0, len(c.Annotations))
	for k := range c.Annotations {
		if k != CrashpadMinidumpKey {
			names = append(names, k)
		}
	}
	sort.Strings(names)
	for _, k := range names {
		fmt.Fprintf(&b, "--%s\r\nContent-Disposition: form-data; name=\"%s\"\r\n\r\n%s\r\n", c.Boundary, encodeMIMEField(k), c.Annotations[k])
	}
	type file struct {
		key, name string
		data      []byte
	}
	files := []file{{CrashpadMinidumpKey, c.MinidumpFilename(), c.Minidump}}
	for k, v := range c.Attachments {
		if k != CrashpadMinidumpKey {
			files = append(files, file{k, k, v})
		}
	}
	sort.Slice(files, func(i, j int) bool { return files[i].key < files[j].key })
	for _, f := range files {
		fmt.Fprintf(&b, "--%s\r\nContent-Disposition: form-data; name=\"%s\"; filename=\"%s\"\r\nContent-Type: application/octet-stream\r\n\r\n", c.Boundary, encodeMIMEField(f.key), encodeMIMEField(f.name))
		b.Write(f.data)
		b.WriteString("\r\n")
	}
	fmt.Fprintf(&b, "--%s--\r\n", c.Boundary)
	return b.Bytes()
}

// Gzip compresses b as zlib's gzip wrapper does (deflateInit2 with
// Z_DEFAULT_COMPRESSION and 16 + 15 window bits: no name, no time, OS 3).
func Gzip(b []byte) []byte {
	var out bytes.Buffer
	zw, _ := gzip.NewWriterLevel(&out, gzip.DefaultCompression)
	zw.OS = 3
	zw.Write(b)
	zw.Close()
	return out.Bytes()
}

// Request returns the upload as an *http.Request: body chunked (its length
// unknown to the transport), gzip-compressed unless NoGzip.
func (c *Crashpad) Request(ctx context.Context) (*http.Request, error) {
	body := c.Body()
	if !c.NoGzip {
		body = Gzip(body)
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, c.UploadURL(), io.NopCloser(bytes.NewReader(body)))
	if err != nil {
		return nil, fmt.Errorf("crashpad upload: %w", err)
	}
	req.ContentLength = -1 // chunked, as Crashpad sends it
	ua := c.UserAgent
	if ua == "" {
		ua = CrashpadUserAgent
	}
	req.Header.Set("User-Agent", ua)
	req.Header.Set("Accept", "*/*")
	req.Header.Set("Accept-Encoding", "deflate, gzip, br, zstd") // CURLOPT_ACCEPT_ENCODING ""
	req.Header.Set("Content-Type", "multipart/form-data; boundary="+c.Boundary)
	if !c.NoGzip {
		req.Header.Set("Content-Encoding", "gzip")
	}
	return req, nil
}
