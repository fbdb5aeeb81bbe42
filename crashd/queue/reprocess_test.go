package queue

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"
)

// TestReprocessOnce: a crash waiting to be reprocessed is not queued
// again (ErrQueued), however many ask at once; once a worker takes it,
// it can be queued again. Other kinds are not concerned.
func TestReprocessOnce(t *testing.T) {
	q := openT(t, t.TempDir(), Config{AckWait: 5 * time.Second})
	defer q.Close()
	ctx := t.Context()
	var wg sync.WaitGroup
	var mu sync.Mutex
	queued, dup := 0, 0
	for range 8 {
		wg.Go(func() {
			for range 50 {
				err := q.Publish(ctx, Reprocess, "crash-1")
				mu.Lock()
				switch {
				case err == nil:
					queued++
				case errors.Is(err, ErrQueued):
					dup++
				default:
					t.Error(err)
				}
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	if d, err := q.Depth(ctx); queued != 1 || dup != 399 || err != nil || d.Waiting[Reprocess] != 1 {
		t.Fatalf("flood: %d queued, %d refused, depth %+v %v", queued, dup, d, err)
	}
	if err := q.Publish(ctx, Priority, "crash-1"); err != nil {
		t.Errorf("priority: %v", err)
	}
	c, err := q.Consume(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Stop()
	for range 2 {
		nctx, cancel := context.WithTimeout(ctx, 20*time.Second)
		d, err := c.Next(nctx)
		cancel()
		if err != nil {
			t.Fatal(err)
		}
		d.Ack()
	}
	// Taken: a new reprocess of it is queued.
	if err := q.Publish(ctx, Reprocess, "crash-1"); err != nil {
		t.Errorf("after the worker took it: %v", err)
	}
}
