package web

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/gobreakpad/gobreakpad/crashd/auth"
	"github.com/gobreakpad/gobreakpad/crashd/blob"
	"github.com/gobreakpad/gobreakpad/crashd/crash"
	"github.com/gobreakpad/gobreakpad/crashd/index"
	"github.com/gobreakpad/gobreakpad/crashd/walk"
)

// fixture is a store and index holding one processed crash with a
// personal annotation and hostile strings.
type fixture struct {
	srv     *httptest.Server
	id      crash.ID
	reader  string // a token with view_crashes
	upload  string // a token with upload_symbols only (reads nothing)
	all     string // a token with view_pii, view_rawdump and reprocess
	triager string // a token with triage
	ix      *index.SQL
	webPart *Web
}

func newFixture(t *testing.T, public bool) *fixture {
	t.Helper()
	ctx := context.Background()
	ix, err := index.OpenSQLite(ctx, filepath.Join(t.TempDir(), "index.sqlite"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ix.Close() })
	store := blob.NewMem()
	now := time.Now().UTC()
	id := crash.New(now, 0)
	raw := &crash.RawCrash{UUID: id, SubmittedTimestamp: now, Version: 2,
		Annotations: map[string]any{"ProductName": "P", "Version": "2", "Email": "someone@example.com", "Note": "<script>alert(1)</script>\x01\"'"},
		Metadata:    crash.Metadata{Restricted: []string{"Email"}}}
	b, _ := raw.MarshalJSON()
	store.Put(ctx, crash.RawCrashKey(id), b)
	store.Put(ctx, crash.DumpKey(id, crash.MinidumpField), []byte("MDMP dump bytes"))
	ct := 0
	pc := &crash.ProcessedCrash{CrashID: id, ProductName: "P", Version: "2", Signature: "sig<b>", CrashReason: "SIGSEGV", CrashingThread: &ct,
		JSONDump:       json.RawMessage(`{"threads":[{"thread_id":7,"frames":[{"frame":0,"module":"m<i>.so","function":"f\"<script>","trust":"context","offset":"0x1","inlines":[{"function":"inl","file":"a.c","line":3}]}]}],"modules":[{"filename":"m<i>.so","debug_file":"m.so","debug_id":"ABC","base_addr":"0x0","end_addr":"0x10","missing_symbols":true}]}`),
		ProcessorNotes: []string{"note"}, Success: true}
	b, _ = walk.Marshal(pc)
	store.Put(ctx, crash.ProcessedCrashKey(id), b)
	c := index.Crash{ID: string(id), ReceivedAt: now, Product: "P", Version: "2", OS: "Linux", Signature: "sig<b>", CrashReason: "SIGSEGV", Attempts: 1}
	ix.Processed(ctx, c)
	ix.ProcessedDetails(ctx, c, index.Details{ProcessType: "content", Modules: []string{"m<i>.so"},
		Annotations: []index.Annotation{{Name: "Email", Value: "someone@example.com", Personal: true}, {Name: "Note", Value: "<script>alert(1)</script>\x01\"'"}}})
	reader, rt, _ := auth.NewToken("reader", auth.ScopeViewCrashes)
	upload, ut, _ := auth.NewToken("ci", auth.ScopeUpload)
	all, at, _ := auth.NewToken("all", auth.ScopeViewPII, auth.ScopeViewRawDump, auth.ScopeReprocess)
	triager, tt, _ := auth.NewToken("triager", auth.ScopeTriage)
	authn, err := auth.NewAuthenticator([]auth.Token{rt, ut, at, tt}, nil)
	if err != nil {
		t.Fatal(err)
	}
	w, err := New(Config{Auth: authn, IndexedAnnotations: []string{"Email", "Note"}, PublicURL: "https://crashes.example",
		BugTrackers: []BugTracker{{Name: "GitHub", Kind: "github", URL: "https://github.com/o/r"}}}, store, nil, ix, nil)
	if err != nil {
		t.Fatal(err)
	}
	// crashd's route table in front, as crashd serves the pages.
	mux := auth.NewTable(auth.Crashd(auth.RouteOptions{}), authn, public, nil)
	w.Register(mux)
	if err := mux.Err(); err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	return &fixture{srv: srv, id: id, reader: reader, upload: upload, all: all, triager: triager, ix: ix, webPart: w}
}

