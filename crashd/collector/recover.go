package collector

import (
	"context"
	"fmt"
	"iter"
	"log/slog"
	"strings"
	"time"

	"github.com/gobreakpad/gobreakpad/crashd/blob"
	"github.com/gobreakpad/gobreakpad/crashd/crash"
)

// Recover publishes the crashes a collector stored but did not queue: every
// raw crash (v1/raw_crash/<YYYYMMDD>/<id>) dated since's UTC day or later
// without a queued marker (v1/queued/<YYYYMMDD>/<id>, or the older
// v1/queued/<id>) is published and its marker written. It returns how many
// it published. Run it at start-up before the collector takes uploads (a
// crash being stored at the same moment might be published twice;
// processing is idempotent, so that costs only work), and now and then (the
// server's sweep). A zero since looks at every stored crash.
//
// The raw crashes and the markers are listed side by side, day folder by
// day folder, both in key order: a crash costs no request of its own unless
// it has no marker of the current layout. With a since, only the folders of
// the days from since to tomorrow (UTC: a collector's clock ahead by up to a
// day) are listed, never the whole store: on S3 that reads those days' keys
// only. On a store whose listing reads everything anyway
// (blob.ListScansAll) the two whole folders are listed once.
func Recover(ctx context.Context, store blob.Store, publish Publisher, since time.Time, log *slog.Logger) (int, error) {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	from := ""
	days := []string{""}
	if !since.IsZero() {
		from = since.UTC().Format("20060102")
		if !blob.ListScansAll(store) {
			days = recoverDays(since, time.Now())
		}
	}
	n := 0
	for _, day := range days {
		m, err := recoverFolder(ctx, store, publish, day, from, log)
		n += m
		if err != nil {
			return n, err
		}
	}
	return n, nil
}

// recoverDays returns the folder names (YYYYMMDD/) of the UTC days from
// since's to the day after now's.
func recoverDays(since, now time.Time) []string {
	var out []string
	last := now.UTC().AddDate(0, 0, 1).Format("20060102")
	for d := since.UTC(); ; d = d.AddDate(0, 0, 1) {
		day := d.Format("20060102")
		if day > last {
			return out
		}
		out = append(out, day+"/")
	}
}

// recoverFolder is Recover over the raw crashes under
// v1/raw_crash/<folder> ("" : all of them) from the day from on, merging
// their listing with that of v1/queued/<folder>.
func recoverFolder(ctx context.Context, store blob.Store, publish Publisher, folder, from string, log *slog.Logger) (int, error) {
	// The markers' listing, pulled as the raw crashes go by; both are in
	// key order, so the remainders "<YYYYMMDD>/<id>" are too. Legacy
	// markers (v1/queued/<id>, no day folder) are skipped here and looked
	// up one by one below.
	nextQueued, stop := iter.Pull2(store.List(ctx, crash.QueuedPrefix+folder))
	defer stop()
	queued, queuedDone := "", false
	advance := func(to string) error {
		for !queuedDone && queued < to {
			k, err, ok := nextQueued()
			if !ok {
				queuedDone = true
				return nil
			}
			if err != nil {
				return err
			}
			if r := strings.TrimPrefix(k, crash.QueuedPrefix); strings.Contains(r, "/") {
				queued = r
			}
		}
		return nil
	}
	n := 0
	for key, err := range store.List(ctx, crash.RawCrashPrefix+folder) {
		if err != nil {
			return n, fmt.Errorf("recover: %w", err)
		}
		rest := strings.TrimPrefix(key, crash.RawCrashPrefix)
		date, _, _ := strings.Cut(rest, "/")
		if date < from {
			continue
		}
		id, ok := crash.IDFromKey(key)
		if !ok {
			continue
		}
		if err := advance(rest); err != nil {
			return n, fmt.Errorf("recover: %w", err)
		}
		if queued == rest {
			continue
		}
		// No marker beside it: one of the older layout, or (a raw crash
		// filed in another day's folder than its id's) of its own day?
		marked, err := store.Exists(ctx, crash.LegacyQueuedKey(id))
		if err == nil && !marked && key != crash.RawCrashKey(id) {
			marked, err = store.Exists(ctx, crash.QueuedKey(id))
		}
		if err != nil {
			return n, fmt.Errorf("recover: %w", err)
		}
		if marked {
			continue
		}
		if err := requeue(ctx, store, publish, id, log); err != nil {
			return n, err
		}
		n++
	}
	return n, nil
}

