//go:build unix

package blob

import (
	"context"
	"errors"
	"fmt"
	"io"
	"slices"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/gobreakpad/gobreakpad/crashd/scaletest"
	"github.com/gobreakpad/gobreakpad/internal/testkit/faults"
)

// TestObjectStoreLaggingReplica: a blob read through another NATS node
// just after its Put returned is there. The object store reads an
// object's metadata with a direct get, answered first by the replica of
// the node the client is connected to, which may be behind the leader
// (by the writes a majority acknowledged without it, or while it catches
// up after a restart): a processor read a crash just queued as "no raw
// crash in the store" and failed it for good. The reads check such a
// "not found" with the stream's leader (confirmMissing). With
// GOBREAKPAD_FAULT_TESTS=1 the node is also killed -9 and restarted
// before, and the blobs stored meanwhile read as it comes back.
func TestObjectStoreLaggingReplica(t *testing.T) {
	if scaletest.NATSServer() == "" {
		t.Skip("nats-server is not installed (apt-get install nats-server)")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cl, err := scaletest.StartNATS(ctx, t.TempDir(), 3)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(cl.Stop)
	connect := func(url string) jetstream.JetStream {
		nc, err := nats.Connect(url, nats.MaxReconnects(-1), nats.RetryOnFailedConnect(true), nats.ReconnectWait(50*time.Millisecond))
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(nc.Close)
		js, err := jetstream.New(nc)
		if err != nil {
			t.Fatal(err)
		}
		return js
	}
	// The writer is connected to node 1, the reader to node 3 alone.
	w, err := OpenObjectStore(ctx, connect(cl.Nodes[0].ClientURL), "blobs", 3)
	if err != nil {
		t.Fatal(err)
	}
	missing := 0
	if faults.On() {
		cl.Kill(2)
		var keys []string
		for i := range 300 {
			k := fmt.Sprintf("v1/raw_crash/away%03d", i)
			if err := w.Put(ctx, k, make([]byte, 64<<10+i)); err != nil {
				t.Fatal(err)
			}
			keys = append(keys, k)
		}
		if err := cl.Restart(2); err != nil {
			t.Fatal(err)
		}
		r := reader(ctx, t, connect(cl.Nodes[2].ClientURL))
		for _, k := range slices.Backward(keys) {
			if _, err := r.Get(ctx, k); err != nil {
				t.Errorf("%s, stored while node 3 was away: %v", k, err)
				missing++
			}
		}
	}
	r := reader(ctx, t, connect(cl.Nodes[2].ClientURL))
	for i := range 150 {
		k := fmt.Sprintf("v1/raw_crash/k%03d", i)
		if err := w.Put(ctx, k, []byte(k)); err != nil {
			t.Fatal(err)
		}
		ok, err := r.Exists(ctx, k)
		if err != nil {
			t.Fatal(err)
		}
		if b, err := r.Get(ctx, k); !ok || err != nil || string(b) != k {
			missing++
		}
	}
	for i := range 150 { // Open first: symbol files and v2 uploads are read by it
		k := fmt.Sprintf("v1/raw_crash/o%03d", i)
		if err := w.Put(ctx, k, []byte(k)); err != nil {
			t.Fatal(err)
		}
		rc, _, err := r.Open(ctx, k)
		if err != nil {
			missing++
			continue
		}
		b, err := io.ReadAll(rc)
		rc.Close()
		if err != nil || string(b) != k {
			missing++
		}
	}
	if missing > 0 {
		t.Errorf("%d blobs read as missing or wrong through node 3 just after their Put through node 1", missing)
	}
	// Missing is still missing: the leader says so, at once.
	t0 := time.Now()
	if _, err := r.Get(ctx, "v1/raw_crash/never"); !errors.Is(err, ErrNotExist) {
		t.Errorf("a blob never stored: %v", err)
	}
	if err := w.Delete(ctx, "v1/raw_crash/k000"); err != nil {
		t.Fatal(err)
	}
	if ok, err := w.Exists(ctx, "v1/raw_crash/k000"); ok || err != nil {
		t.Errorf("a deleted blob: exists %v, %v", ok, err)
	}
	if d := time.Since(t0); d > 10*time.Second {
		t.Errorf("missing blobs took %v to read as missing", d)
	}
}

// reader opens the object store "blobs" through js, as soon as its node
// answers.
func reader(ctx context.Context, t *testing.T, js jetstream.JetStream) *ObjectStore {
	t.Helper()
	for {
		obs, err := js.ObjectStore(ctx, "blobs")
		if err == nil {
			return &ObjectStore{obs: obs, bucket: "blobs", nc: js.Conn()}
		}
		if ctx.Err() != nil {
			t.Fatal(err)
		}
		time.Sleep(20 * time.Millisecond)
	}
}
