package web

import (
	"context"
	"encoding/json"
	"html"
	"io"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/gobreakpad/gobreakpad/crashd/crash"
	"github.com/gobreakpad/gobreakpad/crashd/index"
)

// TestTriage: a signature resolved in 2.0 through POST
// /api/signature/triage (scope triage), a bug link, a crash from 1.9
// that leaves it resolved and one from 2.1 that regresses it; the API,
// the home page's filter and marks and the signature page's section and
// forms (csrf) show it; what a client sends is checked.
func TestTriage(t *testing.T) {
	f := newFixture(t, false)
	ctx := context.Background()
	sig := "sig<b>"
	send := func(token, body string) (int, string) {
		t.Helper()
		req, _ := http.NewRequest("POST", f.srv.URL+"/api/signature/triage", strings.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Authorization", "Bearer "+token)
		resp, err := noRedirect.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	resolve := `{"product": "P", "signature": "sig<b>", "state": "resolved", "fixed_in": "2.0"}`
	if code, _ := send(f.reader, resolve); code != http.StatusForbidden {
		t.Errorf("view_crashes sets a state: %d", code)
	}
	if code, _ := send(f.all, resolve); code != http.StatusForbidden {
		t.Errorf("view_pii+view_rawdump+reprocess sets a state: %d", code)
	}
	for body, want := range map[string]int{
		`{"product": "P", "signature": "sig<b>", "state": "resolved"}`:            400,
		`{"product": "P", "signature": "sig<b>", "state": "done"}`:                400,
		`{"product": "P", "signature": "sig<b>", "bug": "javascript:alert(1)"}`:   400,
		`{"product": "P", "signature": "sig<b>", "state": "open", "priority": 1}`: 400,
		`{"product": "P", "signature": "nope", "state": "open"}`:                  404,
		`{"product": "Q", "signature": "sig<b>", "state": "open"}`:                404,
		`[1]`: 400,
		`{"product": "P", "signature": "sig<b>", "bug": "https://x/` + strings.Repeat("a", 70_000) + `"}`: 400,
	} {
		if code, resp := send(f.triager, body); code != want {
			t.Errorf("%.100s: %d %s, want %d", body, code, resp, want)
		}
	}
	code, body := send(f.triager, resolve)
	var tr index.SignatureTriage
	if code != 200 || json.Unmarshal([]byte(body), &tr) != nil || tr.State != index.StateResolved || tr.FixedIn != "2.0" || tr.UpdatedBy != "triager" {
		t.Fatalf("resolve: %d %s", code, body)
	}
	bug := `https://github.com/o/r/issues/1?q="><script>`
	if code, body := send(f.triager, `{"product": "P", "signature": "sig<b>", "bug": `+jsonString(bug)+`}`); code != 200 {
		t.Fatalf("bug: %d %s", code, body)
	}
	record := func(n int, ver string) []index.SignatureEvent {
		t.Helper()
		now := time.Now().UTC()
		ev, err := f.ix.RecordProcessed(ctx, index.Outcome{Crash: index.Crash{ID: string(crash.New(now, 0)), ReceivedAt: now, Product: "P", Version: ver, Signature: sig}})
		if err != nil {
			t.Fatal(err)
		}
		return ev
	}
	if ev := record(1, "1.9"); len(ev) != 0 {
		t.Fatalf("1.9: %+v", ev)
	}
	getJSON := func(path string, v any) {
		t.Helper()
		code, body := f.get(t, path, f.reader)
		switch p := v.(type) {
		case *SignatureData:
			*p = SignatureData{}
		case *HomeData:
			*p = HomeData{}
		}
		if code != 200 || json.Unmarshal([]byte(body), v) != nil {
			t.Fatalf("%s: %d %.300s", path, code, body)
		}
	}
	var sd SignatureData
	getJSON("/api/signature?signature="+url.QueryEscape(sig)+"&product=P", &sd)
	if sd.Triage == nil || sd.Triage.State != index.StateResolved {
		t.Fatalf("after 1.9: %+v", sd.Triage)
	}
	if ev := record(2, "2.1"); len(ev) != 1 || ev[0].Kind != index.EventRegression {
		t.Fatalf("2.1: %+v", ev)
	}
	// Without product=: the signature's only product.
	getJSON("/api/signature?signature="+url.QueryEscape(sig), &sd)
	if sd.Triage == nil || sd.Triage.State != index.StateRegressed || sd.Triage.FixedIn != "2.0" || len(sd.Triage.Bugs) != 1 || sd.Triage.Bugs[0].URL != bug ||
		len(sd.Triage.History) != 3 || sd.Triage.History[2].Who != "crashd" || len(sd.Products) != 1 {
		t.Fatalf("after 2.1: %+v", sd.Triage)
	}
	if len(sd.FileBug) != 1 || !strings.HasPrefix(sd.FileBug[0].URL, "https://github.com/o/r/issues/new?") {
		t.Fatalf("file a bug: %+v", sd.FileBug)
	}
	fu, _ := url.Parse(sd.FileBug[0].URL)
	if b := fu.Query().Get("body"); !strings.Contains(b, "Crash signature: sig<b>") || !strings.Contains(b, "Crash reason: SIGSEGV") ||
		!strings.Contains(b, "https://crashes.example/report/") || fu.Query().Get("title") != "Crash in sig<b>" {
		t.Errorf("file a bug body: %q", b)
	}

	var home HomeData
	getJSON("/api/topcrashers?state=regressed", &home)
	if len(home.Top.Rows) != 1 || !home.Top.Rows[0].Regressed || home.Top.Rows[0].Triage[0].Bugs[0] != bug {
		t.Fatalf("state=regressed: %+v", home.Top.Rows)
	}
	getJSON("/api/topcrashers?state=ignored", &home)
	if len(home.Top.Rows) != 0 {
		t.Fatalf("state=ignored: %+v", home.Top.Rows)
	}
	if code, _ := f.get(t, "/api/topcrashers?state=fixed", f.reader); code != 400 {
		t.Errorf("state=fixed: %d", code)
	}
	code, page := f.get(t, "/?state=regressed", f.reader)
	if code != 200 || !strings.Contains(page, `class="regressed"`) || !strings.Contains(page, `<option value="regressed" selected>`) ||
		strings.Contains(page, `"><script>`) || !strings.Contains(page, html.EscapeString(`"><script>`)) {
		t.Fatalf("home page: %d %s", code, page)
	}
	// The signature page: the state, history, no forms for a reader.
	code, page = f.get(t, "/signature?signature="+url.QueryEscape(sig), f.reader)
	if code != 200 || !strings.Contains(page, `id="triage-state"`) || !strings.Contains(page, "resolved (2.0) → regressed") || strings.Contains(page, `action="/signature/triage"`) ||
		!strings.Contains(page, "File a bug in GitHub") || strings.Contains(page, `"><script>`) {
		t.Fatalf("signature page as a reader: %d %s", code, page)
	}

	// The page's forms in a session: csrf required, then the state set.
	r := f.post(t, "/login", url.Values{"token": {f.triager}}, nil)
	if len(r.Cookies()) != 1 {
		t.Fatalf("login: %d", r.StatusCode)
	}
	cookie := r.Cookies()[0]
	_, b := f.getSession(t, "/signature?signature="+url.QueryEscape(sig)+"&product=P", cookie)
	if !strings.Contains(b, `action="/signature/triage"`) {
		t.Fatalf("signature page as a triager: no forms: %s", b)
	}
	m := regexp.MustCompile(`name="csrf" value="([0-9a-f]+)"`).FindStringSubmatch(b)
	if m == nil {
		t.Fatal("no csrf field")
	}
	form := url.Values{"product": {"P"}, "signature": {sig}, "state": {"ignored"}, "fixed_in": {"2.0"}}
	if r := f.post(t, "/signature/triage", form, cookie); r.StatusCode != http.StatusForbidden {
		t.Errorf("form without csrf: %d", r.StatusCode)
	}
	form.Set("csrf", m[1])
	r = f.post(t, "/signature/triage", form, cookie)
	if r.StatusCode != http.StatusSeeOther || !strings.HasPrefix(r.Header.Get("Location"), "/signature?") {
		t.Fatalf("form: %d %q", r.StatusCode, r.Header.Get("Location"))
	}
	if r := f.post(t, "/signature/triage", url.Values{"csrf": {m[1]}, "product": {"P"}, "signature": {sig}, "remove_bug": {bug}}, cookie); r.StatusCode != http.StatusSeeOther {
		t.Fatalf("remove bug: %d", r.StatusCode)
	}
	getJSON("/api/signature?signature="+url.QueryEscape(sig)+"&product=P", &sd)
	if sd.Triage.State != index.StateIgnored || sd.Triage.FixedIn != "" || len(sd.Triage.Bugs) != 0 || len(sd.Triage.History) != 5 {
		t.Fatalf("after the forms: %+v", sd.Triage)
	}
}

// TestBugTrackers: each kind's new-issue URL with its own parameters,
// bounded; configurations that cannot work refused.
func TestBugTrackers(t *testing.T) {
	body := strings.Repeat("frame ü\n", 3000)
	for _, c := range []struct {
		bt     BugTracker
		prefix string
		title  string
		desc   string
	}{
		{BugTracker{Name: "GH", Kind: "github", URL: "https://github.com/o/r/"}, "https://github.com/o/r/issues/new?", "title", "body"},
		{BugTracker{Name: "GL", Kind: "gitlab", URL: "https://gitlab.com/g/p"}, "https://gitlab.com/g/p/-/issues/new?", "issue[title]", "issue[description]"},
		{BugTracker{Name: "J", Kind: "jira", URL: "https://jira.example", ProjectID: "10000", IssueType: "1"}, "https://jira.example/secure/CreateIssueDetails!init.jspa?", "summary", "description"},
		{BugTracker{Name: "BZ", Kind: "bugzilla", URL: "https://bugzilla.mozilla.org", Product: "Core", Component: "General"}, "https://bugzilla.mozilla.org/enter_bug.cgi?", "short_desc", "comment"},
	} {
		if err := c.bt.Check(); err != nil {
			t.Fatalf("%s: %v", c.bt.Kind, err)
		}
		for _, b := range []string{"short & sweet", body} {
			s := c.bt.NewIssueURL("Crash in f<x>", b)
			if !strings.HasPrefix(s, c.prefix) || len(s) > MaxFileBugURL {
				t.Fatalf("%s: %d bytes: %.200s", c.bt.Kind, len(s), s)
			}
			u, err := url.Parse(s)
			if err != nil {
				t.Fatal(err)
			}
			q := u.Query()
			if q.Get(c.title) != "Crash in f<x>" || !strings.HasPrefix(b, strings.TrimSuffix(q.Get(c.desc), "\n…")) || q.Get(c.desc) == "" {
				t.Errorf("%s: %v", c.bt.Kind, q)
			}
		}
	}
	for _, bad := range []BugTracker{
		{Name: "x", Kind: "github", URL: "https://github.com"},
		{Name: "x", Kind: "github", URL: "javascript:alert(1)//github.com/o/r"},
		{Name: "x", Kind: "jira", URL: "https://jira.example"},
		{Name: "x", Kind: "bugzilla", URL: "https://bz.example", Product: "P"},
		{Name: "x", Kind: "trac", URL: "https://trac.example/p"},
		{Kind: "github", URL: "https://github.com/o/r"},
	} {
		if bad.Check() == nil {
			t.Errorf("%+v taken", bad)
		}
	}
}

// FuzzNewIssueURL: whatever a signature, its frames and reasons hold, a
// "file a bug" link parses, is within MaxFileBugURL and keeps the title
// (cut) and a prefix of the body.
func FuzzNewIssueURL(f *testing.F) {
	f.Add("Crash in f", "frame\n")
	f.Add("\xff\x00", strings.Repeat("é\x01", 5000))
	trackers := []BugTracker{
		{Name: "GH", Kind: "github", URL: "https://github.com/o/r"},
		{Name: "GL", Kind: "gitlab", URL: "https://gitlab.com/g/p"},
		{Name: "J", Kind: "jira", URL: "https://jira.example", ProjectID: "1", IssueType: "2"},
		{Name: "BZ", Kind: "bugzilla", URL: "https://bz.example", Product: "P", Component: "C"},
	}
	f.Fuzz(func(t *testing.T, title, body string) {
		for _, bt := range trackers {
			s := bt.NewIssueURL(title, body)
			if _, err := url.Parse(s); err != nil || len(s) > MaxFileBugURL {
				t.Fatalf("%s: %d bytes, %v", bt.Kind, len(s), err)
			}
		}
	})
}
