package queue

import (
	"context"
	"errors"
	"testing"
	"time"
)

func openT(t *testing.T, dir string, cfg Config) *JetStream {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	q, err := Embedded(ctx, EmbeddedConfig{Dir: dir}, cfg)
	if err != nil {
		t.Fatal(err)
	}
	return q
}

func next(t *testing.T, c Consumer) Delivery {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	d, err := c.Next(ctx)
	if err != nil {
		t.Fatal(err)
	}
	return d
}

// waitDepth polls q's depth until ok says it is what the test wants,
// failing after 20 s.
func waitDepth(t *testing.T, q Queue, want string, ok func(Depth) bool) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for {
		d, err := q.Depth(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		if ok(d) {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("depth %+v, want %s", d, want)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func TestEmbedded(t *testing.T) {
	dir := t.TempDir()
	ctx := context.Background()
	q := openQueue(t, dir, Config{AckWait: 2 * time.Second})
	for _, p := range []struct {
		k  Kind
		id string
	}{{Normal, "n1"}, {Normal, "n1"}, {Normal, "n2"}, {Reprocess, "r1"}, {Priority, "p1"}} {
		if err := q.Publish(ctx, p.k, p.id); err != nil {
			t.Fatal(err)
		}
	}
	if err := q.Publish(ctx, Normal, "bad.id"); err == nil {
		t.Error("an id with a dot was published")
	}
	if err := q.Publish(ctx, "other", "x"); err == nil {
		t.Error("an unknown kind was published")
	}
	// The consumers' pending counts follow the stream asynchronously:
	// polled, not read once (5 runs in 60 failed on a busy machine).
	waitDepth(t, q, "4 waiting (n1 once), 2 normal", func(d Depth) bool { return d.Total() == 4 && d.Waiting[Normal] == 2 })
	// Priority first, then reprocess, then normal, once the fetchers hold
	// one of each (three deliveries in flight).
	c, err := q.Consume(ctx)
	if err != nil {
		t.Fatal(err)
	}
	waitDepth(t, q, "3 in flight", func(d Depth) bool { return d.InFlight == 3 })
	var got []string
	for range 3 {
		d := next(t, c)
		got = append(got, d.ID())
		if d.Attempt() != 1 {
			t.Errorf("%s: attempt %d", d.ID(), d.Attempt())
		}
		if d.ID() == "n1" || d.ID() == "n2" {
			if err := d.Nak(0); err != nil {
				t.Fatal(err)
			}
			continue
		}
		if err := d.Ack(); err != nil {
			t.Fatal(err)
		}
	}
	if got[0] != "p1" || got[1] != "r1" {
		t.Errorf("order %v, want p1 r1 first", got)
	}
	// The nak'd normal crash comes back with attempt 2.
	seen := map[string]int{}
	for len(seen) < 2 || seen["n1"]+seen["n2"] < 3 {
		d := next(t, c)
		seen[d.ID()] = max(seen[d.ID()], d.Attempt())
		if err := d.Ack(); err != nil {
			t.Fatal(err)
		}
		if len(seen) == 2 && seen["n1"]+seen["n2"] >= 3 {
			break
		}
	}
	if seen[got[2]] != 2 {
		t.Errorf("nak'd %s: attempts %v", got[2], seen)
	}
	c.Stop()
	if _, err := c.Next(ctx); !errors.Is(err, ErrClosed) {
		t.Errorf("Next after Stop: %v", err)
	}

	// Dead letters.
	if err := q.DeadLetter(ctx, "d1", "walk failed 3 times"); err != nil {
		t.Fatal(err)
	}
	if err := q.DeadLetter(ctx, "d2", "timeout"); err != nil {
		t.Fatal(err)
	}
	if err := q.DeadLetter(ctx, "d1", "again"); err != nil {
		t.Fatal(err)
	}
	dl, err := q.Dead(ctx, 0)
	if err != nil {
		t.Fatal(err)
	}
	if len(dl) != 2 || dl[0].ID != "d2" || dl[1].ID != "d1" || dl[1].Reason != "again" {
		t.Errorf("dead letters %+v", dl)
	}
	if err := q.Undead(ctx, "d1"); err != nil {
		t.Fatal(err)
	}
	if dl, _ := q.Dead(ctx, 0); len(dl) != 1 || dl[0].ID != "d2" {
		t.Errorf("after undead: %+v", dl)
	}
	if err := q.Ping(ctx); err != nil {
		t.Error(err)
	}

	// An unacked delivery survives a restart and comes back at once with
	// HandBackOnOpen.
	if err := q.Publish(ctx, Normal, "k1"); err != nil {
		t.Fatal(err)
	}
	c, _ = q.Consume(ctx)
	if d := next(t, c); d.ID() != "k1" {
		t.Fatalf("got %s", d.ID())
	}
	// Neither acked nor handed back: the process "dies".
	q.Close()
	c.Stop()
	q = openQueue(t, dir, Config{AckWait: time.Minute, HandBackOnOpen: true})
	defer q.Close()
	if dl, _ := q.Dead(ctx, 0); len(dl) != 1 {
		t.Errorf("dead letters after restart: %+v", dl)
	}
	c, _ = q.Consume(ctx)
	defer c.Stop()
	start := time.Now()
	d2 := next(t, c)
	if d2.ID() != "k1" || time.Since(start) > 10*time.Second {
		t.Errorf("after restart: %s after %v", d2.ID(), time.Since(start))
	}
	d2.Ack()
}

func openQueue(t *testing.T, dir string, cfg Config) *JetStream { return openT(t, dir, cfg) }
