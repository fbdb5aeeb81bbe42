package index

import (
	"context"
	"fmt"
	"strconv"
)

// migrationAnnotations (schema version 6) indexes the annotations the
// configuration names (crashd's indexed_annotations): one row per crash and
// annotation, personal when the collector marked it restricted in that
// crash. received_at is the crash's, for retention.
const migrationAnnotations = `
CREATE TABLE crash_annotations (
	crash_id    TEXT NOT NULL,
	name        TEXT NOT NULL,
	value       TEXT NOT NULL,
	personal    INTEGER NOT NULL DEFAULT 0,
	received_at TEXT NOT NULL,
	PRIMARY KEY (crash_id, name)
);
CREATE INDEX crash_annotations_value ON crash_annotations (name, value, crash_id);
CREATE INDEX crash_annotations_received ON crash_annotations (received_at);
`

// postgresAnnotations is migration 6 with bytewise text.
const postgresAnnotations = `
CREATE TABLE crash_annotations (
	crash_id    TEXT COLLATE "C" NOT NULL,
	name        TEXT COLLATE "C" NOT NULL,
	value       TEXT COLLATE "C" NOT NULL,
	personal    INTEGER NOT NULL DEFAULT 0,
	received_at TEXT COLLATE "C" NOT NULL,
	PRIMARY KEY (crash_id, name)
);
CREATE INDEX crash_annotations_value ON crash_annotations (name, value, crash_id);
CREATE INDEX crash_annotations_received ON crash_annotations (received_at);
`

// Limits of what is indexed of an annotation: longer names are not
// indexed, longer values are not indexed (PostgreSQL's B-tree entries
// hold ~2,700 bytes; a search matches whole values).
const (
	MaxAnnotationName  = 100
	MaxAnnotationValue = 1000
	// MaxAnnotations bounds the annotations indexed per crash.
	MaxAnnotations = 50
)

// Annotation is an indexed annotation of a crash.
type Annotation struct {
	Name, Value string
	// Personal: the collector marked it restricted (view_pii).
	Personal bool
}

// AnnotationMatch selects crashes whose annotation Name matches Value with
// Op (the zero Op is OpExact); with Not, the crashes where it does not
// (those without the annotation too, as Super Search).
type AnnotationMatch struct {
	Name, Value string
	Op          Op
	Not         bool
}

// cond is the condition on crashes of the match, and its arguments; pii
// lets personal annotations match (without it a personal value is as if
// absent). __null__ is "no non-empty value".
func (a AnnotationMatch) cond(pii bool) (string, []any) {
	m := Match{Op: a.Op, Value: a.Value}
	not := a.Not
	if m.Op == "" {
		m.Op = OpExact
	}
	if m.Op == OpEmpty {
		m, not = Match{Op: OpEmpty, Not: true}, !not
	}
	inner, args := m.cond("a.value")
	c := `EXISTS (SELECT 1 FROM crash_annotations a WHERE a.crash_id = crashes.crash_id AND a.name = ? AND ` + inner
	if !pii {
		c += ` AND a.personal = 0`
	}
	c += `)`
	if not {
		c = "NOT " + c
	}
	return c, append([]any{a.Name}, args...)
}

// FacetAnnotation counts the crashes f selects by the value of annotation
// name, the n most frequent values; personal values only with f.Personal.
func (s *SQL) FacetAnnotation(ctx context.Context, f Filter, name string, n int) ([]Bucket, error) {
	if n <= 0 {
		n = 10
	}
	n = min(n, MaxLimit)
	w, args := f.where()
	pers := ""
	if !f.Personal {
		pers = " AND personal = 0"
	}
	rows, err := s.db.QueryContext(ctx, s.rebind(`SELECT value, COUNT(*) FROM crash_annotations WHERE name = ?`+pers+
		` AND crash_id IN (SELECT crash_id FROM crashes WHERE `+w+`) GROUP BY value ORDER BY COUNT(*) DESC, value LIMIT `+strconv.Itoa(n)),
		append([]any{name}, args...)...)
	if err != nil {
		return nil, fmt.Errorf("index: facet annotation %s: %w", name, err)
	}
	defer rows.Close()
	out := []Bucket{}
	for rows.Next() {
		var b Bucket
		if err := rows.Scan(&b.Value, &b.Count); err != nil {
			return nil, fmt.Errorf("index: facet annotation %s: %w", name, err)
		}
		out = append(out, b)
	}
	return out, rows.Err()
}
