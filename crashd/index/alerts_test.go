package index

import (
	"context"
	"strings"
	"sync"
	"testing"
	"time"
	"unicode/utf8"
)

// TestAlerts: a new signature's first crash records one new_signature
// event (in the crash's transaction; a second crash of it, a crash of
// another product, and the same signature recorded by two index handles
// at once make no other), only with SetAlerts; the events fan out into
// one delivery per webhook, claimed by one owner at a time until its
// lease ends, finished only by its owner, listed with their attempts;
// SignatureRate counts the last hour and the seven days before; old
// finished events are pruned.
func TestAlerts(t *testing.T) { backends(t, testAlerts) }

func testAlerts(t *testing.T, open opener) {
	ctx := context.Background()
	clock := time.Date(2026, 11, 26, 12, 0, 0, 0, time.UTC)
	var mu sync.Mutex
	now := func() time.Time { mu.Lock(); defer mu.Unlock(); return clock }
	advance := func(d time.Duration) { mu.Lock(); clock = clock.Add(d); mu.Unlock() }
	a := open.must(t, ctx)
	b := open.must(t, ctx)
	a.now, b.now = now, now
	day := time.Date(2026, 11, 26, 11, 30, 0, 0, time.UTC)
	rec := func(ix *SQL, n int, sig, product string) {
		t.Helper()
		o := Outcome{Crash: Crash{ID: crashID(n, day), ReceivedAt: day.Add(time.Duration(n) * time.Second), Product: product, Version: "1.0", Signature: sig, Attempts: 1}}
		if _, err := ix.RecordProcessed(ctx, o); err != nil {
			t.Fatal(err)
		}
	}
	// Without SetAlerts: no event.
	rec(a, 1, "quiet", "App")
	a.SetAlerts(true)
	b.SetAlerts(true)
	rec(a, 2, "quiet", "App")
	rec(a, 3, "boom", "App")
	rec(a, 4, "boom", "App")
	rec(a, 5, "boom", "Other")
	// Two handles recording the first crashes of one signature at once.
	var wg sync.WaitGroup
	for i, ix := range []*SQL{a, b, a, b} {
		wg.Go(func() { rec(ix, 10+i, "race", "App") })
	}
	wg.Wait()
	evs, err := a.AlertEventsToFanOut(ctx, 100)
	if err != nil {
		t.Fatal(err)
	}
	bySig := map[string]AlertEvent{}
	for _, e := range evs {
		if _, dup := bySig[e.Signature]; dup {
			t.Errorf("two events of %q", e.Signature)
		}
		bySig[e.Signature] = e
	}
	if len(evs) != 2 || bySig["boom"].CrashID != crashID(3, day) || bySig["boom"].Kind != AlertNewSignature ||
		bySig["boom"].ID != AlertID(AlertNewSignature, "boom") || bySig["race"].ID == "" {
		t.Fatalf("events: %+v", evs)
	}
	// AddAlertEvent: once per id.
	sp := AlertEvent{ID: AlertID(AlertSpike, "boom", "2026-11-26T12"), Kind: AlertSpike, Product: "App", Signature: "boom", Count: 12}
	for i, want := range []bool{true, false} {
		ix := []*SQL{a, b}[i]
		if ok, err := ix.AddAlertEvent(ctx, sp); err != nil || ok != want {
			t.Fatalf("AddAlertEvent %d: %v %v", i, ok, err)
		}
	}
	// Fan-out, twice (another process doing it too): one delivery per
	// webhook.
	for _, ix := range []*SQL{a, b} {
		if err := ix.FanOutAlert(ctx, bySig["boom"].ID, []string{"slack", "ops"}); err != nil {
			t.Fatal(err)
		}
	}
	if evs, _ := a.AlertEventsToFanOut(ctx, 100); len(evs) != 2 {
		t.Fatalf("left to fan out: %+v", evs)
	}
	// Claims: all by the first, none by the second while the lease
	// holds.
	got, err := a.ClaimAlertDeliveries(ctx, "pa", time.Minute, 10)
	if err != nil || len(got) != 2 || got[0].Event.Signature != "boom" || got[0].State != DeliveryPending {
		t.Fatalf("claim: %+v %v", got, err)
	}
	if got2, err := b.ClaimAlertDeliveries(ctx, "pb", time.Minute, 10); err != nil || len(got2) != 0 {
		t.Fatalf("second claim: %+v %v", got2, err)
	}
	// A failed attempt, due again in 10s; the other delivered.
	if ok, err := a.FinishAlertAttempt(ctx, AlertAttempt{EventID: got[0].Event.ID, Webhook: got[0].Webhook, Attempt: 1, Owner: "pa", Code: 500, Error: "boom"}, DeliveryPending, now().Add(10*time.Second)); !ok || err != nil {
		t.Fatalf("finish: %v %v", ok, err)
	}
	if ok, err := a.FinishAlertAttempt(ctx, AlertAttempt{EventID: got[1].Event.ID, Webhook: got[1].Webhook, Attempt: 1, Owner: "pa", Code: 200}, DeliveryDelivered, time.Time{}); !ok || err != nil {
		t.Fatalf("finish: %v %v", ok, err)
	}
	if got2, _ := b.ClaimAlertDeliveries(ctx, "pb", time.Minute, 10); len(got2) != 0 {
		t.Fatalf("claimed before due: %+v", got2)
	}
	advance(11 * time.Second)
	got2, err := b.ClaimAlertDeliveries(ctx, "pb", time.Minute, 10)
	if err != nil || len(got2) != 1 || got2[0].Attempts != 1 || got2[0].Webhook != got[0].Webhook {
		t.Fatalf("retry claim: %+v %v", got2, err)
	}
	// pb dies; after its lease, pa claims it; pb's late finish is refused.
	advance(2 * time.Minute)
	got3, err := a.ClaimAlertDeliveries(ctx, "pa", time.Minute, 10)
	if err != nil || len(got3) != 1 {
		t.Fatalf("claim after lease: %+v %v", got3, err)
	}
	if ok, err := b.FinishAlertAttempt(ctx, AlertAttempt{EventID: got3[0].Event.ID, Webhook: got3[0].Webhook, Attempt: 2, Owner: "pb", Code: 200}, DeliveryDelivered, time.Time{}); ok || err != nil {
		t.Fatalf("finish by a lost claim: %v %v", ok, err)
	}
	if ok, err := a.FinishAlertAttempt(ctx, AlertAttempt{EventID: got3[0].Event.ID, Webhook: got3[0].Webhook, Attempt: 2, Owner: "pa", Code: 204}, DeliveryDelivered, time.Time{}); !ok || err != nil {
		t.Fatalf("finish: %v %v", ok, err)
	}
	list, err := b.AlertDeliveries(ctx, 10)
	if err != nil || len(list) != 2 || list[0].State != DeliveryDelivered || list[1].State != DeliveryDelivered {
		t.Fatalf("deliveries: %+v %v", list, err)
	}
	atts, err := b.AlertAttempts(ctx, bySig["boom"].ID)
	if err != nil || len(atts) != 3 || atts[0].Owner != "pa" {
		t.Fatalf("attempts: %+v %v", atts, err)
	}

	// SignatureRate: the hour before now by product, the seven days
	// before today.
	for i := range 3 {
		d := time.Date(2026, 11, 20+i, 9, 0, 0, 0, time.UTC)
		o := Outcome{Crash: Crash{ID: crashID(100+i, d), ReceivedAt: d, Product: "App", Signature: "boom", Attempts: 1}}
		if _, err := a.RecordProcessed(ctx, o); err != nil {
			t.Fatal(err)
		}
	}
	hour, week, err := a.SignatureRate(ctx, "boom", day.Add(30*time.Minute), 3)
	if err != nil || week != 3 || len(hour) != 2 || hour[0] != (Bucket{"App", 2}) || hour[1] != (Bucket{"Other", 1}) {
		t.Fatalf("rate: %+v %d %v", hour, week, err)
	}
	if _, week, err := a.SignatureRate(ctx, "boom", day.Add(30*time.Minute), 4); err != nil || week != 0 {
		t.Fatalf("rate under minHour: week %d %v", week, err)
	}

	// Pruning keeps pending and recent events.
	if err := a.PruneAlerts(ctx, now().Add(time.Hour)); err != nil {
		t.Fatal(err)
	}
	if list, _ := a.AlertDeliveries(ctx, 10); len(list) != 0 {
		t.Fatalf("after prune: %+v", list)
	}
	if evs, _ := a.AlertEventsToFanOut(ctx, 100); len(evs) != 2 {
		t.Fatalf("not fanned out yet, pruned: %+v", evs)
	}
}

