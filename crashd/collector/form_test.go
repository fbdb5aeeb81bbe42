package collector

import (
	"maps"
	"testing"
)

func TestParseHeader(t *testing.T) {
	for _, c := range []struct {
		in     string
		key    string
		params map[string]string
	}{
		{`form-data; name="upload_file_minidump"; filename="a.dmp"`, "form-data", map[string]string{"name": "upload_file_minidump", "filename": "a.dmp"}},
		{`multipart/form-data; boundary=----abc`, "multipart/form-data", map[string]string{"boundary": "----abc"}},
		{`form-data; NAME = "x;y" ; filename="q\"uote\\d"`, "form-data", map[string]string{"name": "x;y", "filename": `q"uote\d`}},
		{`text/plain;charset=utf-8;junk`, "text/plain", map[string]string{"charset": "utf-8"}},
		{``, "", map[string]string{}},
		{`form-data; name="unterminated;x`, "form-data", map[string]string{"name": `"unterminated;x`}},
	} {
		key, params := parseHeader(c.in)
		if key != c.key || !maps.Equal(params, c.params) {
			t.Errorf("parseHeader(%q) = %q %v, want %q %v", c.in, key, params, c.key, c.params)
		}
	}
}

func TestFormReader(t *testing.T) {
	type part struct{ name, filename, ct, data string }
	for _, c := range []struct {
		name, body string
		parts      []part
		err        bool
	}{
		{"preamble, padding after the boundary, no CRLF at the end",
			"preamble\r\n--b  \r\nContent-Disposition: form-data; name=\"a\"\r\n\r\n1\r\n--b--",
			[]part{{"a", "", "text/plain", "1"}}, false},
		{"attachment disposition and filename*",
			"--b\r\nContent-Disposition: attachment; name=\"f\"; filename*=UTF-8''%C3%A9.dmp\r\nContent-Type: application/x-dmp\r\n\r\nMDMP\r\n--b--\r\n",
			[]part{{"f", "é.dmp", "application/x-dmp", "MDMP"}}, false},
		{"header without a space after the colon is ignored",
			"--b\r\nContent-Disposition: form-data; name=\"a\"\r\nContent-Type:application/json\r\n\r\n{}\r\n--b--\r\n",
			[]part{{"a", "", "text/plain", "{}"}}, false},
		{"a part without headers", "--b\r\n\r\nx\r\n--b--\r\n", []part{{"", "", "text/plain", "x"}}, false},
		{"Content-Transfer-Encoding binary", "--b\r\nContent-Transfer-Encoding: binary\r\nContent-Disposition: form-data; name=\"a\"\r\n\r\n1\r\n--b--\r\n",
			[]part{{"a", "", "text/plain", "1"}}, false},
		{"Content-Transfer-Encoding base64", "--b\r\nContent-Transfer-Encoding: base64\r\nContent-Disposition: form-data; name=\"a\"\r\n\r\nMQ==\r\n--b--\r\n", nil, true},
		{"missing final boundary: the part, then the error", "--b\r\nContent-Disposition: form-data; name=\"a\"\r\n\r\n1\r\n",
			[]part{{"a", "", "text/plain", "1\r\n"}}, true},
		{"headers never end", "--b\r\nContent-Disposition: form-data; name=\"a\"\r\n", nil, true},
		{"no boundary at all", "junk", nil, true},
		{"empty form", "--b--\r\n", nil, false},
	} {
		fr := newFormReader([]byte(c.body), "b")
		var got []part
		var err error
		for {
			var p *formPart
			p, err = fr.next()
			if err != nil || p == nil {
				break
			}
			got = append(got, part{p.name, p.filename, p.contentType, string(p.data)})
		}
		if (err != nil) != c.err || len(got) != len(c.parts) {
			t.Errorf("%s: parts %q, error %v", c.name, got, err)
			continue
		}
		for i := range got {
			if got[i] != c.parts[i] {
				t.Errorf("%s: part %d %q, want %q", c.name, i, got[i], c.parts[i])
			}
		}
	}
}
