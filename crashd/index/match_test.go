package index

import (
	"context"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"
)

// TestParseMatch: Socorro's operator prefixes, their negations, = quoting
// a value that starts with an operator, and what is refused.
func TestParseMatch(t *testing.T) {
	for _, c := range []struct {
		in   string
		want Match
		err  string
	}{
		{"AddTo", Match{Op: OpExact, Value: "AddTo"}, ""},
		{"~AddTo", Match{Op: OpContains, Value: "AddTo"}, ""},
		{"^Add", Match{Op: OpStarts, Value: "Add"}, ""},
		{"$To", Match{Op: OpEnds, Value: "To"}, ""},
		{"=~AddTo", Match{Op: OpExact, Value: "~AddTo"}, ""},
		{"==x", Match{Op: OpExact, Value: "=x"}, ""},
		{"=", Match{Op: OpExact, Value: ""}, ""},
		{"!x", Match{Op: OpExact, Not: true, Value: "x"}, ""},
		{"!=!x", Match{Op: OpExact, Not: true, Value: "!x"}, ""},
		{"!~x", Match{Op: OpContains, Not: true, Value: "x"}, ""},
		{"!^x", Match{Op: OpStarts, Not: true, Value: "x"}, ""},
		{"!$x", Match{Op: OpEnds, Not: true, Value: "x"}, ""},
		{"__null__", Match{Op: OpEmpty}, ""},
		{"!__null__", Match{Op: OpEmpty, Not: true}, ""},
		{"a~b", Match{Op: OpExact, Value: "a~b"}, ""},
		{">3", Match{Op: OpExact, Value: ">3"}, ""},
		{"@a.*", Match{}, "regular expressions"},
		{"!@a", Match{}, "regular expressions"},
		{"~", Match{}, "needs a value"},
		{"!^", Match{}, "needs a value"},
		{"__null__x", Match{}, "takes no value"},
	} {
		got, err := ParseMatch(c.in)
		if c.err != "" {
			if err == nil || !strings.Contains(err.Error(), c.err) {
				t.Errorf("ParseMatch(%q): error %v, want %q", c.in, err, c.err)
			}
			continue
		}
		if err != nil || got != c.want {
			t.Errorf("ParseMatch(%q) = %+v, %v; want %+v", c.in, got, err, c.want)
			continue
		}
		// String gives it back, quoting what needs it.
		if back, err := ParseMatch(got.String()); err != nil || back != got {
			t.Errorf("ParseMatch(%q.String() = %q) = %+v, %v", c.in, got.String(), back, err)
		}
	}
}

// TestMatch: the operators on crashes' text fields, modules and
// annotations, case-insensitive alike on both back ends (non-ASCII too),
// LIKE's % _ and \ in the value literal.
func TestMatch(t *testing.T) { backends(t, testMatch) }

