package collector

import (
	"bytes"
	"errors"
	"strings"
	"unicode/utf8"
)

// This file parses multipart bodies the way Antenna's web framework (Falcon's
// MultipartFormHandler) does, so that the same uploads are accepted and
// refused: the body is searched for "--BOUNDARY", then for each part a line
// (whatever follows the boundary up to CRLF is padding), the headers up to
// CRLFCRLF ("Name: value" lines; only Content-Type, Content-Disposition and
// Content-Transfer-Encoding kept; a transfer encoding other than "binary"
// refused), and the content up to "\r\n--BOUNDARY". "--" after a boundary
// ends the form (a CRLF after it is not required). Parts are slices of the
// body, not copies.

// errForm is a structural error of a multipart body (Antenna:
// invalid_payload_structure).
type errForm string

func (e errForm) Error() string { return "multipart: " + string(e) }

// maxPartHeaders is Falcon's max_body_part_headers_size.
const maxPartHeaders = 8192

// formPart is one part of a multipart body.
type formPart struct {
	// name is the Content-Disposition's name parameter; hasName is false
	// when there is none.
	name    string
	hasName bool
	// filename is the Content-Disposition's filename (or RFC 5987 filename*),
	// "" when absent.
	filename string
	// contentType is the Content-Type header, "text/plain" when absent (RFC 7578).
	contentType string
	// data is the part's content.
	data []byte
}

// formReader reads the parts of a multipart body held in memory.
type formReader struct {
	body     []byte
	pos      int
	delim    []byte
	prologue bool
	done     bool
}

func newFormReader(body []byte, boundary string) *formReader {
	return &formReader{body: body, delim: []byte("--" + boundary), prologue: true}
}

// next returns the next part, or (nil, nil) at the end of the form, or a
// structural error. Like Falcon, a part whose closing boundary is missing
// is returned with the rest of the body, and the error comes on the next call.
func (r *formReader) next() (*formPart, error) {
	if r.done {
		return nil, nil
	}
	rest := r.body[r.pos:]
	i := bytes.Index(rest, r.delim)
	if i < 0 {
		r.done = true
		return nil, errForm("unexpected form structure")
	}
	r.pos += i + len(r.delim)
	if r.prologue {
		r.delim = append([]byte("\r\n"), r.delim...)
		r.prologue = false
	}
	rest = r.body[r.pos:]
	if bytes.HasPrefix(rest, []byte("--")) {
		r.done = true
		return nil, nil
	}
	j := bytes.Index(rest, []byte("\r\n"))
	if j < 0 {
		r.done = true
		return nil, errForm("unexpected form structure")
	}
	r.pos += j + 2
	rest = r.body[r.pos:]
	var block []byte
	if bytes.HasPrefix(rest, []byte("\r\n")) {
		r.pos += 2 // a part without headers
	} else {
		k := bytes.Index(rest, []byte("\r\n\r\n"))
		if k < 0 || k > maxPartHeaders {
			r.done = true
			return nil, errForm("incomplete body part headers")
		}
		block = rest[:k]
		r.pos += k + 4
	}
	p := &formPart{contentType: "text/plain"}
	var disposition string
	for line := range bytes.SplitSeq(block, []byte("\r\n")) {
		name, value, ok := bytes.Cut(line, []byte(": "))
		if !ok {
			continue
		}
		switch strings.ToLower(string(name)) {
		case "content-transfer-encoding":
			if string(value) != "binary" {
				r.done = true
				return nil, errForm("the deprecated Content-Transfer-Encoding header field is unsupported")
			}
		case "content-type":
			p.contentType = validText(value)
		case "content-disposition":
			disposition = validText(value)
		}
	}
	_, params := parseHeader(disposition)
	p.name, p.hasName = params["name"]
	p.filename = params["filename"]
	if fs, ok := params["filename*"]; ok {
		if f, ok := rfc5987(fs); ok {
			p.filename = f
		}
	}
	rest = r.body[r.pos:]
	if m := bytes.Index(rest, r.delim); m >= 0 {
		p.data = rest[:m:m]
		r.pos += m
	} else {
		p.data = rest[:len(rest):len(rest)]
		r.pos = len(r.body)
	}
	return p, nil
}

