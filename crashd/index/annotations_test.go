package index

import (
	"context"
	"reflect"
	"strings"
	"testing"
	"time"
)

// TestAnnotations: indexed annotations are searched (exactly, several at
// once), counted in facets, replaced on reprocessing; personal ones match
// and count only with Filter.Personal; over-long values are not indexed;
// retention removes them.
func TestAnnotations(t *testing.T) { backends(t, testAnnotations) }

func testAnnotations(t *testing.T, open opener) {
	ctx := context.Background()
	ix := open.must(t, ctx)
	now := time.Date(2026, 11, 26, 12, 0, 0, 0, time.UTC)
	add := func(n int, at time.Time, as ...Annotation) Crash {
		c := Crash{ID: crashID(n, at), ReceivedAt: at, Product: "App", Version: "1.0", OS: "Linux", CPU: "amd64", Signature: "s"}
		if err := ix.Processed(ctx, c); err != nil {
			t.Fatal(err)
		}
		if err := ix.ProcessedDetails(ctx, c, Details{Annotations: as}); err != nil {
			t.Fatal(err)
		}
		return c
	}
	beta, release := Annotation{Name: "ReleaseChannel", Value: "beta"}, Annotation{Name: "ReleaseChannel", Value: "release"}
	email := Annotation{Name: "Email", Value: "a@b.c", Personal: true}
	add(1, now.Add(-time.Hour), beta, email)
	add(2, now.Add(-2*time.Hour), beta, Annotation{Name: "Email", Value: "a@b.c"}) // not restricted in this crash
	c3 := add(3, now.Add(-3*time.Hour), release, Annotation{Name: "Big", Value: strings.Repeat("x", MaxAnnotationValue+1)})
	add(4, now.Add(-60*24*time.Hour), beta)
	week := Filter{Since: now.Add(-7 * 24 * time.Hour), Until: now}
	ids := func(f Filter) []string {
		t.Helper()
		rows, total, err := ix.Find(ctx, FindQuery{Filter: f, Sort: "received_at", Asc: true})
		if err != nil {
			t.Fatal(err)
		}
		var out []string
		for _, r := range rows {
			out = append(out, r.ID[:8])
		}
		if total != len(rows) {
			t.Fatalf("total %d, rows %d", total, len(rows))
		}
		return out
	}
	f := week
	f.Annotations = []AnnotationMatch{{Name: "ReleaseChannel", Value: "beta"}}
	if got := ids(f); !reflect.DeepEqual(got, []string{"00000002", "00000001"}) {
		t.Errorf("ReleaseChannel=beta: %v", got)
	}
	f.Annotations = append(f.Annotations, AnnotationMatch{Name: "Email", Value: "a@b.c"})
	if got := ids(f); !reflect.DeepEqual(got, []string{"00000002"}) {
		t.Errorf("beta and Email without view_pii: %v", got)
	}
	f.Personal = true
	if got := ids(f); !reflect.DeepEqual(got, []string{"00000002", "00000001"}) {
		t.Errorf("beta and Email with view_pii: %v", got)
	}
	f = week
	f.Annotations = []AnnotationMatch{{Name: "Big", Value: strings.Repeat("x", MaxAnnotationValue+1)}}
	if got := ids(f); got != nil {
		t.Errorf("over-long value indexed: %v", got)
	}
	b, err := ix.FacetAnnotation(ctx, week, "ReleaseChannel", 10)
	if err != nil || !reflect.DeepEqual(b, []Bucket{{"beta", 2}, {"release", 1}}) {
		t.Errorf("facet: %v %v", b, err)
	}
	b, err = ix.FacetAnnotation(ctx, week, "Email", 10)
	if err != nil || !reflect.DeepEqual(b, []Bucket{{"a@b.c", 1}}) {
		t.Errorf("facet Email without view_pii: %v %v", b, err)
	}
	pf := week
	pf.Personal = true
	b, err = ix.FacetAnnotation(ctx, pf, "Email", 10)
	if err != nil || !reflect.DeepEqual(b, []Bucket{{"a@b.c", 2}}) {
		t.Errorf("facet Email with view_pii: %v %v", b, err)
	}
	// Reprocessing replaces the crash's annotations.
	if err := ix.ProcessedDetails(ctx, c3, Details{Annotations: []Annotation{beta}}); err != nil {
		t.Fatal(err)
	}
	b, err = ix.FacetAnnotation(ctx, week, "ReleaseChannel", 10)
	if err != nil || !reflect.DeepEqual(b, []Bucket{{"beta", 3}}) {
		t.Errorf("facet after reprocessing: %v %v", b, err)
	}
	// Retention drops the old crash's rows.
	if _, err := ix.Maintain(ctx, now, 30*24*time.Hour); err != nil {
		t.Fatal(err)
	}
	var n int
	if err := ix.db.QueryRowContext(ctx, `SELECT COUNT(*) FROM crash_annotations`).Scan(&n); err != nil || n != 5 {
		t.Errorf("annotation rows after retention: %d %v", n, err)
	}
}
