package web

import (
	"context"
	"database/sql"
	"fmt"
	"math/rand/v2"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/gobreakpad/gobreakpad/crashd/auth"
	"github.com/gobreakpad/gobreakpad/crashd/blob"
	"github.com/gobreakpad/gobreakpad/crashd/crash"
	"github.com/gobreakpad/gobreakpad/crashd/index"
	"github.com/gobreakpad/gobreakpad/internal/testkit/cputime"
)

// BenchmarkHome renders the top crashers page (and its JSON) over
// 100,000 processed crashes spread over 28 days: 2,000 signatures with
// a Zipf-like distribution, 3 products, 10 versions, 3 OSes, 2 CPUs,
// 3 process types. The handler is called directly: server time only.
//
//	go test ./crashd/web -run X -bench Home -benchtime 20x
//
// With $CRASHD_TEST_POSTGRES (a postgres:// URL) the same runs on
// PostgreSQL, in a schema of its own.
//
// cpu-ms/op is the process's CPU time per page (getrusage, on Unix),
// steadier than the wall time on a loaded machine.
func BenchmarkHome(b *testing.B) {
	ctx := context.Background()
	b.Run("sqlite", func(b *testing.B) {
		ix, err := index.OpenSQLite(ctx, filepath.Join(b.TempDir(), "index.sqlite"))
		if err != nil {
			b.Fatal(err)
		}
		defer ix.Close()
		benchPages(b, ix)
	})
	b.Run("postgres", func(b *testing.B) {
		dsn := os.Getenv("CRASHD_TEST_POSTGRES")
		if dsn == "" {
			b.Skip("$CRASHD_TEST_POSTGRES does not name a PostgreSQL database (postgres://...)")
		}
		db, err := sql.Open("pgx", dsn)
		if err != nil {
			b.Fatal(err)
		}
		defer db.Close()
		schema := fmt.Sprintf("bench_%d_%d", os.Getpid(), time.Now().UnixNano())
		if _, err := db.Exec(`CREATE SCHEMA ` + schema); err != nil {
			b.Fatal(err)
		}
		defer db.Exec(`DROP SCHEMA ` + schema + ` CASCADE`)
		sep := "?"
		if strings.Contains(dsn, "?") {
			sep = "&"
		}
		ix, err := index.OpenPostgres(ctx, dsn+sep+"search_path="+schema)
		if err != nil {
			b.Fatal(err)
		}
		defer ix.Close()
		benchPages(b, ix)
	})
}

func benchPages(b *testing.B, ix *index.SQL) {
	ctx := context.Background()
	now := time.Date(2026, 11, 26, 12, 0, 0, 0, time.UTC)
	rng := rand.New(rand.NewPCG(1, 2))
	zipf := rand.NewZipf(rng, 1.1, 1, 1999)
	oses, cpus, ptypes := []string{"Windows NT", "Linux", "Mac OS X"}, []string{"amd64", "arm64"}, []string{"parent", "content", "gpu"}
	cpuInfos := []string{"GenuineIntel family 6 model 158 stepping 10", "GenuineIntel family 6 model 154 stepping 3", "AuthenticAMD family 25 model 33 stepping 0", ""}
	const n = 100_000
	t0 := time.Now()
	for i := range n {
		at := now.Add(-time.Duration(rng.Int64N(int64(28 * 24 * time.Hour))))
		c := index.Crash{ID: fmt.Sprintf("%08x-0000-4000-8000-%05x0%s", i, i&0xfffff, at.Format("060102")), ReceivedAt: at,
			Product: []string{"Firefox", "Thunderbird", "Focus"}[rng.IntN(3)], Version: fmt.Sprintf("1%d.0", rng.IntN(10)),
			OS: oses[rng.IntN(3)], CPU: cpus[rng.IntN(2)], Signature: fmt.Sprintf("mozilla::Something%d::Crash(int)", zipf.Uint64()),
			CrashReason: "EXCEPTION_ACCESS_VIOLATION_READ"}
		if err := ix.Processed(ctx, c); err != nil {
			b.Fatal(err)
		}
		if err := ix.ProcessedDetails(ctx, c, index.Details{ProcessType: ptypes[rng.IntN(3)], Modules: []string{"xul.dll", "ntdll.dll"},
			CPUInfo: cpuInfos[rng.IntN(len(cpuInfos))], ModuleVersions: []crash.ModuleVersion{{Name: "xul.dll", Version: c.Version}}}); err != nil {
			b.Fatal(err)
		}
	}
	b.Logf("indexed %d crashes in %v", n, time.Since(t0))
	secret, tok, _ := auth.NewToken("bench", auth.ScopeViewCrashes)
	authn, err := auth.NewAuthenticator([]auth.Token{tok}, nil)
	if err != nil {
		b.Fatal(err)
	}
	w, err := New(Config{Auth: authn, Now: func() time.Time { return now }}, blob.NewMem(), nil, ix, nil)
	if err != nil {
		b.Fatal(err)
	}
	mux := auth.NewTable(auth.Crashd(auth.RouteOptions{}), authn, false, nil)
	w.Register(mux)
	// get runs sub-benchmark name: GET path as the reader, each request
	// after before (nil: nothing), reporting cpu-ms/op.
	get := func(name, path string, before func()) {
		b.Run(name, func(b *testing.B) {
			cpu0 := cputime.Used().Nanoseconds()
			defer func() {
				if cpu := cputime.Used().Nanoseconds(); cpu > 0 {
					b.ReportMetric(float64(cpu-cpu0)/float64(b.N)/1e6, "cpu-ms/op")
				}
			}()
			for b.Loop() {
				if before != nil {
					before()
				}
				req := httptest.NewRequest("GET", path, nil)
				req.Header.Set("Authorization", "Bearer "+secret)
				rec := httptest.NewRecorder()
				mux.ServeHTTP(rec, req)
				if rec.Code != 200 {
					b.Fatalf("%s: %d %s", path, rec.Code, rec.Body.String())
				}
			}
		})
	}
	for _, c := range []struct{ name, path string }{
		{"home", "/"}, {"home_28days", "/?days=28"}, {"home_filtered", "/?days=7&os=Linux&process_type=content"},
		{"api_topcrashers", "/api/topcrashers"}, {"search", "/search"},
		{"signature", "/signature?signature=mozilla%3A%3ASomething0%3A%3ACrash%28int%29"},
		// The trend alone over 90 days (the fill covers 28), and a
		// search by part of a signature (~, case folded).
		{"signature_trend", "/api/signature/trend?signature=mozilla%3A%3ASomething0%3A%3ACrash%28int%29&days=90"},
		{"search_contains", "/search?signature=~something12"},
	} {
		get(c.name, c.path, nil)
	}
	// The correlations of the top signature (the largest group), every
	// answer computed: the cache emptied before each request.
	for _, days := range []int{7, 28} {
		path := fmt.Sprintf("/api/signature/correlations?signature=mozilla%%3A%%3ASomething0%%3A%%3ACrash%%28int%%29&product=Firefox&days=%d", days)
		get(fmt.Sprintf("correlations_%ddays", days), path, func() {
			w.mu.Lock()
			clear(w.corrCache)
			w.mu.Unlock()
		})
	}
}
