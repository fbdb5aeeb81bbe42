package index

import (
	"context"
	"database/sql"
	"fmt"
	"strings"
	"time"
)

// This file is the one place where SQLite and PostgreSQL differ. The
// statements of the other files (queries, upserts, the migrations list)
// are one set of SQL that both take: ? parameters (rewritten by rebind),
// TEXT times in one fixed-width UTC form, INSERT ... ON CONFLICT ... DO
// UPDATE with excluded., RETURNING, COALESCE, CASE, substr, length. What
// differs, and only here:
//
//   - the driver and parameter syntax (? for SQLite, $1 for PostgreSQL);
//   - writes: SQLite has one writer per database, so writes are serialised
//     in the process (SQL.wmu) and BEGIN IMMEDIATE between processes;
//     PostgreSQL takes concurrent writers;
//   - the migration lock: SQLite's BEGIN IMMEDIATE (one process migrates,
//     the others wait on the busy timeout); PostgreSQL's session advisory
//     lock (pg_advisory_lock) held around the whole migration, so that many
//     processes can start at once;
//   - the crashes table: PostgreSQL's is partitioned by week on crash_day
//     (the UTC day in the crash id), with a DEFAULT partition for what no
//     week holds, and its text columns compare bytewise (COLLATE "C", as
//     SQLite's do), so that every query orders rows as SQLite does; the
//     migrations that differ for that reason are in pgMigrations;
//   - retention: PostgreSQL drops whole weekly partitions, SQLite deletes
//     rows;
//   - the lock of a transaction that must see no concurrent one between
//     its read and its write (the first token, tokens.go): SQLite's
//     transactions are BEGIN IMMEDIATE already; PostgreSQL takes a
//     transaction advisory lock (pg_advisory_xact_lock).
type dialect struct {
	// name is "sqlite" or "postgres".
	name string
	// rebind rewrites a statement's ? parameters.
	rebind func(string) string
	// serialWrites: writes take SQL.wmu.
	serialWrites bool
	// migrations replaces the portable migrations of some versions ("" :
	// nothing to do for that version in this dialect).
	migrations map[int]string
	// lock takes the lock under which the schema changes (migrations,
	// partitions) on conn, and returns its release.
	lock func(ctx context.Context, conn *sql.Conn) (func(), error)
	// partitioned: the crashes table has weekly partitions.
	partitioned bool
	// txLock serialises the transactions that take it (until their end).
	txLock func(ctx context.Context, tx *sql.Tx) error
	// setup runs after the migrations at every open, under the schema
	// lock ("" : nothing).
	setup string
}

var sqliteDialect = &dialect{
	name:         "sqlite",
	rebind:       func(q string) string { return q },
	serialWrites: true,
	lock: func(ctx context.Context, conn *sql.Conn) (func(), error) {
		// The migration's own transactions are BEGIN IMMEDIATE
		// (_txlock=immediate): one writer at a time, others wait.
		return func() {}, nil
	},
	// BEGIN IMMEDIATE (_txlock=immediate): one writing transaction at a
	// time already.
	txLock: func(context.Context, *sql.Tx) error { return nil },
	migrations: map[int]string{
		5: migrationDaily + "\n/\n" + sqliteDailyTriggers,
	},
}

// postgresFold defines foldFunc in the current schema when it is missing:
// lower() under ICU's root collation ("und-x-icu": Unicode's case
// mapping, as Go's strings.ToLower on SQLite), else under the database's
// default collation (a server built without ICU: as its locale folds).
// The columns are COLLATE "C", whose lower() folds ASCII only. A SQL
// function this simple is inlined by the planner.
const postgresFold = `DO $do$
DECLARE coll text := 'default';
BEGIN
	IF EXISTS (SELECT 1 FROM pg_proc p JOIN pg_namespace n ON n.oid = p.pronamespace
		WHERE p.proname = '` + foldFunc + `' AND n.nspname = current_schema()) THEN
		RETURN;
	END IF;
	IF EXISTS (SELECT 1 FROM pg_collation WHERE collname = 'und-x-icu') THEN
		coll := 'und-x-icu';
	END IF;
	EXECUTE format('CREATE FUNCTION ` + foldFunc + `(t text) RETURNS text LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE AS %L',
		format('SELECT lower(t COLLATE %I)', coll));
END
$do$`

// pgLockKey is the advisory lock of schema changes, one per schema (tests
// run side by side in schemas of one database).
const pgLockKey = `hashtext('gobreakpad.crashd.index.' || current_schema())`

// pgTxLockKey is the transaction advisory lock of txLock, one per schema.
const pgTxLockKey = `hashtext('gobreakpad.crashd.index.tx.' || current_schema())`

