package server

import (
	"encoding/json"
	"github.com/gobreakpad/gobreakpad/crashd/alert"
	"io"
	"net/http"
	"net/url"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/gobreakpad/gobreakpad/crashd/auth"
	"github.com/gobreakpad/gobreakpad/crashd/index"
	"github.com/gobreakpad/gobreakpad/crashd/web"
	"github.com/gobreakpad/gobreakpad/internal/testkit/corpus"
)

// TestTriageEndToEnd (issue 38): a signature resolved in 2.0 through the
// API; the same crash sent as 1.9 through the real collector and
// processor leaves it resolved, sent as 2.1 regresses it: the API, the
// home page (filter, mark, bug link), the signature page and the metrics
// say so.
func TestTriageEndToEnd(t *testing.T) {
	cfg := testConfig(t, nil)
	triager, tt, _ := auth.NewToken("triager", auth.ScopeTriage)
	admin, at, _ := auth.NewToken("admin", auth.ScopeAdmin)
	cfg.SymbolServer.Tokens = append(cfg.SymbolServer.Tokens, tt, at)
	cfg.BugTrackers = []web.BugTracker{{Name: "Bugzilla", Kind: "bugzilla", URL: "https://bugzilla.example", Product: "Triage", Component: "Crashes"}}
	hook := newHookReceiver(t) // the regression's alert, through the real index and dispatcher
	cfg.Webhooks = []alert.Webhook{{Name: "triage", URL: hook.URL + "/hook", Events: []string{index.AlertNewSignature, index.AlertRegression}}}
	ts := startServer(t, cfg)
	defer ts.stop()
	dump := filepath.Join(corpus.Dir(t), "breakpad/processor/linux_null_read_av.dmp")
	send := func(version string) {
		t.Helper()
		id, err := upload(t, ts.URL, dump, map[string]string{"ProductName": "Triage", "Version": version})
		if err != nil {
			t.Fatal(err)
		}
		waitProcessed(t, ts.URL, id, time.Minute)
	}
	do := func(method, path, token, body string) (int, string) {
		t.Helper()
		req, _ := http.NewRequest(method, ts.URL+path, strings.NewReader(body))
		req.Header.Set("Authorization", "Bearer "+token)
		if body != "" {
			req.Header.Set("Content-Type", "application/json")
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	send("1.0")
	var top web.HomeData
	code, body := do("GET", "/api/topcrashers?product=Triage", triager, "")
	if code != 200 || json.Unmarshal([]byte(body), &top) != nil || len(top.Top.Rows) != 1 {
		t.Fatalf("top crashers: %d %s", code, body)
	}
	sig := top.Top.Rows[0].Signature
	if tr := top.Top.Rows[0].Triage; len(tr) != 1 || tr[0].State != index.StateUntriaged {
		t.Fatalf("a new signature: %+v", tr)
	}
	req, _ := json.Marshal(web.TriageRequest{Product: "Triage", Signature: sig, State: "resolved", FixedIn: "2.0"})
	if code, body := do("POST", "/api/signature/triage", triager, string(req)); code != 200 {
		t.Fatalf("resolve: %d %s", code, body)
	}
	bug := "https://bugzilla.example/show_bug.cgi?id=38"
	req, _ = json.Marshal(web.TriageRequest{Product: "Triage", Signature: sig, Bug: bug})
	if code, body := do("POST", "/api/signature/triage", triager, string(req)); code != 200 {
		t.Fatalf("bug: %d %s", code, body)
	}
	state := func() web.SignatureData {
		t.Helper()
		var d web.SignatureData
		code, body := do("GET", "/api/signature?"+url.Values{"signature": {sig}, "product": {"Triage"}}.Encode(), triager, "")
		if code != 200 || json.Unmarshal([]byte(body), &d) != nil || d.Triage == nil {
			t.Fatalf("signature: %d %.500s", code, body)
		}
		return d
	}
	send("1.9")
	if d := state(); d.Triage.State != index.StateResolved || d.Count != 2 {
		t.Fatalf("after 1.9: %s, %d crashes", d.Triage.State, d.Count)
	}
	send("2.1")
	d := state()
	if d.Triage.State != index.StateRegressed || d.Triage.FixedIn != "2.0" || len(d.Triage.Bugs) != 1 || d.Triage.Bugs[0].URL != bug {
		t.Fatalf("after 2.1: %+v", d.Triage)
	}
	last := d.Triage.History[len(d.Triage.History)-1]
	if last.Who != "crashd" || last.FromState != index.StateResolved || last.ToState != index.StateRegressed || last.Version != "2.1" || last.CrashID == "" {
		t.Fatalf("history: %+v", d.Triage.History)
	}
	if len(d.FileBug) != 1 || !strings.HasPrefix(d.FileBug[0].URL, "https://bugzilla.example/enter_bug.cgi?") {
		t.Errorf("file a bug: %+v", d.FileBug)
	}
	code, body = do("GET", "/api/topcrashers?state=regressed", triager, "")
	if json.Unmarshal([]byte(body), &top) != nil || len(top.Top.Rows) != 1 || !top.Top.Rows[0].Regressed {
		t.Fatalf("state=regressed: %d %s", code, body)
	}
	code, page := do("GET", "/?state=regressed", triager, "")
	if code != 200 || !strings.Contains(page, `class="regressed"`) || !strings.Contains(page, `href="https://bugzilla.example/show_bug.cgi?id=38"`) {
		t.Fatalf("home page: %d %s", code, page)
	}
	code, page = do("GET", "/signature?"+url.Values{"signature": {sig}}.Encode(), triager, "")
	if code != 200 || !strings.Contains(page, "resolved (2.0) → regressed") || !strings.Contains(page, `action="/signature/triage"`) ||
		!strings.Contains(page, "File a bug in Bugzilla") {
		t.Fatalf("signature page: %d %s", code, page)
	}
	// One new_signature and one regression event, each posted once (by
	// id), the regression's for 2.1 and the crash that regressed it.
	waitUntil(t, "a new_signature and a regression alert", func() bool { return len(hook.byID()) == 2 })
	time.Sleep(200 * time.Millisecond) // duplicates, if any, would arrive now
	kinds := map[string]int{}
	for id, ps := range hook.byID() {
		if len(ps) != 1 {
			t.Errorf("alert %s posted %d times", id, len(ps))
		}
		p := ps[0]
		kinds[p.Event]++
		if p.Signature != sig || p.Product != "Triage" || p.Event == index.AlertRegression && (p.Version != "2.1" || p.CrashID != last.CrashID) {
			t.Errorf("alert: %+v", p)
		}
	}
	if kinds[index.AlertNewSignature] != 1 || kinds[index.AlertRegression] != 1 {
		t.Errorf("alerts by kind: %v", kinds)
	}
	_, metrics := do("GET", "/metrics", admin, "")
	if !strings.Contains(metrics, `crashd_signature_events_total{kind="regression"} 1`) || !strings.Contains(metrics, `crashd_signature_events_total{kind="new_signature"} 1`) {
		t.Errorf("metrics: %s", grepLines(metrics, "crashd_signature_events"))
	}
}

func grepLines(s, sub string) string {
	var out []string
	for _, l := range strings.Split(s, "\n") {
		if strings.Contains(l, sub) {
			out = append(out, l)
		}
	}
	return strings.Join(out, "\n")
}

// TestTriageConfig: version_order and version_orders (per product),
// bug_trackers from the file's JSON and from CRASHD_BUG_TRACKERS; what
// cannot work refused.
func TestTriageConfig(t *testing.T) {
	c := Default()
	c.VersionOrders = []string{"Tool=semver", "Plain=string"}
	env := map[string]string{"CRASHD_BUG_TRACKERS": `[{"name": "GitHub", "kind": "github", "url": "https://github.com/o/r"}]`, "CRASHD_VERSION_ORDER": "mozilla"}
	if err := c.FromEnv(func(k string) (string, bool) { v, ok := env[k]; return v, ok }); err != nil {
		t.Fatal(err)
	}
	if err := c.Check(); err != nil || len(c.BugTrackers) != 1 || c.BugTrackers[0].Kind != "github" {
		t.Fatalf("%v %+v", err, c.BugTrackers)
	}
	order, _ := c.VersionOrderOf()
	if order("Tool") != "semver" || order("Plain") != "string" || order("Other") != "mozilla" {
		t.Errorf("orders: %s %s %s", order("Tool"), order("Plain"), order("Other"))
	}
	for _, f := range []func(*Config){
		func(c *Config) { c.VersionOrder = "natural" },
		func(c *Config) { c.VersionOrders = []string{"Tool"} },
		func(c *Config) { c.VersionOrders = []string{"Tool=lexical"} },
		func(c *Config) {
			c.BugTrackers = []web.BugTracker{{Name: "J", Kind: "jira", URL: "https://jira.example"}}
		},
	} {
		c := Default()
		f(&c)
		if c.Check() == nil {
			t.Errorf("accepted: %+v", c)
		}
	}
	c = Default()
	if err := c.FromEnv(func(k string) (string, bool) { return "{", k == "CRASHD_BUG_TRACKERS" }); err == nil {
		t.Error("CRASHD_BUG_TRACKERS={ accepted")
	}
}
