package alert

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gobreakpad/gobreakpad/crashd/index"
)

// TestSpike: the rule's edges: the floor, and factor times the hourly
// mean of the week.
func TestSpike(t *testing.T) {
	for _, c := range []struct {
		hour, week int
		want       bool
	}{
		{9, 0, false},      // under the floor, no history
		{10, 0, true},      // the floor, no history
		{10, 336, true},    // mean 2/h: 10 = 5 × 2
		{9, 336, false},    // under the floor anyway
		{49, 1680, false},  // mean 10/h: 49 < 50
		{50, 1680, true},   // 5 × 10
		{500, 16800, true}, // mean 100/h
		{499, 16800, false},
	} {
		if got := Spike(c.hour, c.week, DefaultSpikeMin, DefaultSpikeFactor); got != c.want {
			t.Errorf("Spike(%d, %d) = %v, want %v", c.hour, c.week, got, c.want)
		}
	}
}

// TestPayload: the fields, the links under public_url, and the text line
// with Slack's three characters escaped.
func TestPayload(t *testing.T) {
	e := Event{ID: "abc", Kind: index.AlertNewSignature, Product: "App<1>", Version: "2.0", Signature: "a&b <c> d\n",
		CrashID: "00000001-0000-4000-8000-000010261126", Count: 1, CreatedAt: time.Date(2026, 11, 26, 1, 2, 3, 0, time.UTC)}
	p := NewPayload(e, "https://crashes.example.com/")
	b, _ := json.Marshal(p)
	var m map[string]any
	json.Unmarshal(b, &m)
	for _, k := range []string{"id", "event", "signature", "product", "version", "crash_id", "count", "link", "text"} {
		if _, ok := m[k]; !ok {
			t.Errorf("payload lacks %q: %s", k, b)
		}
	}
	if p.Link != "https://crashes.example.com/signature?signature=a%26b+%3Cc%3E+d%0A" {
		t.Errorf("link %q", p.Link)
	}
	if p.CrashLink != "https://crashes.example.com/report/00000001-0000-4000-8000-000010261126" {
		t.Errorf("crash link %q", p.CrashLink)
	}
	want := "New crash signature in App&lt;1&gt; 2.0: a&amp;b &lt;c&gt; d  (<" + p.Link + "|signature>)"
	if p.Text != want {
		t.Errorf("text\n %q\nwant\n %q", p.Text, want)
	}
	long := NewPayload(Event{Kind: index.AlertSpike, Signature: strings.Repeat("é", 400), Count: 12}, "http://x")
	if sig, _, _ := strings.Cut(long.Text, "…"); !strings.Contains(long.Text, "12 crashes in the last hour") || len(sig) > 320 || !strings.Contains(long.Text, "…") {
		t.Errorf("spike text: %q", long.Text)
	}
}

// TestCheckWebhooks: URLs, event kinds, names.
func TestCheckWebhooks(t *testing.T) {
	ok := []Webhook{{URL: "https://hooks.slack.com/services/T/B/X"}, {Name: "b", URL: "http://127.0.0.1:9/x", Events: []string{"spike"}}}
	if err := CheckWebhooks(ok); err != nil || ok[0].Name != "hooks.slack.com" {
		t.Fatalf("%v %+v", err, ok)
	}
	for _, bad := range [][]Webhook{
		{{URL: "ftp://x/y"}},
		{{URL: "/relative"}},
		{{URL: "http://user:pw@x/"}},
		{{URL: "http://x/", Events: []string{"crash"}}},
		{{URL: "http://x/a"}, {URL: "http://x/b"}},
	} {
		if err := CheckWebhooks(bad); err == nil {
			t.Errorf("%+v accepted", bad)
		}
	}
}

// receiver is a webhook receiver on loopback keeping the payloads it got;
// it answers fail's status to the first failN requests.
type receiver struct {
	*httptest.Server
	mu    sync.Mutex
	got   []Payload
	heads []http.Header
	failN int
	fail  int
}

