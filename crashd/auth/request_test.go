package auth

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"
)

func TestSafeNext(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"/", "/"}, {"/report/x?reprocess=queued", "/report/x?reprocess=queued"}, {"/search?q=a%20b", "/search?q=a%20b"},
		{"", "/"}, {"//evil.example", "/"}, {"/\t/evil.example", "/"}, {"/%09/evil.example", "/"}, {"/\\evil.example", "/"},
		{"/%5C%5Cevil.example", "/"}, {"/%2F/evil.example", "/"}, {"https://evil.example", "/"}, {"javascript:alert(1)", "/"},
		{"/\r\n", "/"}, {"/a\x00", "/"}, {"/a\x7f", "/"}, {"/ x", "/"}, {"/\u00a0/evil.example", "/"}, {"/\u2028", "/"},
		{"evil.example", "/"}, {"/" + strings.Repeat("a", 5000), "/"}, {"/%zz", "/"},
	} {
		if got := SafeNext(c.in); got != c.want {
			t.Errorf("SafeNext(%q) = %q, want %q", c.in, got, c.want)
		}
	}
}

func FuzzSafeNext(f *testing.F) {
	for _, s := range []string{"/", "//x", "/\t/x", "/%09/x", "/a?b=c", "/\\x"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		got := SafeNext(s)
		if got == "/" {
			return
		}
		// What is kept is a local path a browser cannot take off-site.
		if got != s || !strings.HasPrefix(got, "/") || strings.HasPrefix(got, "//") || strings.ContainsAny(got, "\\\t\r\n ") {
			t.Fatalf("SafeNext(%q) = %q", s, got)
		}
		req := httptest.NewRequest("GET", "http://crashd.example/", nil)
		u, err := req.URL.Parse(got)
		if err != nil || u.Host != "crashd.example" {
			t.Fatalf("SafeNext(%q) = %q resolves to %v (%v)", s, got, u, err)
		}
	})
}

func TestResolve(t *testing.T) {
	secret, tok, _ := NewToken("reader", ScopeViewPII)
	old, oldTok, _ := NewToken("old", ScopeAdmin)
	oldTok.Expires = time.Now().Add(-time.Minute)
	mem := NewMemory()
	runtime, rtTok, _ := NewToken("runtime", ScopeUpload)
	mem.PutToken(rtTok)
	a, err := NewAuthenticator([]Token{tok, oldTok}, mem)
	if err != nil {
		t.Fatal(err)
	}
	req := func(h, v string) *http.Request {
		r := httptest.NewRequest("GET", "/x?key="+runtime, nil)
		if h != "" {
			r.Header.Set(h, v)
		}
		return r
	}
	if p, err := a.Resolve(req("Authorization", "Bearer "+secret), ""); err != nil || p.Name != "reader" || !p.Can(ScopeViewCrashes) || p.Can(ScopeReprocess) {
		t.Errorf("bearer: %+v %v", p, err)
	}
	if p, err := a.Resolve(req("Auth-Token", runtime), ""); err != nil || p.Name != "runtime" || p.Can(ScopeViewCrashes) {
		t.Errorf("a Store's token: %+v %v", p, err)
	}
	if p, err := a.Resolve(req("", ""), ""); p != nil || err != nil {
		t.Errorf("anonymous: %+v %v", p, err)
	}
	if p, err := a.Resolve(req("", ""), "key"); err != nil || p.Name != "runtime" {
		t.Errorf("?key=: %+v %v", p, err)
	}
	for _, bad := range []string{"nope", old} {
		if _, err := a.Resolve(req("Auth-Token", bad), ""); err != ErrUnknownToken {
			t.Errorf("token %q: %v", bad, err)
		}
	}
	// Sessions: made by Login, resolved by their cookie, ended by Logout
	// and by the revocation of their token.
	cookie, s, err := a.Login(t.Context(), runtime)
	if err != nil || s.ID != HashToken(cookie) || s.CSRF == "" {
		t.Fatalf("login: %v %+v", err, s)
	}
	r := req("", "")
	r.AddCookie(&http.Cookie{Name: SessionCookie, Value: cookie})
	if p, err := a.Resolve(r, ""); err != nil || p.Session == nil || p.Name != "runtime" {
		t.Errorf("session: %+v %v", p, err)
	}
	mem.RevokeToken("runtime")
	if p, _ := a.Resolve(r, ""); p != nil {
		t.Errorf("a session of a revoked token: %+v", p)
	}
	if _, _, err := a.Login(t.Context(), "nope"); err != ErrUnknownToken {
		t.Errorf("login with an unknown token: %v", err)
	}
	if _, err := NewAuthenticator([]Token{{Name: "x", SHA256: "ab"}}, nil); err == nil {
		t.Error("a token with a bad hash was accepted")
	}
}

func TestTable(t *testing.T) {
	secret, tok, _ := NewToken("r", ScopeReprocess)
	a, _ := NewAuthenticator([]Token{tok}, nil)
	tab := NewTable(map[string]Access{"GET /open": Open("x"), "POST /act": Need(ScopeReprocess, "x"), "GET /read": {Scope: ScopeViewCrashes, Public: true, Page: true}}, a, false, nil)
	ok := func(w http.ResponseWriter, r *http.Request) {
		if FromContext(r.Context()).Can(ScopeReprocess) {
			w.WriteHeader(http.StatusAccepted)
		}
	}
	tab.HandleFunc("GET /open", ok)
	tab.HandleFunc("POST /act", ok)
	tab.HandleFunc("GET /undeclared", ok)
	if err := tab.Err(); err == nil || !strings.Contains(err.Error(), "GET /undeclared") {
		t.Errorf("Err: %v", err)
	}
	if u := tab.Unused(); len(u) != 1 || u[0] != "GET /read" {
		t.Errorf("Unused: %v", u)
	}
	for _, c := range []struct {
		method, path, token string
		hdr                 map[string]string
		want                int
	}{
		{"GET", "/open", "", nil, 200},
		{"GET", "/open", "nope", nil, 200},
		{"GET", "/undeclared", secret, nil, 404},
		{"POST", "/act", "", nil, 401},
		{"POST", "/act", "nope", nil, 401},
		{"POST", "/act", secret, nil, 202},
		{"POST", "/act", secret, map[string]string{"Sec-Fetch-Site": "cross-site"}, 403},
		{"POST", "/act", secret, map[string]string{"Origin": "https://evil.example"}, 403},
		{"POST", "/act", secret, map[string]string{"Sec-Fetch-Site": "same-origin"}, 202},
	} {
		r := httptest.NewRequest(c.method, "http://crashd.example"+c.path, nil)
		if c.token != "" {
			r.Header.Set("Authorization", "Bearer "+c.token)
		}
		for k, v := range c.hdr {
			r.Header.Set(k, v)
		}
		w := httptest.NewRecorder()
		tab.ServeHTTP(w, r)
		if w.Code != c.want {
			t.Errorf("%s %s token %q %v: %d, want %d (%s)", c.method, c.path, c.token, c.hdr, w.Code, c.want, w.Body)
		}
	}
}
