package web

import (
	"context"
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/http/httptest"
	"net/url"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/gobreakpad/gobreakpad/crashd/auth"
	"github.com/gobreakpad/gobreakpad/crashd/blob"
	"github.com/gobreakpad/gobreakpad/crashd/index"
)

// tokensFixture is the pages over an index that keeps tokens, with an
// admin token and a viewer token.
func tokensFixture(t *testing.T) (*httptest.Server, *index.SQL) {
	t.Helper()
	ctx := context.Background()
	ix, err := index.OpenSQLite(ctx, filepath.Join(t.TempDir(), "index.sqlite"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ix.Close() })
	for name, scope := range map[string]string{"admin": auth.ScopeAdmin, "viewer": auth.ScopeViewCrashes} {
		_, tok, _ := auth.NewToken(name, scope)
		if err := ix.CreateToken(ctx, tok); err != nil {
			t.Fatal(err)
		}
	}
	authn, err := auth.NewAuthenticator(nil, ix)
	if err != nil {
		t.Fatal(err)
	}
	w, err := New(Config{Auth: authn, Manager: ix}, blob.NewMem(), nil, ix, nil)
	if err != nil {
		t.Fatal(err)
	}
	mux := auth.NewTable(auth.Crashd(auth.RouteOptions{}), authn, false, nil)
	w.Register(mux)
	if err := mux.Err(); err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	return srv, ix
}

