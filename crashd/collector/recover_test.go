package collector

import (
	"context"
	"iter"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gobreakpad/gobreakpad/crashd/blob"
	"github.com/gobreakpad/gobreakpad/crashd/crash"
)

// listLog is a blob.Mem that records the prefixes listed and counts the
// Exists calls.
type listLog struct {
	*blob.Mem
	mu       sync.Mutex
	prefixes []string
	exists   int
}

func (l *listLog) Exists(ctx context.Context, key string) (bool, error) {
	l.mu.Lock()
	l.exists++
	l.mu.Unlock()
	return l.Mem.Exists(ctx, key)
}

// raw returns the raw crash prefixes listed, and forgets them all.
func (l *listLog) raw() []string {
	var out []string
	for _, p := range l.prefixes {
		if strings.HasPrefix(p, crash.RawCrashPrefix) {
			out = append(out, p)
		}
	}
	l.prefixes = nil
	return out
}

func (l *listLog) List(ctx context.Context, prefix string) iter.Seq2[string, error] {
	l.mu.Lock()
	l.prefixes = append(l.prefixes, prefix)
	l.mu.Unlock()
	return l.Mem.List(ctx, prefix)
}

// TestRecoverDays: with a since, the sweep lists the raw crash folder of
// each day from since's to tomorrow, never the whole store (S3 lists by
// prefix: the keys of older days are not read), and queues the unqueued
// crashes of those days only; a zero since lists every raw crash.
func TestRecoverDays(t *testing.T) {
	ctx := context.Background()
	now := time.Now().UTC()
	store := &listLog{Mem: blob.NewMem()}
	old := crash.New(now.AddDate(0, 0, -10), 0)
	recent := crash.New(now.AddDate(0, 0, -2), 0)
	today := crash.New(now, 0)
	queued := crash.New(now, 0)
	legacy := crash.New(now, 0)
	var many []crash.ID // queued, in the current layout
	for range 50 {
		id := crash.New(now.AddDate(0, 0, -1), 0)
		many = append(many, id)
		if err := store.Put(ctx, crash.QueuedKey(id), []byte("x")); err != nil {
			t.Fatal(err)
		}
	}
	if err := store.Put(ctx, crash.LegacyQueuedKey(legacy), []byte("x")); err != nil {
		t.Fatal(err)
	}
	for _, id := range append([]crash.ID{old, recent, today, queued, legacy}, many...) {
		if err := store.Put(ctx, crash.RawCrashKey(id), []byte("{}")); err != nil {
			t.Fatal(err)
		}
	}
	if err := store.Put(ctx, crash.QueuedKey(queued), []byte("x")); err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	var pub []crash.ID
	publish := func(_ context.Context, id crash.ID) error {
		mu.Lock()
		defer mu.Unlock()
		pub = append(pub, id)
		return nil
	}
	n, err := Recover(ctx, store, publish, now.AddDate(0, 0, -3), nil)
	if err != nil || n != 2 {
		t.Fatalf("Recover = %d, %v", n, err)
	}
	var want []string
	for d := -3; d <= 1; d++ {
		want = append(want, crash.RawCrashPrefix+now.AddDate(0, 0, d).Format("20060102")+"/")
	}
	if got := store.raw(); !slices.Equal(got, want) {
		t.Errorf("listed %q, want %q", got, want)
	}
	// One lookup of the older marker per crash without a marker beside
	// it (recent, today, legacy), none for the 51 that have one.
	if store.exists != 3 {
		t.Errorf("%d Exists calls, want 3", store.exists)
	}
	if !slices.Equal(pub, []crash.ID{recent, today}) {
		t.Errorf("published %q, want %q", pub, []crash.ID{recent, today})
	}
	if n, err := Recover(ctx, store, publish, time.Time{}, nil); err != nil || n != 1 {
		t.Errorf("Recover(all) = %d, %v (want the old crash only)", n, err)
	}
	if got := store.raw(); !slices.Equal(got, []string{crash.RawCrashPrefix}) {
		t.Errorf("listed %q", got)
	}
	if n, err := Recover(ctx, store, publish, time.Time{}, nil); err != nil || n != 0 {
		t.Errorf("third Recover = %d, %v", n, err)
	}
	// A raw crash filed in another day's folder than its id's, with its
	// marker where QueuedKey puts it, is not published again.
	odd := crash.New(now.AddDate(0, 0, -20), 0)
	if err := store.Put(ctx, crash.RawCrashPrefix+now.Format("20060102")+"/"+string(odd), []byte("{}")); err != nil {
		t.Fatal(err)
	}
	if err := store.Put(ctx, crash.QueuedKey(odd), []byte("x")); err != nil {
		t.Fatal(err)
	}
	if n, err := Recover(ctx, store, publish, now, nil); err != nil || n != 0 {
		t.Errorf("misfiled raw crash: Recover = %d, %v", n, err)
	}
	if got := recoverDays(time.Date(2026, 12, 31, 23, 0, 0, 0, time.UTC), time.Date(2027, 1, 1, 1, 0, 0, 0, time.UTC)); !slices.Equal(got, []string{
		"20261231/", "20270101/", "20270102/"}) {
		t.Errorf("recoverDays across a year: %q", got)
	}
}
