package collector

import (
	"net/http"
	"slices"
	"strings"
	"testing"
)

// TestAntennaDifferences pins the deliberate differences from Antenna that
// docs/compat.md lists for the collector's parsing and throttling (each
// row names this test): a JSON extra with NaN is refused, ISO-8859-1 text is
// read and another charset dropped with a note, a boundary longer than
// RFC 2046's 70 characters is accepted, and a throttle condition sees a
// JSON true as "true" (Antenna: Python's "True").
func TestAntennaDifferences(t *testing.T) {
	e := newEnv(t, Config{Throttle: []Rule{
		{Name: "flag_true", When: []Condition{{Field: "Flag", Equals: ptr("true")}}, Result: ResultReject},
		{Name: "accept_everything", Result: ResultAccept},
	}}, nil)
	part := func(b, name, ct, value string) string {
		h := "--" + b + "\r\nContent-Disposition: form-data; name=\"" + name + "\"\r\n"
		if ct != "" {
			h += "Content-Type: " + ct + "\r\n"
		}
		return h + "\r\n" + value + "\r\n"
	}
	extra := func(b, json string) string {
		return "--" + b + "\r\nContent-Disposition: form-data; name=\"extra\"; filename=\"extra.json\"\r\nContent-Type: application/json\r\n\r\n" + json + "\r\n"
	}
	const b = "0123456789abcdef"
	long := strings.Repeat("b", 80)
	for _, c := range []struct {
		name, boundary, body string
		want                 string
		annotations          map[string]any
		notes                []string
	}{
		{"NaN in JSON", b, extra(b, `{"ProductName":"Firefox","x":NaN}`), "Discarded=malformed_invalid_json", nil, nil},
		{"latin-1 text", b, part(b, "ProductName", "text/plain; charset=iso-8859-1", "Caf\xe9"), "CrashID", map[string]any{"ProductName": "Café"}, nil},
		{"unknown charset", b, part(b, "ProductName", "text/plain", "Firefox") + part(b, "Comment", "text/plain; charset=koi8-r", "\xf0\xd2"), "CrashID",
			map[string]any{"ProductName": "Firefox"}, []string{"extract payload text part exception: invalid text or charset: koi8-r"}},
		{"80-character boundary", long, part(long, "ProductName", "", "Firefox"), "CrashID", map[string]any{"ProductName": "Firefox"}, nil},
		{"JSON true seen as true", b, extra(b, `{"ProductName":"Firefox","Flag":true}`), "Discarded=rule_flag_true", nil, nil},
	} {
		body := c.body + "--" + c.boundary + "--\r\n"
		status, got, _ := e.post(t, "/submit", []byte(body), http.Header{"Content-Type": {"multipart/form-data; boundary=" + c.boundary}}, false)
		if c.want != "CrashID" {
			if got != c.want {
				t.Errorf("%s: %d %q, want %q", c.name, status, got, c.want)
			}
			continue
		}
		if status != 200 || !strings.HasPrefix(got, "CrashID=bp-") {
			t.Errorf("%s: %d %q", c.name, status, got)
			continue
		}
		raw, _, _ := stored(t, e.store, answerID(t, got, "0"))
		annotationsAre(c.annotations)(t, raw, nil, nil)
		if !slices.Equal(raw.Metadata.CollectorNotes, c.notes) {
			t.Errorf("%s: notes %q, want %q", c.name, raw.Metadata.CollectorNotes, c.notes)
		}
	}
}
