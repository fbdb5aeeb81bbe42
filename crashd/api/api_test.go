package api

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/gobreakpad/gobreakpad/crashd/auth"
	"github.com/gobreakpad/gobreakpad/crashd/blob"
	"github.com/gobreakpad/gobreakpad/crashd/crash"
	"github.com/gobreakpad/gobreakpad/crashd/index"
	"github.com/gobreakpad/gobreakpad/crashd/queue"
	"github.com/gobreakpad/gobreakpad/crashd/walk"
)

func TestAPI(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	q, err := queue.Embedded(ctx, queue.EmbeddedConfig{Dir: filepath.Join(dir, "nats")}, queue.Config{})
	if err != nil {
		t.Fatal(err)
	}
	defer q.Close()
	ix, err := index.OpenSQLite(ctx, filepath.Join(dir, "index.sqlite"))
	if err != nil {
		t.Fatal(err)
	}
	defer ix.Close()
	store := blob.NewMem()

	// A processed crash, a received one (raw crash only), a failed one.
	now := time.Now().UTC()
	processed, received, failed := crash.New(now, 0), crash.New(now, 0), crash.New(now, 0)
	for _, id := range []crash.ID{processed, received, failed} {
		raw := &crash.RawCrash{UUID: id, SubmittedTimestamp: now, Version: 2,
			Annotations: map[string]any{"ProductName": "P", "Version": "2", "URL": "https://secret", "Comments": "my words"},
			Metadata:    crash.Metadata{Restricted: []string{"URL"}}}
		b, err := json.Marshal(raw)
		if err != nil {
			t.Fatal(err)
		}
		if err := store.Put(ctx, crash.RawCrashKey(id), b); err != nil {
			t.Fatal(err)
		}
		if err := ix.Received(ctx, index.Crash{ID: string(id), ReceivedAt: now, Product: "P", Version: "2"}); err != nil {
			t.Fatal(err)
		}
	}
	pc := &crash.ProcessedCrash{CrashID: processed, ProductName: "P", Version: "2", Signature: "sig <a>", CrashReason: "SIGSEGV",
		JSONDump: json.RawMessage(`{"crashing_thread":{"frames":[]}}`), ProcessorNotes: []string{"note"}, Success: true}
	// The setup's errors fail the test (they were ignored: a broken
	// store or index made the checks below test nothing).
	b, err := walk.Marshal(pc)
	if err != nil {
		t.Fatal(err)
	}
	if err := store.Put(ctx, crash.ProcessedCrashKey(processed), b); err != nil {
		t.Fatal(err)
	}
	if err := ix.Processed(ctx, index.Crash{ID: string(processed), ReceivedAt: now, Product: "P", Version: "2", Signature: "sig <a>", CrashReason: "SIGSEGV", Attempts: 1}); err != nil {
		t.Fatal(err)
	}
	if err := ix.Failed(ctx, string(failed), now, 3, "boom"); err != nil {
		t.Fatal(err)
	}
	if err := q.DeadLetter(ctx, string(failed), "boom"); err != nil {
		t.Fatal(err)
	}

	// crashd's route table in front, as crashd serves the API: a reader
	// (view_crashes), a token with view_pii, api_token ("tok").
	reader, rt, _ := auth.NewToken("reader", auth.ScopeViewCrashes)
	pii, pt, _ := auth.NewToken("pii", auth.ScopeViewPII)
	upload, ut, _ := auth.NewToken("ci", auth.ScopeUpload)
	authn, err := auth.NewAuthenticator([]auth.Token{rt, pt, ut, {Name: "api_token", SHA256: auth.HashToken("tok"), Scopes: []string{auth.ScopeReprocess}}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	mux := auth.NewTable(auth.Crashd(auth.RouteOptions{}), authn, false, nil)
	a := New(Config{}, store, q, ix, nil)
	a.Register(mux)
	a.RegisterHealth(mux)
	if err := mux.Err(); err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(mux)
	defer srv.Close()
	do := func(method, path, token string) (int, map[string]any) {
		req, _ := http.NewRequest(method, srv.URL+path, nil)
		if token != "" {
			req.Header.Set("Authorization", "Bearer "+token)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		body, _ := io.ReadAll(resp.Body)
		var m map[string]any
		if err := json.Unmarshal(body, &m); err != nil {
			t.Errorf("%s %s: not JSON: %q", method, path, body)
		}
		return resp.StatusCode, m
	}

	for _, tok := range []string{"", upload} {
		if code, _ := do("GET", "/api/crashes/"+string(processed), tok); code != 401 && code != 403 {
			t.Errorf("a crash read without view_crashes (token %q): %d", tok, code)
		}
	}
	if _, m := do("GET", "/api/crashes/"+string(processed), pii); m["annotations"].(map[string]any)["URL"] != "https://secret" ||
		m["annotations"].(map[string]any)["Comments"] != "my words" {
		t.Errorf("annotations with view_pii: %v", m["annotations"])
	}
	code, m := do("GET", "/api/crashes/bp-"+string(processed), reader)
	if code != 200 || m["status"] != "processed" || m["signature"] != "sig <a>" || m["product"] != "P" ||
		m["json_dump"] == nil || len(m["notes"].([]any)) != 1 {
		t.Errorf("processed: %d %v", code, m)
	}
	// Comments is personal though the collector did not restrict it.
	if ann, _ := m["annotations"].(map[string]any); ann["URL"] != nil || ann["Comments"] != nil || ann["ProductName"] != "P" {
		t.Errorf("annotations (URL restricted): %v", m["annotations"])
	}
	if code, m := do("GET", "/api/crashes/"+string(received), reader); code != 200 || m["status"] != "received" || m["json_dump"] != nil {
		t.Errorf("received: %d %v", code, m)
	}
	if code, m := do("GET", "/api/crashes/"+string(failed), reader); code != 200 || m["status"] != "failed" || m["error"] != "boom" {
		t.Errorf("failed: %d %v", code, m)
	}
	if code, _ := do("GET", "/api/crashes/"+string(crash.New(now, 0)), reader); code != 404 {
		t.Errorf("unknown crash: %d", code)
	}
	if code, _ := do("GET", "/api/crashes/nonsense", reader); code != 400 {
		t.Errorf("malformed id: %d", code)
	}
	for path, want := range map[string]int{
		"/api/crashes?product=P":                          3,
		"/api/crashes?product=P&status=failed":            1,
		"/api/crashes?signature=sig+%3Ca%3E":              1,
		"/api/crashes?since=2000-01-01&limit=2":           2,
		"/api/crashes?before=" + now.Format("2006-01-02"): 0,
	} {
		code, m := do("GET", path, reader)
		if cs, _ := m["crashes"].([]any); code != 200 || len(cs) != want {
			t.Errorf("%s: %d, %d crashes, want %d", path, code, len(cs), want)
		}
		if strings.Contains(path, "limit=2") && m["next"] == nil {
			t.Errorf("%s: no next page", path)
		}
	}
	// The three crashes share their received_at: paged one at a time by
	// the next links (cursor=), each is seen once; before= from an older
	// client pages on by cursor.
	for _, first := range []string{"/api/crashes?limit=1", "/api/crashes?limit=1&before=" + now.Add(time.Second).Format(time.RFC3339Nano)} {
		seen := map[any]int{}
		path := first
		for i := 0; path != "" && i < 10; i++ {
			code, m := do("GET", path, reader)
			if code != 200 {
				t.Fatalf("%s: %d %v", path, code, m)
			}
			for _, c := range m["crashes"].([]any) {
				seen[c.(map[string]any)["crash_id"]]++
			}
			path = ""
			if next, _ := m["next"].(string); next != "" {
				if strings.Contains(next, "before=") || !strings.Contains(next, "cursor=") {
					t.Errorf("next page %q: cursor= expected, not before=", next)
				}
				path = "/api/crashes?" + next
			}
		}
		if len(seen) != 3 || seen[string(processed)] != 1 || seen[string(received)] != 1 || seen[string(failed)] != 1 {
			t.Errorf("paging from %s: %v", first, seen)
		}
	}
	for _, path := range []string{"/api/crashes?cursor=x", "/api/crashes?cursor=2026-01-01T00:00:00Z,", "/api/crashes?limit=0", "/api/crashes?limit=x", "/api/crashes?since=yesterday", "/api/crashes?status=lost"} {
		if code, _ := do("GET", path, reader); code != 400 {
			t.Errorf("%s: %d, want 400", path, code)
		}
	}
	if code, _ := do("POST", "/api/crashes/"+string(failed)+"/reprocess", ""); code != 401 {
		t.Errorf("reprocess without the token: %d", code)
	}
	if code, _ := do("POST", "/api/crashes/"+string(failed)+"/reprocess", "wrong"); code != 401 {
		t.Errorf("reprocess with a wrong token: %d", code)
	}
	if code, _ := do("POST", "/api/crashes/"+string(failed)+"/reprocess", reader); code != 403 {
		t.Errorf("reprocess with a reader's token: %d", code)
	}
	if code, m := do("POST", "/api/crashes/"+string(failed)+"/reprocess", "tok"); code != 202 || m["status"] != "queued" {
		t.Errorf("reprocess: %d %v", code, m)
	}
	// Waiting to be reprocessed: not queued again, on either route.
	for _, path := range []string{"/api/crashes/" + string(failed) + "/reprocess", "/api/report/" + string(failed) + "/reprocess"} {
		if code, m := do("POST", path, "tok"); code != 202 || m["status"] != "already_queued" {
			t.Errorf("%s again: %d %v", path, code, m)
		}
	}
	if d, err := q.Depth(ctx); err != nil || d.Waiting[queue.Reprocess] != 1 {
		t.Errorf("reprocess queue: %+v %v", d, err)
	}
	if c, _ := ix.Get(ctx, string(failed)); c.Status != index.Received {
		t.Errorf("after reprocess: %+v", c)
	}
	if code, _ := do("POST", "/api/crashes/"+string(crash.New(now, 0))+"/reprocess", "tok"); code != 404 {
		t.Errorf("reprocess of an unknown crash: %d", code)
	}
	if code, m := do("GET", "/api/dead", reader); code != 200 || len(m["dead_letters"].([]any)) != 0 {
		t.Errorf("dead letters after reprocessing: %d %v", code, m)
	}
	if code, m := do("GET", "/__heartbeat__", ""); code != 200 || len(m) != 1 || len(m["errors"].([]any)) != 0 {
		t.Errorf("heartbeat: %d %v", code, m)
	}
	if code, _ := do("GET", "/__lbheartbeat__", ""); code != 200 {
		t.Errorf("lbheartbeat: %d", code)
	}
	if code, m := do("GET", "/__version__", ""); code != 200 || m["source"] == nil {
		t.Errorf("version: %d %v", code, m)
	}
	// The index gone: the heartbeat says so.
	ix.Close()
	// Antenna's body: 503, {"errors": [{"name", "msg"}]}.
	if code, m := do("GET", "/__heartbeat__", ""); code != 503 || len(m["errors"].([]any)) != 1 ||
		m["errors"].([]any)[0].(map[string]any)["name"] != "index" || m["errors"].([]any)[0].(map[string]any)["msg"] == "" {
		t.Errorf("heartbeat without an index: %d %v", code, m)
	}
}