func newReceiver(t *testing.T, failN, fail int) *receiver {
	r := &receiver{failN: failN, fail: fail}
	r.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		b, _ := io.ReadAll(req.Body)
		var p Payload
		if err := json.Unmarshal(b, &p); err != nil {
			t.Errorf("receiver: %v: %s", err, b)
		}
		r.mu.Lock()
		defer r.mu.Unlock()
		r.got = append(r.got, p)
		r.heads = append(r.heads, req.Header.Clone())
		if len(r.got) <= r.failN {
			http.Error(w, "not now <b>", r.fail)
			return
		}
		w.Write([]byte("ok"))
	}))
	t.Cleanup(r.Close)
	return r
}

func (r *receiver) payloads() []Payload {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]Payload(nil), r.got...)
}

func openIndex(t *testing.T, path string) *index.SQL {
	t.Helper()
	ix, err := index.OpenSQLite(context.Background(), path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ix.Close() })
	return ix
}

// waitFor polls cond for up to 10 s.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		if cond() {
			return
		}
	}
	t.Fatalf("timed out waiting for %s", what)
}

func run(t *testing.T, d *Dispatcher) {
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); d.Run(ctx) }()
	t.Cleanup(func() { cancel(); <-done })
}

// TestDeliver: an event is posted to the webhooks that want it, retried
// with backoff while the receiver fails (the same id each time), recorded
// attempt by attempt; a webhook of another product gets nothing; a
// receiver failing for good is given up after MaxAttempts; a redirect to
// another host is not followed; the log page escapes what it shows.
func TestDeliver(t *testing.T) {
	ctx := context.Background()
	ix := openIndex(t, filepath.Join(t.TempDir(), "index.sqlite"))
	flaky := newReceiver(t, 2, http.StatusServiceUnavailable)
	down := newReceiver(t, 1000, http.StatusInternalServerError)
	other := newReceiver(t, 0, 0)
	elsewhere := newReceiver(t, 0, 0)
	redirect := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		// 127.0.0.1 and localhost: another host.
		http.Redirect(w, r, strings.Replace(elsewhere.URL, "127.0.0.1", "localhost", 1), http.StatusTemporaryRedirect)
	}))
	defer redirect.Close()
	cfg := Config{PublicURL: "https://crashes.example.com", Owner: "test", BaseDelay: 20 * time.Millisecond, MaxDelay: 50 * time.Millisecond,
		MaxAttempts: 3, Poll: 10 * time.Millisecond, Webhooks: []Webhook{
			{Name: "flaky", URL: flaky.URL + "/hook", Products: []string{"App"}},
			{Name: "down", URL: down.URL, Events: []string{index.AlertNewSignature}},
			{Name: "other", URL: other.URL, Products: []string{"Other"}},
			{Name: "redirect", URL: redirect.URL},
		}}
	d, err := New(cfg, ix, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	run(t, d)
	e := Event{ID: index.AlertID(index.AlertNewSignature, "<script>x</script>"), Kind: index.AlertNewSignature, Product: "App", Version: "1.0",
		Signature: "<script>x</script>", CrashID: "c1", Count: 1}
	if err := d.Notify(ctx, e); err != nil {
		t.Fatal(err)
	}
	if err := d.Notify(ctx, e); err != nil { // once per id
		t.Fatal(err)
	}
	waitFor(t, "the deliveries to finish", func() bool {
		ds, err := ix.AlertDeliveries(ctx, 10)
		if err != nil || len(ds) != 3 {
			return false
		}
		for _, x := range ds {
			if x.State == index.DeliveryPending {
				return false
			}
		}
		return true
	})
	got := flaky.payloads()
	if len(got) != 3 {
		t.Fatalf("flaky receiver got %d posts, want 3 (two failures, then delivered)", len(got))
	}
	for _, p := range got {
		if p.ID != e.ID || p.Event != "new_signature" || p.Signature != e.Signature || p.CrashID != "c1" || !strings.HasPrefix(p.Link, "https://crashes.example.com/signature?") {
			t.Errorf("payload %+v", p)
		}
	}
	if h := flaky.heads[0]; h.Get("Idempotency-Key") != e.ID || h.Get("Content-Type") != "application/json" {
		t.Errorf("headers %v", h)
	}
	if n := len(down.payloads()); n != 3 {
		t.Errorf("down receiver got %d posts, want MaxAttempts 3", n)
	}
	if n := len(other.payloads()) + len(elsewhere.payloads()); n != 0 {
		t.Errorf("other product's webhook or the redirect's target got %d posts", n)
	}
	states := map[string]index.AlertDelivery{}
	ds, _ := ix.AlertDeliveries(ctx, 10)
	for _, x := range ds {
		states[x.Webhook] = x
	}
	if s := states["flaky"]; s.State != index.DeliveryDelivered || s.Attempts != 3 || s.LastCode != 200 {
		t.Errorf("flaky: %+v", s)
	}
	if s := states["down"]; s.State != index.DeliveryFailed || s.Attempts != 3 || s.LastCode != 500 || !strings.Contains(s.LastError, "not now") {
		t.Errorf("down: %+v", s)
	}
	if s := states["redirect"]; s.State != index.DeliveryPending && s.LastCode != http.StatusTemporaryRedirect {
		t.Errorf("redirect: %+v", s)
	}
	atts, _ := ix.AlertAttempts(ctx, e.ID)
	if len(atts) != 9 {
		t.Errorf("%d attempts logged, want 9: %+v", len(atts), atts)
	}

	// The log: page and API.
	a := &Admin{Store: ix, Webhooks: cfg.Webhooks}
	rec := httptest.NewRecorder()
	a.ServePage(rec, httptest.NewRequest("GET", "/admin/webhooks?event="+e.ID, nil))
	page := rec.Body.String()
	if strings.Contains(page, "<script>") || !strings.Contains(page, "&lt;script&gt;") || strings.Contains(page, flaky.URL) ||
		!strings.Contains(page, "HTTP 503") {
		t.Errorf("page:\n%s", page)
	}
	rec = httptest.NewRecorder()
	a.ServeAPI(rec, httptest.NewRequest("GET", "/api/admin/webhooks", nil))
	var log AdminLog
	if err := json.Unmarshal(rec.Body.Bytes(), &log); err != nil || len(log.Deliveries) != 3 || len(log.Webhooks) != 4 || strings.Contains(rec.Body.String(), flaky.URL) {
		t.Errorf("api: %v %s", err, rec.Body)
	}
}

