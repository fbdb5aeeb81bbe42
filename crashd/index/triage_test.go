package index

import (
	"context"
	"testing"
	"time"
)

// TestTriage: top crashers against a hand-counted set, search with a
// module filter and sorting, facets, first sightings.
func TestTriage(t *testing.T) { backends(t, testTriage) }

func testTriage(t *testing.T, open opener) {
	ctx := context.Background()
	ix := open.must(t, ctx)
	now := time.Date(2026, 11, 26, 12, 0, 0, 0, time.UTC)
	n := 0
	add := func(sig, os string, at time.Time, mods ...string) {
		n++
		c := Crash{ID: crashID(n, at), ReceivedAt: at, Product: "App", Version: "1.0", OS: os, CPU: "amd64", Signature: sig, CrashReason: "SIGSEGV"}
		if err := ix.Processed(ctx, c); err != nil {
			t.Fatal(err)
		}
		if err := ix.ProcessedDetails(ctx, c, Details{ProcessType: "content", Modules: mods}); err != nil {
			t.Fatal(err)
		}
	}
	// Current period (the last 7 days): a ×3 (2 Linux, 1 Windows), b ×2, new ×1.
	add("a", "Linux", now.Add(-time.Hour), "libc.so", "a_b%.so")
	add("a", "Linux", now.Add(-25*time.Hour), "libc.so")
	add("a", "Windows NT", now.Add(-49*time.Hour))
	add("b", "Linux", now.Add(-2*time.Hour))
	add("b", "Linux", now.Add(-3*time.Hour))
	add("new", "Linux", now.Add(-4*time.Hour))
	// Previous period: b ×3, a ×1.
	for i := range 3 {
		add("b", "Linux", now.Add(-8*24*time.Hour-time.Duration(i)*time.Hour))
	}
	add("a", "Linux", now.Add(-9*24*time.Hour))
	top, err := ix.TopCrashers(ctx, Filter{Since: now.Add(-7 * 24 * time.Hour), Until: now}, 10)
	if err != nil {
		t.Fatal(err)
	}
	if top.Total != 6 || top.PrevTotal != 4 || len(top.Rows) != 3 || len(top.Days) != 8 {
		t.Fatalf("top: %+v", top)
	}
	a, b, nw := top.Rows[0], top.Rows[1], top.Rows[2]
	if a.Signature != "a" || a.Count != 3 || a.PrevRank != 2 || a.PrevCount != 1 || a.New || a.Share != 0.5 {
		t.Errorf("a: %+v", a)
	}
	if len(a.Platforms) != 2 || a.Platforms[0] != (Bucket{"Linux", 2}) || a.Daily[7] != 1 || a.Daily[6] != 1 || a.Daily[5] != 1 {
		t.Errorf("a platforms/daily: %+v %v", a.Platforms, a.Daily)
	}
	if b.Signature != "b" || b.Count != 2 || b.PrevRank != 1 || b.PrevCount != 3 || b.New {
		t.Errorf("b: %+v", b)
	}
	if nw.Signature != "new" || !nw.New || nw.PrevRank != 0 || !nw.FirstSeen.Equal(now.Add(-4*time.Hour)) {
		t.Errorf("new: %+v", nw)
	}
	// Filters apply to both periods.
	top, _ = ix.TopCrashers(ctx, Filter{Since: now.Add(-7 * 24 * time.Hour), Until: now, OS: "Windows NT"}, 10)
	if top.Total != 1 || top.PrevTotal != 0 || top.Rows[0].Signature != "a" {
		t.Errorf("top on Windows: %+v", top)
	}
	rows, total, err := ix.Find(ctx, FindQuery{Filter: Filter{Module: "libc.so"}, Sort: "received_at", Asc: true})
	if err != nil || total != 2 || len(rows) != 2 || rows[0].ID != crashID(2, now.Add(-25*time.Hour)) || rows[0].ProcessType != "content" {
		t.Errorf("find module: %d %+v %v", total, rows, err)
	}
	// LIKE's wildcards in a module name are literal.
	if _, total, _ := ix.Find(ctx, FindQuery{Filter: Filter{Module: "a_b%.so"}}); total != 1 {
		t.Errorf("find a_b%%.so: %d", total)
	}
	if _, total, _ := ix.Find(ctx, FindQuery{Filter: Filter{Module: "a%"}}); total != 0 {
		t.Errorf("find a%%: %d", total)
	}
	if _, _, err := ix.Find(ctx, FindQuery{Sort: "crash_id; DROP TABLE crashes"}); err == nil {
		t.Error("find: unknown sort column accepted")
	}
	fc, err := ix.Facet(ctx, Filter{}, "signature", 2)
	if err != nil || len(fc) != 2 || fc[0] != (Bucket{"b", 5}) || fc[1] != (Bucket{"a", 4}) {
		t.Errorf("facet: %+v %v", fc, err)
	}
	first, last, seen, err := ix.SignatureSpan(ctx, "a")
	if err != nil || !first.Equal(now.Add(-9*24*time.Hour)) || !last.Equal(now.Add(-time.Hour)) || !seen.Equal(first) {
		t.Errorf("span: %v %v %v %v", first, last, seen, err)
	}
}