func (f *fixture) get(t *testing.T, path, token string) (int, string) {
	t.Helper()
	req, _ := http.NewRequest("GET", f.srv.URL+path, nil)
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	resp, err := noRedirect.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

// getSession is get in the session of cookie (a login's).
func (f *fixture) getSession(t *testing.T, path string, cookie *http.Cookie) (int, string) {
	t.Helper()
	req, _ := http.NewRequest("GET", f.srv.URL+path, nil)
	req.AddCookie(cookie)
	resp, err := noRedirect.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

// post sends form as a page's form does, in the session of cookie (nil:
// none), without following a redirect; the body is closed.
func (f *fixture) post(t *testing.T, path string, form url.Values, cookie *http.Cookie) *http.Response {
	t.Helper()
	req, _ := http.NewRequest("POST", f.srv.URL+path, strings.NewReader(form.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	if cookie != nil {
		req.AddCookie(cookie)
	}
	resp, err := noRedirect.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	return resp
}

// jsonString is s as a JSON string literal.
func jsonString(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}

var noRedirect = &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}

// TestPermissions: nothing without a token (pages redirect to the login,
// the API answers 401), a reader sees no personal annotation and may not
// download, a token with the scopes may; the public flag opens reading
// only.
func TestPermissions(t *testing.T) {
	f := newFixture(t, false)
	pages := []string{"/", "/signature?signature=" + url.QueryEscape("sig<b>"), "/report/" + string(f.id), "/search", "/symbols"}
	for _, p := range pages {
		if code, _ := f.get(t, p, ""); code != http.StatusSeeOther {
			t.Errorf("%s without a token: %d", p, code)
		}
		if code, body := f.get(t, p, f.reader); code != http.StatusOK {
			t.Errorf("%s as a reader: %d %.300s", p, code, body)
		}
		if code, _ := f.get(t, p, f.upload); code != http.StatusForbidden {
			t.Errorf("%s with an upload_symbols token: %d", p, code)
		}
	}
	for _, p := range []string{"/api/topcrashers", "/api/report/" + string(f.id), "/api/search", "/api/symbols", "/report/" + string(f.id) + "/dump"} {
		if code, _ := f.get(t, p, ""); code != http.StatusUnauthorized {
			t.Errorf("%s without a token: %d", p, code)
		}
	}
	if code, _ := f.get(t, "/api/topcrashers", "not-a-token"); code != http.StatusUnauthorized {
		t.Errorf("unknown token: %d", code)
	}
	_, body := f.get(t, "/api/report/"+string(f.id), f.reader)
	var rep Report
	if err := json.Unmarshal([]byte(body), &rep); err != nil {
		t.Fatal(err)
	}
	if rep.Hidden != 1 || strings.Contains(body, "someone@example.com") || rep.CanDownload || rep.CanReprocess {
		t.Errorf("reader's report: %s", body)
	}
	if _, page := f.get(t, "/report/"+string(f.id), f.reader); strings.Contains(page, "someone@example.com") || strings.Contains(page, "/dump") {
		t.Errorf("reader's report page shows personal data or downloads")
	}
	_, body = f.get(t, "/api/report/"+string(f.id), f.all)
	if !strings.Contains(body, "someone@example.com") {
		t.Errorf("view_pii report: %s", body)
	}
	if code, _ := f.get(t, "/report/"+string(f.id)+"/dump", f.reader); code != http.StatusForbidden {
		t.Errorf("dump as a reader: %d", code)
	}
	if code, b := f.get(t, "/report/"+string(f.id)+"/dump", f.all); code != http.StatusOK || b != "MDMP dump bytes" {
		t.Errorf("dump with view_rawdump: %d %q", code, b)
	}
	if code, _ := f.get(t, "/report/"+string(f.id)+"/dump?name=../raw_crash", f.all); code != http.StatusBadRequest {
		t.Errorf("dump name with a path: %d", code)
	}
	if code, b := f.get(t, "/report/"+string(f.id)+"/processed.json", f.all); code != http.StatusOK || !strings.Contains(b, `"signature":"sig<b>"`) {
		t.Errorf("processed.json: %d %.200s", code, b)
	}

	pub := newFixture(t, true)
	pages[2] = "/report/" + string(pub.id)
	for _, p := range pages {
		if code, _ := pub.get(t, p, ""); code != http.StatusOK {
			t.Errorf("public %s: %d", p, code)
		}
	}
	if code, _ := pub.get(t, "/report/"+string(pub.id)+"/dump", ""); code != http.StatusUnauthorized {
		t.Errorf("public dump without a token: %d", code)
	}
	if _, body := pub.get(t, "/api/report/"+string(pub.id), ""); strings.Contains(body, "someone@example.com") {
		t.Errorf("public report shows personal data")
	}
}

// TestLogin: the login takes a token into a cookie session; forms need
// the session's csrf; next= stays on the site.
func TestLogin(t *testing.T) {
	f := newFixture(t, false)
	if r := f.post(t, "/login", url.Values{"token": {"wrong"}}, nil); r.StatusCode != http.StatusForbidden || len(r.Cookies()) != 0 {
		t.Errorf("wrong token: %d", r.StatusCode)
	}
	r := f.post(t, "/login", url.Values{"token": {f.all}, "next": {"//evil.example/x"}}, nil)
	if r.StatusCode != http.StatusSeeOther || r.Header.Get("Location") != "/" || len(r.Cookies()) != 1 {
		t.Fatalf("login: %d %q %v", r.StatusCode, r.Header.Get("Location"), r.Cookies())
	}
	cookie := r.Cookies()[0]
	if !cookie.HttpOnly || cookie.SameSite != http.SameSiteLaxMode {
		t.Errorf("cookie: %+v", cookie)
	}
	code, b := f.getSession(t, "/report/"+string(f.id), cookie)
	if code != 200 || !strings.Contains(b, "someone@example.com") || !strings.Contains(b, `id="reprocess"`) {
		t.Errorf("report with the session: %d", code)
	}
	// Reprocess without the csrf field: refused before anything happens.
	if r := f.post(t, "/report/"+string(f.id)+"/reprocess", url.Values{}, cookie); r.StatusCode != http.StatusForbidden {
		t.Errorf("reprocess without csrf: %d", r.StatusCode)
	}
	m := regexp.MustCompile(`name="csrf" value="([0-9a-f]+)"`).FindStringSubmatch(b)
	if m == nil {
		t.Fatalf("no csrf field in the report page")
	}
	csrf := m[1]
	// With it: this fixture has no queue (503), past the permission checks.
	if r := f.post(t, "/report/"+string(f.id)+"/reprocess", url.Values{"csrf": {csrf}}, cookie); r.StatusCode != http.StatusServiceUnavailable {
		t.Errorf("reprocess with csrf: %d", r.StatusCode)
	}
	if r := f.post(t, "/logout", url.Values{"csrf": {csrf}}, cookie); r.StatusCode != http.StatusSeeOther {
		t.Errorf("logout: %d", r.StatusCode)
	}
	req, _ := http.NewRequest("GET", f.srv.URL+"/", nil)
	req.AddCookie(cookie)
	if resp, _ := noRedirect.Do(req); resp.StatusCode != http.StatusSeeOther {
		t.Errorf("after logout: %d", resp.StatusCode)
	}
}

// TestEscaping: hostile names come out escaped in every page (the
// browser test checks that nothing runs).
func TestEscaping(t *testing.T) {
	f := newFixture(t, true)
	for _, p := range []string{"/", "/signature?signature=" + url.QueryEscape("sig<b>"), "/report/" + string(f.id), "/search?module=" + url.QueryEscape("m<i>.so")} {
		_, body := f.get(t, p, f.all)
		if strings.Contains(body, "<script>") || strings.Contains(body, "<b>") || strings.Contains(body, "<i>") {
			t.Errorf("%s: unescaped markup", p)
		}
	}
	_, body := f.get(t, "/report/"+string(f.id), f.all)
	for _, want := range []string{"&lt;script&gt;alert(1)&lt;/script&gt;\\u0001&#34;&#39;", "f&#34;&lt;script&gt;", "inl", "a.c:3", "missing"} {
		if !strings.Contains(body, want) {
			t.Errorf("report page lacks %q", want)
		}
	}
	if got := clip(strings.Repeat("x", 70000)); len(got) > maxClip+40 || !strings.Contains(got, "(68000 more bytes)") {
		t.Errorf("clip of 70000 bytes: %d bytes", len(got))
	}
}

// TestErrors: bad parameters are 400s with a reason, unknown crashes 404.
func TestErrors(t *testing.T) {
	f := newFixture(t, false)
	for path, want := range map[string]int{
		"/api/topcrashers?days=5":                         400,
		"/api/search?sort=crash_id":                       400,
		"/api/search?since=yesterday":                     400,
		"/api/search?limit=0":                             400,
		"/api/search?offset=-1":                           400,
		"/api/signature":                                  400,
		"/api/signature?signature=nothing":                404,
		"/api/report/not-an-id":                           400,
		"/api/report/" + string(crash.New(time.Now(), 0)): 404,
		"/search?order=sideways":                          400,
	} {
		if code, body := f.get(t, path, f.reader); code != want {
			t.Errorf("%s: %d, want %d (%.200s)", path, code, want, body)
		}
	}
}

// TestSearchAnnotations: annotation.NAME searches the indexed annotations
// and counts their values beside the results; a personal value neither
// matches nor shows without view_pii; an annotation not indexed is refused.
func TestSearchAnnotations(t *testing.T) {
	f := newFixture(t, false)
	note := url.QueryEscape("<script>alert(1)</script>\x01\"'")
	type answer struct {
		Total  int
		Facets []struct {
			Field   string
			Buckets []index.Bucket
		}
	}
	ask := func(q, token string) answer {
		t.Helper()
		code, body := f.get(t, "/api/search?"+q, token)
		if code != http.StatusOK {
			t.Fatalf("%s: %d %s", q, code, body)
		}
		if token == f.reader && !strings.Contains(q, "someone") && strings.Contains(body, "someone@example.com") {
			t.Errorf("%s: a reader sees the personal value: %s", q, body)
		}
		var a answer
		if err := json.Unmarshal([]byte(body), &a); err != nil {
			t.Fatal(err)
		}
		return a
	}
	facet := func(a answer, field string) []index.Bucket {
		for _, fc := range a.Facets {
			if fc.Field == field {
				return fc.Buckets
			}
		}
		t.Fatalf("no facet %s in %+v", field, a.Facets)
		return nil
	}
	if a := ask("annotation.Note="+note, f.reader); a.Total != 1 || len(facet(a, "annotation.Note")) != 1 || len(facet(a, "annotation.Email")) != 0 {
		t.Errorf("Note as a reader: %+v", a)
	}
	if a := ask("annotation.Note=other", f.reader); a.Total != 0 {
		t.Errorf("Note=other: %+v", a)
	}
	if a := ask("annotation.Email=someone%40example.com", f.reader); a.Total != 0 {
		t.Errorf("personal Email as a reader: %+v", a)
	}
	if a := ask("annotation.Email=someone%40example.com&annotation.Note="+note, f.all); a.Total != 1 ||
		!slices.Equal(facet(a, "annotation.Email"), []index.Bucket{{Value: "someone@example.com", Count: 1}}) {
		t.Errorf("Email with view_pii: %+v", a)
	}
	if code, body := f.get(t, "/api/search?annotation.Other=x", f.reader); code != http.StatusBadRequest || !strings.Contains(body, "not an indexed annotation") {
		t.Errorf("an annotation not indexed: %d %s", code, body)
	}
	code, body := f.get(t, "/search?annotation.Note="+note, f.reader)
	if code != http.StatusOK || !strings.Contains(body, `name="annotation.Note"`) || strings.Contains(body, "<script>alert") ||
		!strings.Contains(body, "annotation.Note=%3Cscript%3E") {
		t.Errorf("search page: %d %.2000s", code, body)
	}
}

// TestReportFolds: a crash stored with 300,000 annotations (before the
// collector bounded them; issue 37 measured a 14 MB page) and 1,000
// threads gives a page of the first 500 annotations and 200 other threads,
// the rest counted, in the page and in its JSON.
func TestReportFolds(t *testing.T) {
	f := newFixture(t, true)
	ctx := context.Background()
	now := time.Now().UTC()
	id := crash.New(now, 0)
	ann := map[string]any{"ProductName": "P", "Version": "2"}
	for i := range 300000 {
		ann[fmt.Sprintf("a%06d", i)] = strings.Repeat("v", 20)
	}
	raw := &crash.RawCrash{UUID: id, SubmittedTimestamp: now, Version: 2, Annotations: ann}
	b, _ := raw.MarshalJSON()
	store := f.webPart.store
	store.Put(ctx, crash.RawCrashKey(id), b)
	var threads []string
	for i := range 1001 {
		threads = append(threads, fmt.Sprintf(`{"thread_id":%d,"frames":[{"frame":0,"module":"m.so","function":"f","trust":"context","offset":"0x1"}]}`, i))
	}
	ct := 0
	pc := &crash.ProcessedCrash{CrashID: id, ProductName: "P", Version: "2", Signature: "sig", CrashingThread: &ct,
		JSONDump: json.RawMessage(`{"threads":[` + strings.Join(threads, ",") + `],"modules":[]}`), Success: true}
	b, _ = walk.Marshal(pc)
	store.Put(ctx, crash.ProcessedCrashKey(id), b)
	status, page := f.get(t, "/report/"+string(id), f.all)
	if status != 200 {
		t.Fatalf("%d", status)
	}
	if len(page) > 1<<20 {
		t.Errorf("report page of %d bytes", len(page))
	}
	for _, want := range []string{`id="more-annotations">299502 more annotations`, `id="more-threads">800 more threads`, "Other threads (1000)", "a000497"} {
		if !strings.Contains(page, want) {
			t.Errorf("page lacks %q", want)
		}
	}
	if strings.Contains(page, "a000498") {
		t.Error("annotation past the fold shown")
	}
	status, js := f.get(t, "/api/report/"+string(id), f.all)
	var rep Report
	if status != 200 || json.Unmarshal([]byte(js), &rep) != nil {
		t.Fatalf("JSON: %d", status)
	}
	if len(rep.Annotations) != maxPageAnnotations || rep.MoreAnnotations != 299502 || len(rep.Threads) != maxPageThreads || rep.MoreThreads != 800 {
		t.Errorf("JSON: %d annotations + %d, %d threads + %d", len(rep.Annotations), rep.MoreAnnotations, len(rep.Threads), rep.MoreThreads)
	}
}

// TestSearchOperators: Super Search's operators through the API and the
// page: ~ finds a signature by a part of it whatever its case, ! negates,
// = quotes a value starting with an operator; the page explains them, keeps
// them in its boxes, quotes facet values that start with one, and pages
// over a pinned period; wrong operators are a 400.
func TestSearchOperators(t *testing.T) {
	f := newFixture(t, false)
	ctx := context.Background()
	now := time.Now().UTC()
	for i, sig := range []string{"nsThread::AddToQueue", "~tilde", "OOM | small"} {
		c := index.Crash{ID: string(crash.New(now.Add(-time.Duration(i+1)*time.Minute), 0)), ReceivedAt: now.Add(-time.Duration(i+1) * time.Minute),
			Product: "P", Version: "2", OS: "Windows NT", Signature: sig}
		if err := f.ix.Processed(ctx, c); err != nil {
			t.Fatal(err)
		}
	}
	total := func(q string) int {
		t.Helper()
		code, body := f.get(t, "/api/search?"+q, f.reader)
		if code != http.StatusOK {
			t.Fatalf("%s: %d %s", q, code, body)
		}
		var a struct{ Total int }
		if err := json.Unmarshal([]byte(body), &a); err != nil {
			t.Fatal(err)
		}
		return a.Total
	}
	for q, want := range map[string]int{
		"signature=" + url.QueryEscape("~addto"):                               1,
		"signature=" + url.QueryEscape("~ADDTO"):                               1,
		"signature=AddTo":                                                      0,
		"signature=" + url.QueryEscape("!~addto"):                              3,
		"signature=" + url.QueryEscape("^oom"):                                 1,
		"signature=" + url.QueryEscape("$<B>"):                                 1,
		"signature=" + url.QueryEscape("~tilde"):                               1,
		"signature=" + url.QueryEscape("=~tilde"):                              1,
		"signature=" + url.QueryEscape("==~tilde"):                             0,
		"os=" + url.QueryEscape("^win"):                                        3,
		"os=" + url.QueryEscape("!Linux"):                                      3,
		"module=" + url.QueryEscape("$.SO"):                                    1,
		"annotation.Note=" + url.QueryEscape("~<SCRIPT>"):                      1,
		"annotation.Note=" + url.QueryEscape("!__null__"):                      1,
		"annotation.Email=" + url.QueryEscape("~someone"):                      0, // personal, a reader
		"signature=" + url.QueryEscape("~e") + "&os=" + url.QueryEscape("~nt"): 2,
	} {
		if got := total(q); got != want {
			t.Errorf("%s: total %d, want %d", q, got, want)
		}
	}
	for _, q := range []string{"signature=%40a.*", "signature=~", "signature=__null__x", "signature=a&signature=b", "annotation.Note=%40x"} {
		if code, body := f.get(t, "/api/search?"+q, f.reader); code != http.StatusBadRequest {
			t.Errorf("%s: %d, want 400 (%.200s)", q, code, body)
		}
	}
	// The page: the operators explained, the value kept in its box, the
	// facet value "~tilde" linked quoted (=~tilde), the total.
	code, body := f.get(t, "/search?signature="+url.QueryEscape("~T"), f.reader)
	if code != http.StatusOK || !strings.Contains(body, `id="operators"`) || !strings.Contains(body, `value="~T"`) ||
		!strings.Contains(body, `<span id="total">2</span>`) || !strings.Contains(body, "signature=%3D~tilde") {
		t.Errorf("search page: %d %.3000s", code, body)
	}
	// Paging: the next page pins the period; following it lists the rest.
	code, body = f.get(t, "/api/search?limit=3", f.reader)
	var a struct {
		Total   int
		Crashes []index.Row
		Next    string
	}
	if err := json.Unmarshal([]byte(body), &a); code != http.StatusOK || err != nil || a.Total != 4 || len(a.Crashes) != 3 ||
		!strings.Contains(a.Next, "until=") || !strings.Contains(a.Next, "offset=3") {
		t.Fatalf("first page: %d %v %.1000s", code, err, body)
	}
	code, body = f.get(t, a.Next, f.reader)
	var b struct {
		Crashes  []index.Row
		Previous string
	}
	if err := json.Unmarshal([]byte(body), &b); code != http.StatusOK || err != nil || len(b.Crashes) != 1 || !strings.Contains(b.Previous, "offset=0") {
		t.Errorf("next page: %d %v %.1000s", code, err, body)
	}
	for _, r := range a.Crashes {
		if len(b.Crashes) == 1 && r.ID == b.Crashes[0].ID {
			t.Errorf("crash %s on both pages", r.ID)
		}
	}
}

// TestSignatureTrend: a signature's crashes per day and version through
// GET /api/signature/trend (bounds checked) and on its page, an SVG with
// its title and description, the shares as a table, the per-day table;
// a hostile version escaped everywhere.
func TestSignatureTrend(t *testing.T) {
	f := newFixture(t, false)
	ctx := context.Background()
	now := time.Now().UTC()
	for i, v := range []string{"2", "2", "<script>x</script>", "3"} {
		at := now.Add(-time.Duration(i*30) * time.Hour)
		c := index.Crash{ID: string(crash.New(at, 0)), ReceivedAt: at, Product: "P", Version: v, OS: "Linux", Signature: "sig<b>"}
		if err := f.ix.Processed(ctx, c); err != nil {
			t.Fatal(err)
		}
	}
	code, body := f.get(t, "/api/signature/trend?signature="+url.QueryEscape("sig<b>")+"&days=90&versions=2", f.reader)
	var d TrendData
	if err := json.Unmarshal([]byte(body), &d); code != http.StatusOK || err != nil {
		t.Fatalf("trend: %d %v %.500s", code, err, body)
	}
	if d.Period != 90 || len(d.Trend.Days) < 90 || d.Trend.Total != 5 || len(d.Trend.Versions) != 3 ||
		d.Trend.Versions[0].Version != "2" || d.Trend.Versions[0].Count != 3 || !d.Trend.Versions[2].Other || d.Trend.Versions[2].Count != 1 {
		t.Errorf("trend: %v", d.Trend)
	}
	for _, q := range []string{"", "signature=x&days=91", "signature=x&days=0", "signature=x&versions=11", "signature=x&versions=x"} {
		if code, _ := f.get(t, "/api/signature/trend?"+q, f.reader); code != http.StatusBadRequest {
			t.Errorf("trend?%s: %d, want 400", q, code)
		}
	}
	if code, _ := f.get(t, "/api/signature/trend?signature=x", ""); code != http.StatusUnauthorized {
		t.Errorf("trend without a token: %d", code)
	}
	code, body = f.get(t, "/signature?signature="+url.QueryEscape("sig<b>"), f.reader)
	for _, want := range []string{`<svg class="trend"`, `role="img" aria-labelledby="trend-title trend-desc"`, `<title id="trend-title">Crashes per day by version`,
		`<desc id="trend-desc">5 crashes`, "Share of each version", "&lt;script&gt;x&lt;/script&gt;", "60.0 %", "Per day"} {
		if !strings.Contains(body, want) {
			t.Errorf("signature page: no %q", want)
		}
	}
	if code != http.StatusOK || strings.Contains(body, "<script>x") {
		t.Errorf("signature page: %d, version unescaped", code)
	}
	if code, body := f.get(t, "/api/signature?signature="+url.QueryEscape("sig<b>"), f.reader); code != http.StatusOK || !strings.Contains(body, `"trend":{"days":`) {
		t.Errorf("/api/signature: no trend: %d %.300s", code, body)
	}
}

// TestChangeWords: the home page says a signature's change against the
// previous period in words.
func TestChangeWords(t *testing.T) {
	for _, c := range []struct {
		count, prev int
		want        string
	}{
		{9, 0, "up 9 from 0"},
		{3, 5, "down 2 from 5"},
		{4, 4, "unchanged at 4"},
	} {
		if got := changeWords(c.count, c.prev); got != c.want {
			t.Errorf("changeWords(%d, %d) = %q, want %q", c.count, c.prev, got, c.want)
		}
	}
	f := newFixture(t, false)
	if code, body := f.get(t, "/", f.reader); code != http.StatusOK || !strings.Contains(body, "up 1 from 0") {
		t.Errorf("home page: %d, no change in words: %.3000s", code, body)
	}
}
