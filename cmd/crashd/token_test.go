package main

import (
	"bytes"
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/gobreakpad/gobreakpad/crashd/auth"
	"github.com/gobreakpad/gobreakpad/internal/testkit/cmdtest"
)

// TestTokenCreate: without a data directory, the secret is printed once
// and the configuration entry holds only its SHA-256 and the scopes.
func TestTokenCreate(t *testing.T) {
	prog := cmdtest.Build(t, ".")
	r := cmdtest.Run(t, prog, "token", "create", "--name", "ci", "--scopes", "upload_symbols")
	lines := strings.Split(strings.TrimSpace(r.Stdout), "\n")
	if r.Code != 0 || len(lines) != 3 || !strings.HasPrefix(lines[0], "token: ") {
		t.Fatalf("token create: %d %q %q", r.Code, r.Stdout, r.Stderr)
	}
	secret := strings.TrimPrefix(lines[0], "token: ")
	var tok auth.Token
	if err := json.Unmarshal([]byte(lines[2]), &tok); err != nil || tok.SHA256 != auth.HashToken(secret) || tok.Name != "ci" ||
		len(tok.Scopes) != 1 || tok.Scopes[0] != auth.ScopeUpload || strings.Contains(lines[2], secret) {
		t.Errorf("entry %q for secret %q (%v)", lines[2], secret, err)
	}
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--name", "x", "--scopes", "root"}, `unknown scope "root"`},
		{[]string{"--scopes", "upload_symbols"}, "--name is required"},
		{[]string{"--name", "x", "--expires", "720h"}, "--expires: only for tokens kept in the index"},
	} {
		if r := cmdtest.Run(t, prog, append([]string{"token", "create"}, c.args...)...); r.Code != 2 || !strings.Contains(r.Stderr, c.want) {
			t.Errorf("%v: %d %q, want %q", c.args, r.Code, r.Stderr, c.want)
		}
	}
}

// secretOf is the secret of `token create`'s output.
func secretOf(t *testing.T, r cmdtest.Result) string {
	t.Helper()
	m := regexp.MustCompile(`(?m)^token: ([0-9a-f]{32})$`).FindStringSubmatch(r.Stdout)
	if r.Code != 0 || m == nil {
		t.Fatalf("token create: %d %q %q", r.Code, r.Stdout, r.Stderr)
	}
	return m[1]
}

// listed returns `token list`'s state of each token.
func listed(t *testing.T, prog, data string) map[string]string {
	t.Helper()
	r := cmdtest.Run(t, prog, "token", "list", "--data", data)
	if r.Code != 0 {
		t.Fatalf("token list: %d %q", r.Code, r.Stderr)
	}
	out := map[string]string{}
	for _, l := range strings.Split(strings.TrimSpace(r.Stdout), "\n")[1:] {
		f := strings.Fields(l)
		out[f[0]] = f[len(f)-1]
	}
	return out
}

// TestTokenStoppedDataDir: create, list and revoke in a data directory no
// server runs on; only the secret's hash is kept.
func TestTokenStoppedDataDir(t *testing.T) {
	prog := cmdtest.Build(t, ".")
	data := t.TempDir()
	secret := secretOf(t, cmdtest.Run(t, prog, "token", "create", "--data", data, "--name", "ci", "--scopes", "upload_symbols,triage", "--expires", "720h"))
	if r := cmdtest.Run(t, prog, "token", "create", "--data", data, "--name", "ci"); r.Code != 1 || !strings.Contains(r.Stderr, `token "ci" exists`) {
		t.Errorf("a name taken: %d %q", r.Code, r.Stderr)
	}
	if got := listed(t, prog, data); len(got) != 1 || got["ci"] != "active" {
		t.Errorf("list: %v", got)
	}
	if r := cmdtest.Run(t, prog, "token", "revoke", "--data", data, "ci"); r.Code != 0 || r.Stdout != "revoked ci\n" {
		t.Errorf("revoke: %d %q %q", r.Code, r.Stdout, r.Stderr)
	}
	if r := cmdtest.Run(t, prog, "token", "revoke", "--data", data, "nobody"); r.Code != 1 || !strings.Contains(r.Stderr, `no token "nobody"`) {
		t.Errorf("revoke unknown: %d %q", r.Code, r.Stderr)
	}
	if got := listed(t, prog, data); got["ci"] != "revoked" {
		t.Errorf("list after revoke: %v", got)
	}
	files, _ := filepath.Glob(filepath.Join(data, "index.sqlite*"))
	for _, f := range files {
		if b, _ := os.ReadFile(f); bytes.Contains(b, []byte(secret)) {
			t.Errorf("%s holds the secret", f)
		}
	}
}

// TestTokenRunningServer: the first run's token file, socket and login
// link; tokens created, listed and revoked through the running server's
// socket; the socket gone after shutdown.
func TestTokenRunningServer(t *testing.T) {
	prog := cmdtest.Build(t, ".")
	data := t.TempDir()
	c := startChild(t, "--data", data)
	var first struct {
		TokenFile string `json:"token_file"`
		Link      string `json:"login_link"`
	}
	for _, l := range strings.Split(c.logText(), "\n") {
		if strings.Contains(l, `"first run:`) {
			if err := json.Unmarshal([]byte(l), &first); err != nil {
				t.Fatal(err)
			}
		}
	}
	if first.TokenFile != filepath.Join(data, "admin-token") || !strings.HasPrefix(first.Link, c.url+"/login?code=") {
		t.Fatalf("first run: %+v\n%s", first, c.logText())
	}
	b, err := os.ReadFile(first.TokenFile)
	if err != nil || len(strings.TrimSpace(string(b))) != 32 || strings.Contains(c.logText(), strings.TrimSpace(string(b))) {
		t.Errorf("admin-token %q (%v), or the secret is in the log", b, err)
	}
	for _, f := range []string{first.TokenFile, filepath.Join(data, "crashd.sock")} {
		if fi, err := os.Stat(f); err != nil || fi.Mode().Perm() != 0o600 {
			t.Errorf("%s: %v %v", f, fi, err)
		}
	}
	for i, want := range []int{http.StatusSeeOther, http.StatusForbidden} {
		resp, err := noRedirect.Get(first.Link)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != want {
			t.Errorf("login link, use %d: %d", i+1, resp.StatusCode)
		}
	}

	secretOf(t, cmdtest.Run(t, prog, "token", "create", "--data", data, "--name", "ci", "--scopes", "upload_symbols"))
	if got := listed(t, prog, data); len(got) != 2 || got["admin"] != "active" || got["ci"] != "active" {
		t.Errorf("list through the socket: %v", got)
	}
	if r := cmdtest.Run(t, prog, "token", "revoke", "--data", data, "ci"); r.Code != 0 {
		t.Errorf("revoke through the socket: %d %q", r.Code, r.Stderr)
	}
	if got := listed(t, prog, data); got["ci"] != "revoked" {
		t.Errorf("list after revoke: %v", got)
	}
	if !strings.Contains(c.logText(), `"control: token revoked"`) {
		t.Errorf("the server did not revoke it:\n%s", c.logText())
	}
	if code := c.terminate(t); code != 0 {
		t.Errorf("exit status %d", code)
	}
	if _, err := os.Stat(filepath.Join(data, "crashd.sock")); !os.IsNotExist(err) {
		t.Errorf("socket after shutdown: %v", err)
	}
	if got := listed(t, prog, data); got["ci"] != "revoked" || got["admin"] != "active" {
		t.Errorf("list of the stopped server: %v", got)
	}
}

var noRedirect = &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
