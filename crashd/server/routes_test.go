package server

import (
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"net/http"
	"net/url"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/gobreakpad/gobreakpad/crashd/auth"
	"github.com/gobreakpad/gobreakpad/crashd/collector"
	"github.com/gobreakpad/gobreakpad/crashd/crash"
	"github.com/gobreakpad/gobreakpad/crashd/queue"
	"github.com/gobreakpad/gobreakpad/internal/testkit/corpus"
)

// routesServer is a crashd with every role but the processor (crashes
// stay queued: the reprocess floods count what waits), the symbol server
// and a Sentry project (every route of the table registered), a token of
// each single scope and one crash.
type routesServer struct {
	*testServer
	tokens map[string]string // scope → secret of a token with that scope alone
	id     crash.ID
}

func startRoutesServer(t *testing.T) *routesServer {
	t.Helper()
	dump := filepath.Join(corpus.Dir(t), "breakpad/processor/linux_null_read_av.dmp")
	cfg := testConfig(t, nil)
	cfg.Roles = []string{RoleCollector, RoleWeb, RoleSymbols}
	cfg.Collector.Sentry = []collector.SentryProject{{ID: "42", Keys: []string{"routeskey"}}}
	rs := &routesServer{tokens: map[string]string{}}
	for _, sc := range auth.Scopes {
		secret, tok, err := auth.NewToken("only-"+sc, sc)
		if err != nil {
			t.Fatal(err)
		}
		rs.tokens[sc] = secret
		cfg.SymbolServer.Tokens = append(cfg.SymbolServer.Tokens, tok)
	}
	rs.testServer = startServer(t, cfg)
	t.Cleanup(rs.stop)
	id, err := upload(t, rs.URL, dump, map[string]string{"ProductName": "Routes", "Version": "1"})
	if err != nil {
		t.Fatal(err)
	}
	rs.id = id
	return rs
}

// concrete makes a request path of a route's pattern.
func (rs *routesServer) concrete(pattern string) (method, path string) {
	method, path, ok := strings.Cut(pattern, " ")
	if !ok {
		method, path = http.MethodPost, pattern
	}
	r := strings.NewReplacer("{file}", "threads", "{project}", "42", "{$}", "")
	path = r.Replace(path)
	if strings.HasPrefix(path, "/api/syminfo/") {
		path = strings.Replace(path, "{id}", "ABCDEF", 1)
	}
	path = strings.ReplaceAll(path, "{id}", string(rs.id))
	switch path {
	case "/static/":
		path += "style.css"
	case "/symbols/":
		path += "threads/144AFBA2676A2231983B3DCC7FE8C9FE0/threads.sym"
	case "/v1/":
		path += "uploads:create"
	}
	return method, path
}

// refusal is what the route table answered, or "" when the request went
// through to the handler.
func refusal(code int, location, body string) string {
	switch {
	case code == http.StatusSeeOther && strings.HasPrefix(location, "/login?next="):
		return "login"
	case code == http.StatusUnauthorized && strings.Contains(body, auth.ErrUnauthorized.Error()):
		return "401"
	case code == http.StatusForbidden && strings.Contains(body, auth.ErrForbidden.Error()):
		return "403"
	case code == http.StatusForbidden && strings.Contains(body, "cross-origin request refused"):
		return "cross-origin"
	}
	return ""
}

// expected is what the table must answer a principal with scopes (nil:
// anonymous) on a route.
func expected(a auth.Access, scopes []string, public bool) string {
	var p *auth.Principal
	if scopes != nil {
		p = &auth.Principal{Scopes: auth.Expand(scopes)}
	}
	switch err := auth.Allow(a, p, public); {
	case err == nil:
		return ""
	case p == nil && a.Page:
		return "login"
	case p == nil:
		return "401"
	}
	return "403"
}

var noFollow = &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}

