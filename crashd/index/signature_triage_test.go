package index

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/gobreakpad/gobreakpad/crashd/version"
)

// TestSignatureTriage: the life of a signature's triage on each back end:
// its first crash (new_signature), resolved in 2.0, crashes from 1.9 and
// 2.0b3 that do not regress it, one from 2.1 that does (once), the
// history of both changes, bug links, the state filter of the top
// crashers, the refusals, a per-product version order.
func TestSignatureTriage(t *testing.T) { backends(t, testSignatureTriage) }

func testSignatureTriage(t *testing.T, open opener) {
	ctx := context.Background()
	ix := open.must(t, ctx)
	day := time.Date(2026, 11, 20, 0, 0, 0, 0, time.UTC)
	ix.SetVersionOrder(func(p string) version.Order {
		if p == "Plain" {
			return version.String
		}
		return version.Mozilla
	})
	n := 0
	record := func(product, ver, sig string) []SignatureEvent {
		t.Helper()
		n++
		ev, err := ix.RecordProcessed(ctx, Outcome{Crash: Crash{ID: crashID(n, day), ReceivedAt: day.Add(time.Duration(n) * time.Minute),
			Product: product, Version: ver, Signature: sig}})
		if err != nil {
			t.Fatal(err)
		}
		return ev
	}
	ev := record("App", "1.0", "a")
	if len(ev) != 1 || ev[0].Kind != EventNewSignature || ev[0].Product != "App" || ev[0].Signature != "a" || ev[0].CrashID != crashID(1, day) {
		t.Fatalf("first crash: %+v", ev)
	}
	if ev := record("App", "1.0", "a"); len(ev) != 0 {
		t.Fatalf("second crash: %+v", ev)
	}
	if ev := record("Other", "1.0", "a"); len(ev) != 1 || ev[0].Kind != EventNewSignature {
		t.Fatalf("first crash in another product: %+v", ev)
	}
	tr, err := ix.SignatureTriage(ctx, "App", "a")
	if err != nil || tr.State != StateUntriaged || len(tr.History) != 0 || len(tr.Bugs) != 0 {
		t.Fatalf("new signature: %+v, %v", tr, err)
	}

	for _, bad := range []TriageUpdate{
		{Product: "App", Signature: "a", State: StateResolved},
		{Product: "App", Signature: "a", State: "fixed"},
		{Product: "App", Signature: "a", State: StateOpen, FixedIn: "2.0"},
		{Product: "App", Signature: "a"},
		{Product: "App", Signature: "a", AddBug: "javascript:alert(1)"},
		{Product: "App", Signature: "a", AddBug: "https://bugs.example/1\n"},
		{Product: "App", Signature: "a", AddBug: "/relative/1"},
		{Product: "App", Signature: "a", State: StateResolved, FixedIn: string(make([]byte, MaxFixedIn+1))},
	} {
		if _, err := ix.UpdateTriage(ctx, bad); !errors.Is(err, ErrBadTriage) {
			t.Errorf("%+v: %v, want ErrBadTriage", bad, err)
		}
	}
	if _, err := ix.UpdateTriage(ctx, TriageUpdate{Product: "App", Signature: "nope", State: StateOpen}); !errors.Is(err, ErrNotFound) {
		t.Errorf("unknown signature: %v", err)
	}
	if _, err := ix.SignatureTriage(ctx, "Nope", "a"); !errors.Is(err, ErrNotFound) {
		t.Errorf("unknown product: %v", err)
	}

	tr, err = ix.UpdateTriage(ctx, TriageUpdate{Product: "App", Signature: "a", State: StateResolved, FixedIn: "2.0", Who: "alice",
		AddBug: "https://github.com/o/r/issues/7"})
	if err != nil || tr.State != StateResolved || tr.FixedIn != "2.0" || tr.UpdatedBy != "alice" || len(tr.Bugs) != 1 || len(tr.History) != 2 {
		t.Fatalf("resolve: %+v, %v", tr, err)
	}
	for _, v := range []string{"1.9", "2.0b3", "2.0pre", "1.99.99"} {
		if ev := record("App", v, "a"); len(ev) != 0 {
			t.Fatalf("crash from %s after resolving in 2.0: %+v", v, ev)
		}
	}
	if tr, _ := ix.SignatureTriage(ctx, "App", "a"); tr.State != StateResolved {
		t.Fatalf("after older versions: %s", tr.State)
	}
	// The other product's state is its own.
	if ev := record("Other", "3.0", "a"); len(ev) != 0 {
		t.Fatalf("other product: %+v", ev)
	}
	ev = record("App", "2.1", "a")
	if len(ev) != 1 || ev[0].Kind != EventRegression || ev[0].Version != "2.1" || ev[0].FixedIn != "2.0" || ev[0].CrashID != crashID(n, day) {
		t.Fatalf("crash from 2.1: %+v", ev)
	}
	regressedBy := crashID(n, day)
	if ev := record("App", "2.2", "a"); len(ev) != 0 {
		t.Fatalf("second crash after the regression: %+v", ev)
	}
	tr, err = ix.SignatureTriage(ctx, "App", "a")
	if err != nil || tr.State != StateRegressed || tr.FixedIn != "2.0" || tr.UpdatedBy != "crashd" {
		t.Fatalf("regressed: %+v, %v", tr, err)
	}
	if len(tr.History) != 3 {
		t.Fatalf("history: %+v", tr.History)
	}
	h := tr.History
	if h[0].Who != "alice" || h[0].FromState != StateUntriaged || h[0].ToState != StateResolved || h[0].ToFixedIn != "2.0" ||
		h[1].BugAdded != "https://github.com/o/r/issues/7" ||
		h[2].Who != "crashd" || h[2].FromState != StateResolved || h[2].ToState != StateRegressed || h[2].CrashID != regressedBy || h[2].Version != "2.1" {
		t.Fatalf("history: %+v", h)
	}

	// Bugs: a second link, a duplicate (no change), a removal.
	if _, err := ix.UpdateTriage(ctx, TriageUpdate{Product: "App", Signature: "a", AddBug: "https://bugzilla.mozilla.org/show_bug.cgi?id=1", Who: "bob"}); err != nil {
		t.Fatal(err)
	}
	if _, err := ix.UpdateTriage(ctx, TriageUpdate{Product: "App", Signature: "a", AddBug: "https://bugzilla.mozilla.org/show_bug.cgi?id=1", Who: "bob"}); err != nil {
		t.Fatal(err)
	}
	tr, err = ix.UpdateTriage(ctx, TriageUpdate{Product: "App", Signature: "a", RemoveBug: "https://github.com/o/r/issues/7", Who: "bob"})
	if err != nil || len(tr.Bugs) != 1 || tr.Bugs[0].URL != "https://bugzilla.mozilla.org/show_bug.cgi?id=1" || len(tr.History) != 5 || tr.History[4].BugRemoved == "" {
		t.Fatalf("bugs: %+v, %v", tr, err)
	}
	m, err := ix.TriageOf(ctx, "", []string{"a", "b"})
	if err != nil || len(m["a"]) != 2 || m["a"][0].Product != "App" || m["a"][0].State != StateRegressed || len(m["a"][0].Bugs) != 1 ||
		m["a"][1].Product != "Other" || m["a"][1].State != StateUntriaged || m["b"] != nil {
		t.Fatalf("TriageOf: %+v, %v", m, err)
	}

	// The top crashers by state.
	record("App", "1.0", "b")
	f := Filter{Since: day, Until: day.Add(48 * time.Hour)}
	for _, c := range []struct {
		f    Filter
		want []string
	}{
		{Filter{State: StateRegressed}, []string{"a"}},
		{Filter{State: StateUntriaged}, []string{"a", "b"}}, // a is untriaged in Other
		{Filter{State: StateUntriaged, Product: "App"}, []string{"b"}},
		{Filter{State: StateIgnored}, nil},
	} {
		g := c.f
		g.Since, g.Until = f.Since, f.Until
		top, err := ix.TopCrashers(ctx, g, 10)
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, r := range top.Rows {
			got = append(got, r.Signature)
			if r.Signature == "a" && c.f.State == StateRegressed && (!r.Regressed || len(r.Triage) != 2) {
				t.Errorf("row a: %+v", r)
			}
		}
		if len(got) != len(c.want) || (len(got) > 0 && got[0] != c.want[0]) {
			t.Errorf("state %s product %q: %v, want %v", c.f.State, c.f.Product, got, c.want)
		}
	}

	// A product whose versions compare as plain strings: "10" < "9".
	record("Plain", "1", "p")
	if _, err := ix.UpdateTriage(ctx, TriageUpdate{Product: "Plain", Signature: "p", State: StateResolved, FixedIn: "9"}); err != nil {
		t.Fatal(err)
	}
	if ev := record("Plain", "10", "p"); len(ev) != 0 {
		t.Fatalf("string order: 10 regressed 9: %+v", ev)
	}
	if ev := record("Plain", "90", "p"); len(ev) != 1 || ev[0].Kind != EventRegression {
		t.Fatalf("string order: 90 did not regress 9: %+v", ev)
	}
}