var postgresDialect = &dialect{
	name:   "postgres",
	rebind: Dollar,
	lock: func(ctx context.Context, conn *sql.Conn) (func(), error) {
		if _, err := conn.ExecContext(ctx, `SELECT pg_advisory_lock(`+pgLockKey+`)`); err != nil {
			return nil, fmt.Errorf("migration lock: %w", err)
		}
		return func() {
			// A failed unlock ends with the session (the connection is
			// closed by the pool when broken).
			_, _ = conn.ExecContext(context.WithoutCancel(ctx), `SELECT pg_advisory_unlock(`+pgLockKey+`)`)
		}, nil
	},
	partitioned: true,
	setup:       postgresFold,
	txLock: func(ctx context.Context, tx *sql.Tx) error {
		if _, err := tx.ExecContext(ctx, `SELECT pg_advisory_xact_lock(`+pgTxLockKey+`)`); err != nil {
			return fmt.Errorf("transaction lock: %w", err)
		}
		return nil
	},
	migrations: map[int]string{
		// The crashes table of migrations 1 and 3 at once: partitioned
		// by week, so the primary key includes the partition key (which
		// is a function of crash_id: still one row per crash).
		1: `
CREATE TABLE crashes (
	crash_id     TEXT COLLATE "C" NOT NULL,
	status       TEXT COLLATE "C" NOT NULL,
	received_at  TEXT COLLATE "C" NOT NULL,
	processed_at TEXT COLLATE "C" NOT NULL DEFAULT '',
	product      TEXT COLLATE "C" NOT NULL DEFAULT '',
	version      TEXT COLLATE "C" NOT NULL DEFAULT '',
	os           TEXT COLLATE "C" NOT NULL DEFAULT '',
	cpu          TEXT COLLATE "C" NOT NULL DEFAULT '',
	signature    TEXT COLLATE "C" NOT NULL DEFAULT '',
	crash_reason TEXT COLLATE "C" NOT NULL DEFAULT '',
	attempts     INTEGER NOT NULL DEFAULT 0,
	error        TEXT COLLATE "C" NOT NULL DEFAULT '',
	updated_at   TEXT COLLATE "C" NOT NULL,
	crash_day    TEXT COLLATE "C" NOT NULL DEFAULT '',
	PRIMARY KEY (crash_id, crash_day)
) PARTITION BY RANGE (crash_day);
CREATE TABLE crashes_default PARTITION OF crashes DEFAULT;
CREATE INDEX crashes_received ON crashes (received_at, crash_id);
CREATE INDEX crashes_signature ON crashes (signature, received_at);
CREATE INDEX crashes_product ON crashes (product, version, received_at);
CREATE INDEX crashes_status ON crashes (status, received_at);
`,
		// missing_symbols (branch symsrv's migration 2) without its
		// foreign key: the partitioned crashes table has no unique key on
		// crash_id alone.
		2: `
CREATE TABLE missing_symbols (
	crash_id    TEXT COLLATE "C" NOT NULL,
	module      TEXT COLLATE "C" NOT NULL,
	debug_file  TEXT COLLATE "C" NOT NULL,
	debug_id    TEXT COLLATE "C" NOT NULL,
	code_file   TEXT COLLATE "C" NOT NULL DEFAULT '',
	code_id     TEXT COLLATE "C" NOT NULL DEFAULT '',
	received_at TEXT COLLATE "C" NOT NULL,
	PRIMARY KEY (crash_id, module)
);
CREATE INDEX missing_symbols_module ON missing_symbols (module, received_at, crash_id);
CREATE INDEX missing_symbols_received ON missing_symbols (received_at, module);
`,
		3: `
CREATE INDEX crashes_top ON crashes (product, crash_day, signature);
`,
		5: postgresDaily,
		6: postgresAnnotations,
	},
}

// migration returns the SQL of schema version v in this dialect.
func (d *dialect) migration(v int) string {
	if s, ok := d.migrations[v]; ok {
		return s
	}
	return migrations[v]
}

// week returns the Monday (UTC) starting t's week.
func week(t time.Time) time.Time {
	t = t.UTC().Truncate(24 * time.Hour)
	return t.AddDate(0, 0, -((int(t.Weekday()) + 6) % 7))
}

// partitionName is the name of the weekly partition starting on Monday w.
func partitionName(w time.Time) string { return "crashes_w" + w.Format("20060102") }

const dayFormat = "2006-01-02"

