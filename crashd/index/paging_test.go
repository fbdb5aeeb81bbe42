package index

import (
	"context"
	"testing"
	"time"
)

// TestPaging: paging Search by cursor sees every crash exactly once when
// many share a received_at across page boundaries (by before= it skips
// them); the cursor's text form round-trips.
func TestPaging(t *testing.T) { backends(t, testPaging) }

func testPaging(t *testing.T, open opener) {
	ctx := context.Background()
	ix := open.must(t, ctx)
	t0 := time.Date(2026, 11, 26, 10, 0, 0, 123456000, time.UTC)
	// 23 crashes: 3 at t0+2s, 15 at t0+1s, 5 at t0; pages of 4 end inside
	// every group.
	want := map[string]bool{}
	n := 0
	for _, g := range []struct {
		at    time.Time
		count int
	}{{t0.Add(2 * time.Second), 3}, {t0.Add(time.Second), 15}, {t0, 5}} {
		for range g.count {
			n++
			id := crashID(n*7919%1000, t0) // ids in no particular order
			want[id] = true
			if err := ix.Processed(ctx, Crash{ID: id, ReceivedAt: g.at, Product: "App", Signature: "s"}); err != nil {
				t.Fatal(err)
			}
		}
	}
	seen := map[string]int{}
	q := Query{Limit: 4}
	pages := 0
	for {
		cs, err := ix.Search(ctx, q)
		if err != nil {
			t.Fatal(err)
		}
		pages++
		for _, c := range cs {
			seen[c.ID]++
		}
		if len(cs) < q.Limit || pages > 20 {
			break
		}
		cur, err := ParseCursor(CursorOf(cs[len(cs)-1]).String())
		if err != nil || cur != CursorOf(cs[len(cs)-1]) {
			t.Fatalf("cursor round trip: %+v, %v", cur, err)
		}
		q.After = cur
	}
	if len(seen) != len(want) {
		t.Errorf("paging by cursor saw %d crashes of %d", len(seen), len(want))
	}
	for id, k := range seen {
		if k != 1 || !want[id] {
			t.Errorf("crash %s seen %d times", id, k)
		}
	}
	// The older paging by time alone loses the rest of a shared time.
	cs, err := ix.Search(ctx, Query{Limit: 4})
	if err != nil {
		t.Fatal(err)
	}
	rest, err := ix.Search(ctx, Query{Before: cs[3].ReceivedAt, Limit: 100})
	if err != nil {
		t.Fatal(err)
	}
	if len(rest) != 5 {
		t.Errorf("before= after the first page: %d crashes, want the 5 of t0 (the other 14 at t0+1s skipped)", len(rest))
	}
	for _, s := range []string{"", "x", "2026-11-26T10:00:00Z", "2026-11-26T10:00:00Z,", "yesterday,abc"} {
		if _, err := ParseCursor(s); err == nil {
			t.Errorf("ParseCursor(%q): no error", s)
		}
	}
}
