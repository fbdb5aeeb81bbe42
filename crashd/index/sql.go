package index

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/gobreakpad/gobreakpad/crashd/version"

	_ "github.com/jackc/pgx/v5/stdlib" // the "pgx" database/sql driver (PostgreSQL)
	_ "modernc.org/sqlite"             // the "sqlite" database/sql driver, pure Go
)

// migrations are the schema's versions, applied in order, each once, in
// one transaction (recorded in schema_migrations). Only append.
var migrations = []string{
	1: `
CREATE TABLE crashes (
	crash_id     TEXT PRIMARY KEY,
	status       TEXT NOT NULL,
	received_at  TEXT NOT NULL,
	processed_at TEXT NOT NULL DEFAULT '',
	product      TEXT NOT NULL DEFAULT '',
	version      TEXT NOT NULL DEFAULT '',
	os           TEXT NOT NULL DEFAULT '',
	cpu          TEXT NOT NULL DEFAULT '',
	signature    TEXT NOT NULL DEFAULT '',
	crash_reason TEXT NOT NULL DEFAULT '',
	attempts     INTEGER NOT NULL DEFAULT 0,
	error        TEXT NOT NULL DEFAULT '',
	updated_at   TEXT NOT NULL
);
CREATE INDEX crashes_received ON crashes (received_at, crash_id);
CREATE INDEX crashes_signature ON crashes (signature, received_at);
CREATE INDEX crashes_product ON crashes (product, version, received_at);
CREATE INDEX crashes_status ON crashes (status, received_at);
`,
	// 2: the modules each crash was walked without symbols (missing.go).
	// module is lower(debug_file) + "/" + upper(debug_id), the lookup key.
	// No foreign key to crashes: a partitioned crashes table (PostgreSQL,
	// issue 26) has no unique crash_id alone; what removes crashes
	// removes their rows here too (by crash_id or received_at).
	2: `
CREATE TABLE missing_symbols (
	crash_id    TEXT NOT NULL,
	module      TEXT NOT NULL,
	debug_file  TEXT NOT NULL,
	debug_id    TEXT NOT NULL,
	code_file   TEXT NOT NULL DEFAULT '',
	code_id     TEXT NOT NULL DEFAULT '',
	received_at TEXT NOT NULL,
	PRIMARY KEY (crash_id, module)
);
CREATE INDEX missing_symbols_module ON missing_symbols (module, received_at, crash_id);
CREATE INDEX missing_symbols_received ON missing_symbols (received_at, module);
`,
	// 3: crash_day: the UTC day of the crash id ('' for an id that is not a
	// crash id), the key of PostgreSQL's weekly partitions and of
	// retention; the upserts' conflict target is (crash_id, crash_day),
	// which PostgreSQL's partitioned primary key is. The top-crashers
	// and facet queries of a period find their rows by it.
	3: `
ALTER TABLE crashes ADD COLUMN crash_day TEXT NOT NULL DEFAULT '';
UPDATE crashes SET crash_day = '20' || substr(crash_id, 31, 2) || '-' || substr(crash_id, 33, 2) || '-' || substr(crash_id, 35, 2) WHERE length(crash_id) = 36;
CREATE UNIQUE INDEX crashes_key ON crashes (crash_id, crash_day);
CREATE INDEX crashes_top ON crashes (product, crash_day, signature);
`,
	4: migrationTriage,
	// 5: the daily-counts rollup (daily.go); its triggers differ by
	// dialect (dialect.go).
	5: migrationDaily,
	// 6: the annotations the configuration indexes (annotations.go).
	6: migrationAnnotations,
	// 7: two indexes of crashes no query reads any more (lean.go).
	7: migrationLean,
	// 8: the tokens, sessions and login codes managed at run time
	// (tokens.go).
	8: migrationAuth,
	// 9: the triage state, bug links and history of each (product,
	// signature) (signature_triage.go).
	9: migrationSignatureTriage,
	// 10: the alerts' events, deliveries and attempts (alerts.go).
	10: migrationAlerts,
	// 11: unused (the branches of issue 38 were numbered ahead).
	// 12: the CPU info and module versions of a crash, for the
	// correlations (correlations.go).
	12: migrationCorrelations,
	// 13: the catalogue of symbol files stored on a shared blob store
	// (symbol_files.go).
	13: migrationSymbolFiles,
}

