package index

import (
	"context"
	"reflect"
	"testing"
	"time"
)

// TestSignatureTrend: a signature's crashes per day and version against a
// hand-counted set: the top versions each a series, the rest summed as
// "other", shares, days without crashes zero, other signatures and
// crashes outside the period left out; the period's bound refused.
func TestSignatureTrend(t *testing.T) { backends(t, testSignatureTrend) }

func testSignatureTrend(t *testing.T, open opener) {
	ctx := context.Background()
	ix := open.must(t, ctx)
	now := time.Date(2026, 11, 26, 12, 0, 0, 0, time.UTC)
	n := 0
	add := func(sig, version string, daysAgo, count int) {
		for range count {
			n++
			at := now.Add(-time.Duration(daysAgo)*24*time.Hour - time.Duration(n)*time.Minute)
			if err := ix.Processed(ctx, Crash{ID: crashID(n, at), ReceivedAt: at, Product: "App", Version: version, Signature: sig}); err != nil {
				t.Fatal(err)
			}
		}
	}
	// Days: 2026-11-24 (2 ago), -25 (1 ago), -26 (today, until 12:00).
	add("s", "3.0", 0, 4)
	add("s", "3.0", 2, 1)
	add("s", "2.0", 1, 3)
	add("s", "1.0", 0, 1)
	add("s", "", 2, 1)
	add("s", "3.0", 10, 5) // before the period
	add("t", "3.0", 0, 7)  // another signature
	f := Filter{Signature: "s", Since: time.Date(2026, 11, 24, 0, 0, 0, 0, time.UTC), Until: now}
	tr, err := ix.SignatureTrend(ctx, f, 2)
	if err != nil {
		t.Fatal(err)
	}
	want := Trend{Days: []string{"2026-11-24", "2026-11-25", "2026-11-26"}, Total: 10, Daily: []int{2, 3, 5},
		Versions: []TrendSeries{
			{Version: "3.0", Count: 5, Share: 0.5, Daily: []int{1, 0, 4}},
			{Version: "2.0", Count: 3, Share: 0.3, Daily: []int{0, 3, 0}},
			{Other: true, Count: 2, Share: 0.2, Daily: []int{1, 0, 1}},
		}}
	if !reflect.DeepEqual(tr, want) {
		t.Errorf("trend:\n got %v\nwant %v", tr, want)
	}
	// Enough series for every version: no "other".
	if tr, err := ix.SignatureTrend(ctx, f, 10); err != nil || len(tr.Versions) != 4 || tr.Versions[2].Version != "" || tr.Versions[3].Version != "1.0" || tr.Versions[3].Other {
		t.Errorf("trend of 10: %v %v", tr, err)
	}
	// No crash: no series, zero days.
	f.Signature = "none"
	if tr, err := ix.SignatureTrend(ctx, f, 5); err != nil || tr.Total != 0 || len(tr.Versions) != 0 || !reflect.DeepEqual(tr.Daily, []int{0, 0, 0}) {
		t.Errorf("trend of nothing: %v %v", tr, err)
	}
	if _, err := ix.SignatureTrend(ctx, Filter{Signature: "s", Since: now.Add(-92 * 24 * time.Hour), Until: now}, 5); err == nil {
		t.Error("92 days: no error")
	}
}
