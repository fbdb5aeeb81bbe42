package server

import (
	"database/sql"
	"fmt"
	"os"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	_ "github.com/jackc/pgx/v5/stdlib"
)

// The server's tests run on the embedded SQLite index and, when
// CRASHD_TEST_POSTGRES names a PostgreSQL database (postgres://...), with
// the index in PostgreSQL instead: each test server in a schema of its
// own. (CRASHD_TEST_POSTGRES=start, which .ci/run sets, runs only
// crashd/index's tests on both back ends; the server's stay on SQLite.)
const postgresEnv = "CRASHD_TEST_POSTGRES"

var schemas atomic.Int64

// testDB returns the db of a test's configuration: "" (SQLite in the data
// directory) or a PostgreSQL URL with a new schema, dropped after the test.
func testDB(t testing.TB) string {
	dsn := os.Getenv(postgresEnv)
	if !strings.HasPrefix(dsn, "postgres://") && !strings.HasPrefix(dsn, "postgresql://") {
		return ""
	}
	db, err := sql.Open("pgx", dsn)
	if err != nil {
		t.Fatal(err)
	}
	schema := fmt.Sprintf("srv_%d_%d_%d", os.Getpid(), time.Now().UnixNano(), schemas.Add(1))
	if _, err := db.Exec(`CREATE SCHEMA ` + schema); err != nil {
		db.Close()
		t.Fatalf("%s: %v", postgresEnv, err)
	}
	t.Cleanup(func() {
		db.Exec(`DROP SCHEMA ` + schema + ` CASCADE`)
		db.Close()
	})
	sep := "?"
	if strings.Contains(dsn, "?") {
		sep = "&"
	}
	return dsn + sep + "search_path=" + schema
}