// TestSpikes: the signatures processed since the last check spike by the
// rule against the index's counts, once per signature and hour even when
// two dispatchers (processes) check.
func TestSpikes(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "index.sqlite")
	ix := openIndex(t, path)
	ix2 := openIndex(t, path)
	now := time.Now().UTC()
	n := 0
	rec := func(sig string, at time.Time, k int) {
		for range k {
			n++
			id := fmt.Sprintf("%08x-0000-4000-8000-%05x0%s", n, n, at.Format("060102"))
			c := index.Crash{ID: id, ReceivedAt: at, Product: "App", Signature: sig, Attempts: 1}
			if _, err := ix.RecordProcessed(ctx, index.Outcome{Crash: c}); err != nil {
				t.Fatal(err)
			}
		}
	}
	rec("steady", now.AddDate(0, 0, -3), 480)   // the week's mean: 480/168 ≈ 2.9 an hour
	rec("steady", now.Add(-10*time.Minute), 12) // 12 < 5 × 2.9
	rec("burst", now.Add(-10*time.Minute), 12)  // no history
	rec("few", now.Add(-10*time.Minute), 4)
	var ds []*Dispatcher
	for _, x := range []*index.SQL{ix, ix2} {
		d, err := New(Config{Webhooks: []Webhook{{URL: "http://127.0.0.1:9/"}}}, x, nil, nil)
		if err != nil {
			t.Fatal(err)
		}
		for _, s := range []string{"steady", "burst", "few"} {
			d.Processed(ctx, index.Crash{ID: "c-" + s, Signature: s})
		}
		d.CheckSpikes(ctx)
		ds = append(ds, d)
	}
	evs, err := ix.AlertEventsToFanOut(ctx, 10)
	if err != nil || len(evs) != 1 {
		t.Fatalf("events %+v %v", evs, err)
	}
	if e := evs[0]; e.Kind != index.AlertSpike || e.Signature != "burst" || e.Count != 12 || e.Product != "App" || e.CrashID != "c-burst" {
		t.Errorf("spike %+v", e)
	}
	// Checked again within the hour: nothing new.
	ds[0].Processed(ctx, index.Crash{ID: "c2", Signature: "burst"})
	ds[0].CheckSpikes(ctx)
	if evs, _ := ix.AlertEventsToFanOut(ctx, 10); len(evs) != 1 {
		t.Errorf("events %+v", evs)
	}
}
