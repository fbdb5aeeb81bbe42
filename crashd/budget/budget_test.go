package budget

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// TestBudget: bytes and slots are bounded, a waiter gets what another
// gives back, a wait that ends (or asks for more than all) is ErrBusy.
func TestBudget(t *testing.T) {
	ctx := context.Background()
	b := New(100, 2, 50*time.Millisecond)
	h1, err := b.Begin(ctx, 60)
	if err != nil {
		t.Fatal(err)
	}
	if err := b.Acquire(ctx, 50, false); !errors.Is(err, ErrBusy) {
		t.Fatalf("over the bytes: %v", err)
	}
	if err := b.Acquire(ctx, 101, false); !errors.Is(err, ErrBusy) {
		t.Fatalf("more than the budget: %v", err)
	}
	h2, err := b.Begin(ctx, 10)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := b.Begin(ctx, 1); !errors.Is(err, ErrBusy) {
		t.Fatalf("a third slot: %v", err)
	}
	if h2.TryGrab(40) {
		t.Fatal("TryGrab over the budget")
	}
	if !h2.TryGrab(30) {
		t.Fatal("TryGrab within the budget")
	}
	// A waiter gets its bytes when h1 is done.
	b2 := New(100, 2, 5*time.Second)
	w1, _ := b2.Begin(ctx, 90)
	done := make(chan error)
	go func() { done <- b2.Acquire(ctx, 50, false) }()
	time.Sleep(20 * time.Millisecond)
	w1.Done()
	if err := <-done; err != nil {
		t.Fatalf("waiter: %v", err)
	}
	if n, u := b2.InUse(); n != 50 || u != 0 {
		t.Fatalf("in use %d bytes, %d uploads; want 50, 0", n, u)
	}
	h1.Done()
	h2.Done()
	if n, u := b.InUse(); n != 0 || u != 0 {
		t.Fatalf("after Done: %d bytes, %d uploads", n, u)
	}
	// A cancelled context ends the wait.
	b3 := New(10, 1, time.Hour)
	b3.Acquire(ctx, 10, true)
	cctx, cancel := context.WithTimeout(ctx, 20*time.Millisecond)
	defer cancel()
	if err := b3.Acquire(cctx, 1, false); !errors.Is(err, ErrBusy) {
		t.Fatalf("cancelled wait: %v", err)
	}
}

// TestShare: a share takes at most its part, charged to the whole; the
// rest stays for the others.
func TestShare(t *testing.T) {
	ctx := context.Background()
	b := New(100, 10, 30*time.Millisecond)
	s := b.Share(50, 2)
	h, err := s.Begin(ctx, 40)
	if err != nil {
		t.Fatal(err)
	}
	if n, u := b.InUse(); n != 40 || u != 1 {
		t.Fatalf("whole budget: %d bytes, %d uploads; want 40, 1", n, u)
	}
	if err := h.Grab(20); !errors.Is(err, ErrBusy) {
		t.Fatalf("over the share: %v", err)
	}
	// The others still get the rest.
	o, err := b.Begin(ctx, 60)
	if err != nil {
		t.Fatalf("outside the share: %v", err)
	}
	// The share has room but the whole has none: refused, and nothing
	// stays taken from the share.
	if err := h.Grab(5); !errors.Is(err, ErrBusy) {
		t.Fatalf("whole budget full: %v", err)
	}
	if n, _ := s.InUse(); n != 40 {
		t.Fatalf("share after a refusal: %d bytes, want 40", n)
	}
	if h.TryGrab(5) {
		t.Fatal("TryGrab with the whole budget full")
	}
	o.Done()
	h.Give(10)
	if err := h.Grab(15); err != nil {
		t.Fatal(err)
	}
	k := h.Keep(20)
	h.Done()
	if n, u := b.InUse(); n != k || u != 0 {
		t.Fatalf("after Done with %d kept: %d bytes, %d uploads", k, n, u)
	}
	s.Release(k, false)
	if n, _ := b.InUse(); n != 0 {
		t.Fatalf("after the kept bytes' release: %d", n)
	}
}

// TestConcurrent: many goroutines taking and giving back never hold more
// than the budget (run with -race).
func TestConcurrent(t *testing.T) {
	ctx := context.Background()
	b := New(1000, 8, time.Second)
	s := b.Share(500, 4)
	var peak, cur atomic.Int64
	var wg sync.WaitGroup
	for i := range 32 {
		wg.Go(func() {
			bb := b
			if i%2 == 0 {
				bb = s
			}
			for range 50 {
				h, err := bb.Begin(ctx, 100)
				if err != nil {
					continue
				}
				n := cur.Add(100)
				for {
					p := peak.Load()
					if n <= p || peak.CompareAndSwap(p, n) {
						break
					}
				}
				cur.Add(-100)
				h.Done()
			}
		})
	}
	wg.Wait()
	if peak.Load() > 1000 {
		t.Fatalf("peak %d over the budget", peak.Load())
	}
	if n, u := b.InUse(); n != 0 || u != 0 {
		t.Fatalf("left: %d bytes, %d uploads", n, u)
	}
}