// browser is a client with a cookie jar that does not follow redirects.
func browser() *http.Client {
	jar, _ := cookiejar.New(nil)
	return &http.Client{Jar: jar, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
}

func send(t *testing.T, c *http.Client, method, u string, form url.Values) (*http.Response, string) {
	t.Helper()
	var body io.Reader
	if form != nil {
		body = strings.NewReader(form.Encode())
	}
	req, _ := http.NewRequest(method, u, body)
	if form != nil {
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	}
	resp, err := c.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp, string(b)
}

var csrfField = regexp.MustCompile(`name="csrf" value="([0-9a-f]+)"`)

// login signs c in with a one-time code of the token named name.
func login(t *testing.T, srv *httptest.Server, ix *index.SQL, c *http.Client, name string) {
	t.Helper()
	code, err := ix.NewLoginCode(context.Background(), name, 0)
	if err != nil {
		t.Fatal(err)
	}
	resp, body := send(t, c, "GET", srv.URL+"/login?code="+code+"&next=/tokens", nil)
	if resp.StatusCode != http.StatusSeeOther || resp.Header.Get("Location") != "/tokens" || len(resp.Cookies()) != 1 {
		t.Fatalf("login code: %d %q %v %.300s", resp.StatusCode, resp.Header.Get("Location"), resp.Cookies(), body)
	}
	// Used up: a second browser gets nothing.
	resp, _ = send(t, browser(), "GET", srv.URL+"/login?code="+code, nil)
	if resp.StatusCode != http.StatusForbidden || len(resp.Cookies()) != 0 {
		t.Errorf("login code used twice: %d %v", resp.StatusCode, resp.Cookies())
	}
}

// TestLoginCode: a one-time code signs in once; unknown codes do not.
func TestLoginCode(t *testing.T) {
	srv, ix := tokensFixture(t)
	c := browser()
	login(t, srv, ix, c, "admin")
	if resp, body := send(t, c, "GET", srv.URL+"/tokens", nil); resp.StatusCode != http.StatusOK || !strings.Contains(body, `href="/tokens"`) {
		t.Errorf("tokens page after the login link: %d %.300s", resp.StatusCode, body)
	}
	if resp, _ := send(t, browser(), "GET", srv.URL+"/login?code=0123", nil); resp.StatusCode != http.StatusForbidden {
		t.Errorf("unknown code: %d", resp.StatusCode)
	}
	if resp, _ := send(t, browser(), "GET", srv.URL+"/login?code=x&next=//evil.example", nil); resp.Header.Get("Location") != "" {
		t.Errorf("redirect for a bad code: %q", resp.Header.Get("Location"))
	}
}

// TestTokensPage: an admin lists, creates (the secret shown once, the
// answer not cached) and revokes tokens, with the CSRF field; others may
// not.
func TestTokensPage(t *testing.T) {
	srv, ix := tokensFixture(t)
	ctx := context.Background()
	if resp, _ := send(t, browser(), "GET", srv.URL+"/tokens", nil); resp.StatusCode != http.StatusSeeOther {
		t.Errorf("tokens page without a login: %d", resp.StatusCode)
	}
	viewer := browser()
	login(t, srv, ix, viewer, "viewer")
	if resp, _ := send(t, viewer, "GET", srv.URL+"/tokens", nil); resp.StatusCode != http.StatusForbidden {
		t.Errorf("tokens page for view_crashes: %d", resp.StatusCode)
	}
	c := browser()
	login(t, srv, ix, c, "admin")
	resp, page := send(t, c, "GET", srv.URL+"/tokens", nil)
	m := csrfField.FindStringSubmatch(page)
	if resp.StatusCode != http.StatusOK || m == nil || !strings.Contains(page, ">viewer</th>") || strings.Contains(page, "<script") {
		t.Fatalf("tokens page: %d %.500s", resp.StatusCode, page)
	}
	csrf := m[1]
	if _, vpage := send(t, viewer, "GET", srv.URL+"/tokens", nil); csrfField.MatchString(vpage) && strings.Contains(vpage, csrf) {
		t.Error("the viewer sees the admin's csrf")
	}

	form := url.Values{"name": {"ci"}, "scope": {auth.ScopeUpload}, "expires": {"720h"}}
	if resp, _ := send(t, c, "POST", srv.URL+"/tokens", form); resp.StatusCode != http.StatusForbidden {
		t.Errorf("create without csrf: %d", resp.StatusCode)
	}
	if resp, _ := send(t, viewer, "POST", srv.URL+"/tokens", form); resp.StatusCode == http.StatusOK {
		t.Errorf("create by a viewer: %d", resp.StatusCode)
	}
	form.Set("csrf", csrf)
	resp, page = send(t, c, "POST", srv.URL+"/tokens", form)
	secret := regexp.MustCompile(`<output id="secret"><code>([0-9a-f]{32})</code>`).FindStringSubmatch(page)
	if resp.StatusCode != http.StatusOK || secret == nil || resp.Header.Get("Cache-Control") != "no-store" {
		t.Fatalf("create: %d %q %.800s", resp.StatusCode, resp.Header.Get("Cache-Control"), page)
	}
	tok, ok, err := ix.TokenByHash(ctx, auth.HashToken(secret[1]))
	if !ok || err != nil || tok.Name != "ci" || tok.Scopes[0] != auth.ScopeUpload || tok.Expires.IsZero() {
		t.Errorf("created token: %+v %v %v", tok, ok, err)
	}
	if _, again := send(t, c, "GET", srv.URL+"/tokens", nil); strings.Contains(again, secret[1]) {
		t.Error("the secret is shown again")
	}
	if resp, _ := send(t, c, "POST", srv.URL+"/tokens", form); resp.StatusCode != http.StatusConflict {
		t.Errorf("a name taken: %d", resp.StatusCode)
	}
	for _, bad := range []url.Values{{"name": {"x"}, "scope": {"root"}}, {"name": {"x"}}, {"scope": {auth.ScopeUpload}}, {"name": {"x"}, "scope": {auth.ScopeUpload}, "expires": {"yesterday"}}} {
		bad.Set("csrf", csrf)
		if resp, _ := send(t, c, "POST", srv.URL+"/tokens", bad); resp.StatusCode != http.StatusBadRequest {
			t.Errorf("bad form %v: %d", bad, resp.StatusCode)
		}
	}

	if resp, _ := send(t, c, "POST", srv.URL+"/tokens/revoke", url.Values{"name": {"ci"}}); resp.StatusCode != http.StatusForbidden {
		t.Errorf("revoke without csrf: %d", resp.StatusCode)
	}
	resp, page = send(t, c, "POST", srv.URL+"/tokens/revoke", url.Values{"name": {"ci"}, "csrf": {csrf}})
	if resp.StatusCode != http.StatusOK || !strings.Contains(page, "revoked") {
		t.Errorf("revoke: %d %.300s", resp.StatusCode, page)
	}
	if _, ok, _ := ix.TokenByHash(ctx, auth.HashToken(secret[1])); ok {
		t.Error("revoked token still works")
	}
	if resp, _ := send(t, c, "POST", srv.URL+"/tokens/revoke", url.Values{"name": {"nobody"}, "csrf": {csrf}}); resp.StatusCode != http.StatusNotFound {
		t.Errorf("revoke unknown: %d", resp.StatusCode)
	}
}
