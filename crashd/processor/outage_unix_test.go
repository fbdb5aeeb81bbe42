//go:build unix

package processor

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/gobreakpad/gobreakpad/crashd/blob"
	"github.com/gobreakpad/gobreakpad/crashd/crash"
	"github.com/gobreakpad/gobreakpad/crashd/index"
	"github.com/gobreakpad/gobreakpad/crashd/queue"
	"github.com/gobreakpad/gobreakpad/crashd/scaletest"
	"github.com/gobreakpad/gobreakpad/internal/testkit/corpus"
)

var (
	errNoSpace = fmt.Errorf("blob put x: %w", &os.PathError{Op: "write", Path: "x", Err: syscall.ENOSPC})
	errQuota   = fmt.Errorf("blob put x: %w", syscall.EDQUOT)
)

// TestIndexOutage: PostgreSQL stopped for longer than the queue's ack
// wait while crashes are queued, then started again (a slow failover):
// no crash is dead-lettered or charged an attempt (max_attempts 1), every
// one is processed once the index answers, and the processor paused or
// held crashes meanwhile.
func TestIndexOutage(t *testing.T) {
	if scaletest.PostgresBin() == "" {
		t.Skip("PostgreSQL is not installed (apt-get install postgresql): index outage test skipped")
	}
	dump, err := os.ReadFile(corpus.File(t, "breakpad/processor/linux_null_read_av.dmp"))
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	dir, err := os.MkdirTemp("", "crashd-processor-pg-")
	if err != nil {
		t.Fatal(err)
	}
	defer os.RemoveAll(dir)
	pg, err := scaletest.StartPostgres(ctx, dir, "fsync = off")
	if err != nil {
		t.Fatal(err)
	}
	defer pg.Stop()
	e := newEnv(t)
	ix, err := index.OpenPostgres(ctx, pg.URL)
	if err != nil {
		t.Fatal(err)
	}
	defer ix.Close()
	e.ix = ix
	p, err := New(Config{Workers: 2, MaxAttempts: 1, OutagePoll: 100 * time.Millisecond, Heartbeat: time.Second},
		e.store, e.q, e.ix, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer run(t, p)()
	first := e.put(t, dump, map[string]any{"ProductName": "Test"})
	e.wait(t, first, index.Processed)

	// Stored and received while the index is up, queued while it is down.
	var ids []crash.ID
	for range 4 {
		ids = append(ids, e.stage(t, dump))
	}
	pg.Stop()
	for _, id := range ids {
		if err := e.q.Publish(ctx, queue.Normal, string(id)); err != nil {
			t.Fatal(err)
		}
	}
	waitFor(t, "paused or holding", func() bool {
		return value(p.m.paused) == 1 || value(p.m.held) > 0
	})
	time.Sleep(5 * time.Second) // past the ack wait (3 s)
	if err := pg.Start(ctx); err != nil {
		t.Fatal(err)
	}
	for _, id := range ids {
		if c := e.wait(t, id, index.Processed); c.Attempts != 1 {
			t.Errorf("%s: attempts %d, want 1", id, c.Attempts)
		}
	}
	if dl, err := e.q.Dead(ctx, 0); err != nil || len(dl) != 0 {
		t.Errorf("dead letters %+v %v", dl, err)
	}
}

// stage stores a crash and records it as received, without queueing it.
func (e *env) stage(t *testing.T, dump []byte) crash.ID {
	t.Helper()
	ctx := context.Background()
	id := crash.New(time.Now(), crash.ThrottleAccept)
	raw := &crash.RawCrash{Annotations: map[string]any{"ProductName": "Test"}, SubmittedTimestamp: time.Now(), UUID: id, Version: crash.RawCrashVersion}
	b, _ := json.Marshal(raw)
	names, _ := json.Marshal(crash.DumpNames{crash.MinidumpField})
	for k, v := range map[string][]byte{crash.RawCrashKey(id): b, crash.DumpNamesKey(id): names, crash.DumpKey(id, crash.MinidumpField): dump} {
		if err := e.store.Put(ctx, k, v); err != nil {
			t.Fatal(err)
		}
	}
	if err := e.ix.Received(ctx, index.Crash{ID: string(id), ReceivedAt: raw.SubmittedTimestamp, Product: "Test"}); err != nil {
		t.Fatal(err)
	}
	return id
}

// TestDiskFull: the store's file system full (a tmpfs, filled), the
// processed crash cannot be stored (ENOSPC): the crash is held, not
// charged an attempt (max_attempts 1) nor dead-lettered, past the queue's
// ack wait; space freed, it is processed.
func TestDiskFull(t *testing.T) {
	dump, err := os.ReadFile(corpus.File(t, "breakpad/processor/linux_null_read_av.dmp"))
	if err != nil {
		t.Fatal(err)
	}
	mnt := filepath.Join(t.TempDir(), "blobs")
	unmount, err := scaletest.MountTmpfs(mnt, 4<<20)
	if err != nil {
		t.Skip("a full disk needs a tmpfs of its own:", err)
	}
	defer func() {
		if err := unmount(); err != nil {
			t.Error(err)
		}
	}()
	e := newEnv(t)
	store, err := blob.OpenDir(mnt)
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	e.store = store
	id := e.stage(t, dump)
	filler := filepath.Join(mnt, "filler")
	if _, err := scaletest.Fill(filler, 1<<30); err != nil {
		t.Fatal(err)
	}
	p, err := New(Config{Workers: 1, MaxAttempts: 1, OutagePoll: 100 * time.Millisecond, Heartbeat: time.Second},
		e.store, e.q, e.ix, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer run(t, p)()
	if err := e.q.Publish(context.Background(), queue.Normal, string(id)); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "held", func() bool { return value(p.m.held) == 1 })
	time.Sleep(4 * time.Second) // past the ack wait (3 s)
	if c, err := e.ix.Get(context.Background(), string(id)); err != nil || c.Status != index.Received {
		t.Fatalf("disk full: %+v %v", c, err)
	}
	if err := os.Remove(filler); err != nil {
		t.Fatal(err)
	}
	if c := e.wait(t, id, index.Processed); c.Attempts != 1 {
		t.Errorf("attempts %d, want 1", c.Attempts)
	}
	if dl, _ := e.q.Dead(context.Background(), 0); len(dl) != 0 {
		t.Errorf("dead letters %+v", dl)
	}
	if value(p.m.held) != 0 || value(p.m.holds) != 1 {
		t.Errorf("held %v, holds %v", value(p.m.held), value(p.m.holds))
	}
}

// TestOutageOf: ENOSPC and EDQUOT are outages whatever the checks say;
// another error is one only while the index does not answer.
func TestOutageOf(t *testing.T) {
	e := newEnv(t)
	p, err := New(Config{}, e.store, e.q, e.ix, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	sqliteFull := errors.New("index: record processed: database or disk is full (13)")
	pgFull := errors.New(`index: ERROR: could not extend file "base/16384/16385": No space left on device (SQLSTATE 53100)`)
	for _, err := range []error{errNoSpace, errQuota, sqliteFull, pgFull} {
		if p.outageOf(ctx, err) == nil {
			t.Errorf("%v: not an outage", err)
		}
	}
	if out := p.outageOf(ctx, errors.New("walk: bad dump")); out != nil {
		t.Errorf("a crash's own error taken for an outage: %v", out)
	}
	e.ix.Close()
	if p.outageOf(ctx, errors.New("index: connection refused")) == nil {
		t.Error("closed index: not an outage")
	}
}
