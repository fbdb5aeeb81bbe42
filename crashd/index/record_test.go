package index

import (
	"context"
	"database/sql"
	"fmt"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// TestRecordProcessed: RecordProcessed leaves every row (crashes,
// missing_symbols, signatures; every column) exactly as Processed,
// SetMissingSymbols and ProcessedDetails called one after another do, on a
// sequence of outcomes that exercises each write (a crash recorded again
// with other modules, an earlier sighting of a signature, no signature, no
// missing modules, a crash received before it is processed).
func TestRecordProcessed(t *testing.T) {
	t.Run("sqlite", func(t *testing.T) {
		dir := t.TempDir()
		testRecordProcessed(t,
			func(ctx context.Context) (*SQL, error) { return OpenSQLite(ctx, filepath.Join(dir, "a.sqlite")) },
			func(ctx context.Context) (*SQL, error) { return OpenSQLite(ctx, filepath.Join(dir, "b.sqlite")) })
	})
	t.Run("postgres", func(t *testing.T) {
		testRecordProcessed(t, postgresSchema(t), postgresSchema(t))
	})
}

func testRecordProcessed(t *testing.T, openA, openB opener) {
	ctx := context.Background()
	clock := time.Date(2026, 11, 26, 12, 0, 0, 0, time.UTC)
	now := func() time.Time { return clock }
	three, err := openA(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer three.Close()
	one, err := openB(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer one.Close()
	three.now, one.now = now, now

	day := time.Date(2026, 11, 25, 10, 0, 0, 0, time.UTC)
	mod := func(f, id string) Module {
		return Module{DebugFile: f, DebugID: id, CodeFile: f + ".so", CodeID: "c" + id}
	}
	outcomes := []Outcome{
		{Crash: Crash{ID: crashID(1, day), ReceivedAt: day, ProcessedAt: day.Add(time.Second), Product: "App", Version: "1.0",
			OS: "Linux", CPU: "amd64", Signature: "a", CrashReason: "SIGSEGV", Attempts: 1},
			Details: Details{ProcessType: "content", OSVersion: "6.1", CrashAddress: "0x0", Modules: []string{"libc.so", "a_b%.so"},
				Annotations: []Annotation{{Name: "channel", Value: "beta"}, {Name: "channel", Value: "dup"}, {Name: "Email", Value: "a@b", Personal: true}, {Name: "", Value: "x"}}},
			Missing: []Module{mod("libx", "ab01"), mod("libx", "AB01"), {DebugFile: "", DebugID: "x"}, mod("liby", "cd02")}},
		// No signature, no missing modules, no processed time (now).
		{Crash: Crash{ID: crashID(2, day), ReceivedAt: day.Add(time.Minute), Product: "App", Version: "1.1", Attempts: 2}},
		// An earlier sighting of a, in another version.
		{Crash: Crash{ID: crashID(3, day), ReceivedAt: day.Add(-time.Hour), Product: "App", Version: "0.9", Signature: "a", Attempts: 1},
			Details: Details{Modules: []string{"libc.so"}}, Missing: []Module{mod("libz", "ef03")}},
		// Crash 1 again, walked with other symbols: its rows replaced.
		{Crash: Crash{ID: crashID(1, day), ReceivedAt: day, ProcessedAt: day.Add(time.Hour), Product: "App", Version: "1.0",
			OS: "Linux", CPU: "amd64", Signature: "b", CrashReason: "SIGABRT", Attempts: 3},
			Details: Details{ProcessType: "gpu", Annotations: []Annotation{{Name: "channel", Value: "release"}}}, Missing: []Module{mod("liby", "cd02")}},
		// 45 missing modules: INSERTs of 32, 8, 4 and 1 rows.
		{Crash: Crash{ID: crashID(5, day), ReceivedAt: day.Add(3 * time.Minute), Product: "App", Version: "1.0", Signature: "a"},
			Missing: func() []Module {
				var ms []Module
				for i := range 45 {
					ms = append(ms, mod(fmt.Sprintf("lib%02d", i), fmt.Sprintf("%032X0", i)))
				}
				return ms
			}()},
		// Crash 4, received first (the collector's row).
		{Crash: Crash{ID: crashID(4, day), ReceivedAt: day.Add(2 * time.Minute), Product: "App", Version: "1.0", Signature: "c"}},
	}
	for _, ix := range []*SQL{three, one} {
		if err := ix.Received(ctx, Crash{ID: crashID(4, day), ReceivedAt: day.Add(2 * time.Minute), Product: "App", Version: "1.0"}); err != nil {
			t.Fatal(err)
		}
	}
	for i, o := range outcomes {
		if err := three.Processed(ctx, o.Crash); err != nil {
			t.Fatal(err)
		}
		if err := three.SetMissingSymbols(ctx, o.Crash.ID, o.Crash.ReceivedAt, o.Missing); err != nil {
			t.Fatal(err)
		}
		if err := three.ProcessedDetails(ctx, o.Crash, o.Details); err != nil {
			t.Fatal(err)
		}
		if _, err := one.RecordProcessed(ctx, o); err != nil {
			t.Fatal(err)
		}
		want, got := dumpTables(t, three), dumpTables(t, one)
		if got != want {
			t.Fatalf("after outcome %d: RecordProcessed's rows\n%s\nthe three writes'\n%s", i, got, want)
		}
	}
	// Idempotent: recording the last outcome again changes nothing.
	before := dumpTables(t, one)
	if _, err := one.RecordProcessed(ctx, outcomes[len(outcomes)-1]); err != nil {
		t.Fatal(err)
	}
	if after := dumpTables(t, one); after != before {
		t.Fatalf("recorded twice:\n%s\nonce:\n%s", after, before)
	}
	if strings.Contains(before, "libx") || strings.Count(before, "liby/CD02") != 1 || strings.Count(before, "libz/EF03") != 1 {
		t.Fatalf("missing modules not as recorded:\n%s", before)
	}
}

// openPair opens two SQLite indexes on one fixed clock: one written one
// outcome at a time, the other the way under test; closed with the test.
func openPair(t *testing.T) (seq, other *SQL) {
	t.Helper()
	ctx := context.Background()
	dir := t.TempDir()
	clock := time.Date(2026, 11, 26, 12, 0, 0, 0, time.UTC)
	for i, p := range []**SQL{&seq, &other} {
		ix, err := OpenSQLite(ctx, filepath.Join(dir, fmt.Sprintf("index%d.sqlite", i)))
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { ix.Close() })
		ix.now = func() time.Time { return clock }
		*p = ix
	}
	return seq, other
}

// TestRecordProcessedConcurrent: outcomes recorded by concurrent callers
// (group commits) leave the rows that the same outcomes recorded one at a
// time leave.
func TestRecordProcessedConcurrent(t *testing.T) {
	ctx := context.Background()
	seq, conc := openPair(t)
	day := time.Date(2026, 11, 25, 0, 0, 0, 0, time.UTC)
	var outcomes []Outcome
	for i := range 200 {
		at := day.Add(time.Duration(i) * time.Second)
		outcomes = append(outcomes, Outcome{
			Crash:   Crash{ID: crashID(i%150, day), ReceivedAt: at, Product: "App", Version: fmt.Sprint(i % 3), Signature: fmt.Sprintf("s%d", i%7), Attempts: 1},
			Details: Details{Modules: []string{fmt.Sprintf("m%d", i%5)}},
			Missing: []Module{{DebugFile: fmt.Sprintf("lib%d", i%11), DebugID: fmt.Sprintf("%032X0", i%13)}},
		})
	}
	// Outcomes of the same crash keep their order (the last one wins).
	for _, o := range outcomes {
		if _, err := seq.RecordProcessed(ctx, o); err != nil {
			t.Fatal(err)
		}
	}
	var wg sync.WaitGroup
	errs := make(chan error, len(outcomes))
	for w := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := w; i < 150; i += 8 {
				if _, err := conc.RecordProcessed(ctx, outcomes[i]); err != nil {
					errs <- err
				}
			}
		}()
	}
	wg.Wait()
	for w := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 150 + w; i < len(outcomes); i += 8 {
				if _, err := conc.RecordProcessed(ctx, outcomes[i]); err != nil {
					errs <- err
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	if got, want := dumpTables(t, conc), dumpTables(t, seq); got != want {
		t.Fatalf("concurrent:\n%s\none at a time:\n%s", got, want)
	}
	if conc.leading || len(conc.pending) != 0 {
		t.Fatalf("after the writes: leading %v, %d pending", conc.leading, len(conc.pending))
	}
}

// TestRecordProcessedGroupWait: with a group wait, 150 callers at once
// (as the processor's crashes being recorded) are written in full groups
// of maxGroup, and the rows are those written one at a time.
func TestRecordProcessedGroupWait(t *testing.T) {
	ctx := context.Background()
	seq, grp := openPair(t)
	// Long enough for every caller to arrive on a loaded machine: full
	// groups do not wait for it.
	grp.SetGroupWait(2 * time.Second)
	day := time.Date(2026, 11, 25, 0, 0, 0, 0, time.UTC)
	const n = 2*maxGroup + 22
	var outcomes []Outcome
	for i := range n {
		outcomes = append(outcomes, Outcome{
			Crash:   Crash{ID: crashID(i, day), ReceivedAt: day.Add(time.Duration(i) * time.Second), Product: "App", Signature: fmt.Sprintf("s%d", i%7), Attempts: 1},
			Missing: []Module{{DebugFile: fmt.Sprintf("lib%d", i%11), DebugID: fmt.Sprintf("%032X0", i%13)}},
		})
		if _, err := seq.RecordProcessed(ctx, outcomes[i]); err != nil {
			t.Fatal(err)
		}
	}
	start := time.Now()
	var wg sync.WaitGroup
	errs := make(chan error, n)
	for _, o := range outcomes {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if _, err := grp.RecordProcessed(ctx, o); err != nil {
				errs <- err
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	commits, written := grp.GroupCommits()
	if written != n || commits > 4 {
		t.Errorf("%d outcomes in %d commits, want %d in 3 (two full groups and the rest)", written, commits, n)
	}
	if el := time.Since(start); el < 2*time.Second || el > 30*time.Second {
		t.Errorf("took %v: the last group (not full) waits 2 s, the full ones not", el)
	}
	if got, want := dumpTables(t, grp), dumpTables(t, seq); got != want {
		t.Fatalf("grouped:\n%s\none at a time:\n%s", got, want)
	}
}

// dumpTables returns every row of the tables the processor writes, every
// column as text, in a fixed order.
func dumpTables(t *testing.T, ix *SQL) string {
	t.Helper()
	var b strings.Builder
	for _, q := range []string{
		`SELECT * FROM crashes ORDER BY crash_id`,
		`SELECT * FROM missing_symbols ORDER BY crash_id, module`,
		`SELECT * FROM signatures ORDER BY signature`,
		`SELECT * FROM crash_annotations ORDER BY crash_id, name`,
		`SELECT * FROM crash_daily ORDER BY 1, 2, 3, 4, 5, 6, 7`,
		`SELECT * FROM crash_daily_os ORDER BY 1, 2, 3`,
	} {
		rows, err := ix.db.Query(q)
		if err != nil {
			t.Fatal(err)
		}
		cols, err := rows.Columns()
		if err != nil {
			t.Fatal(err)
		}
		fmt.Fprintf(&b, "%s\n", strings.Join(cols, " | "))
		for rows.Next() {
			vals := make([]sql.NullString, len(cols))
			ptrs := make([]any, len(cols))
			for i := range vals {
				ptrs[i] = &vals[i]
			}
			if err := rows.Scan(ptrs...); err != nil {
				t.Fatal(err)
			}
			for i, v := range vals {
				if i > 0 {
					b.WriteString(" | ")
				}
				if v.Valid {
					b.WriteString(v.String)
				} else {
					b.WriteString("NULL")
				}
			}
			b.WriteString("\n")
		}
		if err := rows.Err(); err != nil {
			t.Fatal(err)
		}
		rows.Close()
	}
	return b.String()
}

// BenchmarkRecordProcessed is the processor's index writes per processed
// crash on SQLite, as the processor made them before (three: Processed,
// SetMissingSymbols, ProcessedDetails, each its own statement or
// transaction) and now (RecordProcessed, one transaction; "concurrent":
// from 8 goroutines, sharing transactions): a crash with a
// signature seen before, 40 modules and 20 of them missing symbols.
func BenchmarkRecordProcessed(b *testing.B) {
	ctx := context.Background()
	day := time.Date(2026, 11, 25, 0, 0, 0, 0, time.UTC)
	var mods []string
	var missing []Module
	for j := range 40 {
		mods = append(mods, fmt.Sprintf("lib%02d.so", j))
		if j%2 == 0 {
			missing = append(missing, Module{DebugFile: mods[j], DebugID: fmt.Sprintf("%032X0", j), CodeFile: mods[j], CodeID: fmt.Sprintf("%040x", j)})
		}
	}
	for _, way := range []string{"three", "one", "concurrent", "pipelined"} {
		b.Run(way, func(b *testing.B) {
			ix, err := OpenSQLite(ctx, filepath.Join(b.TempDir(), "index.sqlite"))
			if err != nil {
				b.Fatal(err)
			}
			defer ix.Close()
			var n atomic.Int64
			outcome := func() Outcome {
				i := int(n.Add(1))
				at := day.Add(time.Duration(i) * time.Millisecond)
				return Outcome{Crash: Crash{ID: crashID(i, day), ReceivedAt: at, ProcessedAt: at, Product: "App", Version: "1.0",
					OS: "Linux", CPU: "amd64", Signature: fmt.Sprintf("sig%d", i%50), CrashReason: "SIGSEGV", Attempts: 1},
					Details: Details{ProcessType: "content", OSVersion: "6.1", CrashAddress: "0x0", Modules: mods}, Missing: missing}
			}
			if way == "concurrent" || way == "pipelined" {
				// 8 callers at once, as the processor's workers waiting
				// for their crash's commit: group commits. Pipelined: 128
				// callers (the processor's crashes being recorded while its
				// workers walk others) and the group wait crashd sets.
				b.SetParallelism(4)
				if way == "pipelined" {
					b.SetParallelism(64)
					ix.SetGroupWait(20 * time.Millisecond)
				}
				defer func() {
					if c, o := ix.GroupCommits(); c > 0 {
						b.ReportMetric(float64(o)/float64(c), "crashes/commit")
					}
				}()
				b.RunParallel(func(pb *testing.PB) {
					for pb.Next() {
						if _, err := ix.RecordProcessed(ctx, outcome()); err != nil {
							b.Error(err)
							return
						}
					}
				})
				return
			}
			for b.Loop() {
				o := outcome()
				at := o.Crash.ReceivedAt
				if way == "one" {
					if _, err := ix.RecordProcessed(ctx, o); err != nil {
						b.Fatal(err)
					}
					continue
				}
				if err := ix.Processed(ctx, o.Crash); err != nil {
					b.Fatal(err)
				}
				if err := ix.SetMissingSymbols(ctx, o.Crash.ID, at, o.Missing); err != nil {
					b.Fatal(err)
				}
				if err := ix.ProcessedDetails(ctx, o.Crash, o.Details); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
