package collector

import (
	"io"
	"net/http"
	"strings"
	"testing"
)

// TestNotFoundAsAntenna: Antenna's tests/test_app.py test_404 (a path it
// does not serve: 404, JSON), with the body and headers its Falcon sends,
// and Falcon's answers to /submit with another method than POST.
func TestNotFoundAsAntenna(t *testing.T) {
	e := newEnv(t, Config{}, nil)
	for _, c := range []struct {
		method, path string
		status       int
		body, allow  string
	}{
		{"GET", "/foo", 404, `{"title": "404 Not Found"}`, ""},
		{"POST", "/foo", 404, `{"title": "404 Not Found"}`, ""},
		{"GET", "/", 404, `{"title": "404 Not Found"}`, ""},
		{"POST", "/submit/", 404, `{"title": "404 Not Found"}`, ""},
		{"GET", "/api/1/minidump/", 404, `{"title": "404 Not Found"}`, ""}, // no Sentry project configured
		{"GET", "/submit", 405, `{"title": "405 Method Not Allowed"}`, "POST, OPTIONS"},
		{"PUT", "/submit", 405, `{"title": "405 Method Not Allowed"}`, "POST, OPTIONS"},
		{"OPTIONS", "/submit", 200, "", "POST"},
	} {
		req, err := http.NewRequest(c.method, e.srv.URL+c.path, strings.NewReader(""))
		if err != nil {
			t.Fatal(err)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != c.status || string(b) != c.body || resp.Header.Get("Allow") != c.allow {
			t.Errorf("%s %s: %d %q Allow %q, want %d %q Allow %q", c.method, c.path, resp.StatusCode, b, resp.Header.Get("Allow"), c.status, c.body, c.allow)
		}
		if c.body != "" && (!strings.HasPrefix(resp.Header.Get("Content-Type"), "application/json") || resp.Header.Get("Vary") != "Accept") {
			t.Errorf("%s %s: Content-Type %q Vary %q", c.method, c.path, resp.Header.Get("Content-Type"), resp.Header.Get("Vary"))
		}
	}
}
