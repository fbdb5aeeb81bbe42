package server

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"github.com/gobreakpad/gobreakpad/crashd/alert"
)

// hookReceiver is a webhook receiver on loopback: every payload it got.
type hookReceiver struct {
	*httptest.Server
	mu  sync.Mutex
	got []alert.Payload
}

func newHookReceiver(t *testing.T) *hookReceiver {
	r := &hookReceiver{}
	r.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		b, _ := io.ReadAll(io.LimitReader(req.Body, 1<<20))
		var p alert.Payload
		if err := json.Unmarshal(b, &p); err != nil {
			t.Errorf("receiver: %v: %s", err, b)
		}
		r.mu.Lock()
		r.got = append(r.got, p)
		r.mu.Unlock()
	}))
	t.Cleanup(r.Close)
	return r
}

// byID returns the payloads by event id.
func (r *hookReceiver) byID() map[string][]alert.Payload {
	r.mu.Lock()
	defer r.mu.Unlock()
	m := map[string][]alert.Payload{}
	for _, p := range r.got {
		m[p.ID] = append(m[p.ID], p)
	}
	return m
}

// waitUntil polls cond for up to 20 s.
func waitUntil(t *testing.T, what string, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(20 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		if cond() {
			return
		}
	}
	t.Fatalf("timed out waiting for %s", what)
}
