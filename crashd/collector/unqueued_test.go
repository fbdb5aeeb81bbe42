package collector

import (
	"context"
	"errors"
	"net/http"
	"slices"
	"testing"
	"time"

	"github.com/gobreakpad/gobreakpad/crashd/blob"
	"github.com/gobreakpad/gobreakpad/crashd/crash"
	"github.com/gobreakpad/gobreakpad/crashd/queue"
)

// records returns the crash ids u holds.
func records(t *testing.T, u Unqueued) []string {
	t.Helper()
	var ids []string
	if err := u.Scan(context.Background(), 0, func(id string, _ uint64, _ time.Time) error {
		ids = append(ids, id)
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	return ids
}

// TestUnqueuedCrashPoints: the record of unqueued crashes in a real
// JetStream KV bucket (an in-process NATS server), through each point a
// collector can stop at. Every crash answered 200 is queued or recorded,
// and RecoverUnqueued, which reads the record and never lists the store,
// queues it; a record without a stored crash is removed after the grace.
func TestUnqueuedCrashPoints(t *testing.T) {
	ctx := context.Background()
	q, err := queue.Embedded(ctx, queue.EmbeddedConfig{Dir: t.TempDir()}, queue.Config{})
	if err != nil {
		t.Fatal(err)
	}
	defer q.Close()
	u, err := q.Unqueued(ctx)
	if err != nil {
		t.Fatal(err)
	}
	store := &listLog{Mem: blob.NewMem()}
	e := newEnv(t, Config{}, store)
	e.c.SetUnqueued(u)
	body, ct := form(map[string]any{"ProductName": "Firefox", "upload_file_minidump": dump})
	hdr := http.Header{"Content-Type": {ct}}
	recoverAt := func(later time.Duration) RecoverStats {
		t.Helper()
		st, err := RecoverUnqueued(ctx, store, e.publish, u, time.Now().Add(later), nil)
		if err != nil {
			t.Fatal(err)
		}
		if p := store.raw(); len(p) != 0 {
			t.Errorf("the store listed: %v", p)
		}
		return st
	}

	// Published: the record is gone once the crash is queued.
	status, got, _ := e.post(t, "/submit", body, hdr, false)
	if status != 200 {
		t.Fatalf("%d %q", status, got)
	}
	queued := answerID(t, got, "0")
	if r := records(t, u); len(r) != 0 {
		t.Fatalf("records after a queued crash: %v", r)
	}

	// Stopped after storing, before publishing (here: the publish
	// failed): answered 200, the record stays; a sweep within the settle
	// time leaves it, a later one queues the crash and removes it.
	e.failPub = errors.New("queue down")
	status, got, _ = e.post(t, "/submit", body, hdr, false)
	if status != 200 {
		t.Fatalf("%d %q", status, got)
	}
	unq := answerID(t, got, "0")
	e.failPub = nil
	if r := records(t, u); !slices.Equal(r, []string{string(unq)}) {
		t.Fatalf("records %v, want %s", r, unq)
	}
	if st := recoverAt(0); st.Published != 0 || st.Records != 1 {
		t.Errorf("a record younger than the settle time handled: %+v", st)
	}
	if st := recoverAt(UnqueuedSettle + time.Second); st.Published != 1 {
		t.Errorf("recovered %+v, want 1 published", st)
	}
	if p := e.pubs(); !slices.Equal(p, []crash.ID{queued, unq}) {
		t.Errorf("published %v", p)
	}
	if ok, _ := store.Exists(ctx, crash.QueuedKey(unq)); !ok {
		t.Error("recovered crash without its queued marker")
	}
	if r := records(t, u); len(r) != 0 {
		t.Fatalf("records after the sweep: %v", r)
	}

	// Stopped after recording, before storing (killed in the middle of
	// the Puts): no 200 was given; the record is kept for the grace (the
	// collector may still be storing), then removed; nothing published.
	orphan := crash.New(time.Now(), 0)
	if _, err := u.Add(ctx, string(orphan)); err != nil {
		t.Fatal(err)
	}
	if err := store.Put(ctx, crash.DumpKey(orphan, "upload_file_minidump"), []byte("MDMP")); err != nil {
		t.Fatal(err)
	}
	if st := recoverAt(UnqueuedGrace - time.Minute); st.Orphans != 0 || st.Published != 0 {
		t.Errorf("a record without its crash removed within the grace: %+v", st)
	}
	if st := recoverAt(UnqueuedGrace + time.Minute); st.Orphans != 1 || st.Published != 0 {
		t.Errorf("a record without its crash: %+v, want 1 orphan", st)
	}

	// Stopped after publishing, before removing the record: the sweep
	// sees the queued marker and only removes the record.
	done := crash.New(time.Now(), 0)
	for k, v := range map[string][]byte{crash.RawCrashKey(done): []byte("{}"), crash.QueuedKey(done): []byte("x")} {
		if err := store.Put(ctx, k, v); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := u.Add(ctx, string(done)); err != nil {
		t.Fatal(err)
	}
	if st := recoverAt(time.Hour); st.Queued != 1 || st.Published != 0 {
		t.Errorf("a record of a queued crash: %+v", st)
	}
	if len(e.pubs()) != 2 || len(records(t, u)) != 0 {
		t.Errorf("published %v, records %v", e.pubs(), records(t, u))
	}

	// The store fails: 503, and the record removed at once.
	fe := newEnv(t, Config{}, failStore{blob.NewMem()})
	fe.c.SetUnqueued(u)
	if status, got, _ := fe.post(t, "/submit", body, hdr, false); status != http.StatusServiceUnavailable {
		t.Fatalf("store failing: %d %q", status, got)
	}
	if r := records(t, u); len(r) != 0 {
		t.Errorf("records after a failed store: %v", r)
	}

	// The record cannot be written (the NATS connection is gone): 503,
	// nothing stored, never a 200 for a crash the sweep could not find.
	before := len(keys(t, store))
	q.Close()
	if status, got, _ := e.post(t, "/submit", body, hdr, false); status != http.StatusServiceUnavailable {
		t.Fatalf("record failing: %d %q", status, got)
	}
	if n := len(keys(t, store)); n != before {
		t.Errorf("%d keys stored without a record", n-before)
	}
}
