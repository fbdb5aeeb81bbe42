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
	for _, d := range []string{front.Data, back.Data} {
		if _, err := os.Stat(filepath.Join(d, "v1")); !os.IsNotExist(err) {
			t.Errorf("%s: blobs in the data directory (%v)", d, err)
		}
	}
}
