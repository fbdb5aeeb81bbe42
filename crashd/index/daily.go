package index

import (
	"context"
	"fmt"
	"time"
)

// migrationDaily (schema version 5) is the daily-counts rollup of the
// top crashers: processed crashes counted per UTC day of receipt and per
// product, version, OS, CPU, process type and signature. The database
// keeps it (triggers on crashes, dialect.go): every insert, update or
// delete of a crashes row moves the crash's count from its old key (when
// it was processed) to its new one (when it is), so reprocessing, a
// failure after a reprocess, a changed signature or retention count
// exactly once whatever statement made the change. This part is the
// portable one: the table and its first fill. Statements of a migration
// holding "\n/\n" are separated by such lines (trigger bodies hold ';').
const migrationDaily = `
CREATE TABLE crash_daily (
	day          TEXT NOT NULL,
	product      TEXT NOT NULL,
	version      TEXT NOT NULL,
	os           TEXT NOT NULL,
	cpu          TEXT NOT NULL,
	process_type TEXT NOT NULL,
	signature    TEXT NOT NULL,
	n            INTEGER NOT NULL,
	PRIMARY KEY (day, product, version, os, cpu, process_type, signature)
)
/
CREATE INDEX crash_daily_signature ON crash_daily (signature, day)
/
INSERT INTO crash_daily (day, product, version, os, cpu, process_type, signature, n)
SELECT substr(received_at, 1, 10), product, version, os, cpu, process_type, signature, COUNT(*)
FROM crashes WHERE status = 'processed' GROUP BY substr(received_at, 1, 10), product, version, os, cpu, process_type, signature
`

// dailyKey is the rollup's key of the crashes row R (OLD or NEW).
func dailyKey(r string) string {
	return `substr(` + r + `.received_at, 1, 10), ` + r + `.product, ` + r + `.version, ` + r + `.os, ` + r + `.cpu, ` + r + `.process_type, ` + r + `.signature`
}

// dailyMatch is the condition selecting the rollup row of R's key.
func dailyMatch(r string) string {
	return `day = substr(` + r + `.received_at, 1, 10) AND product = ` + r + `.product AND version = ` + r + `.version AND os = ` + r + `.os AND cpu = ` + r +
		`.cpu AND process_type = ` + r + `.process_type AND signature = ` + r + `.signature`
}

const dailyCols = `status, received_at, product, version, os, cpu, process_type, signature`

// sqliteDailyTriggers keep crash_daily in SQLite.
var sqliteDailyTriggers = `
CREATE TRIGGER crash_daily_insert AFTER INSERT ON crashes WHEN NEW.status = 'processed' BEGIN
	INSERT INTO crash_daily (day, product, version, os, cpu, process_type, signature, n) SELECT ` + dailyKey("NEW") + `, 1 WHERE true
	ON CONFLICT (day, product, version, os, cpu, process_type, signature) DO UPDATE SET n = n + 1;
END
/
CREATE TRIGGER crash_daily_delete AFTER DELETE ON crashes WHEN OLD.status = 'processed' BEGIN
	UPDATE crash_daily SET n = n - 1 WHERE ` + dailyMatch("OLD") + `;
	DELETE FROM crash_daily WHERE n <= 0 AND ` + dailyMatch("OLD") + `;
END
/
CREATE TRIGGER crash_daily_update AFTER UPDATE OF ` + dailyCols + ` ON crashes
WHEN OLD.status = 'processed' OR NEW.status = 'processed' BEGIN
	UPDATE crash_daily SET n = n - 1 WHERE OLD.status = 'processed' AND ` + dailyMatch("OLD") + `;
	DELETE FROM crash_daily WHERE OLD.status = 'processed' AND n <= 0 AND ` + dailyMatch("OLD") + `;
	INSERT INTO crash_daily (day, product, version, os, cpu, process_type, signature, n) SELECT ` + dailyKey("NEW") + `, 1 WHERE NEW.status = 'processed'
	ON CONFLICT (day, product, version, os, cpu, process_type, signature) DO UPDATE SET n = n + 1;
END
`

// postgresDaily is migration 5 in PostgreSQL: the table with bytewise
// text, and one trigger function (row triggers on the partitioned table
// are cloned to every partition).
var postgresDaily = `
CREATE TABLE crash_daily (
	day          TEXT COLLATE "C" NOT NULL,
	product      TEXT COLLATE "C" NOT NULL,
	version      TEXT COLLATE "C" NOT NULL,
	os           TEXT COLLATE "C" NOT NULL,
	cpu          TEXT COLLATE "C" NOT NULL,
	process_type TEXT COLLATE "C" NOT NULL,
	signature    TEXT COLLATE "C" NOT NULL,
	n            INTEGER NOT NULL,
	PRIMARY KEY (day, product, version, os, cpu, process_type, signature)
)
/
CREATE INDEX crash_daily_signature ON crash_daily (signature, day)
/
INSERT INTO crash_daily (day, product, version, os, cpu, process_type, signature, n)
SELECT substr(received_at, 1, 10), product, version, os, cpu, process_type, signature, COUNT(*)
FROM crashes WHERE status = 'processed' GROUP BY substr(received_at, 1, 10), product, version, os, cpu, process_type, signature
/
CREATE FUNCTION crash_daily_count() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
	IF TG_OP <> 'INSERT' THEN
		IF OLD.status = 'processed' THEN
			UPDATE crash_daily SET n = n - 1 WHERE ` + dailyMatch("OLD") + `;
			DELETE FROM crash_daily WHERE n <= 0 AND ` + dailyMatch("OLD") + `;
		END IF;
	END IF;
	IF TG_OP <> 'DELETE' THEN
		IF NEW.status = 'processed' THEN
			INSERT INTO crash_daily (day, product, version, os, cpu, process_type, signature, n) VALUES (` + dailyKey("NEW") + `, 1)
			ON CONFLICT (day, product, version, os, cpu, process_type, signature) DO UPDATE SET n = crash_daily.n + 1;
		END IF;
	END IF;
	RETURN NULL;
END
$$
/
CREATE TRIGGER crash_daily_count AFTER INSERT OR DELETE OR UPDATE OF ` + dailyCols + ` ON crashes
FOR EACH ROW EXECUTE FUNCTION crash_daily_count()
`

