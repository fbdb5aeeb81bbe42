//go:build unix

package server

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gobreakpad/gobreakpad/crashd/alert"
	"github.com/gobreakpad/gobreakpad/crashd/auth"
	"github.com/gobreakpad/gobreakpad/crashd/crash"
	"github.com/gobreakpad/gobreakpad/crashd/index"
	"github.com/gobreakpad/gobreakpad/crashd/scaletest"
	"github.com/gobreakpad/gobreakpad/internal/testkit/corpus"
)

// TestAlertsTwoProcessors: a collector and page server and two processors
// (three crashd servers with data directories of their own) sharing a
// nats-server's JetStream queue and one index, with a webhook receiver on
// loopback. Crashes of three signatures, each uploaded three times, are
// processed by both processors: the receiver gets exactly one
// new_signature event per signature, each once, with its fields and a
// link under public_url. A regression notified by both processors at once
// and the spike check run in both reach it once. The delivery log (page
// and API, scope admin) lists the deliveries.
func TestAlertsTwoProcessors(t *testing.T) {
	if scaletest.NATSServer() == "" {
		t.Skip("nats-server is not installed (apt-get install nats-server): alerts test skipped")
	}
	dumps := []string{
		corpus.File(t, "breakpad/processor/linux_null_read_av.dmp"),
		corpus.File(t, "breakpad/processor/linux_divide_by_zero.dmp"),
		corpus.File(t, "breakpad/processor/linux_raise_sigabrt.dmp"),
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cl, err := scaletest.StartNATS(ctx, t.TempDir(), 3)
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Stop()
	hook := newHookReceiver(t)
	hooks := []alert.Webhook{{Name: "test", URL: hook.URL + "/hook"}}

	front := testConfig(t, nil)
	front.Roles = []string{RoleCollector, RoleWeb}
	front.NATSURL, front.Blobs = cl.URL(), "nats"
	front.Webhooks, front.PublicURL = hooks, "https://crashes.example.com"
	triager, tt, _ := auth.NewToken("triager", auth.ScopeTriage)
	admin, at, _ := auth.NewToken("admin", auth.ScopeAdmin)
	front.SymbolServer.Tokens = append(front.SymbolServer.Tokens, tt, at)
	if front.DB == "" {
		front.DB = filepath.Join(t.TempDir(), "index.sqlite")
	}
	var backCfgs []Config
	for range 2 {
		b := testConfig(t, nil)
		b.Roles = []string{RoleProcessor}
		b.NATSURL, b.Blobs, b.DB = cl.URL(), "nats", front.DB
		b.Webhooks, b.PublicURL = hooks, front.PublicURL
		b.SpikeMinCount = 3
		backCfgs = append(backCfgs, b)
	}
	fs := startServer(t, front)
	defer fs.stop()
	var backs []*testServer
	for _, b := range backCfgs {
		bs := startServer(t, b)
		defer bs.stop()
		backs = append(backs, bs)
	}
	var ids []crash.ID
	dumpOf := map[crash.ID]string{}
	for range 3 {
		for _, d := range dumps {
			id, err := upload(t, fs.URL, d, map[string]string{"ProductName": "Alerts", "Version": "1.0"})
			if err != nil {
				t.Fatal(err)
			}
			ids = append(ids, id)
			dumpOf[id] = d
		}
	}
	sigs := map[string]crash.ID{}
	for _, id := range ids {
		c := waitProcessed(t, fs.URL, id, time.Minute)
		if c.Signature == "" {
			t.Fatalf("%s: no signature", id)
		}
		sigs[c.Signature] = id
	}
	if len(sigs) != 3 {
		t.Fatalf("signatures %v: want 3 different", sigs)
	}
	newSig := func() map[string][]alert.Payload {
		m := map[string][]alert.Payload{}
		for _, ps := range hook.byID() {
			if ps[0].Event == index.AlertNewSignature {
				m[ps[0].Signature] = ps
			}
		}
		return m
	}
	waitUntil(t, "three new_signature events", func() bool { return len(newSig()) == 3 })

	// A regression seen by both processors at once (as the triage
	// branch's index will report it), and the spike check of both.
	reg := index.NewAlertEvent(index.AlertRegression, "Alerts", anySignature(sigs), "1.0", "", 1, time.Now())
	var wg sync.WaitGroup
	for _, b := range backs {
		wg.Go(func() {
			if err := b.srv.alerts.Notify(ctx, reg); err != nil {
				t.Error(err)
			}
		})
	}
	wg.Wait()
	for _, b := range backs {
		b.srv.alerts.CheckSpikes(ctx)
	}
	kinds := func() map[string]int {
		m := map[string]int{}
		for _, ps := range hook.byID() {
			m[ps[0].Event]++
		}
		return m
	}
	// A real regression: a signature resolved in 2.0 through the triage
	// API, then a crash of it as 2.1, indexed by one of the processors:
	// its event is written in that crash's transaction and posted once
	// by whichever dispatcher claims it.
	resolved := anySignature(sigs)
	body, _ := json.Marshal(map[string]string{"product": "Alerts", "signature": resolved, "state": "resolved", "fixed_in": "2.0"})
	req, _ := http.NewRequest("POST", fs.URL+"/api/signature/triage", bytes.NewReader(body))
	req.Header.Set("Authorization", "Bearer "+triager)
	req.Header.Set("Content-Type", "application/json")
	if resp, err := http.DefaultClient.Do(req); err != nil || resp.StatusCode != 200 {
		t.Fatalf("resolve: %v %v", err, resp)
	} else {
		resp.Body.Close()
	}
	again, err := upload(t, fs.URL, dumpOf[sigs[resolved]], map[string]string{"ProductName": "Alerts", "Version": "2.1"})
	if err != nil {
		t.Fatal(err)
	}
	waitProcessed(t, fs.URL, again, time.Minute)
	waitUntil(t, "the regressions and the spikes", func() bool { k := kinds(); return k["regression"] == 2 && k["spike"] == 3 })
	var real int
	for _, ps := range hook.byID() {
		if p := ps[0]; p.Event == index.AlertRegression && p.Version == "2.1" {
			real++
			if p.CrashID != string(again) || p.Signature != resolved {
				t.Errorf("regression payload %+v", p)
			}
		}
	}
	if real != 1 {
		t.Errorf("%d regressions of 2.1 posted, want 1", real)
	}
	time.Sleep(200 * time.Millisecond) // duplicates, if any, would arrive now
	for id, ps := range hook.byID() {
		if len(ps) != 1 {
			t.Errorf("event %s posted %d times (a healthy receiver: once)", id, len(ps))
		}
		p := ps[0]
		if p.Product != "Alerts" || p.Version != "1.0" && p.Event != index.AlertSpike && p.Version != "2.1" || p.Signature == "" ||
			p.Link != "https://crashes.example.com/signature?signature="+urlQueryEscape(p.Signature) || p.Text == "" {
			t.Errorf("payload %+v", p)
		}
		if p.Event == index.AlertNewSignature && (p.CrashID == "" || p.Count != 1) {
			t.Errorf("new_signature payload %+v", p)
		}
		if p.Event == index.AlertSpike && p.Count != 3 {
			t.Errorf("spike payload %+v", p)
		}
	}
	if k := kinds(); k["new_signature"] != 3 || len(k) != 3 {
		t.Errorf("events by kind: %v", k)
	}

	// The delivery log, with an admin token.
	for _, path := range []string{"/api/admin/webhooks", "/admin/webhooks"} {
		req, _ := http.NewRequest("GET", fs.URL+path, nil)
		noRedirect := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
		if resp, err := noRedirect.Do(req); err != nil || resp.StatusCode == http.StatusOK {
			t.Errorf("%s without a token: %v %v", path, err, resp)
		} else {
			resp.Body.Close()
		}
		req.Header.Set("Auth-Token", admin)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != 200 || strings.Contains(string(b), hook.URL) || strings.Count(string(b), "delivered") < 8 {
			t.Errorf("%s: %d\n%s", path, resp.StatusCode, b)
		}
	}
}

// anySignature returns one of the signatures.
func anySignature(sigs map[string]crash.ID) string {
	for s := range sigs {
		return s
	}
	return ""
}

func urlQueryEscape(s string) string {
	return strings.TrimPrefix(alert.NewPayload(alert.Event{Signature: s}, "").Link, "/signature?signature=")
}
