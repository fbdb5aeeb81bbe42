//go:build unix

package server

import (
	"context"
	"fmt"
	"github.com/gobreakpad/gobreakpad/internal/testkit/faults"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/gobreakpad/gobreakpad/crashd/blob"
	"github.com/gobreakpad/gobreakpad/crashd/crash"
	"github.com/gobreakpad/gobreakpad/crashd/scaletest"
	"github.com/gobreakpad/gobreakpad/internal/testkit/corpus"
)

var s3Skip = scaletest.S3Missing

// sharedS3 is the test process's SeaweedFS server, started by the first
// test that needs one and stopped by TestMain (stopS3): a start takes
// seconds of CPU, and the tests keep apart by bucket.
var sharedS3 struct {
	once sync.Once
	dir  string
	srv  *scaletest.S3Server
	err  error
	n    atomic.Int64
}

// s3Bucket is a bucket name of the shared S3 server no other test (nor a
// repeat of the same test under -count) uses.
func s3Bucket(name string) string { return fmt.Sprintf("%s-%d", name, sharedS3.n.Add(1)) }

// startS3 returns the test process's SeaweedFS server, or skips.
func startS3(t *testing.T) *scaletest.S3Server {
	t.Helper()
	if !scaletest.S3Built() {
		t.Skip(s3Skip)
	}
	sharedS3.once.Do(func() {
		sharedS3.dir, sharedS3.err = os.MkdirTemp("", "server-s3-")
		if sharedS3.err != nil {
			return
		}
		sharedS3.srv, sharedS3.err = newS3(sharedS3.dir)
	})
	if sharedS3.err != nil {
		t.Fatal(sharedS3.err)
	}
	return sharedS3.srv
}

// startOwnS3 starts a SeaweedFS server for the test alone (stopped by its
// pid at the end), for a test that kills it, or skips.
func startOwnS3(t *testing.T) *scaletest.S3Server {
	t.Helper()
	if !scaletest.S3Built() {
		t.Skip(s3Skip)
	}
	srv, err := newS3(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(srv.Stop)
	return srv
}

func newS3(dir string) (*scaletest.S3Server, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	return scaletest.StartS3(ctx, dir)
}

// stopS3 stops the shared SeaweedFS server, if started, by its pid and
// removes its directory.
func stopS3() {
	if sharedS3.srv != nil {
		sharedS3.srv.Stop()
	}
	if sharedS3.dir != "" {
		os.RemoveAll(sharedS3.dir)
	}
}

// s3TestStore is an S3 store (bucket "retention") on the shared SeaweedFS
// server, or nil when weed is not built.
func s3TestStore(t *testing.T) blob.Store {
	if !scaletest.S3Built() {
		return nil
	}
	srv := startS3(t)
	s, err := blob.OpenS3(context.Background(), blob.S3Config{Endpoint: srv.Endpoint, Bucket: s3Bucket("retention"),
		AccessKeyID: srv.AccessKey, SecretAccessKey: srv.SecretKey})
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// TestS3Blobs: crashd with blobs on an S3-compatible server (SeaweedFS),
// credentials from the environment: a crash uploaded is stored in the
// bucket under the prefix (nothing in the data directory) and processed;
// with the object store killed -9, an upload waits for it (the collector
// answers only once the PUT returned) and the crash is processed once it
// is back; crashd starts again on the same bucket.
func TestS3Blobs(t *testing.T) {
	dump := corpus.File(t, "breakpad/processor/linux_null_read_av.dmp")
	syms := corpus.File(t, "breakpad/processor/symbols")
	// The shared server, but a server of its own for the fault test
	// below, which kills it.
	srv := startS3
	if faults.On() {
		srv = startOwnS3
	}
	s3 := srv(t)
	t.Setenv("AWS_ACCESS_KEY_ID", s3.AccessKey)
	t.Setenv("AWS_SECRET_ACCESS_KEY", s3.SecretKey)
	t.Setenv("AWS_EC2_METADATA_DISABLED", "true")
	cfg := testConfig(t, []string{syms})
	cfg.Blobs, cfg.S3Endpoint, cfg.S3Bucket, cfg.S3Prefix = "s3", s3.Endpoint, s3Bucket("crashd-test"), "prod"
	ts := startServer(t, cfg)
	stop := sync.OnceFunc(ts.stop)
	defer stop()
	id, err := upload(t, ts.URL, dump, map[string]string{"ProductName": "S3"})
	if err != nil {
		t.Fatal(err)
	}
	c := waitProcessed(t, ts.URL, id, time.Minute)
	if c.Signature == "" || string(c.JSONDump) == "null" {
		t.Errorf("processed crash: %+v", c)
	}
	if _, err := os.Stat(filepath.Join(cfg.Data, "v1")); !os.IsNotExist(err) {
		t.Errorf("blobs in the data directory (%v)", err)
	}
	store, err := blob.OpenS3(context.Background(), blob.S3Config{Endpoint: s3.Endpoint, Bucket: cfg.S3Bucket, Prefix: "prod"})
	if err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{crash.RawCrashKey(id), crash.DumpKey(id, crash.MinidumpField), crash.ProcessedCrashKey(id), crash.QueuedKey(id)} {
		if ok, err := store.Exists(context.Background(), k); !ok || err != nil {
			t.Errorf("%s in the bucket: %v %v", k, ok, err)
		}
	}

	if !faults.On() {
		t.Logf("the object store killed -9 during an upload: a long fault test, run with %s=1", faults.Env)
		return
	}
	s3.Kill()
	restarted := make(chan error, 1)
	go func() {
		time.Sleep(3 * time.Second)
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
		defer cancel()
		restarted <- s3.Restart(ctx)
	}()
	id2, err := upload(t, ts.URL, dump, map[string]string{"ProductName": "S3"})
	if err != nil {
		t.Fatalf("upload while the object store restarts: %v", err)
	}
	if err := <-restarted; err != nil {
		t.Fatal(err)
	}
	waitProcessed(t, ts.URL, id2, time.Minute)
	stop()

	ts = startServer(t, cfg)
	defer ts.stop()
	if ok, err := store.Exists(context.Background(), crash.QueuedKey(id2)); !ok || err != nil {
		t.Errorf("queued marker of the crash uploaded during the outage: %v %v", ok, err)
	}
}
