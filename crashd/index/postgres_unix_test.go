//go:build unix

package index

import (
	"context"
	"fmt"
	"os"
	"sync"
	"testing"
	"time"

	"github.com/gobreakpad/gobreakpad/crashd/scaletest"
)

// pgOnce is the package's PostgreSQL instance for CRASHD_TEST_POSTGRES=start,
// started by the first test that needs it and stopped by TestMain.
var (
	pgOnce sync.Once
	pg     *scaletest.Postgres
	pgErr  error
)

func init() {
	startPostgres = func() (string, error) {
		pgOnce.Do(func() {
			if scaletest.PostgresBin() == "" {
				pgErr = fmt.Errorf("PostgreSQL is not installed (apt-get install postgresql)")
				return
			}
			dir, err := os.MkdirTemp("", "crashd-index-pg-")
			if err != nil {
				pgErr = err
				return
			}
			ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
			defer cancel()
			pg, pgErr = scaletest.StartPostgres(ctx, dir, "fsync = off")
			if pgErr != nil {
				os.RemoveAll(dir)
			}
		})
		if pgErr != nil {
			return "", pgErr
		}
		return pg.URL, nil
	}
}

func TestMain(m *testing.M) {
	code := m.Run()
	if pg != nil {
		pg.Stop()
		os.RemoveAll(pg.Dir())
	}
	os.Exit(code)
}
