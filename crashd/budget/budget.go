// Package budget is crashd's one bound of what uploads hold at once: the
// bytes of memory (or of spool disk) all of them together take and the
// number of uploads being read. The collector's crash uploads and the
// symbol server's uploads take their shares of one Budget (max_inflight_bytes,
// max_uploads, budget_wait), so that neither kind can exceed it whatever
// the other does; a request that cannot get its share within the budget's
// wait is refused with ErrBusy, answered 503 with Retry-After
// (RetryAfter).
//
// A Share is a part of a Budget that one kind of upload may hold at most
// (the symbol server's: half), so that the other kind always finds the
// rest.
package budget

import (
	"context"
	"errors"
	"fmt"
	"math"
	"sync"
	"time"
)

// The defaults of crashd's uploads' budget (max_inflight_bytes,
// max_uploads, budget_wait).
const (
	// DefaultBytes bounds the memory all uploads together hold: 256 MiB.
	DefaultBytes = 256 << 20
	// DefaultUploads bounds the uploads read at once: 1024.
	DefaultUploads = 1024
	// DefaultWait is how long a request waits for its share before it is
	// answered 503: 2 s.
	DefaultWait = 2 * time.Second
)

// ErrBusy is a request refused because the budget (its bytes or its upload
// slots) stayed exhausted for the whole wait: answered 503 with
// Retry-After (Crashpad's, Breakpad's and sym_upload's clients keep what
// they could not send and try again later).
var ErrBusy = errors.New("server busy: upload budget exhausted")

// Budget bounds the bytes held by all uploads together and the number of
// uploads at once. A request that finds it exhausted waits up to Wait for
// others to give some back. A Budget is safe for concurrent use.
type Budget struct {
	max        int64
	maxUploads int
	wait       time.Duration
	parent     *Budget // a Share's: charged too

	mu      sync.Mutex
	used    int64
	uploads int
	changed chan struct{} // closed (and replaced) when bytes or uploads are given back
}

// New returns a budget of bytes bytes and maxUploads upload slots (0: no
// bound on slots), whose requests wait up to wait.
func New(bytes int64, maxUploads int, wait time.Duration) *Budget {
	if maxUploads <= 0 {
		maxUploads = math.MaxInt
	}
	return &Budget{max: bytes, maxUploads: maxUploads, wait: wait, changed: make(chan struct{})}
}

// Share returns a part of b: at most bytes bytes and uploads slots of it
// (each at least 1), every acquisition charged to b too.
func (b *Budget) Share(bytes int64, uploads int) *Budget {
	s := New(min(max(bytes, 1), b.max), min(max(uploads, 1), b.maxUploads), b.wait)
	s.parent = b
	return s
}

// Max returns the budget's bytes.
func (b *Budget) Max() int64 { return b.max }

// MaxUploads returns the budget's upload slots.
func (b *Budget) MaxUploads() int { return b.maxUploads }

// Wait returns how long a request waits for the budget.
func (b *Budget) Wait() time.Duration { return b.wait }

// Acquire takes n bytes (and an upload slot when slot is set), waiting up
// to the budget's wait; ErrBusy when they did not come in time, when ctx
// ends first, or when more than the whole budget is asked for.
func (b *Budget) Acquire(ctx context.Context, n int64, slot bool) error {
	return b.AcquireWithin(ctx, n, slot, b.wait)
}

// AcquireWithin is Acquire waiting up to wait instead of the budget's
// (a request that has already cost its client much, a received symbol
// file, may wait longer than a new one).
func (b *Budget) AcquireWithin(ctx context.Context, n int64, slot bool, wait time.Duration) error {
	if n > b.max {
		return fmt.Errorf("%w (%d bytes asked, %d in all)", ErrBusy, n, b.max)
	}
	var timer *time.Timer
	deadline := time.Now().Add(wait)
	for {
		ok, ch := b.take(n, slot)
		if ok {
			if b.parent != nil {
				// The rest of the wait for the whole budget.
				if err := b.parent.acquireUntil(ctx, n, slot, deadline); err != nil {
					b.release(n, slot)
					return err
				}
			}
			return nil
		}
		if timer == nil {
			timer = time.NewTimer(wait)
			defer timer.Stop()
		}
		select {
		case <-ch:
		case <-timer.C:
			return ErrBusy
		case <-ctx.Done():
			return ErrBusy
		}
	}
}

// acquireUntil is Acquire waiting until deadline at the latest.
func (b *Budget) acquireUntil(ctx context.Context, n int64, slot bool, deadline time.Time) error {
	if b.tryAcquire(n, slot) {
		return nil
	}
	ctx, cancel := context.WithDeadline(ctx, deadline)
	defer cancel()
	return b.AcquireWithin(ctx, n, slot, time.Until(deadline))
}