// TestSignatureTriageConcurrent: crashes of a resolved signature recorded
// at once by two index handles (two processors) regress it exactly once,
// while a user changes its state: no transition is lost, each history
// row is from the state it changed.
func TestSignatureTriageConcurrent(t *testing.T) { backends(t, testSignatureTriageConcurrent) }

func testSignatureTriageConcurrent(t *testing.T, open opener) {
	ctx := context.Background()
	var ixs []*SQL
	for range 2 {
		ixs = append(ixs, open.must(t, ctx))
	}
	day := time.Date(2026, 11, 21, 0, 0, 0, 0, time.UTC)
	if _, err := ixs[0].RecordProcessed(ctx, Outcome{Crash: Crash{ID: crashID(1, day), ReceivedAt: day, Product: "App", Version: "1.0", Signature: "s"}}); err != nil {
		t.Fatal(err)
	}
	for round := range 3 {
		if _, err := ixs[1].UpdateTriage(ctx, TriageUpdate{Product: "App", Signature: "s", State: StateResolved, FixedIn: "2.0", Who: "alice"}); err != nil {
			t.Fatal(err)
		}
		var mu sync.Mutex
		regressions := 0
		var wg sync.WaitGroup
		for i := range 16 {
			wg.Go(func() {
				id := crashID(100*(round+1)+i, day)
				ev, err := ixs[i%2].RecordProcessed(ctx, Outcome{Crash: Crash{ID: id, ReceivedAt: day.Add(time.Second), Product: "App", Version: "2.1", Signature: "s"}})
				if err != nil {
					t.Error(err)
					return
				}
				mu.Lock()
				regressions += len(ev)
				mu.Unlock()
			})
		}
		wg.Go(func() {
			if _, err := ixs[1].UpdateTriage(ctx, TriageUpdate{Product: "App", Signature: "s", AddBug: "https://example.com/b", Who: "bob"}); err != nil {
				t.Error(err)
			}
		})
		wg.Wait()
		if regressions != 1 {
			t.Fatalf("round %d: %d regressions", round, regressions)
		}
	}
	tr, err := ixs[0].SignatureTriage(ctx, "App", "s")
	if err != nil {
		t.Fatal(err)
	}
	// Each round: resolved by alice, regressed by crashd; the bug once.
	var states []State
	for i, h := range tr.History {
		if h.ToState == "" {
			continue
		}
		if len(states) > 0 && h.FromState != states[len(states)-1] {
			t.Errorf("history %d: from %s after a change to %s", i, h.FromState, states[len(states)-1])
		}
		states = append(states, h.ToState)
	}
	if len(states) != 6 || tr.State != StateRegressed || len(tr.Bugs) != 1 {
		t.Fatalf("states %v, now %s, bugs %d", states, tr.State, len(tr.Bugs))
	}
}

