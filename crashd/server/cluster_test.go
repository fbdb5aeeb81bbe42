//go:build unix

package server

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/gobreakpad/gobreakpad/crashd/scaletest"
	"github.com/gobreakpad/gobreakpad/internal/testkit/corpus"
)

// TestScaleOut: a collector and page server, and a processor, as two
// processes with data directories of their own, sharing a 3-node
// nats-server cluster (queue, blobs in the replicated object store, leases)
// and the index (PostgreSQL when CRASHD_TEST_POSTGRES names one): a crash
// uploaded to the first is processed by the second, and no blob is in
// either data directory.
func TestScaleOut(t *testing.T) {
	if scaletest.NATSServer() == "" {
		t.Skip("nats-server is not installed (apt-get install nats-server): scale-out test skipped")
	}
	dump := corpus.File(t, "breakpad/processor/linux_null_read_av.dmp")
	syms := corpus.File(t, "breakpad/processor/symbols")
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cl, err := scaletest.StartNATS(ctx, t.TempDir(), 3)
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Stop()

	front := testConfig(t, nil)
	front.Roles = []string{RoleCollector, RoleWeb}
	front.NATSURL, front.Blobs = cl.URL(), "nats"
	if front.DB == "" {
		front.DB = filepath.Join(t.TempDir(), "index.sqlite") // one machine's stand-in for PostgreSQL
	}
	fs := startServer(t, front)
	defer fs.stop()

	back := testConfig(t, []string{syms})
	back.Roles = []string{RoleProcessor}
	back.NATSURL, back.Blobs, back.DB = cl.URL(), "nats", front.DB
	bs := startServer(t, back)
	defer bs.stop()

	id, err := upload(t, fs.URL, dump, map[string]string{"ProductName": "ScaleOut"})
	if err != nil {
		t.Fatal(err)
	}
	c := waitProcessed(t, fs.URL, id, time.Minute)
	if c.Signature == "" || string(c.JSONDump) == "null" {
		t.Errorf("processed crash: %+v", c)
	}
	// The collector recorded the crash in the unqueued bucket until it was
	// queued: what is left is the flag of the one listing sweep.
	if u := fs.srv.unqueued; u == nil {
		t.Error("blobs nats: no record of unqueued crashes")
	} else if listed, err := u.Flag(ctx, listedFlag); err != nil || !listed {
		t.Errorf("the start-up sweep did not list the store once: %v %v", listed, err)
	} else if n := gauge(t, fs.srv, "crashd_unqueued_crashes"); n != 1 {
		t.Errorf("crashd_unqueued_crashes %v, want 1 (the flag)", n)
	}
	if bs.srv.unqueued != nil {
		t.Error("a processor without the collector role opened the unqueued bucket")
	}
	for _, d := range []string{front.Data, back.Data} {
		if _, err := os.Stat(filepath.Join(d, "v1")); !os.IsNotExist(err) {
			t.Errorf("%s: blobs in the data directory (%v)", d, err)
		}
	}
}

// gauge returns a gauge of s's registry (-1 when absent).
func gauge(t *testing.T, s *Server, name string) float64 {
	t.Helper()
	mfs, err := s.reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, mf := range mfs {
		if mf.GetName() == name && len(mf.GetMetric()) > 0 {
			return mf.GetMetric()[0].GetGauge().GetValue()
		}
	}
	return -1
}