// crashDay is the crash_day of a crash id: its UTC day (the id's last six
// digits, YYMMDD) as YYYY-MM-DD, or "" for an id that is not a crash id.
// It is a function of the id alone, so (crash_id, crash_day) is as unique
// as crash_id.
func crashDay(id string) string {
	if len(id) != 36 {
		return ""
	}
	t, err := time.Parse("20060102", "20"+id[30:])
	if err != nil {
		return ""
	}
	return t.Format(dayFormat)
}

// SQL is an [Index] on a database/sql database, SQLite ([OpenSQLite]) or
// PostgreSQL ([OpenPostgres]). Its statements are written with ?
// parameters in SQL that SQLite and PostgreSQL both take; rebind rewrites
// the parameters for the dialect; everything else that differs is in
// dialect.go.
type SQL struct {
	db     *sql.DB
	d      *dialect
	rebind func(string) string
	// wmu serialises writes on SQLite (d.serialWrites): SQLite has one
	// writer, and waiting here is cheaper than its busy loop.
	wmu sync.Mutex
	// stmts are the write statements, prepared once (under smu: on
	// PostgreSQL writes do not take wmu).
	smu   sync.Mutex
	stmts map[string]*sql.Stmt
	now   func() time.Time
	// versionOrder is SetVersionOrder's (nil: Mozilla's).
	versionOrder func(product string) version.Order
	// The group commit of RecordProcessed (record.go): outcomes waiting,
	// and whether a caller leads (writes them).
	gmu     sync.Mutex
	pending []*pendingRecord
	leading bool
	// groupWait is SetGroupWait's; groupFull, while a leader waits, is
	// closed when maxGroup outcomes wait; the counters are GroupCommits'.
	groupWait     time.Duration
	groupFull     chan struct{}
	groupCommits  atomic.Int64
	groupOutcomes atomic.Int64
	// noRollup: the triage queries count from crashes alone (tests
	// compare both ways).
	noRollup bool
	// auth is the short memo of token and session lookups (tokens.go).
	auth authCache
	// alerts: a new signature's first crash records its alert event
	// (SetAlerts, alerts.go).
	alerts bool
}

// lockWrites takes wmu when the dialect has one writer; the returned
// function releases it.
func (s *SQL) lockWrites() func() {
	if !s.d.serialWrites {
		return func() {}
	}
	s.wmu.Lock()
	return s.wmu.Unlock
}

// OpenSQLite opens (creating it and its directory if needed) the SQLite
// index at path and brings its schema up to date. The database is in WAL
// mode with synchronous=NORMAL: a killed process loses nothing committed;
// a power loss may lose the last commits, which start-up recovery redoes
// from the blob store. LIKE is case-sensitive (case_sensitive_like), as
// PostgreSQL's: the searches fold case explicitly (match.go).
func OpenSQLite(ctx context.Context, path string) (*SQL, error) {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return nil, fmt.Errorf("index: %w", err)
	}
	dsn := "file:" + path + "?_pragma=busy_timeout(10000)&_pragma=journal_mode(WAL)&_pragma=synchronous(NORMAL)&_pragma=foreign_keys(ON)&_pragma=case_sensitive_like(ON)&_txlock=immediate"
	db, err := sql.Open("sqlite", dsn)
	if err != nil {
		return nil, fmt.Errorf("index: open %s: %w", path, err)
	}
	db.SetMaxOpenConns(8)
	s := &SQL{db: db, d: sqliteDialect, rebind: sqliteDialect.rebind, now: time.Now}
	if err := s.migrate(ctx); err != nil {
		db.Close()
		return nil, fmt.Errorf("index: %s: %w", path, err)
	}
	return s, nil
}

// OpenPostgres opens the PostgreSQL index at dsn (a postgres:// URL or
// key=value string, as pgx takes it: github.com/jackc/pgx/v5 through its
// database/sql driver) and brings its schema up to date under an advisory
// lock, so that many processes can start at once; it creates the weekly
// partitions of the weeks around now. The tables live in the connection's
// current schema (search_path).
func OpenPostgres(ctx context.Context, dsn string) (*SQL, error) {
	db, err := sql.Open("pgx", dsn)
	if err != nil {
		return nil, fmt.Errorf("index: open postgres: %w", err)
	}
	db.SetMaxOpenConns(16)
	db.SetMaxIdleConns(16)
	db.SetConnMaxIdleTime(5 * time.Minute)
	s := &SQL{db: db, d: postgresDialect, rebind: postgresDialect.rebind, now: time.Now}
	if err := s.migrate(ctx); err != nil {
		db.Close()
		return nil, fmt.Errorf("index: postgres: %w", err)
	}
	if _, err := s.Maintain(ctx, s.now(), 0); err != nil {
		db.Close()
		return nil, fmt.Errorf("index: postgres: %w", err)
	}
	return s, nil
}