func testMatch(t *testing.T, open opener) {
	ctx := context.Background()
	ix := open.must(t, ctx)
	now := time.Date(2026, 11, 26, 12, 0, 0, 0, time.UTC)
	crashes := []struct {
		sig, reason string
		mods        []string
		channel     string
	}{
		{"nsThread::AddToQueue", "SIGSEGV", []string{"libxul.so", "libc.so.6"}, "beta"},
		{"ÉCOLE::Élan", "SIGABRT", []string{"Éc.dll"}, "Release"},
		{"mozilla::addtoqueue_50%", "", []string{"a_b.so"}, ""},
		{`path\to_x`, "EXCEPTION_ACCESS_VIOLATION_READ", nil, "nightly"},
		{"OOM | small", "SIGSEGV", []string{"libxul.so"}, "beta-2"},
	}
	for i, c := range crashes {
		cr := Crash{ID: crashID(i+1, now), ReceivedAt: now.Add(-time.Duration(i+1) * time.Minute), Product: "App", Version: "1.0", OS: "Linux", CPU: "amd64",
			Signature: c.sig, CrashReason: c.reason}
		if err := ix.Processed(ctx, cr); err != nil {
			t.Fatal(err)
		}
		var as []Annotation
		if c.channel != "" {
			as = append(as, Annotation{Name: "ReleaseChannel", Value: c.channel})
		}
		if err := ix.ProcessedDetails(ctx, cr, Details{Modules: c.mods, Annotations: as}); err != nil {
			t.Fatal(err)
		}
	}
	period := Filter{Since: now.Add(-time.Hour), Until: now}
	find := func(f Filter) []int {
		t.Helper()
		rows, total, err := ix.Find(ctx, FindQuery{Filter: f})
		if err != nil {
			t.Fatal(err)
		}
		if total != len(rows) {
			t.Fatalf("total %d, rows %d", total, len(rows))
		}
		var out []int
		for _, r := range rows {
			for i := range crashes {
				if r.ID == crashID(i+1, now) {
					out = append(out, i)
				}
			}
		}
		slices.Sort(out)
		return out
	}
	for _, c := range []struct {
		field, value string
		want         []int
	}{
		{"signature", "~AddTo", []int{0, 2}},
		{"signature", "~addto", []int{0, 2}},
		{"signature", "~ADDTOQUEUE", []int{0, 2}},
		{"signature", "AddTo", nil},
		{"signature", "nsThread::AddToQueue", []int{0}},
		{"signature", "nsthread::addtoqueue", nil}, // exact is case-sensitive
		{"signature", "^NSTHREAD", []int{0}},
		{"signature", "$Queue", []int{0}},
		{"signature", "!~addto", []int{1, 3, 4}},
		{"signature", "!^ns", []int{1, 2, 3, 4}},
		{"signature", "!$queue", []int{1, 2, 3, 4}},
		{"signature", "!nsThread::AddToQueue", []int{1, 2, 3, 4}},
		// Non-ASCII folds the same on both back ends.
		{"signature", "~école", []int{1}},
		{"signature", "^éCOLE::é", []int{1}},
		{"signature", "$élan", []int{1}},
		// LIKE's wildcards and escape are literal.
		{"signature", "~50%", []int{2}},
		{"signature", "~%", []int{2}},
		{"signature", "~_", []int{2, 3}},
		{"signature", "~d_o", nil},
		{"signature", `~\`, []int{3}},
		{"signature", `^path\to`, []int{3}},
		{"signature", "~ | ", []int{4}},
		{"crash_reason", "__null__", []int{2}},
		{"crash_reason", "!__null__", []int{0, 1, 3, 4}},
		{"crash_reason", "^exception_", []int{3}},
		{"crash_reason", "~sig", []int{0, 1, 4}},
		{"product", "^ap", []int{0, 1, 2, 3, 4}},
		// A module matches within one name.
		{"module", "~XUL", []int{0, 4}},
		{"module", "^libc", []int{0}},
		{"module", "$.SO", []int{0, 2, 4}},
		{"module", "$.so.6", []int{0}},
		{"module", "~so|lib", nil},
		{"module", "~é", []int{1}},
		{"module", "~_", []int{2}},
		{"module", "=libxul.so", []int{0, 4}},
		{"module", "LIBXUL.SO", nil},
		{"module", "!~xul", []int{1, 2, 3}},
		{"module", "__null__", []int{3}},
	} {
		m, err := ParseMatch(c.value)
		if err != nil {
			t.Fatal(err)
		}
		f := period
		f.Matches = []FieldMatch{{Field: c.field, Match: m}}
		if got := find(f); !reflect.DeepEqual(got, c.want) {
			t.Errorf("%s=%s: %v, want %v", c.field, c.value, got, c.want)
		}
	}
	// Several matches all hold; with the exact fields too.
	f := period
	f.CrashReason = "SIGSEGV"
	f.Matches = []FieldMatch{{"signature", Match{Op: OpContains, Value: "queue"}}, {"module", Match{Op: OpStarts, Value: "LIB"}}}
	if got := find(f); !reflect.DeepEqual(got, []int{0}) {
		t.Errorf("two matches and crash_reason: %v", got)
	}
	// Annotations take the operators; ! keeps crashes without the annotation.
	for _, c := range []struct {
		value string
		want  []int
	}{
		{"~BETA", []int{0, 4}},
		{"beta", []int{0}},
		{"^rel", []int{1}},
		{"!~beta", []int{1, 2, 3}},
		{"!beta", []int{1, 2, 3, 4}},
		{"__null__", []int{2}},
		{"!__null__", []int{0, 1, 3, 4}},
	} {
		m, err := ParseMatch(c.value)
		if err != nil {
			t.Fatal(err)
		}
		f := period
		f.Annotations = []AnnotationMatch{{Name: "ReleaseChannel", Value: m.Value, Op: m.Op, Not: m.Not}}
		if got := find(f); !reflect.DeepEqual(got, c.want) {
			t.Errorf("annotation.ReleaseChannel=%s: %v, want %v", c.value, got, c.want)
		}
	}
	// A facet counts what the matches select.
	f = period
	f.Matches = []FieldMatch{{"signature", Match{Op: OpContains, Value: "addto"}}}
	b, err := ix.Facet(ctx, f, "signature", 10)
	if err != nil {
		t.Fatal(err)
	}
	if len(b) != 2 || b[0].Count != 1 || b[1].Count != 1 {
		t.Errorf("facet: %+v", b)
	}
	// TopCrashers over matches reads crashes, not the rollups.
	top, err := ix.TopCrashers(ctx, Filter{Since: now.Add(-48 * time.Hour), Until: now, Matches: f.Matches}, 10)
	if err != nil {
		t.Fatal(err)
	}
	if top.Total != 2 {
		t.Errorf("top crashers with a match: total %d, want 2", top.Total)
	}
}

// FuzzParseMatch: any value parses or is refused without panicking, and
// what parses prints back to itself (String quotes with = what needs it).
func FuzzParseMatch(f *testing.F) {
	for _, s := range []string{"", "x", "~x", "!~x", "=~x", "==", "!", "!=", "__null__", "!__null__x", "@x", "^", "$é"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		m, err := ParseMatch(s)
		if err != nil {
			return
		}
		back, err := ParseMatch(m.String())
		if err != nil || back != m {
			t.Fatalf("ParseMatch(%q) = %+v; String %q parses as %+v, %v", s, m, m.String(), back, err)
		}
		if c, args := m.cond("c"); c == "" || len(args) > 1 {
			t.Fatalf("%+v: condition %q %v", m, c, args)
		}
	})
}

// FuzzParseCursor: any cursor parses or is refused; what parses prints
// back to itself.
func FuzzParseCursor(f *testing.F) {
	for _, s := range []string{"2026-11-26T10:00:00.123456Z,abc", ",", "x,y", "2026-11-26T10:00:00+02:00,id"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		c, err := ParseCursor(s)
		if err != nil {
			return
		}
		back, err := ParseCursor(c.String())
		if err != nil || back.ID != c.ID || !back.ReceivedAt.Equal(c.ReceivedAt.Truncate(time.Microsecond)) {
			t.Fatalf("ParseCursor(%q) = %+v; String %q parses as %+v, %v", s, c, c.String(), back, err)
		}
	})
}
