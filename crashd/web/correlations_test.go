package web

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/gobreakpad/gobreakpad/crashd/auth"
	"github.com/gobreakpad/gobreakpad/crashd/blob"
	"github.com/gobreakpad/gobreakpad/crashd/crash"
	"github.com/gobreakpad/gobreakpad/crashd/index"
)

// TestCorrelations: crashes recorded as the processor records them, one
// module (a hostile name) and one personal annotation only under one
// signature. GET /api/signature/correlations lists the module first,
// 100 % in the signature against a small share overall, and the personal
// value only for view_pii; the signature page shows the section, escaped,
// with the module marked as on every crash; answers are reused for
// CorrelationsTTL; the route needs view_crashes.
func TestCorrelations(t *testing.T) {
	ctx := context.Background()
	ix, err := index.OpenSQLite(ctx, filepath.Join(t.TempDir(), "index.sqlite"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ix.Close() })
	start := time.Now().UTC()
	var clock atomic.Int64
	clock.Store(start.UnixNano())
	now := func() time.Time { return time.Unix(0, clock.Load()).UTC() }
	n := 0
	add := func(sig string, evil bool) {
		n++
		at := start.Add(-time.Duration(n) * time.Minute)
		c := index.Crash{ID: string(crash.New(at, 0)), ReceivedAt: at, Product: "P", Version: "1", OS: "Linux", CPU: "amd64", Signature: sig, Attempts: 1}
		d := index.Details{ProcessType: []string{"parent", "content"}[n%2], Modules: []string{"libc.so.6"},
			CPUInfo: []string{"GenuineIntel family 6 model 158 stepping 10", "AuthenticAMD family 25 model 33 stepping 0"}[n%3%2]}
		if evil {
			d.Modules = append(d.Modules, "ev<il>.so")
			d.Annotations = []index.Annotation{{Name: "Email", Value: "victim@example.com", Personal: true}}
		}
		if _, err := ix.RecordProcessed(ctx, index.Outcome{Crash: c, Details: d}); err != nil {
			t.Fatal(err)
		}
	}
	for i := range 60 {
		add(fmt.Sprintf("other%d", i%5), false)
		if i%10 == 0 {
			add("evil", true)
		}
	}
	reader, rt, _ := auth.NewToken("reader", auth.ScopeViewCrashes)
	pii, pt, _ := auth.NewToken("pii", auth.ScopeViewPII)
	authn, err := auth.NewAuthenticator([]auth.Token{rt, pt}, nil)
	if err != nil {
		t.Fatal(err)
	}
	w, err := New(Config{Auth: authn, Now: now, IndexedAnnotations: []string{"Email"}}, blob.NewMem(), nil, ix, nil)
	if err != nil {
		t.Fatal(err)
	}
	mux := auth.NewTable(auth.Crashd(auth.RouteOptions{}), authn, false, nil)
	w.Register(mux)
	if err := mux.Err(); err != nil {
		t.Fatal(err)
	}
	get := func(path, token string) (int, string) {
		t.Helper()
		req := httptest.NewRequest("GET", path, nil)
		if token != "" {
			req.Header.Set("Authorization", "Bearer "+token)
		}
		rec := httptest.NewRecorder()
		mux.ServeHTTP(rec, req)
		return rec.Code, rec.Body.String()
	}
	api := "/api/signature/correlations?signature=evil&product=P"
	code, body := get(api, reader)
	if code != http.StatusOK {
		t.Fatalf("%s: %d %s", api, code, body)
	}
	var d CorrelationsData
	if err := json.Unmarshal([]byte(body), &d); err != nil {
		t.Fatal(err)
	}
	if d.SignatureCrashes != 6 || d.OverallCrashes != 66 || d.Period != 7 || len(d.Items) == 0 {
		t.Fatalf("answer %+v", d)
	}
	if it := d.Items[0]; it.Field != index.FieldModule || it.Value != "ev<il>.so" || it.ShareInSignature != 1 || !it.All ||
		it.Overall != 6 || it.ShareOthers != 0 {
		t.Errorf("first correlation %+v, want module ev<il>.so in all 6 crashes, 6 of 66 overall", it)
	}
	if strings.Contains(body, "victim") {
		t.Errorf("a reader without view_pii sees a personal value: %s", body)
	}
	if code, body := get(api, pii); code != http.StatusOK || !strings.Contains(body, `"value":"victim@example.com"`) {
		t.Errorf("view_pii: %d, no personal correlation in %s", code, body)
	}
	// Without product=: the signature's product.
	if code, body := get("/api/signature/correlations?signature=evil", reader); code != http.StatusOK || !strings.Contains(body, `"product":"P"`) {
		t.Errorf("without product: %d %s", code, body)
	}
	// The page: its section, escaped, the module marked.
	code, page := get("/signature?signature=evil", reader)
	if code != http.StatusOK {
		t.Fatalf("page: %d %s", code, page)
	}
	sec := page[strings.Index(page, `id="correlations"`):]
	if !strings.Contains(sec, "ev&lt;il&gt;.so <strong class=\"all\">all crashes of this signature have it</strong>") || strings.Contains(page, "ev<il>") ||
		strings.Contains(page, "victim") || !strings.Contains(sec, "100.0 %") {
		t.Errorf("page's correlations section: %s", sec[:min(len(sec), 3000)])
	}
	if code, page := get("/signature?signature=evil", pii); code != http.StatusOK || !strings.Contains(page, "victim@example.com") {
		t.Errorf("page for view_pii: %d, no personal correlation", code)
	}
	// Reused within CorrelationsTTL: a new crash is not counted until it
	// has passed.
	add("evil", true)
	if _, body := get(api, reader); !strings.Contains(body, `"signature_crashes":6,`) {
		t.Errorf("within the TTL, the answer changed: %s", body)
	}
	clock.Add(int64(CorrelationsTTL + time.Second))
	if _, body := get(api, reader); !strings.Contains(body, `"signature_crashes":7,`) {
		t.Errorf("after the TTL, the answer is the old one: %s", body)
	}
	for path, want := range map[string]int{
		"/api/signature/correlations":                              http.StatusBadRequest,
		"/api/signature/correlations?signature=evil&days=5":        http.StatusBadRequest,
		"/api/signature/correlations?signature=nothing":            http.StatusNotFound,
		"/api/signature/correlations?signature=evil&product=other": http.StatusNotFound,
	} {
		if code, body := get(path, reader); code != want {
			t.Errorf("%s: %d %s, want %d", path, code, body, want)
		}
	}
	if code, _ := get(api, ""); code != http.StatusUnauthorized {
		t.Errorf("without a token: %d, want 401", code)
	}
	if code, _ := get("/api/signature/correlations?signature="+url.QueryEscape("evil"), "nonsense"); code != http.StatusUnauthorized {
		t.Errorf("with an unknown token: %d, want 401", code)
	}
}