func send(t *testing.T, method, u string, hdr map[string]string, cookie *http.Cookie, body string) (int, string, string) {
	t.Helper()
	req, err := http.NewRequest(method, u, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	for k, v := range hdr {
		req.Header.Set(k, v)
	}
	if cookie != nil {
		req.AddCookie(cookie)
	}
	resp, err := noFollow.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	return resp.StatusCode, resp.Header.Get("Location"), string(b)
}

// login makes a session of secret through the login form; it returns the
// cookie and the csrf value the report page carries.
func (rs *routesServer) login(t *testing.T, secret string) (*http.Cookie, string) {
	t.Helper()
	req, _ := http.NewRequest("POST", rs.URL+"/login", strings.NewReader(url.Values{"token": {secret}, "next": {"/"}}.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("Sec-Fetch-Site", "same-origin")
	resp, err := noFollow.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusSeeOther || len(resp.Cookies()) != 1 {
		t.Fatalf("login: %d %v", resp.StatusCode, resp.Cookies())
	}
	c := resp.Cookies()[0]
	_, _, page := send(t, "GET", rs.URL+"/report/"+string(rs.id), nil, c, "")
	m := regexp.MustCompile(`name="csrf" value="([0-9a-f]+)"`).FindStringSubmatch(page)
	if m == nil {
		return c, ""
	}
	return c, m[1]
}

// TestRouteTable: every route the server registers has its entry in
// auth.Crashd and every entry a route; each route answered anonymous,
// with a token of each single scope (in both headers), and with a cookie
// session, as its access says.
func TestRouteTable(t *testing.T) {
	rs := startRoutesServer(t)
	routes := rs.srv.Routes()
	table := auth.Crashd(rs.srv.cfg.RouteOptions())
	var got []string
	for _, r := range routes {
		got = append(got, r.Pattern)
		if r.Access != table[r.Pattern] {
			t.Errorf("%s: served with %+v, the table says %+v", r.Pattern, r.Access, table[r.Pattern])
		}
	}
	slices.Sort(got)
	if want := slices.Sorted(maps.Keys(table)); !slices.Equal(got, want) {
		t.Errorf("routes served %v\nthe table %v", got, want)
	}
	// Least privilege: what anonymous requests reach, and the scopes of
	// the routes that act or give dumps, named here once more.
	var open []string
	for _, r := range routes {
		if r.Access.Scope == "" {
			open = append(open, r.Pattern)
		}
	}
	slices.Sort(open)
	wantOpen := []string{"/", "/submit", "GET /__heartbeat__", "GET /__lbheartbeat__", "GET /__version__", "GET /api/syminfo/{file}/{id}", "GET /login", "GET /static/",
		"GET /symbols/", "HEAD /symbols/", "OPTIONS /symbolicate/v4", "OPTIONS /symbolicate/v5", "POST /api/{project}/minidump", "POST /api/{project}/minidump/{$}", "POST /login", "POST /logout", "POST /submit", "PUT /v1/uploads/{key}"}
	if !slices.Equal(open, wantOpen) {
		t.Errorf("routes open to anyone: %v\nwant %v", open, wantOpen)
	}
	for p, sc := range map[string]string{"POST /api/crashes/{id}/reprocess": auth.ScopeReprocess, "POST /api/report/{id}/reprocess": auth.ScopeReprocess,
		"POST /report/{id}/reprocess": auth.ScopeReprocess, "GET /report/{id}/dump": auth.ScopeViewRawDump, "GET /metrics": auth.ScopeAdmin,
		"GET /api/crashes/{id}": auth.ScopeViewCrashes, "GET /report/{id}/processed.json": auth.ScopeViewCrashes, "POST /upload/": auth.ScopeUpload,
		"POST /api/signature/triage": auth.ScopeTriage, "POST /signature/triage": auth.ScopeTriage} {
		if table[p].Scope != sc {
			t.Errorf("%s needs %q, want %q", p, table[p].Scope, sc)
		}
	}
	viewer, _ := rs.login(t, rs.tokens[auth.ScopeViewCrashes])
	admin, _ := rs.login(t, rs.tokens[auth.ScopeAdmin])
	for _, r := range routes {
		method, path := rs.concrete(r.Pattern)
		check := func(who string, scopes []string, hdr map[string]string, cookie *http.Cookie) {
			t.Helper()
			code, loc, body := send(t, method, rs.URL+path, hdr, cookie, "")
			want := expected(r.Access, scopes, false)
			if got := refusal(code, loc, body); got != want {
				t.Errorf("%s %s as %s: %d %q (%.200s): the table's answer %q, want %q", method, path, who, code, loc, body, got, want)
			}
		}
		check("anonymous", nil, nil, nil)
		for _, sc := range auth.Scopes {
			check("token "+sc, []string{sc}, map[string]string{"Authorization": "Bearer " + rs.tokens[sc]}, nil)
			check("Auth-Token "+sc, []string{sc}, map[string]string{"Auth-Token": rs.tokens[sc]}, nil)
		}
		check("session view_crashes", []string{auth.ScopeViewCrashes}, nil, viewer)
		check("session admin", []string{auth.ScopeAdmin}, nil, admin)
		if r.Access.Scope != "" {
			// A token nobody knows is refused, never taken for anonymous.
			code, _, _ := send(t, method, rs.URL+path, map[string]string{"Authorization": "Bearer nope"}, nil, "")
			if code != http.StatusUnauthorized {
				t.Errorf("%s %s with an unknown token: %d", method, path, code)
			}
		}
	}
	// The walk is one policy: view_crashes reads it from the API and from
	// processed.json alike; upload_symbols alone reads nothing.
	for _, p := range []string{"/api/crashes/" + string(rs.id), "/api/report/" + string(rs.id), "/api/crashes"} {
		if code, _, body := send(t, "GET", rs.URL+p, map[string]string{"Authorization": "Bearer " + rs.tokens[auth.ScopeViewCrashes]}, nil, ""); code != 200 {
			t.Errorf("%s with view_crashes: %d %.200s", p, code, body)
		}
		if code, _, _ := send(t, "GET", rs.URL+p, map[string]string{"Auth-Token": rs.tokens[auth.ScopeUpload]}, nil, ""); code != 403 {
			t.Errorf("%s with upload_symbols: %d", p, code)
		}
	}
}

// TestPublicPages: public_pages opens the view_crashes reads to anyone,
// nothing else.
func TestPublicPages(t *testing.T) {
	cfg := testConfig(t, nil)
	cfg.PublicPages = true
	cfg.Roles = []string{RoleCollector, RoleWeb}
	ts := startServer(t, cfg)
	defer ts.stop()
	id, err := upload(t, ts.URL, filepath.Join(corpus.Dir(t), "breakpad/processor/linux_null_read_av.dmp"), map[string]string{"ProductName": "Routes", "Version": "1"})
	if err != nil {
		t.Fatal(err)
	}
	rs := &routesServer{testServer: ts, id: id}
	for _, r := range ts.srv.Routes() {
		method, path := rs.concrete(r.Pattern)
		code, loc, body := send(t, method, ts.URL+path, nil, nil, "")
		want := expected(r.Access, nil, true)
		if got := refusal(code, loc, body); got != want {
			t.Errorf("public %s %s: %d (%.200s): %q, want %q", method, path, code, body, got, want)
		}
		if r.Access.Public != (want == "") && r.Access.Scope != "" {
			t.Errorf("public %s: opened %v", r.Pattern, want == "")
		}
	}
	if code, _, _ := send(t, "GET", ts.URL+"/report/"+string(id)+"/dump", nil, nil, ""); code != http.StatusUnauthorized {
		t.Errorf("a dump without a token on public pages: %d", code)
	}
	if code, _, _ := send(t, "POST", ts.URL+"/api/crashes/"+string(id)+"/reprocess", nil, nil, ""); code != http.StatusUnauthorized {
		t.Errorf("reprocess without a token on public pages: %d", code)
	}
}

// TestReprocessFlood: anonymous reprocess calls queue nothing; a flood
// of authorized ones queues the crash once while it waits, on both
// reprocess routes of the API and the page's form.
func TestReprocessFlood(t *testing.T) {
	rs := startRoutesServer(t)
	ctx := t.Context()
	depth := func() uint64 {
		d, err := rs.srv.Queue().Depth(ctx)
		if err != nil {
			t.Fatal(err)
		}
		return d.Waiting[queue.Reprocess]
	}
	flood := func(n int, hdr map[string]string, paths ...string) map[string]int {
		var mu sync.Mutex
		got := map[string]int{}
		var wg sync.WaitGroup
		jobs := make(chan string)
		for range 8 {
			wg.Go(func() {
				for p := range jobs {
					code, _, body := send(t, "POST", rs.URL+p, hdr, nil, "")
					var res struct {
						Status string `json:"status"`
					}
					json.Unmarshal([]byte(body), &res)
					mu.Lock()
					got[fmt.Sprintf("%d %s", code, res.Status)]++
					mu.Unlock()
				}
			})
		}
		for i := range n {
			jobs <- paths[i%len(paths)]
		}
		close(jobs)
		wg.Wait()
		return got
	}
	paths := []string{"/api/crashes/" + string(rs.id) + "/reprocess", "/api/report/" + string(rs.id) + "/reprocess"}
	const n = 1000
	if got := flood(n, nil, paths...); got["401 "] != n || depth() != 0 {
		t.Errorf("anonymous flood: %v, %d queued", got, depth())
	}
	if got := flood(n/4, map[string]string{"Authorization": "Bearer " + rs.tokens[auth.ScopeViewPII]}, paths...); got["403 "] != n/4 || depth() != 0 {
		t.Errorf("flood without the reprocess scope: %v, %d queued", got, depth())
	}
	got := flood(n, map[string]string{"Authorization": "Bearer " + rs.tokens[auth.ScopeReprocess]}, paths...)
	if got["202 queued"] != 1 || got["202 already_queued"] != n-1 || depth() != 1 {
		t.Errorf("reprocess flood: %v, %d queued", got, depth())
	}
	// The page's form, with a session's csrf: already queued too.
	c, csrf := rs.login(t, rs.tokens[auth.ScopeReprocess])
	code, loc, _ := send(t, "POST", rs.URL+"/report/"+string(rs.id)+"/reprocess", map[string]string{"Sec-Fetch-Site": "same-origin"}, c, url.Values{"csrf": {csrf}}.Encode())
	if code != http.StatusSeeOther || !strings.HasSuffix(loc, "?reprocess=already_queued") || depth() != 1 {
		t.Errorf("the page's reprocess: %d %q, %d queued", code, loc, depth())
	}
}

// TestLoginRedirect: the login's next= stays on the site, whatever it
// holds (a tab, backslashes, two slashes, a scheme, control characters).
func TestLoginRedirect(t *testing.T) {
	rs := startRoutesServer(t)
	for _, next := range []string{"/\t/evil.example", "//evil.example", "/\\evil.example", "\\\\evil.example", "https://evil.example/",
		"javascript:alert(1)", "/%09/evil.example", "/%5Cevil.example", "/\r\nLocation: http://evil.example", " /x", "/ /evil.example", "/\x00x"} {
		body := url.Values{"token": {rs.tokens[auth.ScopeViewCrashes]}, "next": {next}}.Encode()
		code, loc, _ := send(t, "POST", rs.URL+"/login", nil, nil, body)
		if code != http.StatusSeeOther || loc != "/" {
			t.Errorf("login next=%q: %d to %q", next, code, loc)
		}
		_, _, page := send(t, "GET", rs.URL+"/login?next="+url.QueryEscape(next), nil, nil, "")
		if !strings.Contains(page, `name="next" value="/"`) {
			t.Errorf("login page next=%q keeps it", next)
		}
	}
	// The raw query of the issue: /login?next=/%09/evil.com.
	if _, _, page := send(t, "GET", rs.URL+"/login?next=/%09/evil.com", nil, nil, ""); !strings.Contains(page, `name="next" value="/"`) || strings.Contains(page, "evil.com") {
		t.Errorf("/login?next=/%%09/evil.com keeps it")
	}
	body := url.Values{"token": {rs.tokens[auth.ScopeViewCrashes]}, "next": {"/search?product=Routes"}}.Encode()
	if code, loc, _ := send(t, "POST", rs.URL+"/login", nil, nil, body); code != http.StatusSeeOther || loc != "/search?product=Routes" {
		t.Errorf("a local next: %d %q", code, loc)
	}
}

// TestCrossOrigin: state-changing requests from another origin are
// refused (Sec-Fetch-Site, or Origin against Host), the login form and
// a session's reprocess included, whatever the csrf field; the uploads
// of native clients are exempt by name.
func TestCrossOrigin(t *testing.T) {
	rs := startRoutesServer(t)
	c, csrf := rs.login(t, rs.tokens[auth.ScopeAdmin])
	form := url.Values{"csrf": {csrf}}.Encode()
	hostile := []map[string]string{
		{"Sec-Fetch-Site": "cross-site"},
		{"Sec-Fetch-Site": "same-site"},
		{"Origin": "https://evil.example"},
	}
	for _, p := range []string{"/report/" + string(rs.id) + "/reprocess", "/api/report/" + string(rs.id) + "/reprocess", "/api/crashes/" + string(rs.id) + "/reprocess", "/logout"} {
		for _, h := range hostile {
			if code, _, body := send(t, "POST", rs.URL+p, h, c, form); refusal(code, "", body) != "cross-origin" {
				t.Errorf("POST %s with %v: %d %.200s", p, h, code, body)
			}
		}
	}
	for _, h := range hostile {
		body := url.Values{"token": {rs.tokens[auth.ScopeAdmin]}}.Encode()
		if code, _, b := send(t, "POST", rs.URL+"/login", h, nil, body); refusal(code, "", b) != "cross-origin" {
			t.Errorf("login with %v: %d", h, code)
		}
	}
	if d, _ := rs.srv.Queue().Depth(t.Context()); d.Waiting[queue.Reprocess] != 0 {
		t.Errorf("cross-origin posts queued %d crashes", d.Waiting[queue.Reprocess])
	}
	// Same origin: the page's form works.
	if code, loc, _ := send(t, "POST", rs.URL+"/report/"+string(rs.id)+"/reprocess", map[string]string{"Sec-Fetch-Site": "same-origin"}, c, form); code != http.StatusSeeOther || !strings.Contains(loc, "reprocess=queued") {
		t.Errorf("same-origin reprocess: %d %q", code, loc)
	}
	// Exempt: uploads of native clients (refused for their body, not
	// their origin).
	for _, p := range []string{"/submit", "/api/42/minidump/", "/symbols/upload", "/upload/", "/v1/uploads:create"} {
		code, _, body := send(t, "POST", rs.URL+p, map[string]string{"Sec-Fetch-Site": "cross-site", "Auth-Token": rs.tokens[auth.ScopeUpload]}, nil, "")
		if refusal(code, "", body) == "cross-origin" {
			t.Errorf("POST %s cross-site: refused for its origin", p)
		}
	}
}
