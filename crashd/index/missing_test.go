package index

import (
	"context"
	"database/sql"
	"fmt"
	"path/filepath"
	"testing"
	"time"
)

func TestMissingSymbols(t *testing.T) {
	ctx := context.Background()
	ix, err := OpenSQLite(ctx, filepath.Join(t.TempDir(), "index.sqlite"))
	if err != nil {
		t.Fatal(err)
	}
	defer ix.Close()
	t0 := time.Date(2026, 11, 26, 10, 0, 0, 0, time.UTC)
	app := Module{DebugFile: "app.pdb", DebugID: "aaaa1", CodeFile: "app.exe", CodeID: "5F00AA"}
	lib := Module{DebugFile: "libc.so.6", DebugID: "BBBB0", CodeFile: "libc.so.6", CodeID: "bbbbcc"}
	other := Module{DebugFile: "other.pdb", DebugID: "CCCC1"}
	set := func(id string, at time.Time, mods ...Module) {
		t.Helper()
		if err := ix.Processed(ctx, Crash{ID: id, ReceivedAt: at}); err != nil {
			t.Fatal(err)
		}
		if err := ix.SetMissingSymbols(ctx, id, at, mods); err != nil {
			t.Fatal(err)
		}
	}
	// c1..c5 miss app; c2, c4 miss lib too; c3 misses other twice (one row).
	for i := 1; i <= 5; i++ {
		mods := []Module{app}
		if i%2 == 0 {
			mods = append(mods, lib)
		}
		if i == 3 {
			mods = append(mods, other, Module{DebugFile: "OTHER.PDB", DebugID: "cccc1"}, Module{DebugFile: "nodebugid"})
		}
		set(fmt.Sprintf("c%d", i), t0.Add(time.Duration(i)*time.Minute), mods...)
	}
	list := func(q MissingQuery) string {
		t.Helper()
		mods, total, err := ix.MissingSymbols(ctx, q)
		if err != nil {
			t.Fatal(err)
		}
		s := fmt.Sprint(total)
		for _, m := range mods {
			s += fmt.Sprintf(" %s/%s(%s/%s)x%d@%s,%s", m.DebugFile, m.DebugID, m.CodeFile, m.CodeID, m.Crashes, m.LatestCrashID, m.LatestReceivedAt.Format("15:04"))
		}
		return s
	}
	for _, tc := range []struct {
		q    MissingQuery
		want string
	}{
		{MissingQuery{}, "3 app.pdb/AAAA1(app.exe/5F00AA)x5@c5,10:05 libc.so.6/BBBB0(libc.so.6/bbbbcc)x2@c4,10:04 other.pdb/CCCC1(/)x1@c3,10:03"},
		{MissingQuery{Limit: 1}, "3 app.pdb/AAAA1(app.exe/5F00AA)x5@c5,10:05"},
		{MissingQuery{Since: t0.Add(4 * time.Minute)}, "2 app.pdb/AAAA1(app.exe/5F00AA)x2@c5,10:05 libc.so.6/BBBB0(libc.so.6/bbbbcc)x1@c4,10:04"},
		{MissingQuery{Since: t0.Add(time.Hour)}, "0"},
	} {
		if got := list(tc.q); got != tc.want {
			t.Errorf("%+v:\n got %s\nwant %s", tc.q, got, tc.want)
		}
	}
	crashes := func(f, id string, limit int) string {
		t.Helper()
		ids, err := ix.CrashesMissing(ctx, f, id, limit)
		if err != nil {
			t.Fatal(err)
		}
		return fmtIDs(ids)
	}
	for _, tc := range []struct {
		f, id string
		limit int
		want  string
	}{
		{"app.pdb", "AAAA1", 10, "[c5 c4 c3 c2 c1]"},
		{"APP.PDB", "aaaa1", 2, "[c5 c4]"}, // names without case, newest first, bounded
		{"libc.so.6", "BBBB0", 10, "[c4 c2]"},
		{"app.pdb", "AAAA2", 10, "[]"},
		{"app.pdb", "AAAA1", 0, "[]"},
	} {
		if got := crashes(tc.f, tc.id, tc.limit); got != tc.want {
			t.Errorf("crashes missing %s/%s (%d): %s, want %s", tc.f, tc.id, tc.limit, got, tc.want)
		}
	}
	// Reprocessed with the symbols: c5 misses only lib now; c4 nothing.
	set("c5", t0.Add(5*time.Minute), lib)
	set("c4", t0.Add(4*time.Minute))
	if got, want := crashes("app.pdb", "AAAA1", 10), "[c3 c2 c1]"; got != want {
		t.Errorf("after reprocessing: %s, want %s", got, want)
	}
	if got, want := list(MissingQuery{}), "3 app.pdb/AAAA1(app.exe/5F00AA)x3@c3,10:03 libc.so.6/BBBB0(libc.so.6/bbbbcc)x2@c5,10:05 other.pdb/CCCC1(/)x1@c3,10:03"; got != want {
		t.Errorf("after reprocessing:\n got %s\nwant %s", got, want)
	}
}

// TestMigrateMissingSymbols: an index made by the first schema gains the
// table on opening, its crashes kept.
func TestMigrateMissingSymbols(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "index.sqlite")
	db, err := sql.Open("sqlite", "file:"+path)
	if err != nil {
		t.Fatal(err)
	}
	for _, stmt := range []string{
		`CREATE TABLE schema_migrations (version INTEGER PRIMARY KEY, applied_at TEXT NOT NULL)`,
		migrations[1],
		`INSERT INTO schema_migrations VALUES (1, '2026-01-01T00:00:00.000000Z')`,
		`INSERT INTO crashes (crash_id, status, received_at, updated_at) VALUES ('old', 'processed', '2026-01-01T00:00:00.000000Z', '2026-01-01T00:00:00.000000Z')`,
	} {
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
	if v, _ := ix.SchemaVersion(ctx); v != len(migrations)-1 {
		t.Errorf("schema version %d, want %d", v, len(migrations)-1)
	}
	if err := ix.SetMissingSymbols(ctx, "old", time.Now(), []Module{{DebugFile: "a.pdb", DebugID: "1"}}); err != nil {
		t.Fatal(err)
	}
	if ids, err := ix.CrashesMissing(ctx, "a.pdb", "1", 5); err != nil || fmtIDs(ids) != "[old]" {
		t.Errorf("%v %v", ids, err)
	}
}
