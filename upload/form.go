// Package upload sends minidumps (and other files) to crash and symbol
// servers the way Google Breakpad's Linux uploader does: a multipart/form-data
// POST byte for byte as Breakpad's HTTPUpload::SendRequest
// (src/common/linux/http_upload.cc) has libcurl build it, with its text
// fields, its file parts and its request headers, and its view of success (a
// status below 400, as CURLOPT_FAILONERROR). cmd/minidump_upload, the drop-in
// for Breakpad's minidump_upload, is a thin program over it.
//
// The request Breakpad's minidump_upload sends (libcurl 7.88, the boundary
// random):
//
//	POST /submit HTTP/1.1
//	Host: 127.0.0.1:8080
//	User-Agent: Breakpad/1.0 (Linux)
//	Accept: */*
//	Content-Length: 417
//	Content-Type: multipart/form-data; boundary=------------------------cb39cacb2be6c6ee
//
//	--------------------------cb39cacb2be6c6ee
//	Content-Disposition: form-data; name="prod"
//
//	Prod
//	--------------------------cb39cacb2be6c6ee
//	Content-Disposition: form-data; name="ver"
//
//	1.0
//	--------------------------cb39cacb2be6c6ee
//	Content-Disposition: form-data; name="upload_file_minidump"; filename="t.dmp"
//	Content-Type: application/octet-stream
//
//	(the dump's bytes)
//	--------------------------cb39cacb2be6c6ee--
//
// every line ending in CRLF. This package sends the same header fields (Go
// orders them differently, which HTTP gives no meaning) and the same body.
package upload

import (
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"
)

// Field names Breakpad's minidump_upload sends.
const (
	// ProductField is the form field of the product name (-p).
	ProductField = "prod"
	// VersionField is the form field of the product version (-v).
	VersionField = "ver"
	// MinidumpField is the file part of the minidump.
	MinidumpField = "upload_file_minidump"
)

// UserAgent is the User-Agent Breakpad's Linux HTTPUpload sends
// (kUserAgent in src/common/linux/http_upload.cc).
const UserAgent = "Breakpad/1.0 (Linux)"

// Form is the body of one upload: text fields and files, each sent in the
// order of its name, as Breakpad passes them to libcurl from a std::map
// (fields first, then files).
type Form struct {
	// Fields are the text fields, name → value.
	Fields map[string]string
	// Files are the file parts, field name → path of the file to send. The
	// part's filename is the path's last element, as libcurl's CURLFORM_FILE.
	Files map[string]string
}

// NewBoundary returns a multipart boundary in the form libcurl 7.x makes
// one: 24 dashes and 16 random lower-case hex digits.
func NewBoundary() string {
	var b [8]byte
	if _, err := rand.Read(b[:]); err != nil {
		// crypto/rand does not fail on the platforms Go supports; a fixed
		// boundary is still a valid one.
		return strings.Repeat("-", 24) + "0123456789abcdef"
	}
	return strings.Repeat("-", 24) + hex.EncodeToString(b[:])
}

// ContentType returns the request's Content-Type for a body written with
// boundary.
func ContentType(boundary string) string {
	return "multipart/form-data; boundary=" + boundary
}

// CheckFieldName reports whether name may name a field: Breakpad's
// HTTPUpload::CheckParameters refuses an empty name and names with control
// characters, '"' or bytes past 127 (and then sends nothing).
func CheckFieldName(name string) error {
	if name == "" {
		return fmt.Errorf("empty field name")
	}
	for i := 0; i < len(name); i++ {
		if c := name[i]; c < 32 || c == '"' || c > 127 {
			return fmt.Errorf("field name %q: byte %#x not allowed", name, c)
		}
	}
	return nil
}

// escapeQuoted escapes a name or filename inside a quoted
// Content-Disposition parameter as libcurl does since 7.81
// (MIMESTRATEGY_FORM, the HTML5 way): '"', CR and LF as %22, %0D, %0A.
func escapeQuoted(s string) string {
	return strings.NewReplacer(`"`, "%22", "\r", "%0D", "\n", "%0A").Replace(s)
}

// fileContentType is the Content-Type libcurl gives a CURLFORM_FILE part
// from its file name (formdata.c's table), application/octet-stream for
// every other name, a minidump's among them.
func fileContentType(name string) string {
	ext := strings.ToLower(filepath.Ext(name))
	switch ext {
	case ".gif":
		return "image/gif"
	case ".jpg", ".jpeg":
		return "image/jpeg"
	case ".png":
		return "image/png"
	case ".svg":
		return "image/svg+xml"
	case ".txt":
		return "text/plain"
	case ".htm", ".html":
		return "text/html"
	case ".pdf":
		return "application/pdf"
	case ".xml":
		return "application/xml"
	}
	return "application/octet-stream"
}

func sortedKeys(m map[string]string) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// Body is a form ready to send: its length is known before it is read, as
// libcurl knows it and sends Content-Length.
type Body struct {
	io.Reader
	// Length is the number of bytes Reader gives.
	Length int64
	files  []*os.File
}

// Close closes the files the body reads.
func (b *Body) Close() error {
	var first error
	for _, f := range b.files {
		if err := f.Close(); err != nil && first == nil {
			first = err
		}
	}
	b.files = nil
	return first
}

// Open checks the form's field names, opens its files and returns its body
// with boundary. The caller closes the body. A file that cannot be opened is
// an error before anything is sent, as libcurl's "Failed to open/read local
// data from file/application".
func (f Form) Open(boundary string) (*Body, error) {
	for name := range f.Fields {
		if err := CheckFieldName(name); err != nil {
			return nil, err
		}
	}
	for name := range f.Files {
		if err := CheckFieldName(name); err != nil {
			return nil, err
		}
	}
	b := &Body{}
	var parts []io.Reader
	add := func(s string) {
		parts = append(parts, strings.NewReader(s))
		b.Length += int64(len(s))
	}
	for _, name := range sortedKeys(f.Fields) {
		add("--" + boundary + "\r\nContent-Disposition: form-data; name=\"" + escapeQuoted(name) + "\"\r\n\r\n" + f.Fields[name] + "\r\n")
	}
	for _, name := range sortedKeys(f.Files) {
		path := f.Files[name]
		file, err := os.Open(path)
		if err != nil {
			b.Close()
			return nil, &FileError{Path: path, Err: err}
		}
		b.files = append(b.files, file)
		st, err := file.Stat()
		if err != nil {
			b.Close()
			return nil, &FileError{Path: path, Err: err}
		}
		if !st.Mode().IsRegular() {
			b.Close()
			return nil, &FileError{Path: path, Err: fmt.Errorf("not a regular file")}
		}
		base := filepath.Base(path)
		add("--" + boundary + "\r\nContent-Disposition: form-data; name=\"" + escapeQuoted(name) + "\"; filename=\"" + escapeQuoted(base) + "\"\r\nContent-Type: " + fileContentType(base) + "\r\n\r\n")
		parts = append(parts, io.LimitReader(file, st.Size()))
		b.Length += st.Size()
		add("\r\n")
	}
	add("--" + boundary + "--\r\n")
	b.Reader = io.MultiReader(parts...)
	return b, nil
}

// FileError is a file of the form that could not be read.
type FileError struct {
	Path string
	Err  error
}

func (e *FileError) Error() string { return fmt.Sprintf("reading %s: %v", e.Path, e.Err) }
func (e *FileError) Unwrap() error { return e.Err }
