package index

import (
	"context"
	"os"
	"testing"
	"time"
)

// topQuery is the shape of a top-crashers query on crashes: a product's
// signatures over a week, most crashes first, as TopCrashers counts the
// part of a period the daily rollups do not cover (Filter.where); the
// index crashes_triage answers it from the index alone. (Until migration
// 7 this query read crash_day through crashes_top, an index TopCrashers
// never used: lean.go.)
const topQuery = `
SELECT signature, COUNT(*) AS n FROM crashes
WHERE status = 'processed' AND received_at >= ? AND received_at < ? AND product = ?
GROUP BY signature ORDER BY n DESC, signature LIMIT 50`

// TestTopCrashersMillion measures the top-crashers query on a million
// crashes (8 weeks, 5 products, 5,000 signatures) on each back end, when
// CRASHD_TEST_MILLION is set (it takes a minute): docs/scale.md's figure.
func TestTopCrashersMillion(t *testing.T) {
	if os.Getenv("CRASHD_TEST_MILLION") == "" {
		t.Skip("CRASHD_TEST_MILLION is not set: the million-row measurement skipped")
	}
	backends(t, func(t *testing.T, open opener) {
		ctx := context.Background()
		ix := open.must(t, ctx)
		start := time.Date(2026, 10, 5, 0, 0, 0, 0, time.UTC)
		if _, err := ix.Maintain(ctx, start.AddDate(0, 0, 28), 0); err != nil {
			t.Fatal(err)
		}
		if _, err := ix.Maintain(ctx, start, 0); err != nil {
			t.Fatal(err)
		}
		t0 := time.Now()
		// The rows, made by the database itself (the only SQL of this
		// package written per dialect, for speed).
		gen := `
WITH RECURSIVE g(n) AS (SELECT 0 UNION ALL SELECT n + 1 FROM g WHERE n < 999999)
INSERT INTO crashes (crash_id, crash_day, status, received_at, product, version, signature, updated_at)
SELECT printf('%036d', n), date('2026-10-05', '+' || (n % 56) || ' days'), 'processed',
	date('2026-10-05', '+' || (n % 56) || ' days') || 'T12:00:00Z', 'P' || (n % 5), '1.0',
	'sig' || (((n * 7919) % 5000) * ((n * 104729) % 5000) / 5000), ''
FROM g`
		if ix.Dialect() == "postgres" {
			gen = `
INSERT INTO crashes (crash_id, crash_day, status, received_at, product, version, signature, updated_at)
SELECT lpad(n::text, 36, '0'), to_char(date '2026-10-05' + (n % 56), 'YYYY-MM-DD'), 'processed',
	to_char(date '2026-10-05' + (n % 56), 'YYYY-MM-DD') || 'T12:00:00Z', 'P' || (n % 5), '1.0',
	'sig' || (((n::bigint * 7919) % 5000) * ((n::bigint * 104729) % 5000) / 5000), ''
FROM generate_series(0, 999999) AS n`
		}
		if _, err := ix.db.ExecContext(ctx, gen); err != nil {
			t.Fatal(err)
		}
		if ix.Dialect() == "postgres" {
			// What autovacuum does soon after: statistics, and the
			// visibility map an index-only scan needs.
			ix.db.ExecContext(ctx, `VACUUM ANALYZE crashes`)
		} else {
			ix.db.ExecContext(ctx, `ANALYZE`)
		}
		t.Logf("%s: 1,000,000 rows written in %.1fs", ix.Dialect(), time.Since(t0).Seconds())
		var best time.Duration
		for i := range 5 {
			t1 := time.Now()
			rows, err := ix.db.QueryContext(ctx, ix.rebind(topQuery),
				formatTime(time.Date(2026, 11, 2, 0, 0, 0, 0, time.UTC)), formatTime(time.Date(2026, 11, 9, 0, 0, 0, 0, time.UTC)), "P3")
			if err != nil {
				t.Fatal(err)
			}
			n := 0
			for rows.Next() {
				n++
			}
			rows.Close()
			d := time.Since(t1)
			if i == 0 || d < best {
				best = d
			}
			if n != 50 {
				t.Errorf("%d signatures", n)
			}
		}
		t.Logf("%s: top crashers of a product's week (25,000 of 1,000,000 rows): best of 5 %.1f ms", ix.Dialect(), best.Seconds()*1000)
	})
}
