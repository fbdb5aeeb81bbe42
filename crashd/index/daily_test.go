package index

import (
	"context"
	"math/rand/v2"
	"reflect"
	"testing"
	"time"
)

// TestDailyRollup: over random crashes, some processed twice with other
// fields, failed after processing, requeued and removed by retention, the
// rollup equals the crashes' counts, and TopCrashers answers the same
// with and without it for random periods (not whole days) and filters.
func TestDailyRollup(t *testing.T) { backends(t, testDailyRollup) }

func testDailyRollup(t *testing.T, open opener) {
	ctx := context.Background()
	ix := open.must(t, ctx)
	rng := rand.New(rand.NewPCG(25, 2))
	now := time.Date(2026, 11, 26, 13, 17, 5, 0, time.UTC)
	pick := func(vs ...string) string { return vs[rng.IntN(len(vs))] }
	type kept struct {
		c Crash
		d Details
	}
	var all []kept
	process := func(c Crash) {
		c.Product, c.Version, c.OS, c.CPU = pick("A", "B"), pick("1.0", "2.0", "3.0"), pick("Linux", "Windows NT", "Mac OS X"), pick("amd64", "arm64")
		c.Signature, c.CrashReason = pick("s1", "s2", "s3", "s4", "s5", "s6", "s7", "s8"), pick("SIGSEGV", "SIGABRT")
		d := Details{ProcessType: pick("", "content", "gpu")}
		if err := ix.Processed(ctx, c); err != nil {
			t.Fatal(err)
		}
		if err := ix.ProcessedDetails(ctx, c, d); err != nil {
			t.Fatal(err)
		}
		all = append(all, kept{c, d})
	}
	for n := range 1500 {
		at := now.Add(-time.Duration(rng.Int64N(int64(60 * 24 * time.Hour))))
		process(Crash{ID: crashID(n, at), ReceivedAt: at})
	}
	// Reprocessing (other fields: the crash moves), failures after a
	// processing, requeues, and processing again.
	for range 400 {
		k := all[rng.IntN(len(all))]
		switch rng.IntN(4) {
		case 0, 1:
			process(k.c)
		case 2:
			if err := ix.Failed(ctx, k.c.ID, k.c.ReceivedAt, 3, "boom"); err != nil {
				t.Fatal(err)
			}
		case 3:
			if err := ix.Requeued(ctx, k.c.ID); err != nil {
				t.Fatal(err)
			}
		}
	}
	check := func(when string) {
		t.Helper()
		if diff, err := ix.dailyCheck(ctx); err != nil || diff != "" {
			t.Fatalf("%s: rollup differs: %s %v", when, diff, err)
		}
		for i := range 40 {
			days := []int{1, 3, 7, 14, 28}[i%5]
			until := now.Add(-time.Duration(rng.Int64N(int64(20 * 24 * time.Hour))))
			if i%7 == 0 {
				until = until.Truncate(24 * time.Hour) // whole days
			}
			f := Filter{Since: until.Add(-time.Duration(days) * 24 * time.Hour), Until: until}
			switch i % 4 {
			case 1:
				f.OS, f.ProcessType = pick("Linux", "Windows NT"), pick("", "content")
			case 2:
				f.Product, f.Version, f.CPU = "A", pick("1.0", "2.0"), "arm64"
			case 3:
				f.CrashReason = "SIGSEGV" // not in the rollup: crashes alone
			}
			ix.noRollup = false
			got, err := ix.TopCrashers(ctx, f, 5)
			if err != nil {
				t.Fatal(err)
			}
			ix.noRollup = true
			want, err := ix.TopCrashers(ctx, f, 5)
			ix.noRollup = false
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, want) {
				t.Fatalf("%s: %+v:\nrollup  %+v\ncrashes %+v", when, f, got, want)
			}
			if i == 0 && got.Total == 0 {
				t.Fatalf("%s: no crashes in %+v", when, f)
			}
		}
	}
	check("after processing")
	// Retention: the crashes of the weeks before now-30 days go.
	if _, err := ix.Maintain(ctx, now, 30*24*time.Hour); err != nil {
		t.Fatal(err)
	}
	check("after retention")
}
