package server

import (
	"context"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/gobreakpad/gobreakpad/crashd/blob"
	"github.com/gobreakpad/gobreakpad/crashd/crash"
	"github.com/gobreakpad/gobreakpad/crashd/index"
	"github.com/gobreakpad/gobreakpad/crashd/queue"
)

// retentionStores are the blob stores expireBlobs is tested on: a
// directory, memory, and a JetStream object store on an embedded,
// in-process NATS server, and an S3 store on SeaweedFS (nil, and the
// subtest skipped, when it is not built).
func retentionStores(t *testing.T) map[string]blob.Store {
	d, err := blob.OpenDir(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { d.Close() })
	ctx := context.Background()
	q, err := queue.Embedded(ctx, queue.EmbeddedConfig{Dir: filepath.Join(t.TempDir(), "nats")}, queue.Config{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { q.Close() })
	obj, err := blob.OpenObjectStore(ctx, q.JetStream(), "blobs", 1)
	if err != nil {
		t.Fatal(err)
	}
	return map[string]blob.Store{"Dir": d, "Mem": blob.NewMem(), "ObjectStore": obj, "S3": s3TestStore(t)}
}

// putCrash stores every blob the collector and the processor store for a
// crash with a minidump and a second dump; it returns their keys.
func putCrash(t *testing.T, s blob.Store, id crash.ID) []string {
	t.Helper()
	blobs := map[string]string{
		crash.RawCrashKey(id):                  `{"ProductName":"Retention"}`,
		crash.DumpNamesKey(id):                 `["upload_file_minidump","memory_report"]`,
		crash.DumpKey(id, crash.MinidumpField): "MDMP",
		crash.DumpKey(id, "memory_report"):     "report",
		crash.ProcessedCrashKey(id):            `{"signature":"x"}`,
		crash.QueuedKey(id):                    "2026-01-01T00:00:00Z",
		crash.LegacyQueuedKey(id):              "2026-01-01T00:00:00Z", // from before the day folders
	}
	var keys []string
	for k, v := range blobs {
		if err := s.Put(context.Background(), k, []byte(v)); err != nil {
			t.Fatal(err)
		}
		keys = append(keys, k)
	}
	return keys
}

func allKeys(t *testing.T, s blob.Store) []string {
	t.Helper()
	var keys []string
	for k, err := range s.List(context.Background(), "") {
		if err != nil {
			t.Fatal(err)
		}
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

// TestExpireBlobs: retention deletes every blob of the crashes whose day
// is before the cutoff, bounded per run, idempotently, and none of a crash
// of the cutoff's day or later.
func TestExpireBlobs(t *testing.T) {
	now := time.Date(2026, 11, 26, 14, 0, 0, 0, time.UTC)
	keep := 30 * 24 * time.Hour
	cutoff := index.RetentionCutoff(now, keep) // Monday 2026-10-26
	if cutoff.Weekday() != time.Monday || !cutoff.Equal(time.Date(2026, 10, 26, 0, 0, 0, 0, time.UTC)) {
		t.Fatalf("cutoff %v", cutoff)
	}
	for name, s := range retentionStores(t) {
		t.Run(name, func(t *testing.T) {
			if s == nil {
				t.Skip(s3Skip)
			}
			ctx := context.Background()
			var old []crash.ID
			for _, at := range []time.Time{cutoff.Add(-time.Second), cutoff.AddDate(0, 0, -1), cutoff.AddDate(0, -3, 0)} {
				id := crash.New(at, 0)
				old = append(old, id)
				putCrash(t, s, id)
			}
			var kept []string
			for _, at := range []time.Time{cutoff, cutoff.Add(23 * time.Hour), now} {
				kept = append(kept, putCrash(t, s, crash.New(at, 0))...)
			}
			// A raw crash in an old day's folder whose id is of a kept day,
			// and a key of no crash: both left alone.
			misfiled := crash.RawCrashPrefix + "20200101/" + string(crash.New(now, 0))
			kept = append(kept, misfiled, crash.KeyRoot+"/heartbeat")
			for _, k := range kept[len(kept)-2:] {
				if err := s.Put(ctx, k, []byte("x")); err != nil {
					t.Fatal(err)
				}
			}
			slices.Sort(kept)

			n, more, err := expireBlobs(ctx, s, cutoff, 2)
			if err != nil || n != 2 || !more {
				t.Fatalf("first run: %d crashes, more %v, err %v; want 2, true", n, more, err)
			}
			n, more, err = expireBlobs(ctx, s, cutoff, 2)
			if err != nil || n != 1 || more {
				t.Fatalf("second run: %d crashes, more %v, err %v; want 1, false", n, more, err)
			}
			if got := allKeys(t, s); !slices.Equal(got, kept) {
				t.Errorf("left:\n%q\nwant:\n%q", got, kept)
			}
			for _, id := range old {
				if ok, _ := s.Exists(ctx, crash.DumpKey(id, "memory_report")); ok {
					t.Errorf("%s: second dump left", id)
				}
			}
			// Again: nothing left to do.
			if n, more, err := expireBlobs(ctx, s, cutoff, 2); err != nil || n != 0 || more {
				t.Fatalf("third run: %d crashes, more %v, err %v", n, more, err)
			}
			if got := allKeys(t, s); !slices.Equal(got, kept) {
				t.Errorf("third run changed the store:\n%q", got)
			}
			// A run stopped half-way (the dumps and their names deleted,
			// the rest not) is finished by the next one.
			id := crash.New(cutoff.AddDate(0, 0, -2), 0)
			putCrash(t, s, id)
			for _, k := range []string{crash.DumpKey(id, crash.MinidumpField), crash.DumpKey(id, "memory_report"), crash.DumpNamesKey(id)} {
				if err := s.Delete(ctx, k); err != nil {
					t.Fatal(err)
				}
			}
			if n, _, err := expireBlobs(ctx, s, cutoff, 10); err != nil || n != 1 {
				t.Fatalf("half-deleted crash: %d, %v", n, err)
			}
			if got := allKeys(t, s); !slices.Equal(got, kept) {
				t.Errorf("half-deleted crash left:\n%q", slices.DeleteFunc(got, func(k string) bool { return slices.Contains(kept, k) }))
			}
		})
	}
}

// TestMaintainDeletesBlobs: a server with retention_days deletes the blobs
// of a crash before the cutoff when its retention runs (under the lease,
// after the index) and counts it; a crash of today keeps its blobs.
func TestMaintainDeletesBlobs(t *testing.T) {
	cfg := testConfig(t, nil)
	cfg.RetentionDays = 30
	s, err := New(t.Context(), cfg, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	oldID := crash.New(time.Now().AddDate(0, 0, -60), 0)
	putCrash(t, s.store, oldID)
	kept := putCrash(t, s.store, crash.New(time.Now(), 0))
	if err := s.maintain(t.Context()); err != nil {
		t.Fatal(err)
	}
	for _, k := range append(kept, crash.RawCrashKey(oldID), crash.DumpKey(oldID, "memory_report")) {
		ok, err := s.store.Exists(t.Context(), k)
		if err != nil {
			t.Fatal(err)
		}
		if want := slices.Contains(kept, k); ok != want {
			t.Errorf("%s: exists %v, want %v", k, ok, want)
		}
	}
	mfs, err := s.reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	n := -1.0
	for _, mf := range mfs {
		if mf.GetName() == "crashd_retention_crashes_deleted_total" {
			n = mf.GetMetric()[0].GetCounter().GetValue()
		}
	}
	if n != 1 {
		t.Errorf("crashd_retention_crashes_deleted_total = %v, want 1", n)
	}
}
