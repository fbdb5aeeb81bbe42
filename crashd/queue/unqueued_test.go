package queue

import (
	"context"
	"slices"
	"testing"
	"time"
)

// scanIDs returns the ids Scan yields (at most limit).
func scanIDs(t *testing.T, u *Unqueued, limit int) []string {
	t.Helper()
	var ids []string
	err := u.Scan(context.Background(), limit, func(id string, rev uint64, added time.Time) error {
		if rev == 0 || time.Since(added) > time.Minute || time.Since(added) < -time.Minute {
			t.Errorf("%s: revision %d added %v", id, rev, added)
		}
		ids = append(ids, id)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return ids
}

// TestUnqueued: the record of crashes not yet queued, in-process: added
// ids are scanned in order, removed ones leave nothing behind (no delete
// markers: Len counts what is there), flags are not crash ids, bad keys
// are refused, and a reopened queue sees the same records.
func TestUnqueued(t *testing.T) {
	dir := t.TempDir()
	ctx := context.Background()
	q := openQueue(t, dir, Config{})
	u, err := q.Unqueued(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if ids := scanIDs(t, u, 0); len(ids) != 0 {
		t.Fatalf("empty bucket scanned %v", ids)
	}
	want := []string{"a1", "b2", "c3", "d4"}
	revs := map[string]uint64{}
	for _, id := range want {
		if revs[id], err = u.Add(ctx, id); err != nil {
			t.Fatal(err)
		}
	}
	for _, bad := range []string{"", "a.", ".a", "a b", "a*", "a>", "_flag", "x/y"} {
		if _, err := u.Add(ctx, bad); err == nil {
			t.Errorf("Add(%q) accepted", bad)
		}
	}
	if ids := scanIDs(t, u, 0); !slices.Equal(ids, want) {
		t.Fatalf("scan %v, want %v", ids, want)
	}
	if ids := scanIDs(t, u, 2); !slices.Equal(ids, want[:2]) {
		t.Fatalf("scan limited to 2: %v", ids)
	}
	if set, err := u.Flag(ctx, "_listed"); err != nil || set {
		t.Fatalf("flag before set: %v %v", set, err)
	}
	if err := u.SetFlag(ctx, "_listed"); err != nil {
		t.Fatal(err)
	}
	if set, err := u.Flag(ctx, "_listed"); err != nil || !set {
		t.Fatalf("flag after set: %v %v", set, err)
	}
	if _, err := u.Flag(ctx, "listed"); err == nil {
		t.Error("a flag without '_' accepted")
	}
	if err := u.Remove(ctx, "b2", revs["b2"]); err != nil {
		t.Fatal(err)
	}
	if err := u.Remove(ctx, "b2", revs["b2"]); err != nil {
		t.Errorf("removing twice: %v", err)
	}
	if err := u.Remove(ctx, "never", 1); err != nil {
		t.Errorf("removing a missing key: %v", err)
	}
	if ids := scanIDs(t, u, 0); !slices.Equal(ids, []string{"a1", "c3", "d4"}) {
		t.Fatalf("scan after remove: %v", ids)
	}
	if n, err := u.Len(ctx); err != nil || n != 4 { // three records and the flag, no marker
		t.Fatalf("Len %d %v, want 4", n, err)
	}
	// A scan's callback error stops it.
	stop := context.Canceled
	calls := 0
	if err := u.Scan(ctx, 0, func(string, uint64, time.Time) error { calls++; return stop }); err != stop || calls != 1 {
		t.Errorf("scan stopped by its callback: %v after %d calls", err, calls)
	}
	q.Close()

	q = openQueue(t, dir, Config{})
	defer q.Close()
	if u, err = q.Unqueued(ctx); err != nil {
		t.Fatal(err)
	}
	if ids := scanIDs(t, u, 0); !slices.Equal(ids, []string{"a1", "c3", "d4"}) {
		t.Fatalf("scan after reopening: %v", ids)
	}
	for _, id := range []string{"a1", "c3", "d4"} {
		if err := u.Remove(ctx, id, 0); err != nil {
			t.Fatal(err)
		}
	}
	if n, err := u.Len(ctx); err != nil || n != 1 {
		t.Fatalf("Len %d %v, want 1 (the flag)", n, err)
	}
}