// Open opens the index a configuration names: a postgres:// or
// postgresql:// URL is PostgreSQL ([OpenPostgres]), anything else the path
// of a SQLite database ([OpenSQLite]).
func Open(ctx context.Context, db string) (*SQL, error) {
	if strings.HasPrefix(db, "postgres://") || strings.HasPrefix(db, "postgresql://") {
		return OpenPostgres(ctx, db)
	}
	return OpenSQLite(ctx, db)
}

// Dialect returns "sqlite" or "postgres".
func (s *SQL) Dialect() string { return s.d.name }

// Maintain creates the weekly partitions of the weeks around now
// (PostgreSQL: the week before it and the three after; the default
// partition takes the others), and, when keep is positive, removes the
// crashes of the weeks that ended before now-keep: whole partitions are
// dropped (PostgreSQL), rows deleted (SQLite, and what PostgreSQL's
// default partition holds). The cutoff is the Monday starting now-keep's
// week, in both dialects. It returns the partitions dropped. Several
// processes may call it at once (it runs under the schema lock), but one
// at a time is enough: crashd takes a lease for it.
func (s *SQL) Maintain(ctx context.Context, now time.Time, keep time.Duration) ([]string, error) {
	defer s.lockWrites()()
	conn, err := s.db.Conn(ctx)
	if err != nil {
		return nil, fmt.Errorf("index: maintain: %w", err)
	}
	defer conn.Close()
	unlock, err := s.d.lock(ctx, conn)
	if err != nil {
		return nil, fmt.Errorf("index: maintain: %w", err)
	}
	defer unlock()
	if s.d.partitioned {
		for w := week(now).AddDate(0, 0, -7); !w.After(week(now).AddDate(0, 0, 21)); w = w.AddDate(0, 0, 7) {
			if err := s.ensureWeek(ctx, conn, w); err != nil {
				return nil, fmt.Errorf("index: maintain: %w", err)
			}
		}
	}
	if keep <= 0 {
		return nil, nil
	}
	dropped, err := s.dropBefore(ctx, conn, RetentionCutoff(now, keep))
	if err != nil {
		return dropped, fmt.Errorf("index: maintain: %w", err)
	}
	return dropped, nil
}

// RetentionCutoff is the first day Maintain keeps with keep: the Monday
// (00:00 UTC) starting the week of now-keep. Crashes whose day is before it
// are removed; crashd deletes their blobs with the same cutoff.
func RetentionCutoff(now time.Time, keep time.Duration) time.Time { return week(now.Add(-keep)) }

// Dollar rewrites ? parameters as $1, $2, ... (PostgreSQL's form). The
// statements of this package have no ? inside string literals.
func Dollar(q string) string {
	var b strings.Builder
	n := 0
	for _, r := range q {
		if r == '?' {
			n++
			b.WriteString("$" + strconv.Itoa(n))
			continue
		}
		b.WriteRune(r)
	}
	return b.String()
}

