package server

import (
	"io"
	"net/http"
	"testing"
)

// TestUnknownPathAsAntenna: the whole server (every role) answers a path it
// does not serve as Antenna does, 404 with Falcon's JSON error, while its
// own routes still answer (docs/compat.md, row A11).
func TestUnknownPathAsAntenna(t *testing.T) {
	ts := startServer(t, testConfig(t, nil))
	defer ts.stop()
	for _, c := range []struct {
		path, body string
		status     int
	}{
		{"/foo", `{"title": "404 Not Found"}`, 404},
		{"/submit/x", `{"title": "404 Not Found"}`, 404},
		{"/submit", `{"title": "405 Method Not Allowed"}`, 405},
		{"/__lbheartbeat__", "", 200},
	} {
		resp, err := http.Get(ts.URL + c.path)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != c.status || (c.body != "" && (string(b) != c.body || resp.Header.Get("Content-Type") != "application/json")) {
			t.Errorf("GET %s: %d %q (%s), want %d %q", c.path, resp.StatusCode, b, resp.Header.Get("Content-Type"), c.status, c.body)
		}
	}
}