// TestCheckBugURL: only absolute http and https URLs with a host, bounded.
func TestCheckBugURL(t *testing.T) {
	for _, ok := range []string{"https://github.com/o/r/issues/1", "http://bugs.example:8080/x?id=1#c2"} {
		if err := CheckBugURL(ok); err != nil {
			t.Errorf("%q: %v", ok, err)
		}
	}
	for _, bad := range []string{"", "javascript:alert(1)", "data:text/html,x", "https://", "//example.com/x", "ftp://example.com/",
		"https://user:pw@example.com/", "https://example.com/\x00", "https://example.com/" + string(make([]byte, MaxBugURL))} {
		if err := CheckBugURL(bad); err == nil {
			t.Errorf("%q taken", bad)
		}
	}
}

// FuzzCheckBugURL: a bug link taken is an http or https URL with a host,
// bounded, without control characters or spaces: safe as an href.
func FuzzCheckBugURL(f *testing.F) {
	for _, s := range []string{"https://github.com/o/r/issues/1", "javascript:alert(1)", "HTTPS://x/", "http://[::1]:80/a b", "http://\x00/"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if CheckBugURL(s) != nil {
			return
		}
		lower := strings.ToLower(s)
		if len(s) > MaxBugURL || !(strings.HasPrefix(lower, "http://") || strings.HasPrefix(lower, "https://")) || strings.ContainsAny(s, " \x00\n\r\t") {
			t.Fatalf("%q taken", s)
		}
	})
}

// TestTriageWhoCut: a name over MaxTriageWho bytes is cut on a character
// boundary, so that PostgreSQL stores it (it refuses broken UTF-8).
func TestTriageWhoCut(t *testing.T) {
	u := TriageUpdate{State: "open", Who: strings.Repeat("x", MaxTriageWho-1) + "é and more"}
	if err := u.check(); err != nil {
		t.Fatal(err)
	}
	if u.Who != strings.Repeat("x", MaxTriageWho-1) || !utf8.ValidString(u.Who) {
		t.Errorf("who kept: %d bytes, valid UTF-8 %v", len(u.Who), utf8.ValidString(u.Who))
	}
}