func (s *SQL) migrate(ctx context.Context) error {
	defer s.lockWrites()()
	conn, err := s.db.Conn(ctx)
	if err != nil {
		return err
	}
	defer conn.Close()
	unlock, err := s.d.lock(ctx, conn)
	if err != nil {
		return err
	}
	defer unlock()
	if _, err := conn.ExecContext(ctx, `CREATE TABLE IF NOT EXISTS schema_migrations (version INTEGER PRIMARY KEY, applied_at TEXT NOT NULL)`); err != nil {
		return fmt.Errorf("schema_migrations: %w", err)
	}
	// Each version in its own transaction, which reads the version
	// again: a process that migrated meanwhile (SQLite's processes wait
	// for each other's transactions only) is not migrated over.
	for {
		tx, err := conn.BeginTx(ctx, nil)
		if err != nil {
			return err
		}
		var have int
		if err := tx.QueryRowContext(ctx, `SELECT COALESCE(MAX(version), 0) FROM schema_migrations`).Scan(&have); err != nil {
			tx.Rollback()
			return fmt.Errorf("schema version: %w", err)
		}
		if have >= len(migrations) {
			tx.Rollback()
			return fmt.Errorf("schema version %d is newer than this program's (%d)", have, len(migrations)-1)
		}
		v := have + 1
		if v == len(migrations) {
			tx.Rollback()
			break
		}
		m := s.d.migration(v)
		sep := ";"
		if strings.Contains(m, "\n/\n") {
			sep = "\n/\n"
		}
		for _, stmt := range strings.Split(m, sep) {
			if strings.TrimSpace(stmt) == "" {
				continue
			}
			if _, err := tx.ExecContext(ctx, stmt); err != nil {
				tx.Rollback()
				return fmt.Errorf("migration %d: %w", v, err)
			}
		}
		if _, err := tx.ExecContext(ctx, s.rebind(`INSERT INTO schema_migrations (version, applied_at) VALUES (?, ?)`), v, formatTime(s.now())); err != nil {
			tx.Rollback()
			return fmt.Errorf("migration %d: %w", v, err)
		}
		if err := tx.Commit(); err != nil {
			return fmt.Errorf("migration %d: %w", v, err)
		}
	}
	// What the dialect defines outside the numbered migrations (the
	// fold function of PostgreSQL: its body depends on the server).
	if s.d.setup != "" {
		if _, err := conn.ExecContext(ctx, s.d.setup); err != nil {
			return fmt.Errorf("setup: %w", err)
		}
	}
	return nil
}

// SchemaVersion returns the version of the schema.
func (s *SQL) SchemaVersion(ctx context.Context) (int, error) {
	var v int
	err := s.db.QueryRowContext(ctx, `SELECT COALESCE(MAX(version), 0) FROM schema_migrations`).Scan(&v)
	return v, err
}

func (s *SQL) exec(ctx context.Context, op, q string, args ...any) error {
	defer s.lockWrites()()
	st, err := s.stmt(ctx, q)
	if err == nil {
		_, err = st.ExecContext(ctx, args...)
	}
	if err != nil {
		return fmt.Errorf("index: %s: %w", op, err)
	}
	return nil
}

// stmt returns the prepared statement of q (rebound), preparing it on
// first use: SQLite compiles a statement's text each time it is executed
// unprepared, a good part of the CPU of each of the processor's writes.
func (s *SQL) stmt(ctx context.Context, q string) (*sql.Stmt, error) {
	s.smu.Lock()
	defer s.smu.Unlock()
	if st := s.stmts[q]; st != nil {
		return st, nil
	}
	st, err := s.db.PrepareContext(ctx, s.rebind(q))
	if err != nil {
		return nil, err
	}
	if s.stmts == nil {
		s.stmts = map[string]*sql.Stmt{}
	}
	s.stmts[q] = st
	return st, nil
}

// Received implements [Index].
func (s *SQL) Received(ctx context.Context, c Crash) error {
	return s.exec(ctx, "received "+c.ID, `
INSERT INTO crashes (crash_id, crash_day, status, received_at, product, version, updated_at)
VALUES (?, ?, ?, ?, ?, ?, ?)
ON CONFLICT (crash_id, crash_day) DO NOTHING`,
		c.ID, crashDay(c.ID), string(Received), formatTime(c.ReceivedAt), c.Product, c.Version, formatTime(s.now()))
}

// Attempt implements [Index].
func (s *SQL) Attempt(ctx context.Context, id string, receivedAt time.Time) (int, error) {
	defer s.lockWrites()()
	var n int
	err := s.db.QueryRowContext(ctx, s.rebind(`
INSERT INTO crashes (crash_id, crash_day, status, received_at, attempts, updated_at)
VALUES (?, ?, ?, ?, 1, ?)
ON CONFLICT (crash_id, crash_day) DO UPDATE SET attempts = crashes.attempts + 1, updated_at = excluded.updated_at
RETURNING attempts`), id, crashDay(id), string(Received), formatTime(receivedAt), formatTime(s.now())).Scan(&n)
	if err != nil {
		return 0, fmt.Errorf("index: attempt %s: %w", id, err)
	}
	return n, nil
}

