package index

import (
	"context"
	"database/sql"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/gobreakpad/gobreakpad/crashd/crash"
)

// migrationTriage (schema version 4) adds what the web pages (issue 25)
// query: the process type, the OS version, the crash address and the
// module list of a crash (for search), and the first sighting of each
// signature. Portable SQL only: SQLite and PostgreSQL both take it.
const migrationTriage = `
ALTER TABLE crashes ADD COLUMN process_type TEXT NOT NULL DEFAULT '';
ALTER TABLE crashes ADD COLUMN os_version TEXT NOT NULL DEFAULT '';
ALTER TABLE crashes ADD COLUMN crash_address TEXT NOT NULL DEFAULT '';
ALTER TABLE crashes ADD COLUMN modules TEXT NOT NULL DEFAULT '';
CREATE INDEX crashes_status_signature ON crashes (status, signature, received_at);
CREATE INDEX crashes_triage ON crashes (status, received_at, signature, os, cpu, product, version, process_type, crash_reason);
CREATE TABLE signatures (
	signature     TEXT PRIMARY KEY,
	first_seen    TEXT NOT NULL,
	first_version TEXT NOT NULL DEFAULT ''
);
INSERT INTO signatures (signature, first_seen)
SELECT signature, MIN(received_at) FROM crashes WHERE signature <> '' GROUP BY signature;
`

// Details are the indexed fields of a processed crash beyond [Crash]'s,
// for the web pages' filters and search.
type Details struct {
	// ProcessType is the crashed process's type (annotation ProcessType
	// or process_type: "parent", "content", "gpu", "renderer", ...).
	ProcessType  string
	OSVersion    string
	CrashAddress string
	// Modules are the base names of the crash's modules.
	Modules []string
	// CPUInfo is the CPU's vendor, family, model and stepping
	// ("GenuineIntel family 6 model 158 stepping 10"), ModuleVersions the
	// modules with a version: what the correlations count (migration 12,
	// correlations.go; bounded there).
	CPUInfo        string
	ModuleVersions []crash.ModuleVersion
	// Annotations are the annotations to index (those the configuration
	// names); names or values over MaxAnnotationName or
	// MaxAnnotationValue bytes, and those after MaxAnnotations, are left
	// out.
	Annotations []Annotation
}

// Triage is what crashd's web pages need of an index beyond [Index].
// [SQL] implements it.
type Triage interface {
	// ProcessedDetails records a processed crash's details (after
	// Processed) and the first sighting of its signature.
	ProcessedDetails(ctx context.Context, c Crash, d Details) error
	// TopCrashers ranks the signatures of processed crashes received in
	// f's period against the period of the same length before it.
	TopCrashers(ctx context.Context, f Filter, limit int) (Top, error)
	// Find returns a page of the processed crashes f selects, sorted,
	// and how many match in all.
	Find(ctx context.Context, q FindQuery) ([]Row, int, error)
	// Facet counts the crashes f selects by one field (FacetFields),
	// the n most frequent values.
	Facet(ctx context.Context, f Filter, field string, n int) ([]Bucket, error)
	// SignatureSpan returns the first and last receipt of a signature
	// (among all processed crashes) and its first sighting on record.
	SignatureSpan(ctx context.Context, signature string) (first, last, firstSeen time.Time, err error)
	// FacetAnnotation counts the crashes f selects by the value of an
	// indexed annotation (personal values only with f.Personal).
	FacetAnnotation(ctx context.Context, f Filter, name string, n int) ([]Bucket, error)
	// SignatureTrend counts the crashes f selects per day and version,
	// the top versions each a series and the rest one (trend.go).
	SignatureTrend(ctx context.Context, f Filter, top int) (Trend, error)
}

// Filter selects processed crashes for the triage queries; empty fields
// match everything.
type Filter struct {
	// Since and Until bound received_at: Since <= received_at < Until.
	Since, Until                           time.Time
	Product, Version, OS, CPU, ProcessType string
	Signature, CrashReason, Module         string
	// Matches are conditions with an operator on text fields (Super
	// Search's ~ ^ $ ! =, match.go), all of which must hold, beside the
	// exact fields above.
	Matches []FieldMatch
	// Annotations match indexed annotations (Op, Not: as Matches).
	Annotations []AnnotationMatch
	// State keeps the signatures in that triage state (in Product, or in
	// some product when Product is empty).
	State State
	// Personal lets personal annotations match (view_pii); without it a
	// match on an annotation the collector marked personal in a crash
	// does not select that crash.
	Personal bool
}

