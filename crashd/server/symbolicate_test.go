package server

import (
	"bytes"
	"io"
	"mime/multipart"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gobreakpad/gobreakpad/crashd/auth"
)

// TestSymbolicateAPI: a module's symbols uploaded to the symbol server are
// what /symbolicate/v5 answers from; the API needs a token with
// view_crashes (a CI token that only uploads is refused) unless
// public_symbolication is set; preflights are answered for browser tools.
func TestSymbolicateAPI(t *testing.T) {
	ciSecret, ci, err := auth.NewToken("ci", auth.ScopeUpload)
	if err != nil {
		t.Fatal(err)
	}
	viewSecret, viewer, err := auth.NewToken("viewer", auth.ScopeViewCrashes)
	if err != nil {
		t.Fatal(err)
	}
	for _, public := range []bool{false, true} {
		cfg := testConfig(t, nil)
		cfg.SymbolServer.Tokens = []auth.Token{ci, viewer}
		cfg.PublicSymbolication = public
		ts := startServer(t, cfg)

		sym := filepath.Join("..", "..", "testdata", "walk", "symbols", "demo", "6F6D6564622D69756C642D69640000000", "demo.sym")
		data, err := os.ReadFile(sym)
		if err != nil {
			t.Fatal(err)
		}
		var body bytes.Buffer
		mw := multipart.NewWriter(&body)
		fw, _ := mw.CreateFormFile("symbol_file", "demo.sym")
		fw.Write(data)
		mw.Close()
		req, _ := http.NewRequest(http.MethodPost, ts.URL+"/symbols/upload", &body)
		req.Header.Set("Content-Type", mw.FormDataContentType())
		req.Header.Set("Auth-Token", ciSecret)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != 200 {
			t.Fatalf("upload: %s", resp.Status)
		}

		const job = `{"jobs": [{"memoryMap": [["demo", "6F6D6564622D69756C642D69640000000"], ["nosuch", "AB"]], "stacks": [[[0, 4368], [1, 16]]]}]}`
		want := `{"results":[{"stacks":[[{"frame":0,"module":"demo","module_offset":"0x1110","function":"render","function_offset":"0x10","file":"/src/demo/demo.c","line":21,"inlines":[{"function":"draw_pixel","file":"/src/demo/canvas.h","line":9}]},{"frame":1,"module":"nosuch","module_offset":"0x10"}]],"found_modules":{"demo/6F6D6564622D69756C642D69640000000":true,"nosuch/AB":false}}]}`
		for _, c := range []struct {
			who, secret string
			code        int
		}{
			{"anonymous", "", 401},
			{"an upload-only token", ciSecret, 403},
			{"a view_crashes token", viewSecret, 200},
		} {
			req, _ := http.NewRequest(http.MethodPost, ts.URL+"/symbolicate/v5", strings.NewReader(job))
			req.Header.Set("Origin", "https://profiler.firefox.com")
			if c.secret != "" {
				req.Header.Set("Authorization", "Bearer "+c.secret)
			}
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			b, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			code := c.code
			if public {
				code = 200
			}
			if resp.StatusCode != code || code == 200 && resp.Header.Get("Access-Control-Allow-Origin") != "*" {
				t.Errorf("public %v, %s: %s %s", public, c.who, resp.Status, b)
			}
			if code == 200 && strings.TrimSpace(string(b)) != want {
				t.Errorf("public %v, %s:\n%s\nwant\n%s", public, c.who, b, want)
			}
		}
		req, _ = http.NewRequest(http.MethodOptions, ts.URL+"/symbolicate/v5", nil)
		req.Header.Set("Origin", "https://profiler.firefox.com")
		req.Header.Set("Access-Control-Request-Method", "POST")
		resp, err = http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != 200 || resp.Header.Get("Access-Control-Allow-Methods") != "POST" {
			t.Errorf("preflight: %s %v", resp.Status, resp.Header)
		}
		ts.stop()
	}
}