// Processed implements [Index].
func (s *SQL) Processed(ctx context.Context, c Crash) error {
	if c.ProcessedAt.IsZero() {
		c.ProcessedAt = s.now()
	}
	return s.exec(ctx, "processed "+c.ID, `
INSERT INTO crashes (crash_id, crash_day, status, received_at, processed_at, product, version, os, cpu, signature, crash_reason, attempts, error, updated_at)
VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, '', ?)
ON CONFLICT (crash_id, crash_day) DO UPDATE SET
	status = excluded.status, received_at = excluded.received_at, processed_at = excluded.processed_at,
	product = excluded.product, version = excluded.version, os = excluded.os, cpu = excluded.cpu,
	signature = excluded.signature, crash_reason = excluded.crash_reason, attempts = excluded.attempts, error = '',
	updated_at = excluded.updated_at`,
		c.ID, crashDay(c.ID), string(Processed), formatTime(c.ReceivedAt), formatTime(c.ProcessedAt), c.Product, c.Version, c.OS, c.CPU,
		c.Signature, c.CrashReason, c.Attempts, formatTime(s.now()))
}

// Failed implements [Index].
func (s *SQL) Failed(ctx context.Context, id string, receivedAt time.Time, attempts int, reason string) error {
	return s.exec(ctx, "failed "+id, `
INSERT INTO crashes (crash_id, crash_day, status, received_at, attempts, error, updated_at)
VALUES (?, ?, ?, ?, ?, ?, ?)
ON CONFLICT (crash_id, crash_day) DO UPDATE SET status = excluded.status, attempts = excluded.attempts, error = excluded.error, updated_at = excluded.updated_at`,
		id, crashDay(id), string(Failed), formatTime(receivedAt), attempts, reason, formatTime(s.now()))
}

// Requeued implements [Index].
func (s *SQL) Requeued(ctx context.Context, id string) error {
	return s.exec(ctx, "requeued "+id, `
UPDATE crashes SET attempts = 0, status = CASE WHEN status = ? THEN ? ELSE status END, updated_at = ?
WHERE crash_id = ? AND crash_day = ?`, string(Failed), string(Received), formatTime(s.now()), id, crashDay(id))
}

const columns = `crash_id, status, received_at, processed_at, product, version, os, cpu, signature, crash_reason, attempts, error`

func scan(row interface{ Scan(...any) error }) (Crash, error) {
	var c Crash
	var status, recv, proc string
	err := row.Scan(&c.ID, &status, &recv, &proc, &c.Product, &c.Version, &c.OS, &c.CPU, &c.Signature, &c.CrashReason, &c.Attempts, &c.Error)
	c.Status, c.ReceivedAt, c.ProcessedAt = Status(status), parseTime(recv), parseTime(proc)
	return c, err
}

// Get implements [Index].
func (s *SQL) Get(ctx context.Context, id string) (Crash, error) {
	c, err := scan(s.db.QueryRowContext(ctx, s.rebind(`SELECT `+columns+` FROM crashes WHERE crash_id = ? AND crash_day = ?`), id, crashDay(id)))
	if errors.Is(err, sql.ErrNoRows) {
		return Crash{}, fmt.Errorf("%w: %s", ErrNotFound, id)
	}
	if err != nil {
		return Crash{}, fmt.Errorf("index: get %s: %w", id, err)
	}
	return c, nil
}

// Search implements [Index].
func (s *SQL) Search(ctx context.Context, q Query) ([]Crash, error) {
	stmt, args := searchStmt(q)
	rows, err := s.db.QueryContext(ctx, s.rebind(stmt), args...)
	if err != nil {
		return nil, fmt.Errorf("index: search: %w", err)
	}
	defer rows.Close()
	out := []Crash{}
	for rows.Next() {
		c, err := scan(rows)
		if err != nil {
			return nil, fmt.Errorf("index: search: %w", err)
		}
		out = append(out, c)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("index: search: %w", err)
	}
	return out, nil
}