// Row is a crash as the search lists it.
type Row struct {
	Crash
	ProcessType  string `json:"process_type,omitempty"`
	OSVersion    string `json:"os_version,omitempty"`
	CrashAddress string `json:"crash_address,omitempty"`
}

// Bucket is one value of a facet and its count.
type Bucket struct {
	Value string `json:"value"`
	Count int    `json:"count"`
}

// FacetFields are the fields Facet and FindQuery.Sort take.
var FacetFields = []string{"product", "version", "os", "cpu", "process_type", "signature", "crash_reason", "day"}

// SortFields are the columns Find sorts by.
var SortFields = []string{"received_at", "product", "version", "os", "cpu", "process_type", "signature", "crash_reason"}

// FindQuery is a search: a filter, a sort column and a page.
type FindQuery struct {
	Filter
	// Sort is one of SortFields (default received_at); Asc sorts
	// ascending (default descending).
	Sort string
	Asc  bool
	// Offset skips rows; Limit bounds them (0: DefaultLimit, at most MaxLimit).
	Offset, Limit int
}

// TopRow is one signature of the top crashers.
type TopRow struct {
	Rank      int     `json:"rank"`
	Signature string  `json:"signature"`
	Count     int     `json:"count"`
	Share     float64 `json:"share"`
	// PrevRank is the rank in the previous period (0: absent from it);
	// PrevCount its count there.
	PrevRank  int       `json:"previous_rank"`
	PrevCount int       `json:"previous_count"`
	FirstSeen time.Time `json:"first_seen"`
	// New: first seen within the period.
	New bool `json:"new"`
	// Platforms counts the crashes by OS.
	Platforms []Bucket `json:"platforms"`
	// Daily counts the crashes per day of Top.Days.
	Daily []int `json:"daily"`
	// Triage is the signature's triage state per product (the filter's
	// product alone when it has one); Regressed marks a regressed one.
	Triage    []ProductTriage `json:"triage"`
	Regressed bool            `json:"regressed"`
}

// Top is the answer of TopCrashers.
type Top struct {
	Since     time.Time `json:"since"`
	Until     time.Time `json:"until"`
	Total     int       `json:"total"`
	PrevTotal int       `json:"previous_total"`
	// Days are the UTC dates (YYYY-MM-DD) of the period, oldest first.
	Days []string `json:"days"`
	Rows []TopRow `json:"signatures"`
}

// where returns f's conditions (with status = processed) and arguments.
func (f Filter) where() (string, []any) {
	conds := []string{"status = ?"}
	args := []any{string(Processed)}
	add := func(cond string, v any) {
		conds = append(conds, cond)
		args = append(args, v)
	}
	if !f.Since.IsZero() {
		add("received_at >= ?", formatTime(f.Since))
	}
	if !f.Until.IsZero() {
		add("received_at < ?", formatTime(f.Until))
	}
	for _, c := range []struct{ col, v string }{
		{"product", f.Product}, {"version", f.Version}, {"os", f.OS}, {"cpu", f.CPU},
		{"process_type", f.ProcessType}, {"signature", f.Signature}, {"crash_reason", f.CrashReason},
	} {
		if c.v != "" {
			add(c.col+" = ?", c.v)
		}
	}
	if f.Module != "" {
		add(`modules LIKE ? ESCAPE '\'`, "%|"+likeEscape(f.Module)+"|%")
	}
	for _, m := range f.Matches {
		var c string
		var a []any
		switch {
		case m.Field == "module":
			c, a = m.moduleCond()
		case slices.Contains(MatchFields, m.Field):
			c, a = m.cond(m.Field)
		default:
			// The callers take fields from MatchFields; a stray one
			// matches nothing rather than everything.
			c = "1 = 0"
		}
		conds = append(conds, c)
		args = append(args, a...)
	}
	for _, a := range f.Annotations {
		c, aa := a.cond(f.Personal)
		conds = append(conds, c)
		args = append(args, aa...)
	}
	if c, a := f.stateCond(); c != "" {
		conds = append(conds, c)
		args = append(args, a...)
	}
	return strings.Join(conds, " AND "), args
}

