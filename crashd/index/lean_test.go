package index

import (
	"context"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestQueryPlans checks on SQLite that the queries the dropped indexes of
// migration 7 served (lean.go) still read an index of crashes, not the
// table, and that Search's newest-first order still comes from an index
// (no sort of all the matching rows). The plans are logged (-v); before
// migration 7 they were the same with crashes_status in place of
// crashes_triage or crashes_status_signature.
func TestQueryPlans(t *testing.T) {
	ctx := context.Background()
	ix, err := OpenSQLite(ctx, filepath.Join(t.TempDir(), "index.sqlite"))
	if err != nil {
		t.Fatal(err)
	}
	defer ix.Close()
	day := time.Date(2026, 11, 25, 0, 0, 0, 0, time.UTC)
	for i := range 50 {
		at := day.Add(time.Duration(i) * time.Minute)
		if _, err := ix.RecordProcessed(ctx, Outcome{Crash: Crash{ID: crashID(i, day), ReceivedAt: at, Product: "App", Version: "1.0",
			OS: "Linux", CPU: "amd64", Signature: "sig", Attempts: 1}}); err != nil {
			t.Fatal(err)
		}
	}
	since, until := day, day.Add(time.Hour)
	byStatus, byStatusArgs := searchStmt(Query{Status: Processed, Limit: 10})
	byStatusSince, byStatusSinceArgs := searchStmt(Query{Status: Processed, Since: since, Limit: 10})
	w, wargs := Filter{Since: since, Until: until, Product: "App"}.where()
	for _, c := range []struct {
		name    string
		stmt    string
		args    []any
		ordered bool // must not sort: ORDER BY from the index
	}{
		{name: "search by status", stmt: byStatus, args: byStatusArgs, ordered: true},
		{name: "search by status since", stmt: byStatusSince, args: byStatusSinceArgs, ordered: true},
		{name: "counts", stmt: countsStmt},
		{name: "processed since", stmt: processedSinceStmt, args: []any{"processed", formatTime(since)}},
		{name: "find: total", stmt: `SELECT COUNT(*) FROM crashes WHERE ` + w, args: wargs},
		{name: "top crashers: the part from crashes", stmt: `SELECT signature, COUNT(*) FROM crashes WHERE ` + w + ` GROUP BY signature`, args: wargs},
	} {
		rows, err := ix.db.QueryContext(ctx, "EXPLAIN QUERY PLAN "+c.stmt, c.args...)
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		var plan []string
		for rows.Next() {
			var id, parent, notused int
			var detail string
			if err := rows.Scan(&id, &parent, &notused, &detail); err != nil {
				t.Fatal(err)
			}
			plan = append(plan, detail)
		}
		rows.Close()
		p := strings.Join(plan, "; ")
		t.Logf("%s: %s", c.name, p)
		if !strings.Contains(p, "crashes USING") || !strings.Contains(p, "INDEX") {
			t.Errorf("%s reads the table, not an index: %s", c.name, p)
		}
		// (Ties on received_at are put in crash_id order by a sort of
		// the last term, as with crashes_status before.)
		if c.ordered && strings.Contains(p, "TEMP B-TREE FOR ORDER BY") {
			t.Errorf("%s sorts its rows: %s", c.name, p)
		}
	}
}
