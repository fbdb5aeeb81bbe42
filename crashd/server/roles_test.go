package server

import (
	"net"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/gobreakpad/gobreakpad/internal/testkit/corpus"
)

// TestRoles runs the collector and the API in one server, whose embedded
// NATS server listens on loopback, and the processor in another connected
// to it (issue 26's split, on one data directory): a crash uploaded to the
// first is processed by the second.
func TestRoles(t *testing.T) {
	dump := corpus.File(t, "breakpad/processor/linux_null_read_av.dmp")
	syms := corpus.File(t, "breakpad/processor/symbols")
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	natsAddr := ln.Addr().String()
	ln.Close()

	front := testConfig(t, nil)
	front.Roles = []string{RoleCollector, RoleWeb}
	front.NATSListen = natsAddr
	fs := startServer(t, front)
	defer fs.stop()

	back := testConfig(t, []string{syms})
	back.Data = front.Data
	back.DB = front.DB
	back.Roles = []string{RoleProcessor}
	back.NATSURL = "nats://" + natsAddr
	bs := startServer(t, back)
	defer bs.stop()

	// The processor's process serves no API, only health and metrics.
	if _, code, _ := getCrash(bs.URL, "00000000-0000-4000-8000-000000261126"); code != 404 {
		t.Errorf("the processor's process answers the API: %d", code)
	}
	id, err := upload(t, fs.URL, dump, map[string]string{"ProductName": "Roles"})
	if err != nil {
		t.Fatal(err)
	}
	c := waitProcessed(t, fs.URL, id, time.Minute)
	if c.Signature == "" || string(c.JSONDump) == "null" {
		t.Errorf("processed crash: %+v", c)
	}
}

// TestRequeueLost: a crash stored, marked queued and indexed as received
// whose queue message was lost (a power loss before the queue's sync) is
// queued again when crashd starts on an empty queue.
func TestRequeueLost(t *testing.T) {
	dump := corpus.File(t, "breakpad/processor/linux_null_read_av.dmp")
	syms := corpus.File(t, "breakpad/processor/symbols")
	cfg := testConfig(t, []string{syms})
	cfg.Roles = []string{RoleCollector, RoleWeb} // nobody processes it yet
	ts := startServer(t, cfg)
	id, err := upload(t, ts.URL, dump, map[string]string{"ProductName": "Lost"})
	if err != nil {
		t.Fatal(err)
	}
	ts.stop()
	// The queue loses everything; the blobs, the marker and the index stay.
	if err := os.RemoveAll(filepath.Join(cfg.Data, "nats")); err != nil {
		t.Fatal(err)
	}
	cfg.Roles = []string{RoleCollector, RoleProcessor, RoleWeb}
	ts = startServer(t, cfg)
	defer ts.stop()
	waitProcessed(t, ts.URL, id, time.Minute)
}