// searchStmt is Search's statement (? parameters) and its arguments.
func searchStmt(q Query) (string, []any) {
	var where []string
	var args []any
	add := func(cond string, v any) {
		where = append(where, cond)
		args = append(args, v)
	}
	if q.Signature != "" {
		add("signature = ?", q.Signature)
	}
	if q.Product != "" {
		add("product = ?", q.Product)
	}
	if q.Version != "" {
		add("version = ?", q.Version)
	}
	if q.Status != "" {
		add("status = ?", string(q.Status))
	}
	if !q.Since.IsZero() {
		add("received_at >= ?", formatTime(q.Since))
	}
	if !q.Before.IsZero() {
		add("received_at < ?", formatTime(q.Before))
	}
	if !q.After.IsZero() {
		// Spelt out rather than as a row value: both dialects read the
		// index (received_at, crash_id) for it.
		where = append(where, "(received_at < ? OR (received_at = ? AND crash_id < ?))")
		t := formatTime(q.After.ReceivedAt)
		args = append(args, t, t, q.After.ID)
	}
	limit := q.Limit
	if limit <= 0 {
		limit = DefaultLimit
	}
	limit = min(limit, MaxLimit)
	stmt := `SELECT ` + columns + ` FROM crashes`
	if len(where) > 0 {
		stmt += ` WHERE ` + strings.Join(where, " AND ")
	}
	stmt += ` ORDER BY received_at DESC, crash_id DESC LIMIT ` + strconv.Itoa(limit)
	return stmt, args
}

// Known implements [Index].
func (s *SQL) Known(ctx context.Context, ids []string) (map[string]bool, error) {
	known := map[string]bool{}
	for chunk := range slices.Chunk(ids, maxIn) {
		args := make([]any, len(chunk))
		for i, id := range chunk {
			args[i] = id
		}
		rows, err := s.db.QueryContext(ctx, s.rebind(`SELECT crash_id FROM crashes WHERE crash_id IN (`+marks(len(chunk))+`)`), args...)
		if err != nil {
			return nil, fmt.Errorf("index: known: %w", err)
		}
		for rows.Next() {
			var id string
			if err := rows.Scan(&id); err != nil {
				rows.Close()
				return nil, fmt.Errorf("index: known: %w", err)
			}
			known[id] = true
		}
		err = rows.Err()
		rows.Close()
		if err != nil {
			return nil, fmt.Errorf("index: known: %w", err)
		}
	}
	return known, nil
}

// processedSinceStmt is ProcessedSince's statement.
const processedSinceStmt = `SELECT crash_id FROM crashes WHERE status = ? AND updated_at >= ?`

// ProcessedSince implements [Index]. It reads the whole table (updated_at
// has no index): it runs once, at start-up.
func (s *SQL) ProcessedSince(ctx context.Context, since time.Time) ([]string, error) {
	rows, err := s.db.QueryContext(ctx, s.rebind(processedSinceStmt),
		string(Processed), formatTime(since))
	if err != nil {
		return nil, fmt.Errorf("index: processed since: %w", err)
	}
	defer rows.Close()
	var ids []string
	for rows.Next() {
		var id string
		if err := rows.Scan(&id); err != nil {
			return nil, fmt.Errorf("index: processed since: %w", err)
		}
		ids = append(ids, id)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("index: processed since: %w", err)
	}
	return ids, nil
}

// countsStmt is Counts' statement.
const countsStmt = `SELECT status, COUNT(*) FROM crashes GROUP BY status`

// Counts implements [Index].
func (s *SQL) Counts(ctx context.Context) (map[Status]int64, error) {
	rows, err := s.db.QueryContext(ctx, countsStmt)
	if err != nil {
		return nil, fmt.Errorf("index: counts: %w", err)
	}
	defer rows.Close()
	out := map[Status]int64{}
	for rows.Next() {
		var st string
		var n int64
		if err := rows.Scan(&st, &n); err != nil {
			return nil, fmt.Errorf("index: counts: %w", err)
		}
		out[Status(st)] = n
	}
	return out, rows.Err()
}

// Ping implements [Index].
func (s *SQL) Ping(ctx context.Context) error {
	var one int
	if err := s.db.QueryRowContext(ctx, `SELECT 1`).Scan(&one); err != nil {
		return fmt.Errorf("index: %w", err)
	}
	return nil
}

// Close implements [Index].
func (s *SQL) Close() error {
	s.smu.Lock()
	for _, st := range s.stmts {
		st.Close()
	}
	s.stmts = nil
	s.smu.Unlock()
	return s.db.Close()
}