// requeue publishes a crash stored but not queued and writes its queued
// marker: what Recover and RecoverUnqueued do for each one they find.
func requeue(ctx context.Context, store blob.Store, publish Publisher, id crash.ID, log *slog.Logger) error {
	if err := publish(ctx, id); err != nil {
		return fmt.Errorf("recover: publish %s: %w", id, err)
	}
	if err := store.Put(ctx, crash.QueuedKey(id), []byte(time.Now().UTC().Format(time.RFC3339Nano))); err != nil {
		return fmt.Errorf("recover: %w", err)
	}
	log.Info("recovered a crash stored but not queued", "crash_id", id)
	return nil
}

// Bounds of RecoverUnqueued.
const (
	// UnqueuedSettle is the age under which a record is left alone: its
	// collector is storing or publishing the crash right now (publishing
	// it here too would only walk it twice). A crash whose publish failed
	// is queued by the first sweep after this.
	UnqueuedSettle = 30 * time.Second
	// UnqueuedGrace is how long a record whose raw crash is not stored is
	// kept: past it the collector that added it died or failed storing
	// (it answered no 200), so the record is removed. Longer than any
	// upload's storing (each Put's retries last a minute at most).
	UnqueuedGrace = 15 * time.Minute
	// UnqueuedScanLimit bounds the records one sweep reads; the rest wait
	// for the next.
	UnqueuedScanLimit = 100_000
)

// RecoverStats is what one RecoverUnqueued did.
type RecoverStats struct {
	Records   int // records read
	Published int // crashes queued
	Queued    int // records of crashes queued already, removed
	Orphans   int // records without a stored crash past UnqueuedGrace, removed
}

// RecoverUnqueued is Recover for a collector that records its crashes in
// u (Collector.SetUnqueued): it reads u's records, never the store's
// listing, and for each one older than UnqueuedSettle looks up the raw
// crash and its queued marker: a crash stored and not queued is published
// and marked; a crash queued already (its collector died before removing
// the record) is only forgotten; a record without a raw crash is kept for
// UnqueuedGrace, then forgotten. A record is removed only once its crash
// is queued or known never stored, so a crash is never lost between them.
// Records are kept whatever their age (unlike Recover's window, which
// bounded a listing: a record is a crash answered 200 and not yet queued).
// Ages are taken at now (time.Now(); tests pass a later time).
func RecoverUnqueued(ctx context.Context, store blob.Store, publish Publisher, u Unqueued, now time.Time, log *slog.Logger) (RecoverStats, error) {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	var st RecoverStats
	err := u.Scan(ctx, UnqueuedScanLimit, func(key string, rev uint64, added time.Time) error {
		st.Records++
		if !crash.Valid(key) {
			log.Warn("unqueued record: not a crash id; left alone", "key", key)
			return nil
		}
		id := crash.ID(key)
		age := now.Sub(added)
		if age < UnqueuedSettle {
			return nil
		}
		stored, err := store.Exists(ctx, crash.RawCrashKey(id))
		if err != nil {
			return fmt.Errorf("recover: %w", err)
		}
		if !stored {
			if age < UnqueuedGrace {
				return nil
			}
			if err := u.Remove(ctx, key, rev); err != nil {
				return fmt.Errorf("recover: %w", err)
			}
			log.Warn("unqueued record without a stored crash removed (its collector died or failed storing it, answering no 200)", "crash_id", id, "added", added)
			st.Orphans++
			return nil
		}
		marked, err := store.Exists(ctx, crash.QueuedKey(id))
		if err == nil && !marked {
			marked, err = store.Exists(ctx, crash.LegacyQueuedKey(id))
		}
		if err != nil {
			return fmt.Errorf("recover: %w", err)
		}
		if !marked {
			if err := requeue(ctx, store, publish, id, log); err != nil {
				return err
			}
			st.Published++
		} else {
			st.Queued++
		}
		if err := u.Remove(ctx, key, rev); err != nil {
			return fmt.Errorf("recover: %w", err)
		}
		return nil
	})
	return st, err
}