// validText returns b as a string with invalid UTF-8 replaced (header
// values end up in annotations and notes, which are JSON text).
func validText(b []byte) string {
	if utf8.Valid(b) {
		return string(b)
	}
	return strings.ToValidUTF8(string(b), "\uFFFD")
}

// parseHeader splits a header value into its first element and its
// parameters as Python's cgi.parse_header (which Falcon's parse_header
// follows): elements split at ';' outside quotes, parameter names lower-cased
// and trimmed, values trimmed and unquoted (\\ and \" unescaped).
func parseHeader(line string) (string, map[string]string) {
	parts := splitParams(";" + line)
	key := ""
	if len(parts) > 0 {
		key = parts[0]
	}
	params := map[string]string{}
	for _, p := range parts[1:] {
		i := strings.IndexByte(p, '=')
		if i < 0 {
			continue
		}
		name := strings.ToLower(strings.TrimSpace(p[:i]))
		value := strings.TrimSpace(p[i+1:])
		if len(value) >= 2 && value[0] == '"' && value[len(value)-1] == '"' {
			value = value[1 : len(value)-1]
			value = strings.ReplaceAll(value, `\\`, `\`)
			value = strings.ReplaceAll(value, `\"`, `"`)
		}
		params[name] = value
	}
	return key, params
}

// splitParams is cgi's _parseparam: s starts with ';'; each element runs to
// the next ';' that is not inside an unbalanced quote.
func splitParams(s string) []string {
	var out []string
	for strings.HasPrefix(s, ";") {
		s = s[1:]
		end := strings.IndexByte(s, ';')
		for end > 0 && (strings.Count(s[:end], `"`)-strings.Count(s[:end], `\"`))%2 != 0 {
			next := strings.IndexByte(s[end+1:], ';')
			if next < 0 {
				end = -1
				break
			}
			end += 1 + next
		}
		if end < 0 {
			end = len(s)
		}
		out = append(out, strings.TrimSpace(s[:end]))
		s = s[end:]
	}
	return out
}

// rfc5987 decodes a filename* value CHARSET'LANG'PERCENT-ENCODED (UTF-8,
// US-ASCII and ISO-8859-1 charsets).
func rfc5987(v string) (string, bool) {
	charset, rest, ok := strings.Cut(v, "'")
	if !ok || charset == "" {
		return "", false
	}
	_, enc, ok := strings.Cut(rest, "'")
	if !ok || enc == "" {
		return "", false
	}
	var b []byte
	for i := 0; i < len(enc); i++ {
		c := enc[i]
		if c == '%' && i+2 < len(enc) && isHex(enc[i+1]) && isHex(enc[i+2]) {
			b = append(b, unhex(enc[i+1])<<4|unhex(enc[i+2]))
			i += 2
			continue
		}
		b = append(b, c)
	}
	s, err := decodeCharset(b, charset)
	return s, err == nil
}

func isHex(c byte) bool {
	return c >= '0' && c <= '9' || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F'
}

func unhex(c byte) byte {
	switch {
	case c >= 'a':
		return c - 'a' + 10
	case c >= 'A':
		return c - 'A' + 10
	}
	return c - '0'
}

var errCharset = errors.New("invalid text or charset")

// decodeCharset decodes text in charset into a Go string. UTF-8 (checked),
// US-ASCII and ISO-8859-1 are known; anything else is an error, as a
// charset Python cannot decode is in Antenna.
func decodeCharset(b []byte, charset string) (string, error) {
	switch strings.ReplaceAll(strings.ToLower(strings.TrimSpace(charset)), "_", "-") {
	case "utf-8", "utf8", "u8", "utf":
		if !utf8.Valid(b) {
			return "", errCharset
		}
		return string(b), nil
	case "ascii", "us-ascii", "646":
		for _, c := range b {
			if c >= 0x80 {
				return "", errCharset
			}
		}
		return string(b), nil
	case "latin-1", "latin1", "iso-8859-1", "iso8859-1", "l1", "8859", "cp819", "latin":
		r := make([]rune, len(b))
		for i, c := range b {
			r[i] = rune(c)
		}
		return string(r), nil
	}
	return "", errCharset
}