// dailyAdjust adds (sign +1) or subtracts (-1) the processed crashes of
// table (a PostgreSQL partition moved or dropped without firing the
// triggers of crashes) to or from crash_daily.
func dailyAdjust(table string, sign int) string {
	op := "+"
	if sign < 0 {
		op = "-"
	}
	return `INSERT INTO crash_daily (day, product, version, os, cpu, process_type, signature, n)
SELECT substr(received_at, 1, 10), product, version, os, cpu, process_type, signature, ` + op + `COUNT(*) FROM ` + table + `
WHERE status = 'processed' GROUP BY substr(received_at, 1, 10), product, version, os, cpu, process_type, signature
ON CONFLICT (day, product, version, os, cpu, process_type, signature) DO UPDATE SET n = crash_daily.n + excluded.n`
}

// fullDays splits [since, until) into whole UTC days [d0, d1) (ok: at
// least one) and the partial days around them.
func fullDays(since, until time.Time) (d0, d1 time.Time, ok bool) {
	since, until = since.UTC(), until.UTC()
	d0 = since.Truncate(24 * time.Hour)
	if d0.Before(since) {
		d0 = d0.Add(24 * time.Hour)
	}
	d1 = until.Truncate(24 * time.Hour)
	return d0, d1, d0.Before(d1)
}

// rollable reports whether f can be answered from crash_daily: it filters
// on the rollup's columns only.
func (f Filter) rollable() bool {
	return f.CrashReason == "" && f.Module == "" && len(f.Annotations) == 0 && !f.Since.IsZero() && !f.Until.IsZero()
}

// dailyWhere is f's condition on crash_daily for the days [d0, d1).
func (f Filter) dailyWhere(d0, d1 time.Time) (string, []any) {
	w := "day >= ? AND day < ?"
	args := []any{d0.Format(dayFormat), d1.Format(dayFormat)}
	for _, c := range []struct{ col, v string }{
		{"product", f.Product}, {"version", f.Version}, {"os", f.OS}, {"cpu", f.CPU},
		{"process_type", f.ProcessType}, {"signature", f.Signature},
	} {
		if c.v != "" {
			w += " AND " + c.col + " = ?"
			args = append(args, c.v)
		}
	}
	return w, args
}

// part is one source of a grouped count: a table and its condition.
type part struct {
	table, where string
	args         []any
	count, day   string
}

// parts splits f into the sources that count its crashes: crash_daily for
// the whole days (when f allows and the rollup is on) and crashes for the
// rest.
func (s *SQL) parts(f Filter) []part {
	crashes := func(g Filter) part {
		w, a := g.where()
		return part{"crashes", w, a, "COUNT(*)", "substr(received_at, 1, 10)"}
	}
	d0, d1, ok := fullDays(f.Since, f.Until)
	if s.noRollup || !f.rollable() || !ok {
		return []part{crashes(f)}
	}
	w, a := f.dailyWhere(d0, d1)
	out := []part{{"crash_daily", w, a, "SUM(n)", "day"}}
	if f.Since.Before(d0) {
		g := f
		g.Until = d0
		out = append(out, crashes(g))
	}
	if d1.Before(f.Until) {
		g := f
		g.Since = d1
		out = append(out, crashes(g))
	}
	return out
}

// dailyCheck compares crash_daily with the counts of the crashes table;
// it returns the first difference ("" when none). For tests.
func (s *SQL) dailyCheck(ctx context.Context) (string, error) {
	q := func(stmt string) (map[string]int, error) {
		rows, err := s.db.QueryContext(ctx, stmt)
		if err != nil {
			return nil, err
		}
		defer rows.Close()
		out := map[string]int{}
		for rows.Next() {
			var k [7]string
			var n int
			if err := rows.Scan(&k[0], &k[1], &k[2], &k[3], &k[4], &k[5], &k[6], &n); err != nil {
				return nil, err
			}
			out[fmt.Sprint(k)] = n
		}
		return out, rows.Err()
	}
	got, err := q(`SELECT day, product, version, os, cpu, process_type, signature, n FROM crash_daily`)
	if err != nil {
		return "", err
	}
	want, err := q(`SELECT substr(received_at, 1, 10), product, version, os, cpu, process_type, signature, COUNT(*) FROM crashes
WHERE status = 'processed' GROUP BY substr(received_at, 1, 10), product, version, os, cpu, process_type, signature`)
	if err != nil {
		return "", err
	}
	for k, n := range want {
		if got[k] != n {
			return fmt.Sprintf("%s: rollup %d, crashes %d", k, got[k], n), nil
		}
	}
	for k, n := range got {
		if want[k] != n {
			return fmt.Sprintf("%s: rollup %d, crashes %d", k, n, want[k]), nil
		}
	}
	return "", nil
}
