package index

import (
	"context"
	"errors"
	"path/filepath"
	"sync"
	"testing"
	"time"
)

func TestSQLite(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "db", "index.sqlite")
	ix, err := OpenSQLite(ctx, path)
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
	ix, err = OpenSQLite(ctx, path)
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