func likeEscape(s string) string {
	r := strings.NewReplacer(`\`, `\\`, `%`, `\%`, `_`, `\_`)
	return r.Replace(s)
}

// moduleList is how Details.Modules is stored: "|a|b|" (LIKE '%|a|%'
// finds a module), names with '|' dropped.
func moduleList(mods []string) string {
	seen := map[string]bool{}
	var b strings.Builder
	b.WriteByte('|')
	for _, m := range mods {
		if m == "" || strings.ContainsRune(m, '|') || seen[m] {
			continue
		}
		seen[m] = true
		b.WriteString(m)
		b.WriteByte('|')
	}
	if b.Len() == 1 {
		return ""
	}
	return b.String()
}

// ProcessedDetails implements [Triage].
func (s *SQL) ProcessedDetails(ctx context.Context, c Crash, d Details) error {
	defer s.lockWrites()()
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("index: details %s: %w", c.ID, err)
	}
	defer tx.Rollback()
	if _, err := tx.ExecContext(ctx, s.rebind(`
UPDATE crashes SET process_type = ?, os_version = ?, crash_address = ?, modules = ?, cpu_info = ?, module_versions = ? WHERE crash_id = ? AND crash_day = ?`),
		d.ProcessType, d.OSVersion, d.CrashAddress, moduleList(d.Modules), cpuInfo(d.CPUInfo), moduleVersionList(d.ModuleVersions), c.ID, crashDay(c.ID)); err != nil {
		return fmt.Errorf("index: details %s: %w", c.ID, err)
	}
	if err := s.writeAnnotations(ctx, tx, c, d.Annotations); err != nil {
		return fmt.Errorf("index: details %s: %w", c.ID, err)
	}
	// The signature's events are RecordProcessed's to report; here the
	// triage row and a regression are recorded all the same.
	if _, err := s.signatureIn(ctx, tx, c); err != nil {
		return fmt.Errorf("index: details %s: %w", c.ID, err)
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("index: details %s: %w", c.ID, err)
	}
	return nil
}

// writeAnnotations replaces in tx the crash's indexed annotations by as:
// those with a name, at most MaxAnnotations, the first of each name, names
// and values within MaxAnnotationName and MaxAnnotationValue.
func (s *SQL) writeAnnotations(ctx context.Context, tx *sql.Tx, c Crash, as []Annotation) error {
	if _, err := tx.ExecContext(ctx, s.rebind(`DELETE FROM crash_annotations WHERE crash_id = ?`), c.ID); err != nil {
		return err
	}
	seen := map[string]bool{}
	for _, a := range as {
		if len(seen) == MaxAnnotations || seen[a.Name] || a.Name == "" || len(a.Name) > MaxAnnotationName || len(a.Value) > MaxAnnotationValue {
			continue
		}
		seen[a.Name] = true
		personal := 0
		if a.Personal {
			personal = 1
		}
		if _, err := tx.ExecContext(ctx, s.rebind(`INSERT INTO crash_annotations (crash_id, name, value, personal, received_at) VALUES (?, ?, ?, ?, ?)`),
			c.ID, a.Name, a.Value, personal, formatTime(c.ReceivedAt)); err != nil {
			return fmt.Errorf("annotation %q: %w", a.Name, err)
		}
	}
	return nil
}

// days lists the UTC dates from since's to the one before until.
func days(since, until time.Time) []string {
	var out []string
	d := time.Date(since.Year(), since.Month(), since.Day(), 0, 0, 0, 0, time.UTC)
	for ; d.Before(until) && len(out) < 400; d = d.AddDate(0, 0, 1) {
		out = append(out, d.Format("2006-01-02"))
	}
	return out
}

// countBySignature returns each signature's count under f, and the total:
// from the daily rollup for f's whole days when f allows, else (and for
// the partial days at the ends) from crashes.
func (s *SQL) countBySignature(ctx context.Context, f Filter) (map[string]int, int, error) {
	out := map[string]int{}
	total := 0
	for _, p := range s.parts(f) {
		rows, err := s.db.QueryContext(ctx, s.rebind(`SELECT signature, `+p.count+` FROM `+p.table+` WHERE `+p.where+` GROUP BY signature`), p.args...)
		if err != nil {
			return nil, 0, err
		}
		for rows.Next() {
			var sig string
			var n int
			if err := rows.Scan(&sig, &n); err != nil {
				rows.Close()
				return nil, 0, err
			}
			out[sig] += n
			total += n
		}
		err = rows.Err()
		rows.Close()
		if err != nil {
			return nil, 0, err
		}
	}
	return out, total, nil
}

// rank orders signatures by count, then by name.
func rank(counts map[string]int) []string {
	sigs := make([]string, 0, len(counts))
	for s := range counts {
		sigs = append(sigs, s)
	}
	slices.SortFunc(sigs, func(a, b string) int {
		if counts[a] != counts[b] {
			return counts[b] - counts[a]
		}
		return strings.Compare(a, b)
	})
	return sigs
}

// marks is n comma-separated parameters, for an IN list.
func marks(n int) string { return strings.TrimSuffix(strings.Repeat("?,", n), ",") }

// maxIn is the most values of one IN list: the lists of ids or
// signatures are read in chunks of it.
const maxIn = 500

// TopCrashers implements [Triage]. f.Since and f.Until must be set.
func (s *SQL) TopCrashers(ctx context.Context, f Filter, limit int) (Top, error) {
	if f.Since.IsZero() || f.Until.IsZero() || !f.Since.Before(f.Until) {
		return Top{}, fmt.Errorf("index: top crashers: a period is required")
	}
	if limit <= 0 {
		limit = 50
	}
	limit = min(limit, MaxLimit)
	top := Top{Since: f.Since.UTC(), Until: f.Until.UTC(), Days: days(f.Since.UTC(), f.Until.UTC()), Rows: []TopRow{}}
	cur, total, err := s.countBySignature(ctx, f)
	if err != nil {
		return Top{}, fmt.Errorf("index: top crashers: %w", err)
	}
	pf := f
	pf.Since, pf.Until = f.Since.Add(-f.Until.Sub(f.Since)), f.Since
	prev, prevTotal, err := s.countBySignature(ctx, pf)
	if err != nil {
		return Top{}, fmt.Errorf("index: top crashers: %w", err)
	}
	top.Total, top.PrevTotal = total, prevTotal
	prevRank := map[string]int{}
	for i, sig := range rank(prev) {
		prevRank[sig] = i + 1
	}
	sigs := rank(cur)
	if len(sigs) > limit {
		sigs = sigs[:limit]
	}
	if len(sigs) == 0 {
		return top, nil
	}
	byDay := map[string]int{}
	for i, d := range top.Days {
		byDay[d] = i
	}
	rows := map[string]*TopRow{}
	for i, sig := range sigs {
		top.Rows = append(top.Rows, TopRow{Rank: i + 1, Signature: sig, Count: cur[sig], PrevRank: prevRank[sig], PrevCount: prev[sig],
			Daily: make([]int, len(top.Days)), Platforms: []Bucket{}})
	}
	for i := range top.Rows {
		r := &top.Rows[i]
		rows[r.Signature] = r
		if total > 0 {
			r.Share = float64(r.Count) / float64(total)
		}
	}
	args := make([]any, 0, len(sigs))
	for _, sig := range sigs {
		args = append(args, sig)
	}
	// Daily counts and platforms of the listed signatures, one pass per
	// source.
	plat := map[string]map[string]int{}
	for _, p := range s.parts(f) {
		q, err := s.db.QueryContext(ctx, s.rebind(`SELECT signature, os, `+p.day+`, `+p.count+` FROM `+p.table+` WHERE `+p.where+
			` AND signature IN (`+marks(len(sigs))+`) GROUP BY signature, os, `+p.day), append(p.args, args...)...)
		if err != nil {
			return Top{}, fmt.Errorf("index: top crashers: %w", err)
		}
		for q.Next() {
			var sig, os, day string
			var n int
			if err := q.Scan(&sig, &os, &day, &n); err != nil {
				q.Close()
				return Top{}, fmt.Errorf("index: top crashers: %w", err)
			}
			r := rows[sig]
			if r == nil {
				continue
			}
			if i, ok := byDay[day]; ok {
				r.Daily[i] += n
			}
			if plat[sig] == nil {
				plat[sig] = map[string]int{}
			}
			plat[sig][os] += n
		}
		err = q.Err()
		q.Close()
		if err != nil {
			return Top{}, fmt.Errorf("index: top crashers: %w", err)
		}
	}
	for sig, m := range plat {
		for _, os := range rank(m) {
			rows[sig].Platforms = append(rows[sig].Platforms, Bucket{Value: os, Count: m[os]})
		}
	}
	fs, err := s.db.QueryContext(ctx, s.rebind(`SELECT signature, first_seen FROM signatures WHERE signature IN (`+marks(len(sigs))+`)`), args...)
	if err != nil {
		return Top{}, fmt.Errorf("index: top crashers: %w", err)
	}
	for fs.Next() {
		var sig, first string
		if err := fs.Scan(&sig, &first); err != nil {
			fs.Close()
			return Top{}, fmt.Errorf("index: top crashers: %w", err)
		}
		if r := rows[sig]; r != nil {
			r.FirstSeen = parseTime(first)
			r.New = !r.FirstSeen.Before(f.Since)
		}
	}
	err = fs.Err()
	fs.Close()
	if err != nil {
		return Top{}, fmt.Errorf("index: top crashers: %w", err)
	}
	if err := s.topTriage(ctx, f, top.Rows); err != nil {
		return Top{}, fmt.Errorf("index: top crashers: %w", err)
	}
	return top, nil
}

const rowColumns = columns + `, process_type, os_version, crash_address`

// Find implements [Triage].
func (s *SQL) Find(ctx context.Context, q FindQuery) ([]Row, int, error) {
	w, args := q.Filter.where()
	var total int
	if err := s.db.QueryRowContext(ctx, s.rebind(`SELECT COUNT(*) FROM crashes WHERE `+w), args...).Scan(&total); err != nil {
		return nil, 0, fmt.Errorf("index: find: %w", err)
	}
	sort := "received_at"
	if q.Sort != "" {
		if !slices.Contains(SortFields, q.Sort) {
			return nil, 0, fmt.Errorf("index: find: cannot sort by %q", q.Sort)
		}
		sort = q.Sort
	}
	dir := " DESC"
	if q.Asc {
		dir = " ASC"
	}
	limit := q.Limit
	if limit <= 0 {
		limit = DefaultLimit
	}
	limit = min(limit, MaxLimit)
	stmt := `SELECT ` + rowColumns + ` FROM crashes WHERE ` + w + ` ORDER BY ` + sort + dir + `, crash_id` + dir +
		` LIMIT ` + strconv.Itoa(limit) + ` OFFSET ` + strconv.Itoa(max(q.Offset, 0))
	rows, err := s.db.QueryContext(ctx, s.rebind(stmt), args...)
	if err != nil {
		return nil, 0, fmt.Errorf("index: find: %w", err)
	}
	defer rows.Close()
	out := []Row{}
	for rows.Next() {
		var r Row
		var status, recv, proc string
		if err := rows.Scan(&r.ID, &status, &recv, &proc, &r.Product, &r.Version, &r.OS, &r.CPU, &r.Signature, &r.CrashReason, &r.Attempts, &r.Error,
			&r.ProcessType, &r.OSVersion, &r.CrashAddress); err != nil {
			return nil, 0, fmt.Errorf("index: find: %w", err)
		}
		r.Status, r.ReceivedAt, r.ProcessedAt = Status(status), parseTime(recv), parseTime(proc)
		out = append(out, r)
	}
	if err := rows.Err(); err != nil {
		return nil, 0, fmt.Errorf("index: find: %w", err)
	}
	return out, total, nil
}

// Facet implements [Triage].
func (s *SQL) Facet(ctx context.Context, f Filter, field string, n int) ([]Bucket, error) {
	if !slices.Contains(FacetFields, field) {
		return nil, fmt.Errorf("index: facet: unknown field %q", field)
	}
	col := field
	if field == "day" {
		col = "substr(received_at, 1, 10)"
	}
	if n <= 0 {
		n = 10
	}
	n = min(n, MaxLimit)
	w, args := f.where()
	order := ` ORDER BY COUNT(*) DESC, ` + col
	if field == "day" {
		order = ` ORDER BY ` + col
	}
	rows, err := s.db.QueryContext(ctx, s.rebind(`SELECT `+col+`, COUNT(*) FROM crashes WHERE `+w+` GROUP BY `+col+order+` LIMIT `+strconv.Itoa(n)), args...)
	if err != nil {
		return nil, fmt.Errorf("index: facet %s: %w", field, err)
	}
	defer rows.Close()
	out := []Bucket{}
	for rows.Next() {
		var b Bucket
		if err := rows.Scan(&b.Value, &b.Count); err != nil {
			return nil, fmt.Errorf("index: facet %s: %w", field, err)
		}
		out = append(out, b)
	}
	return out, rows.Err()
}

// SignatureSpan implements [Triage].
func (s *SQL) SignatureSpan(ctx context.Context, signature string) (first, last, firstSeen time.Time, err error) {
	var a, b string
	if err = s.db.QueryRowContext(ctx, s.rebind(`SELECT COALESCE(MIN(received_at), ''), COALESCE(MAX(received_at), '') FROM crashes WHERE status = ? AND signature = ?`),
		string(Processed), signature).Scan(&a, &b); err != nil {
		return first, last, firstSeen, fmt.Errorf("index: signature span: %w", err)
	}
	var fs string
	if err = s.db.QueryRowContext(ctx, s.rebind(`SELECT COALESCE(MIN(first_seen), '') FROM signatures WHERE signature = ?`), signature).Scan(&fs); err != nil {
		return first, last, firstSeen, fmt.Errorf("index: signature span: %w", err)
	}
	return parseTime(a), parseTime(b), parseTime(fs), nil
}
