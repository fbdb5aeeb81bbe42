package index

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"
)

// The index's tests run against SQLite and, when the environment variable
// CRASHD_TEST_POSTGRES names a PostgreSQL database (a postgres:// URL), or
// is "start" (a PostgreSQL instance in a temporary directory for the
// package's tests: crashd/scaletest), against PostgreSQL too, each test in
// a schema of its own that is dropped after it: both back ends must answer
// every query the same.
const postgresEnv = "CRASHD_TEST_POSTGRES"

// startPostgres starts a PostgreSQL instance for CRASHD_TEST_POSTGRES=start
// and returns its URL (set on unix by postgres_unix_test.go).
var startPostgres func() (string, error)

// opener opens (again) the index of one test.
type opener func(ctx context.Context) (*SQL, error)

// must opens the test's index, failing the test on an error; the index is
// closed when the test ends.
func (open opener) must(t *testing.T, ctx context.Context) *SQL {
	t.Helper()
	ix, err := open(ctx)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ix.Close() })
	return ix
}

// backends runs f once per back end.
func backends(t *testing.T, f func(t *testing.T, open opener)) {
	t.Run("sqlite", func(t *testing.T) {
		path := filepath.Join(t.TempDir(), "db", "index.sqlite")
		f(t, func(ctx context.Context) (*SQL, error) { return OpenSQLite(ctx, path) })
	})
	t.Run("postgres", func(t *testing.T) {
		f(t, postgresSchema(t))
	})
}

// postgresSchema creates a schema for the test in $CRASHD_TEST_POSTGRES's
// database (skipping the test without it) and returns the opener of an
// index in it.
func postgresSchema(t *testing.T) opener {
	dsn := os.Getenv(postgresEnv)
	if dsn == "" {
		t.Skipf("$%s does not name a PostgreSQL database (postgres://... or start): PostgreSQL tests skipped", postgresEnv)
	}
	if dsn == "start" {
		if startPostgres == nil {
			t.Skipf("$%s=start: not on this system", postgresEnv)
		}
		var err error
		if dsn, err = startPostgres(); err != nil {
			t.Fatalf("$%s=start: %v", postgresEnv, err)
		}
	}
	if !strings.HasPrefix(dsn, "postgres://") && !strings.HasPrefix(dsn, "postgresql://") {
		t.Fatalf("$%s=%q: a postgres:// URL", postgresEnv, dsn)
	}
	db, err := sql.Open("pgx", dsn)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	schema := fmt.Sprintf("t_%d_%d", os.Getpid(), time.Now().UnixNano())
	if _, err := db.Exec(`CREATE SCHEMA ` + schema); err != nil {
		t.Fatalf("%s: %v", postgresEnv, err)
	}
	t.Cleanup(func() {
		if _, err := db.Exec(`DROP SCHEMA ` + schema + ` CASCADE`); err != nil {
			t.Errorf("drop schema: %v", err)
		}
	})
	sep := "?"
	if strings.Contains(dsn, "?") {
		sep = "&"
	}
	dsn += sep + "search_path=" + schema
	return func(ctx context.Context) (*SQL, error) { return OpenPostgres(ctx, dsn) }
}

// crashID makes a crash id numbered n of day's date.
func crashID(n int, day time.Time) string {
	return fmt.Sprintf("%08x-0000-4000-8000-%05x0%s", n, n, day.Format("060102"))
}

func TestIndex(t *testing.T) { backends(t, testIndex) }

