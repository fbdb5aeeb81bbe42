package queue

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

// Unqueued is the KV bucket PREFIX_unqueued of crashes stored (or being
// stored) but not yet queued: a collector adds a crash's id before it
// stores the crash's blobs and removes it once the crash's message is
// published, so the sweep of crashes never queued reads these few keys
// instead of listing the blob store (docs/scale.md "No whole-bucket
// listing"). Replicated as the streams, file storage, one value per key,
// no TTL (an entry must outlive any outage). Keys starting with '_' are
// the bucket's own flags (Flag, SetFlag), never crash ids.
type Unqueued struct {
	kv         jetstream.KeyValue
	stream     jetstream.Stream
	streamName string
	nc         *nats.Conn
	pre        string // the subject prefix of the keys: $KV.<bucket>.
}

// Unqueued returns the bucket of crashes stored but not yet queued, made
// on first use.
func (q *JetStream) Unqueued(ctx context.Context) (*Unqueued, error) {
	q.kvMu.Lock()
	defer q.kvMu.Unlock()
	if q.unqueued != nil {
		return q.unqueued, nil
	}
	bucket := q.cfg.Prefix + "_unqueued"
	u := Unqueued{streamName: "KV_" + bucket, nc: q.nc}
	err := q.create(ctx, u.streamName, "$KV."+bucket+".>", func(ctx context.Context) (err error) {
		u.kv, err = q.js.CreateOrUpdateKeyValue(ctx, jetstream.KeyValueConfig{
			Bucket:      bucket,
			Description: "crashd's crashes stored but not yet queued: the sweep queues those a collector left",
			Replicas:    q.cfg.Replicas,
			Storage:     jetstream.FileStorage,
		})
		if err != nil {
			return err
		}
		u.stream, err = q.js.Stream(ctx, u.streamName)
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("queue: unqueued crashes: %w", err)
	}
	u.pre = "$KV." + bucket + "."
	q.unqueued = &u
	return &u, nil
}

// checkKey refuses what is not a valid key of the bucket (crash ids are
// hexadecimal digits and hyphens).
func checkKey(key string) error {
	if key == "" || len(key) > 128 || strings.HasPrefix(key, ".") || strings.HasSuffix(key, ".") {
		return fmt.Errorf("queue: unqueued: bad key %q", key)
	}
	for _, r := range key {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '-' || r == '_' || r == '.') {
			return fmt.Errorf("queue: unqueued: bad key %q", key)
		}
	}
	return nil
}

// Add records id (its value: the time, for people looking with the nats
// CLI) and returns the entry's revision, for Remove. It is durable on a
// majority of the replicas when it returns; retried through leader
// elections for up to a minute.
func (u *Unqueued) Add(ctx context.Context, id string) (uint64, error) {
	if err := checkKey(id); err != nil || strings.HasPrefix(id, "_") {
		return 0, fmt.Errorf("queue: unqueued: bad crash id %q", id)
	}
	var rev uint64
	err := retry(ctx, func(ctx context.Context) (err error) {
		rev, err = u.kv.Put(ctx, id, []byte(time.Now().UTC().Format(time.RFC3339Nano)))
		return err
	})
	if err != nil {
		return 0, fmt.Errorf("queue: unqueued: add %s: %w", id, err)
	}
	return rev, nil
}

// Remove forgets id. Not a KV delete, which would leave a delete marker
// per crash in the stream for ever: the key's messages are purged, so the
// bucket holds exactly the crashes not yet queued. Removing a key that is
// not there is not an error. rev is not needed by the purge; it is taken
// for symmetry with Add and logged on failure.
func (u *Unqueued) Remove(ctx context.Context, id string, rev uint64) error {
	if err := checkKey(id); err != nil {
		return err
	}
	err := retry(ctx, func(ctx context.Context) error {
		return u.stream.Purge(ctx, jetstream.WithPurgeSubject(u.pre+id))
	})
	if err != nil {
		return fmt.Errorf("queue: unqueued: remove %s (revision %d): %w", id, rev, err)
	}
	return nil
}

