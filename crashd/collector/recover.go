package collector

import (
	"context"
	"fmt"
	"log/slog"
	"strings"
	"time"

	"github.com/gobreakpad/gobreakpad/crashd/blob"
	"github.com/gobreakpad/gobreakpad/crashd/crash"
)

// Recover publishes the crashes a collector stored but did not queue: every
// raw crash (v1/raw_crash/<YYYYMMDD>/<id>) dated since's UTC day or later
// without a queued marker (v1/queued/<id>) is published and its marker
// written. It returns how many it published. Run it at start-up before the
// collector takes uploads (a crash being stored at the same moment might
// be published twice; processing is idempotent, so that costs only work).
// A zero since looks at every stored crash.
func Recover(ctx context.Context, store blob.Store, publish Publisher, since time.Time, log *slog.Logger) (int, error) {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	from := ""
	if !since.IsZero() {
		from = since.UTC().Format("20060102")
	}
	n := 0
	for key, err := range store.List(ctx, crash.RawCrashPrefix) {
		if err != nil {
			return n, fmt.Errorf("recover: %w", err)
		}
		date, _, _ := strings.Cut(strings.TrimPrefix(key, crash.RawCrashPrefix), "/")
		if date < from {
			continue
		}
		id, ok := crash.IDFromKey(key)
		if !ok {
			continue
		}
		queued, err := store.Exists(ctx, crash.QueuedKey(id))
		if err != nil {
			return n, fmt.Errorf("recover: %w", err)
		}
		if queued {
			continue
		}
		if err := publish(ctx, id); err != nil {
			return n, fmt.Errorf("recover: publish %s: %w", id, err)
		}
		if err := store.Put(ctx, crash.QueuedKey(id), []byte(time.Now().UTC().Format(time.RFC3339Nano))); err != nil {
			return n, fmt.Errorf("recover: %w", err)
		}
		log.Info("recovered a crash stored but not queued", "crash_id", id)
		n++
	}
	return n, nil
}