func testIndex(t *testing.T, open opener) {
	ctx := context.Background()
	ix, err := open(ctx)
	if err != nil {
		t.Fatal(err)
	}
	t0 := time.Date(2026, 11, 26, 10, 0, 0, 123456789, time.UTC)
	for i, id := range []string{"a", "b", "c"} {
		if err := ix.Received(ctx, Crash{ID: id, ReceivedAt: t0.Add(time.Duration(i) * time.Minute), Product: "Fx", Version: "1." + id}); err != nil {
			t.Fatal(err)
		}
	}
	// Received again (recovery queued it twice): no change.
	if err := ix.Received(ctx, Crash{ID: "a", ReceivedAt: t0.Add(time.Hour), Product: "Other"}); err != nil {
		t.Fatal(err)
	}
	c, err := ix.Get(ctx, "a")
	if err != nil {
		t.Fatal(err)
	}
	if c.Product != "Fx" || !c.ReceivedAt.Equal(t0.Truncate(time.Microsecond)) || c.Status != Received {
		t.Errorf("a: %+v", c)
	}
	if _, err := ix.Get(ctx, "zz"); !errors.Is(err, ErrNotFound) {
		t.Errorf("missing crash: %v", err)
	}
	for want := 1; want <= 3; want++ {
		n, err := ix.Attempt(ctx, "a", t0)
		if err != nil || n != want {
			t.Fatalf("attempt: %d %v, want %d", n, err, want)
		}
	}
	// Processed twice: one row, the second outcome.
	for _, sig := range []string{"first", "crash_here"} {
		if err := ix.Processed(ctx, Crash{ID: "a", ReceivedAt: t0, Product: "Fx", Version: "1.a", OS: "Linux", CPU: "amd64", Signature: sig, CrashReason: "SIGSEGV", Attempts: 3}); err != nil {
			t.Fatal(err)
		}
	}
	c, _ = ix.Get(ctx, "a")
	if c.Status != Processed || c.Signature != "crash_here" || c.ProcessedAt.IsZero() || c.Attempts != 3 {
		t.Errorf("processed a: %+v", c)
	}
	if err := ix.Failed(ctx, "b", t0, 3, "walk: boom"); err != nil {
		t.Fatal(err)
	}
	if c, _ := ix.Get(ctx, "b"); c.Status != Failed || c.Error != "walk: boom" || c.Attempts != 3 {
		t.Errorf("failed b: %+v", c)
	}
	if err := ix.Requeued(ctx, "b"); err != nil {
		t.Fatal(err)
	}
	if c, _ := ix.Get(ctx, "b"); c.Status != Received || c.Attempts != 0 {
		t.Errorf("requeued b: %+v", c)
	}
	// An attempt at a crash the index never saw records it.
	if n, err := ix.Attempt(ctx, "d", t0.Add(-time.Hour)); err != nil || n != 1 {
		t.Errorf("attempt d: %d %v", n, err)
	}

	ids := func(cs []Crash) (out []string) {
		for _, c := range cs {
			out = append(out, c.ID)
		}
		return out
	}
	for _, tc := range []struct {
		q    Query
		want string
	}{
		{Query{}, "[c b a d]"},
		{Query{Signature: "crash_here"}, "[a]"},
		{Query{Product: "Fx", Version: "1.b"}, "[b]"},
		{Query{Since: t0.Add(time.Minute)}, "[c b]"},
		{Query{Before: t0.Add(time.Minute)}, "[a d]"},
		{Query{Status: Received, Limit: 2}, "[c b]"},
		{Query{Product: "none"}, "[]"},
	} {
		got, err := ix.Search(ctx, tc.q)
		if err != nil {
			t.Fatal(err)
		}
		if s := fmtIDs(ids(got)); s != tc.want {
			t.Errorf("%+v: %s, want %s", tc.q, s, tc.want)
		}
	}
	known, err := ix.Known(ctx, []string{"a", "x", "c"})
	if err != nil || len(known) != 2 || !known["a"] || !known["c"] {
		t.Errorf("known %v %v", known, err)
	}
	counts, err := ix.Counts(ctx)
	if err != nil || counts[Processed] != 1 || counts[Received] != 3 {
		t.Errorf("counts %v %v", counts, err)
	}

	// Writers from many goroutines (workers) do not collide.
	var wg sync.WaitGroup
	for g := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range 20 {
				id := string(rune('A'+g)) + string(rune('a'+i))
				if err := ix.Received(ctx, Crash{ID: id, ReceivedAt: t0}); err != nil {
					t.Error(err)
				}
				if _, err := ix.Attempt(ctx, id, t0); err != nil {
					t.Error(err)
				}
				if err := ix.Processed(ctx, Crash{ID: id, ReceivedAt: t0}); err != nil {
					t.Error(err)
				}
			}
		}()
	}
	wg.Wait()
	ix.Close()

	// Reopened: the schema is not applied again and the rows are there.
	ix, err = open(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer ix.Close()
	if v, err := ix.SchemaVersion(ctx); err != nil || v != len(migrations)-1 {
		t.Errorf("schema version %d %v", v, err)
	}
	if counts, _ := ix.Counts(ctx); counts[Processed] != 161 {
		t.Errorf("after reopening: %v", counts)
	}
}

