package server

import (
	"context"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gobreakpad/gobreakpad/crashd/auth"
	"github.com/gobreakpad/gobreakpad/crashd/control"
	"github.com/gobreakpad/gobreakpad/crashd/index"
)

// TestFirstRun: a server on an index without tokens makes the admin token
// once (its secret in DATA/admin-token, 0600) and a login code that signs
// in once; while it runs its tokens are managed through the control
// socket (0600, removed at shutdown), when stopped in its index directly.
func TestFirstRun(t *testing.T) {
	ctx := context.Background()
	cfg := testConfig(t, nil)
	cfg.Roles = []string{RoleWeb, RoleCollector}
	ts := startServer(t, cfg)
	f := ts.srv.FirstRun()
	if f == nil || f.TokenFile != filepath.Join(cfg.Data, AdminTokenFile) {
		t.Fatalf("first run: %+v", f)
	}
	fi, err := os.Stat(f.TokenFile)
	if err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("admin-token: %v %v", fi, err)
	}
	b, _ := os.ReadFile(f.TokenFile)
	secret := strings.TrimSpace(string(b))
	if tok, ok, err := ts.srv.Tokens().TokenByHash(ctx, auth.HashToken(secret)); !ok || err != nil || tok.Name != AdminTokenName || tok.Scopes[0] != auth.ScopeAdmin {
		t.Fatalf("admin token: %+v %v %v", tok, ok, err)
	}
	link := f.LoginLink(cfg.BaseURL(strings.TrimPrefix(ts.URL, "http://")))
	if !strings.HasPrefix(link, ts.URL+"/login?code=") || strings.Contains(link, secret) {
		t.Errorf("login link %q", link)
	}
	nr := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	for i, want := range []int{http.StatusSeeOther, http.StatusForbidden} {
		resp, err := nr.Get(link)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != want || (i == 0) != (len(resp.Cookies()) == 1) {
			t.Errorf("login link, use %d: %d %v", i+1, resp.StatusCode, resp.Cookies())
		}
	}

	sock := filepath.Join(cfg.Data, control.SocketName)
	if fi, err := os.Stat(sock); err != nil || fi.Mode()&os.ModeSocket == 0 || fi.Mode().Perm() != 0o600 {
		t.Fatalf("control socket: %v %v", fi, err)
	}
	tokens, release, err := OpenTokens(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := tokens.(*control.Client); !ok && !isPostgres(cfg.DB) {
		t.Errorf("a running server's tokens managed through %T", tokens)
	}
	ciSecret, ci, _ := auth.NewToken("ci", auth.ScopeUpload)
	if err := tokens.CreateToken(ctx, ci); err != nil {
		t.Fatal(err)
	}
	if _, ok, _ := ts.srv.Tokens().TokenByHash(ctx, auth.HashToken(ciSecret)); !ok {
		t.Error("token created through the socket unknown to the server")
	}
	if err := tokens.RevokeToken(ctx, "ci"); err != nil {
		t.Fatal(err)
	}
	if _, ok, _ := ts.srv.Tokens().TokenByHash(ctx, auth.HashToken(ciSecret)); ok && !isPostgres(cfg.DB) {
		t.Error("token revoked through the socket still works in the server")
	}
	release()
	ts.stop()
	if _, err := os.Stat(sock); !os.IsNotExist(err) {
		t.Errorf("control socket after shutdown: %v", err)
	}

	// Stopped: the index directly; a second start makes nothing.
	tokens, release, err = OpenTokens(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := tokens.(*index.SQL); !ok {
		t.Errorf("a stopped server's tokens managed through %T", tokens)
	}
	list, err := tokens.ListTokens(ctx)
	if err != nil || len(list) != 2 || list[0].Name != "admin" || list[1].Name != "ci" || list[1].Revoked.IsZero() {
		t.Errorf("tokens: %+v %v", list, err)
	}
	release()
	ts = startServer(t, cfg)
	defer ts.stop()
	if f := ts.srv.FirstRun(); f != nil {
		t.Errorf("first run again: %+v", f)
	}
	if b2, _ := os.ReadFile(filepath.Join(cfg.Data, AdminTokenFile)); string(b2) != string(b) {
		t.Error("admin-token rewritten")
	}
}

// TestFirstRunConfigTokens: tokens in the configuration file: no first
// run.
func TestFirstRunConfigTokens(t *testing.T) {
	cfg := testConfig(t, nil)
	cfg.Roles = []string{RoleWeb}
	_, tok, _ := auth.NewToken("ci", auth.ScopeUpload)
	cfg.SymbolServer.Tokens = []auth.Token{tok}
	ts := startServer(t, cfg)
	defer ts.stop()
	if f := ts.srv.FirstRun(); f != nil {
		t.Errorf("first run with configured tokens: %+v", f)
	}
	if _, err := os.Stat(filepath.Join(cfg.Data, AdminTokenFile)); !os.IsNotExist(err) {
		t.Errorf("admin-token: %v", err)
	}
}

func TestPublicURL(t *testing.T) {
	cfg := Default()
	if got := cfg.BaseURL("0.0.0.0:9000"); got != "http://127.0.0.1:9000" {
		t.Errorf("default: %s", got)
	}
	cfg.PublicURL = "https://crashes.example.com/"
	if got := cfg.BaseURL("0.0.0.0:9000"); got != "https://crashes.example.com" || cfg.Check() != nil {
		t.Errorf("public_url: %s %v", got, cfg.Check())
	}
	for _, bad := range []string{"crashes.example.com", "ftp://x", "https://", "https://x/?a=1", "javascript:alert(1)"} {
		cfg.PublicURL = bad
		if cfg.Check() == nil {
			t.Errorf("public_url %q accepted", bad)
		}
	}
}
