package index

import (
	"context"
	"fmt"
	"strings"
	"time"
)

// The daily-counts rollups of the top crashers (schema version 5):
// processed crashes counted per UTC day of receipt and per key. Two of
// them: crash_daily by every filter of the top crashers (product, version,
// OS, CPU, process type, signature), and crash_daily_os by signature and
// OS alone, for the unfiltered pages (3 times fewer rows than crashes on
// the benchmark's long-tailed 100,000 crashes; crash_daily has 9 in 10 of
// their number there). The database keeps them (triggers on crashes,
// dialect.go): every insert, update or delete of a crashes row moves the
// crash's count from its old key (when it was processed) to its new one
// (when it is), so reprocessing, a failure after a reprocess, a changed
// signature or retention count exactly once whatever statement made the
// change. Statements of a migration holding "\n/\n" are separated by
// such lines (trigger bodies hold ';').
type rollup struct {
	table string
	// cols are the key's columns after day, as named in crashes.
	cols []string
}

var rollups = []rollup{
	{"crash_daily", []string{"product", "version", "os", "cpu", "process_type", "signature"}},
	{"crash_daily_os", []string{"signature", "os"}},
}

// collate is what text columns are declared with ("" or ` COLLATE "C"`).
func (r rollup) create(collate string) string {
	s := "CREATE TABLE " + r.table + " (\n\tday TEXT" + collate + " NOT NULL,\n"
	for _, c := range r.cols {
		s += "\t" + c + " TEXT" + collate + " NOT NULL,\n"
	}
	s += "\tn INTEGER NOT NULL,\n\tPRIMARY KEY (" + r.key() + ")\n)\n/\n" + r.fill() + "\n"
	return s
}

func (r rollup) key() string { return "day, " + strings.Join(r.cols, ", ") }

// of is the key of the crashes row R (OLD, NEW, or a table name).
func (r rollup) of(row string) string {
	s := "substr(" + row + ".received_at, 1, 10)"
	for _, c := range r.cols {
		s += ", " + row + "." + c
	}
	return s
}

// match is the condition selecting the rollup row of R's key.
func (r rollup) match(row string) string {
	s := "day = substr(" + row + ".received_at, 1, 10)"
	for _, c := range r.cols {
		s += " AND " + c + " = " + row + "." + c
	}
	return s
}

// moved is the condition, in an update trigger, that the row's count
// moves in this rollup: its status or its key changed (an update that
// changes neither, as a reprocessing with the same result or the details
// of a crash that the rollup does not key on, leaves the rollup alone).
func (r rollup) moved() string {
	s := "(OLD.status IS DISTINCT FROM NEW.status OR substr(OLD.received_at, 1, 10) IS DISTINCT FROM substr(NEW.received_at, 1, 10)"
	for _, c := range r.cols {
		s += " OR OLD." + c + " IS DISTINCT FROM NEW." + c
	}
	return s + ")"
}

// fill counts the processed crashes of crashes into the rollup.
func (r rollup) fill() string { return r.adjust("crashes", "+") }

// adjust adds (op "+") or subtracts ("-") the processed crashes of table
// to or from the rollup.
func (r rollup) adjust(table, op string) string {
	return "INSERT INTO " + r.table + " (" + r.key() + ", n)\nSELECT " + r.of(table) + ", " + op + "COUNT(*) FROM " + table +
		" WHERE status = 'processed' GROUP BY " + r.of(table) +
		"\nON CONFLICT (" + r.key() + ") DO UPDATE SET n = " + r.table + ".n + excluded.n"
}

// dailyCols are the columns of crashes the rollups depend on.
const dailyCols = `status, received_at, product, version, os, cpu, process_type, signature`

// migrationDaily is the portable part of migration 5: the tables and
// their first fill.
var migrationDaily = func() string {
	var s []string
	for _, r := range rollups {
		s = append(s, r.create(""))
	}
	return strings.Join(s, "/\n")
}()

// sqliteDailyTriggers keep the rollups in SQLite.
var sqliteDailyTriggers = func() string {
	var ins, del, upd string
	for _, r := range rollups {
		inc := func(cond string) string {
			return "\tINSERT INTO " + r.table + " (" + r.key() + ", n) SELECT " + r.of("NEW") + ", 1 WHERE NEW.status = 'processed'" + cond +
				"\n\tON CONFLICT (" + r.key() + ") DO UPDATE SET n = n + 1;\n"
		}
		dec := func(cond string) string {
			return "\tUPDATE " + r.table + " SET n = n - 1 WHERE OLD.status = 'processed'" + cond + " AND " + r.match("OLD") + ";\n" +
				"\tDELETE FROM " + r.table + " WHERE OLD.status = 'processed'" + cond + " AND n <= 0 AND " + r.match("OLD") + ";\n"
		}
		ins += inc("")
		del += dec("")
		// SQLite spells IS DISTINCT FROM as IS NOT.
		m := " AND " + strings.ReplaceAll(r.moved(), "IS DISTINCT FROM", "IS NOT")
		upd += dec(m) + inc(m)
	}
	return "CREATE TRIGGER crash_daily_insert AFTER INSERT ON crashes WHEN NEW.status = 'processed' BEGIN\n" + ins + "END\n/\n" +
		"CREATE TRIGGER crash_daily_delete AFTER DELETE ON crashes WHEN OLD.status = 'processed' BEGIN\n" + del + "END\n/\n" +
		"CREATE TRIGGER crash_daily_update AFTER UPDATE OF " + dailyCols + " ON crashes\nWHEN OLD.status = 'processed' OR NEW.status = 'processed' BEGIN\n" + upd + "END\n"
}()