func fmtIDs(ids []string) string {
	s := "["
	for i, id := range ids {
		if i > 0 {
			s += " "
		}
		s += id
	}
	return s + "]"
}

func TestDollar(t *testing.T) {
	if got := Dollar("a = ? AND b IN (?, ?)"); got != "a = $1 AND b IN ($2, $3)" {
		t.Error(got)
	}
}

// TestConcurrentOpen: many processes starting at once on a new database
// migrate it once (PostgreSQL: under the advisory lock).
func TestConcurrentOpen(t *testing.T) {
	backends(t, func(t *testing.T, open opener) {
		ctx := context.Background()
		var wg sync.WaitGroup
		errs := make([]error, 8)
		for i := range errs {
			wg.Go(func() {
				ix, err := open(ctx)
				if err == nil {
					var v int
					if v, err = ix.SchemaVersion(ctx); err == nil && v != len(migrations)-1 {
						err = fmt.Errorf("schema version %d", v)
					}
					if err == nil {
						err = ix.Received(ctx, Crash{ID: crashID(i, time.Now()), ReceivedAt: time.Now()})
					}
					ix.Close()
				}
				errs[i] = err
			})
		}
		wg.Wait()
		for i, err := range errs {
			if err != nil {
				t.Errorf("open %d: %v", i, err)
			}
		}
	})
}

// TestRetention: crashes keyed by their ids' days; Maintain drops the
// weeks before the cutoff (PostgreSQL: whole partitions, including one
// made after its rows had gone to the default partition), keeps the
// others, and a crash written twice stays one row in its partition.
func TestRetention(t *testing.T) {
	backends(t, func(t *testing.T, open opener) {
		ctx := context.Background()
		ix := open.must(t, ctx)
		now := time.Date(2026, 11, 26, 12, 0, 0, 0, time.UTC) // a Thursday
		var ids []string
		for i, daysAgo := range []int{0, 3, 10, 17, 40, 400} {
			day := now.AddDate(0, 0, -daysAgo)
			id := crashID(i, day)
			ids = append(ids, id)
			for range 2 {
				if err := ix.Received(ctx, Crash{ID: id, ReceivedAt: day}); err != nil {
					t.Fatal(err)
				}
				if err := ix.Processed(ctx, Crash{ID: id, ReceivedAt: day, Signature: "s"}); err != nil {
					t.Fatal(err)
				}
			}
		}
		if err := ix.Received(ctx, Crash{ID: "not-a-crash-id", ReceivedAt: now.AddDate(-5, 0, 0)}); err != nil {
			t.Fatal(err)
		}
		// The weeks around now-40d get partitions (the rows of those
		// weeks, in the default partition so far, move in); then
		// everything before the Monday of now-14d's week (2026-11-09)
		// goes.
		if _, err := ix.Maintain(ctx, now.AddDate(0, 0, -40), 0); err != nil {
			t.Fatal(err)
		}
		dropped, err := ix.Maintain(ctx, now, 14*24*time.Hour)
		if err != nil {
			t.Fatal(err)
		}
		slices.Sort(dropped)
		if ix.Dialect() == "postgres" {
			if want := []string{"crashes_w20261005", "crashes_w20261012", "crashes_w20261019", "crashes_w20261026", "crashes_w20261102"}; !slices.Equal(dropped, want) {
				t.Errorf("dropped %v, want %v", dropped, want)
			}
		}
		known, err := ix.Known(ctx, append(ids, "not-a-crash-id"))
		if err != nil {
			t.Fatal(err)
		}
		for i, want := range []bool{true, true, true, true, false, false, true} {
			id := append(ids, "not-a-crash-id")[i]
			if known[id] != want {
				t.Errorf("%s known %v, want %v", id, known[id], want)
			}
			if c, err := ix.Get(ctx, id); want && (err != nil || c.ID != id) {
				t.Errorf("get %s: %+v %v", id, c, err)
			}
		}
		if n, err := ix.Counts(ctx); err != nil || n[Processed] != 4 || n[Received] != 1 {
			t.Errorf("counts %v %v", n, err)
		}
		// Written again after its week got a partition: still one row.
		if err := ix.Processed(ctx, Crash{ID: ids[2], ReceivedAt: now, Signature: "t"}); err != nil {
			t.Fatal(err)
		}
		if n, err := ix.Counts(ctx); err != nil || n[Processed] != 4 {
			t.Errorf("counts %v %v", n, err)
		}
	})
}

