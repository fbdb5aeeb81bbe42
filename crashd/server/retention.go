package server

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/gobreakpad/gobreakpad/crashd/blob"
	"github.com/gobreakpad/gobreakpad/crashd/crash"
)

// retentionBatch bounds the crashes whose blobs one retention run deletes
// (hourly: 2.4 million a day, Mozilla's peak intake); the rest wait for the
// next run.
const retentionBatch = 100_000

// expireBlobs deletes every blob of the crashes whose day is before cutoff
// (the day in the crash id, which is also the date folder of its raw crash,
// and the index's crash_day): the crashes are found by listing the raw
// crash folders v1/raw_crash/<YYYYMMDD>/ in order, stopping at the first day
// not before cutoff, at most limit crashes. Of each it deletes its dumps
// (the names in v1/dump_names/<id>, and always v1/dump/<id>), the dump
// names, the processed crash and the queued marker, and the raw crash last,
// so that a run stopped half-way (an error, the lease lost) leaves the raw
// crash to find the rest again: it is idempotent. A raw crash in a folder
// other than its id's day is left alone. It returns the crashes deleted and
// whether more may be left (limit reached).
func expireBlobs(ctx context.Context, store blob.Store, cutoff time.Time, limit int) (n int, more bool, err error) {
	cut := cutoff.UTC().Format("20060102")
	var ids []crash.ID
	for key, err := range store.List(ctx, crash.RawCrashPrefix) {
		if err != nil {
			return 0, false, fmt.Errorf("retention: list raw crashes: %w", err)
		}
		day, _, _ := strings.Cut(strings.TrimPrefix(key, crash.RawCrashPrefix), "/")
		if len(day) != len(cut) {
			continue
		}
		if day >= cut {
			break // keys come in lexical order: every later day is kept
		}
		id, ok := crash.IDFromKey(key)
		if !ok || key != crash.RawCrashKey(id) { // a raw crash misfiled, or no crash
			continue
		}
		if len(ids) == limit {
			more = true
			break
		}
		ids = append(ids, id)
	}
	for _, id := range ids {
		if err := ctx.Err(); err != nil { // the lease lost, or shutdown
			return n, more, fmt.Errorf("retention: %w", err)
		}
		if err := deleteCrashBlobs(ctx, store, id); err != nil {
			return n, more, err
		}
		n++
	}
	return n, more, nil
}

// deleteCrashBlobs deletes every blob of crash id, the raw crash last.
func deleteCrashBlobs(ctx context.Context, store blob.Store, id crash.ID) error {
	keys := []string{crash.DumpKey(id, crash.MinidumpField)}
	b, err := store.Get(ctx, crash.DumpNamesKey(id))
	switch {
	case errors.Is(err, blob.ErrNotExist):
	case err != nil:
		return fmt.Errorf("retention: %s: %w", id, err)
	default:
		var names crash.DumpNames
		// Unreadable names leave only the minidump to delete by name.
		if json.Unmarshal(b, &names) == nil {
			for _, name := range names {
				// Only names the collector could have stored: a reserved
				// or unsanitized one names no dump of this crash.
				if s, ok := crash.DumpName(name); ok && s == name {
					keys = append(keys, crash.DumpKey(id, name))
				}
			}
		}
	}
	keys = append(keys, crash.DumpNamesKey(id), crash.ProcessedCrashKey(id), crash.QueuedKey(id), crash.LegacyQueuedKey(id), crash.RawCrashKey(id))
	for _, k := range keys {
		if err := store.Delete(ctx, k); err != nil {
			return fmt.Errorf("retention: %s: %w", id, err)
		}
	}
	return nil
}