// TestNewAlertEvent: what makes two events the same: a signature is new
// once; a regression once per product, signature, version and regressing
// crash; a spike once per signature and UTC hour.
func TestNewAlertEvent(t *testing.T) {
	at := time.Date(2026, 11, 26, 12, 10, 0, 0, time.UTC)
	id := func(kind, product, sig, version string, at time.Time) string {
		return NewAlertEvent(kind, product, sig, version, "c", 1, at).ID
	}
	same := [][2]string{
		{id(AlertNewSignature, "A", "s", "1", at), id(AlertNewSignature, "B", "s", "2", at.Add(48*time.Hour))},
		{id(AlertRegression, "A", "s", "1", at), id(AlertRegression, "A", "s", "1", at.Add(time.Hour))},
		{id(AlertSpike, "A", "s", "", at), id(AlertSpike, "B", "s", "", at.Add(49*time.Minute))},
	}
	for i, p := range same {
		if p[0] != p[1] || len(p[0]) != 32 {
			t.Errorf("%d: %q and %q differ", i, p[0], p[1])
		}
	}
	differ := [][2]string{
		{id(AlertNewSignature, "A", "s", "1", at), id(AlertNewSignature, "A", "t", "1", at)},
		{id(AlertRegression, "A", "s", "1", at), id(AlertRegression, "A", "s", "2", at)},
		{id(AlertRegression, "A", "s", "1", at), id(AlertRegression, "B", "s", "1", at)},
		{id(AlertSpike, "A", "s", "", at), id(AlertSpike, "A", "s", "", at.Add(50*time.Minute))},
		{id(AlertSpike, "A", "s", "", at), id(AlertNewSignature, "A", "s", "", at)},
		{AlertID("k", "a\x00b"), AlertID("k", "a", "b")},
		{NewAlertEvent(AlertRegression, "A", "s", "1", "c1", 1, at).ID, NewAlertEvent(AlertRegression, "A", "s", "1", "c2", 1, at).ID},
	}
	for i, p := range differ {
		if p[0] == p[1] {
			t.Errorf("%d: the same id %q", i, p[0])
		}
	}
}