func TestCrashDay(t *testing.T) {
	for id, want := range map[string]string{
		"6a0b2c1e-4f5d-4a7b-9c3d-2e1f00261126": "2026-11-26",
		"6a0b2c1e-4f5d-4a7b-9c3d-2e1f00261131": "",
		"6a0b2c1e-4f5d-4a7b-9c3d-2e1f0026112":  "",
		"a":                                    "",
	} {
		if got := crashDay(id); got != want {
			t.Errorf("crashDay(%s) = %q, want %q", id, got, want)
		}
	}
	if w := week(time.Date(2026, 11, 29, 23, 0, 0, 0, time.UTC)); !w.Equal(time.Date(2026, 11, 23, 0, 0, 0, 0, time.UTC)) {
		t.Errorf("week: %v", w)
	}
}

// TestUpgradeSQLite: a database of schema version 1 (before crash_day)
// gets the column filled from the crash ids, and its rows keep being
// updated in place.
func TestUpgradeSQLite(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "index.sqlite")
	db, err := sql.Open("sqlite", "file:"+path)
	if err != nil {
		t.Fatal(err)
	}
	id := crashID(7, time.Date(2026, 11, 20, 0, 0, 0, 0, time.UTC))
	for _, stmt := range append(strings.Split(migrations[1], ";"),
		`CREATE TABLE schema_migrations (version INTEGER PRIMARY KEY, applied_at TEXT NOT NULL)`,
		`INSERT INTO schema_migrations VALUES (1, '')`,
		`INSERT INTO crashes (crash_id, status, received_at, updated_at) VALUES ('`+id+`', 'received', '', '')`) {
		if strings.TrimSpace(stmt) == "" {
			continue
		}
		if _, err := db.Exec(stmt); err != nil {
			t.Fatal(err)
		}
	}
	db.Close()
	ix, err := OpenSQLite(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	defer ix.Close()
	var day string
	if err := ix.db.QueryRow(`SELECT crash_day FROM crashes`).Scan(&day); err != nil || day != "2026-11-20" || day != crashDay(id) {
		t.Errorf("crash_day %q %v", day, err)
	}
	if err := ix.Processed(ctx, Crash{ID: id, Signature: "s"}); err != nil {
		t.Fatal(err)
	}
	if n, err := ix.Counts(ctx); err != nil || n[Processed] != 1 || len(n) != 1 {
		t.Errorf("counts %v %v", n, err)
	}
}