// ensureWeek creates the weekly partition starting on Monday w unless it
// exists, moving into it the rows the default partition holds for that
// week (PostgreSQL refuses to attach a range the default partition has
// rows of). The caller holds the schema lock.
func (s *SQL) ensureWeek(ctx context.Context, conn *sql.Conn, w time.Time) error {
	name := partitionName(w)
	var exists bool
	if err := conn.QueryRowContext(ctx, `SELECT to_regclass($1) IS NOT NULL`, name).Scan(&exists); err != nil {
		return fmt.Errorf("partition %s: %w", name, err)
	}
	if exists {
		return nil
	}
	from, to := w.Format(dayFormat), w.AddDate(0, 0, 7).Format(dayFormat)
	tx, err := conn.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("partition %s: %w", name, err)
	}
	defer tx.Rollback()
	stmts := []string{
		`CREATE TABLE ` + name + ` (LIKE crashes INCLUDING DEFAULTS)`,
		`WITH moved AS (DELETE FROM crashes_default WHERE crash_day >= '` + from + `' AND crash_day < '` + to + `' RETURNING *) INSERT INTO ` + name + ` SELECT * FROM moved`,
	}
	// The delete above fired the rollups' trigger; the insert into the
	// table not yet attached did not: count the moved rows again.
	stmts = append(stmts, dailyAdjust(name, +1)...)
	stmts = append(stmts, `ALTER TABLE crashes ATTACH PARTITION `+name+` FOR VALUES FROM ('`+from+`') TO ('`+to+`')`)
	for _, stmt := range stmts {
		if _, err := tx.ExecContext(ctx, stmt); err != nil {
			return fmt.Errorf("partition %s: %w", name, err)
		}
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("partition %s: %w", name, err)
	}
	return nil
}

// partitions returns the Mondays of the weekly partitions there are.
func (s *SQL) partitions(ctx context.Context, conn *sql.Conn) ([]time.Time, error) {
	rows, err := conn.QueryContext(ctx, `
SELECT c.relname FROM pg_inherits i JOIN pg_class c ON c.oid = i.inhrelid
WHERE i.inhparent = to_regclass('crashes')`)
	if err != nil {
		return nil, fmt.Errorf("partitions: %w", err)
	}
	defer rows.Close()
	var out []time.Time
	for rows.Next() {
		var name string
		if err := rows.Scan(&name); err != nil {
			return nil, fmt.Errorf("partitions: %w", err)
		}
		day, ok := strings.CutPrefix(name, "crashes_w")
		if !ok {
			continue
		}
		if w, err := time.Parse("20060102", day); err == nil {
			out = append(out, w)
		}
	}
	return out, rows.Err()
}

// dropBefore removes the rows of the crashes whose day is before cutoff
// (a Monday for PostgreSQL's whole partitions; any day for SQLite): in
// PostgreSQL the weekly partitions that end by then are dropped, and what
// the default partition holds of those days deleted. It returns the
// partitions dropped.
func (s *SQL) dropBefore(ctx context.Context, conn *sql.Conn, cutoff time.Time) ([]string, error) {
	var dropped []string
	if s.d.partitioned {
		weeks, err := s.partitions(ctx, conn)
		if err != nil {
			return nil, err
		}
		for _, w := range weeks {
			if w.AddDate(0, 0, 7).After(cutoff) {
				continue
			}
			name := partitionName(w)
			// DROP fires no trigger: the partition's crashes leave the
			// rollup first, in the same transaction.
			if err := s.dropPartition(ctx, conn, name); err != nil {
				return dropped, fmt.Errorf("retention: drop %s: %w", name, err)
			}
			dropped = append(dropped, name)
		}
	}
	// Rows with no day (ids that are not crash ids) are never removed.
	if _, err := conn.ExecContext(ctx, s.d.rebind(`DELETE FROM crashes WHERE crash_day <> '' AND crash_day < ?`), cutoff.UTC().Format(dayFormat)); err != nil {
		return dropped, fmt.Errorf("retention: %w", err)
	}
	// missing_symbols has no foreign key to the partitioned crashes (it
	// could not have one in PostgreSQL): its rows of those crashes go too.
	if _, err := conn.ExecContext(ctx, s.d.rebind(`DELETE FROM missing_symbols WHERE received_at < ?`), formatTime(cutoff)); err != nil {
		return dropped, fmt.Errorf("retention: missing symbols: %w", err)
	}
	if _, err := conn.ExecContext(ctx, s.d.rebind(`DELETE FROM crash_annotations WHERE received_at < ?`), formatTime(cutoff)); err != nil {
		return dropped, fmt.Errorf("retention: annotations: %w", err)
	}
	return dropped, nil
}

// dropPartition drops a weekly partition and subtracts its processed
// crashes from crash_daily, in one transaction.
func (s *SQL) dropPartition(ctx context.Context, conn *sql.Conn, name string) error {
	tx, err := conn.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	defer tx.Rollback()
	var exists bool
	if err := tx.QueryRowContext(ctx, `SELECT to_regclass($1) IS NOT NULL`, name).Scan(&exists); err != nil || !exists {
		return err
	}
	for _, stmt := range append(dailyAdjust(name, -1), `DROP TABLE `+name) {
		if _, err := tx.ExecContext(ctx, stmt); err != nil {
			return err
		}
	}
	return tx.Commit()
}