// postgresDaily is migration 5 in PostgreSQL: the tables with bytewise
// text, and one trigger function (row triggers on the partitioned table
// are cloned to every partition).
var postgresDaily = func() string {
	var tables []string
	var dec, inc string
	for _, r := range rollups {
		tables = append(tables, r.create(` COLLATE "C"`))
		// In an update, only a row whose count moves in this rollup.
		skip := "\t\t\tIF TG_OP <> 'UPDATE' OR " + r.moved() + " THEN\n"
		dec += skip + "\t\t\tUPDATE " + r.table + " SET n = n - 1 WHERE " + r.match("OLD") + ";\n" +
			"\t\t\tDELETE FROM " + r.table + " WHERE n <= 0 AND " + r.match("OLD") + ";\n\t\t\tEND IF;\n"
		inc += skip + "\t\t\tINSERT INTO " + r.table + " (" + r.key() + ", n) VALUES (" + r.of("NEW") + ", 1)\n" +
			"\t\t\tON CONFLICT (" + r.key() + ") DO UPDATE SET n = " + r.table + ".n + 1;\n\t\t\tEND IF;\n"
	}
	return strings.Join(tables, "/\n") + `/
CREATE FUNCTION crash_daily_count() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
	IF TG_OP <> 'INSERT' THEN
		IF OLD.status = 'processed' THEN
` + dec + `		END IF;
	END IF;
	IF TG_OP <> 'DELETE' THEN
		IF NEW.status = 'processed' THEN
` + inc + `		END IF;
	END IF;
	RETURN NULL;
END
$$
/
CREATE TRIGGER crash_daily_count AFTER INSERT OR DELETE OR UPDATE OF ` + dailyCols + ` ON crashes
FOR EACH ROW EXECUTE FUNCTION crash_daily_count()
`
}()

// dailyAdjust adds (sign +1) or subtracts (-1) the processed crashes of
// table (a PostgreSQL partition moved or dropped without firing the
// triggers of crashes) to or from the rollups, then removes their empty
// rows.
func dailyAdjust(table string, sign int) []string {
	op := "+"
	if sign < 0 {
		op = "-"
	}
	var out []string
	for _, r := range rollups {
		out = append(out, r.adjust(table, op), "DELETE FROM "+r.table+" WHERE n <= 0")
	}
	return out
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
	return f.CrashReason == "" && f.Module == "" && len(f.Annotations) == 0 && len(f.Matches) == 0 && !f.Since.IsZero() && !f.Until.IsZero()
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
	if c, a := f.stateCond(); c != "" {
		w += " AND " + c
		args = append(args, a...)
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
	table := "crash_daily"
	if f.Product == "" && f.Version == "" && f.CPU == "" && f.ProcessType == "" {
		table = "crash_daily_os"
	}
	out := []part{{table, w, a, "SUM(n)", "day"}}
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

// dailyCheck compares the rollups with the counts of the crashes table;
// it returns the first difference ("" when none). For tests.
func (s *SQL) dailyCheck(ctx context.Context) (string, error) {
	for _, r := range rollups {
		q := func(stmt string) (map[string]int, error) {
			rows, err := s.db.QueryContext(ctx, stmt)
			if err != nil {
				return nil, err
			}
			defer rows.Close()
			out := map[string]int{}
			for rows.Next() {
				k := make([]string, len(r.cols)+1)
				var n int
				dst := []any{}
				for i := range k {
					dst = append(dst, &k[i])
				}
				if err := rows.Scan(append(dst, &n)...); err != nil {
					return nil, err
				}
				out[fmt.Sprint(k)] = n
			}
			return out, rows.Err()
		}
		got, err := q(`SELECT ` + r.key() + `, n FROM ` + r.table)
		if err != nil {
			return "", err
		}
		want, err := q(`SELECT ` + r.of("crashes") + `, COUNT(*) FROM crashes WHERE status = 'processed' GROUP BY ` + r.of("crashes"))
		if err != nil {
			return "", err
		}
		for k, n := range want {
			if got[k] != n {
				return fmt.Sprintf("%s %s: rollup %d, crashes %d", r.table, k, got[k], n), nil
			}
		}
		for k, n := range got {
			if want[k] != n {
				return fmt.Sprintf("%s %s: rollup %d, crashes %d", r.table, k, n, want[k]), nil
			}
		}
	}
	return "", nil
}