// TryAcquire takes n bytes if they are free now, without waiting.
func (b *Budget) TryAcquire(n int64) bool { return b.tryAcquire(n, false) }

func (b *Budget) tryAcquire(n int64, slot bool) bool {
	if ok, _ := b.take(n, slot); !ok {
		return false
	}
	if b.parent != nil && !b.parent.tryAcquire(n, slot) {
		b.release(n, slot)
		return false
	}
	return true
}

// take takes n bytes (and an upload slot when slot is set) of b alone,
// not of its parent, if they are free now; else it returns the channel
// closed when some are given back.
func (b *Budget) take(n int64, slot bool) (bool, <-chan struct{}) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.used+n > b.max || slot && b.uploads >= b.maxUploads {
		return false, b.changed
	}
	b.used += n
	if slot {
		b.uploads++
	}
	return true, nil
}

// Release gives back n bytes (and an upload slot when slot is set).
func (b *Budget) Release(n int64, slot bool) {
	b.release(n, slot)
	if b.parent != nil {
		b.parent.Release(n, slot)
	}
}

// release gives back n bytes (and a slot) of b alone, not of its parent.
func (b *Budget) release(n int64, slot bool) {
	b.mu.Lock()
	b.used -= n
	if slot {
		b.uploads--
	}
	close(b.changed)
	b.changed = make(chan struct{})
	b.mu.Unlock()
}

// InUse returns the bytes and uploads held now.
func (b *Budget) InUse() (int64, int) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.used, b.uploads
}

// Hold is one request's share of a budget: an upload slot (when Begin
// took one) and the bytes taken since, all given back by Done. A Hold is
// used by one goroutine at a time.
type Hold struct {
	b     *Budget
	ctx   context.Context
	bytes int64
	slot  bool
}

// Begin takes an upload slot and n bytes for a request (ErrBusy as
// Acquire); Done gives them back.
func (b *Budget) Begin(ctx context.Context, n int64) (*Hold, error) {
	if err := b.Acquire(ctx, n, true); err != nil {
		return nil, err
	}
	return &Hold{b: b, ctx: ctx, bytes: n, slot: true}, nil
}

// Hold returns an empty hold on b (no slot) for a request's bytes.
func (b *Budget) Hold(ctx context.Context) *Hold { return &Hold{b: b, ctx: ctx} }

// Grab takes n more bytes, waiting as Acquire.
func (h *Hold) Grab(n int64) error { return h.GrabWithin(n, h.b.wait) }

// GrabWithin is Grab waiting up to wait (AcquireWithin).
func (h *Hold) GrabWithin(n int64, wait time.Duration) error {
	if n <= 0 {
		return nil
	}
	if err := h.b.AcquireWithin(h.ctx, n, false, wait); err != nil {
		return err
	}
	h.bytes += n
	return nil
}

// TryGrab takes n more bytes if they are free now (a nil Hold never has them).
func (h *Hold) TryGrab(n int64) bool {
	if h == nil || !h.b.TryAcquire(n) {
		return false
	}
	h.bytes += n
	return true
}

// Give gives back n of the hold's bytes before Done (at most what it holds).
func (h *Hold) Give(n int64) {
	n = min(n, h.bytes)
	if n <= 0 {
		return
	}
	h.bytes -= n
	h.b.Release(n, false)
}

// Keep moves n of the hold's bytes (at most what it holds) out of it: they
// stay taken after Done, until the caller gives them back with Release
// (the spool file of a sym-upload-v2 upload, kept for its complete). It
// returns the bytes moved.
func (h *Hold) Keep(n int64) int64 {
	n = min(n, h.bytes)
	if n < 0 {
		n = 0
	}
	h.bytes -= n
	return n
}

// Adopt adds to the hold n bytes taken before (by a Keep): Done gives
// them back with the rest.
func (h *Hold) Adopt(n int64) {
	if n > 0 {
		h.bytes += n
	}
}

// Bytes returns the bytes the hold has.
func (h *Hold) Bytes() int64 { return h.bytes }

// Done gives everything back. It may be called once.
func (h *Hold) Done() {
	h.b.Release(h.bytes, h.slot)
	h.bytes, h.slot = 0, false
}

// RetryAfter is the Retry-After value of a request refused after waiting
// d: whole seconds, at least 1.
func RetryAfter(d time.Duration) string {
	return fmt.Sprint(max(1, int64(math.Ceil(d.Seconds()))))
}