// Scan calls f with each recorded crash id, its revision and the time it
// was added (the server's clock), at most limit of them (limit <= 0: no
// bound), in the order they were added. Only the entries' headers are
// read. f's error stops the scan and is returned.
func (u *Unqueued) Scan(ctx context.Context, limit int, f func(id string, rev uint64, added time.Time) error) error {
	var w jetstream.KeyWatcher
	err := retry(ctx, func(ctx context.Context) (err error) {
		w, err = u.kv.WatchAll(context.WithoutCancel(ctx), jetstream.IgnoreDeletes(), jetstream.MetaOnly())
		return err
	})
	if err != nil {
		return fmt.Errorf("queue: unqueued: scan: %w", err)
	}
	// Read what is there now, then stop: entries added meanwhile are for
	// the next scan.
	var entries []jetstream.KeyValueEntry
	timeout := time.NewTimer(time.Minute)
	defer timeout.Stop()
read:
	for {
		select {
		case e, ok := <-w.Updates():
			if !ok {
				return errors.New("queue: unqueued: scan: the watcher closed before the end of the keys")
			}
			if e == nil {
				break read
			}
			if strings.HasPrefix(e.Key(), "_") {
				continue
			}
			entries = append(entries, e)
			if limit > 0 && len(entries) >= limit {
				break read
			}
		case <-ctx.Done():
			w.Stop()
			return fmt.Errorf("queue: unqueued: scan: %w", ctx.Err())
		case <-timeout.C:
			w.Stop()
			return errors.New("queue: unqueued: scan: no end of the keys after a minute")
		}
	}
	w.Stop()
	for _, e := range entries {
		if err := f(e.Key(), e.Revision(), e.Created()); err != nil {
			return err
		}
	}
	return nil
}

// Len returns how many entries the bucket holds (crashes not yet queued,
// and the flags).
func (u *Unqueued) Len(ctx context.Context) (uint64, error) {
	info, err := u.stream.Info(ctx)
	if err != nil {
		return 0, fmt.Errorf("queue: unqueued: %w", err)
	}
	return info.State.Msgs, nil
}

// Flag reports whether the flag name ("_" and letters) is set. Read with
// the stream's message get API, which the stream's leader answers: a KV
// Get is a direct get any replica may answer, and a watcher's consumer
// may be placed on any replica; a replica restarted and catching up
// answers "no such key" for a flag set long ago (the scale run met both).
func (u *Unqueued) Flag(ctx context.Context, name string) (bool, error) {
	if !strings.HasPrefix(name, "_") || checkKey(name) != nil {
		return false, fmt.Errorf("queue: unqueued: bad flag %q", name)
	}
	req, err := json.Marshal(map[string]string{"last_by_subj": u.pre + name})
	if err != nil {
		return false, err
	}
	found := false
	err = retry(ctx, func(ctx context.Context) error {
		m, err := u.nc.RequestWithContext(ctx, "$JS.API.STREAM.MSG.GET."+u.streamName, req)
		if err != nil {
			return err
		}
		var resp struct {
			Error   *jetstream.APIError `json:"error"`
			Message *struct {
				Seq uint64 `json:"seq"`
			} `json:"message"`
		}
		if err := json.Unmarshal(m.Data, &resp); err != nil {
			return fmt.Errorf("message get: %w", err)
		}
		if resp.Error != nil {
			if resp.Error.ErrorCode == jetstream.JSErrCodeMessageNotFound {
				found = false
				return nil
			}
			return resp.Error
		}
		found = resp.Message != nil
		return nil
	})
	if err != nil {
		return false, fmt.Errorf("queue: unqueued: flag %s: %w", name, err)
	}
	return found, nil
}

// SetFlag sets the flag name.
func (u *Unqueued) SetFlag(ctx context.Context, name string) error {
	if !strings.HasPrefix(name, "_") || checkKey(name) != nil {
		return fmt.Errorf("queue: unqueued: bad flag %q", name)
	}
	err := retry(ctx, func(ctx context.Context) error {
		_, err := u.kv.Put(ctx, name, []byte(time.Now().UTC().Format(time.RFC3339Nano)))
		return err
	})
	if err != nil {
		return fmt.Errorf("queue: unqueued: flag %s: %w", name, err)
	}
	return nil
}