// TestAlertErrorText: an attempt's error cut at its bound stays valid
// UTF-8 (PostgreSQL's text takes nothing else): a character across the
// bound is dropped whole.
func TestAlertErrorText(t *testing.T) { backends(t, testAlertErrorText) }

func testAlertErrorText(t *testing.T, open opener) {
	ctx := context.Background()
	ix := open.must(t, ctx)
	e := NewAlertEvent(AlertSpike, "App", "s", "", "", 10, time.Date(2026, 11, 26, 12, 0, 0, 0, time.UTC))
	if _, err := ix.AddAlertEvent(ctx, e); err != nil {
		t.Fatal(err)
	}
	if err := ix.FanOutAlert(ctx, e.ID, []string{"w"}); err != nil {
		t.Fatal(err)
	}
	got, err := ix.ClaimAlertDeliveries(ctx, "p", time.Minute, 10)
	if err != nil || len(got) != 1 {
		t.Fatalf("claim: %+v %v", got, err)
	}
	msg := strings.Repeat("x", maxAlertError-1) + "é and more"
	if ok, err := ix.FinishAlertAttempt(ctx, AlertAttempt{EventID: e.ID, Webhook: "w", Attempt: 1, Owner: "p", Error: msg}, DeliveryFailed, time.Time{}); !ok || err != nil {
		t.Fatalf("finish: %v %v", ok, err)
	}
	atts, err := ix.AlertAttempts(ctx, e.ID)
	if err != nil || len(atts) != 1 {
		t.Fatalf("attempts: %+v %v", atts, err)
	}
	if a := atts[0].Error; a != msg[:maxAlertError-1] || !utf8.ValidString(a) {
		t.Errorf("error kept: %d bytes, valid UTF-8 %v", len(a), utf8.ValidString(a))
	}
}
