package queue

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/nats-io/nats.go/jetstream"
)

// ErrQueued is the error of a Publish of kind Reprocess for a crash that
// already waits to be reprocessed: it is not queued twice (5,000 calls
// for one crash are one walk). The marker goes when a worker takes the
// crash (Consumer.Next), so a reprocess asked during its walk queues it
// again.
var ErrQueued = errors.New("already queued for reprocessing")

// ReprocessMarkTTL bounds a reprocess marker's life: a process dying
// between the marker and the message (or a marker a taker failed to
// delete) blocks the crash's reprocessing this long at most, and a
// queue deeper than this may hold a crash twice.
const ReprocessMarkTTL = time.Hour

// marks returns the bucket of reprocess markers (PREFIX_reprocess: one
// key per crash waiting to be reprocessed), made on first use.
func (q *JetStream) marks(ctx context.Context) (jetstream.KeyValue, error) {
	q.kvMu.Lock()
	defer q.kvMu.Unlock()
	if q.marksKV != nil {
		return q.marksKV, nil
	}
	var kv jetstream.KeyValue
	bucket := q.cfg.Prefix + "_reprocess"
	err := q.create(ctx, "KV_"+bucket, "$KV."+bucket+".>", func(ctx context.Context) (err error) {
		kv, err = q.js.CreateOrUpdateKeyValue(ctx, jetstream.KeyValueConfig{
			Bucket:      bucket,
			Description: "crashd's reprocess markers: crashes waiting to be reprocessed, queued once",
			TTL:         ReprocessMarkTTL,
			Replicas:    q.cfg.Replicas,
			Storage:     jetstream.FileStorage,
		})
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("queue: reprocess markers: %w", err)
	}
	q.marksKV = kv
	return kv, nil
}

// mark sets id's reprocess marker; ErrQueued when it is set already.
func (q *JetStream) mark(ctx context.Context, id string) error {
	kv, err := q.marks(ctx)
	if err != nil {
		return err
	}
	err = retry(ctx, func(ctx context.Context) error {
		_, err := kv.Create(ctx, id, []byte(time.Now().UTC().Format(time.RFC3339Nano)))
		return err
	})
	if errors.Is(err, jetstream.ErrKeyExists) {
		return fmt.Errorf("queue: reprocess %s: %w", id, ErrQueued)
	}
	if err != nil {
		return fmt.Errorf("queue: reprocess %s: marker: %w", id, err)
	}
	return nil
}

// unmark deletes id's reprocess marker (a worker took the crash, or its
// message could not be published).
func (q *JetStream) unmark(ctx context.Context, id string) error {
	kv, err := q.marks(ctx)
	if err != nil {
		return err
	}
	if err := retry(ctx, func(ctx context.Context) error { return kv.Delete(ctx, id) }); err != nil {
		return fmt.Errorf("queue: reprocess %s: deleting its marker: %w", id, err)
	}
	return nil
}

// taken is what Next does with a delivery before handing it out: a
// crash to reprocess loses its marker. A marker that cannot be deleted
// is left to expire (ReprocessMarkTTL): the crash is walked all the same,
// and a new reprocess of it is refused until then, with ErrQueued.
func (c *consumer) taken(d *delivery) *delivery {
	if d.kind == Reprocess {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		_ = c.q.unmark(ctx, d.id)
	}
	return d
}
