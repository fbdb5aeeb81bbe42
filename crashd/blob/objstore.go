package blob

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"iter"
	"slices"
	"strings"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

// ObjectStore is a Store on a NATS JetStream object store: each blob an
// object named by its key, in a bucket replicated as the cluster's streams
// (R3 on a three-node cluster), so that collectors and processors on
// several machines share the blobs and a node's loss loses none. Put is
// durable when it returns: every chunk and the object's metadata were
// acknowledged by the stream, which on a cluster means stored by a majority
// of its replicas. A reader sees the old object or the new one.
//
// List reads the metadata of every object of the bucket (the object store
// has no listing by prefix): fine for the sweep of crashes stored but never
// queued at the sizes JetStream is meant for (docs/scale.md); an S3 store
// lists by prefix.
type ObjectStore struct {
	obs    jetstream.ObjectStore
	bucket string
	nc     *nats.Conn // for reads the stream's leader answers (leaderHas)
}

var _ Store = (*ObjectStore)(nil)

// OpenObjectStore opens (creating it if needed) the object store bucket on
// js with the given replication. Objects are at most maxObject bytes
// (dumps are at most 25 MiB, the collector's default body limit).
func OpenObjectStore(ctx context.Context, js jetstream.JetStream, bucket string, replicas int) (*ObjectStore, error) {
	if replicas <= 0 {
		replicas = 1
	}
	var obs jetstream.ObjectStore
	err := retry(ctx, func(ctx context.Context) (err error) {
		obs, err = js.CreateOrUpdateObjectStore(ctx, jetstream.ObjectStoreConfig{
			Bucket:      bucket,
			Description: "crashd's blobs: raw crashes, dumps, processed crashes",
			Storage:     jetstream.FileStorage,
			Replicas:    replicas,
			Compression: false,
		})
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("blob object store %s: %w", bucket, err)
	}
	return &ObjectStore{obs: obs, bucket: bucket, nc: js.Conn()}, nil
}

// retry runs f until it succeeds, ctx ends, 30 seconds passed or f's error
// says the object is not there: a cluster that lost a node elects new
// leaders within seconds, and every call of the store can be repeated.
func retry(ctx context.Context, f func(context.Context) error) error {
	deadline := time.Now().Add(30 * time.Second)
	wait := 100 * time.Millisecond
	for {
		rctx, cancel := context.WithTimeout(ctx, 10*time.Second)
		err := f(rctx)
		cancel()
		if err == nil || ctx.Err() != nil || time.Now().After(deadline) ||
			errors.Is(err, jetstream.ErrObjectNotFound) || errors.Is(err, jetstream.ErrNoObjectsFound) {
			return err
		}
		select {
		case <-ctx.Done():
			return err
		case <-time.After(wait):
		}
		wait = min(2*wait, 2*time.Second)
	}
}

// errLagging is a read that found no object where the stream's leader has
// one: the replica that answered has not caught up yet (retried).
var errLagging = errors.New("the replica that answered has not caught up with the stream's leader")

// confirmMissing checks an object store read's "not found" (err) with the
// stream's leader: the object store reads an object's metadata with a
// direct get, which any replica answers, the one of the NATS node the
// client is connected to first, and a replica is behind the leader by the
// writes a majority acknowledged without it (nats-server 2.9 even answers
// direct gets from a restarted node at 90% of its catching up): a crash
// whose Put returned could read as missing on another process, which a
// processor took as "no raw crash in the store" and failed the crash for
// good (TestObjectStoreLaggingReplica: 73 of 300 blobs read through
// another node just after their Put). A "not found" the leader
// contradicts is errLagging; other errors are returned as they are.
func (s *ObjectStore) confirmMissing(ctx context.Context, key string, err error) error {
	if !errors.Is(err, jetstream.ErrObjectNotFound) || s.nc == nil {
		return err
	}
	has, lerr := s.leaderHas(ctx, key)
	if lerr != nil {
		return fmt.Errorf("%w (the stream's leader not asked: %w)", err, lerr)
	}
	if has {
		return errLagging
	}
	return err
}

// leaderHas asks the stream's leader whether it holds the object key (its
// last metadata message, not a deletion): JetStream's message get API
// ($JS.API.STREAM.MSG.GET), which only the leader answers, not the direct
// get of the object store's own calls.
func (s *ObjectStore) leaderHas(ctx context.Context, key string) (bool, error) {
	req, _ := json.Marshal(map[string]string{"last_by_subj": "$O." + s.bucket + ".M." + base64.URLEncoding.EncodeToString([]byte(key))})
	msg, err := s.nc.RequestWithContext(ctx, "$JS.API.STREAM.MSG.GET.OBJ_"+s.bucket, req)
	if err != nil {
		return false, err
	}
	var resp struct {
		Error *struct {
			Code        int    `json:"code"`
			ErrCode     int    `json:"err_code"`
			Description string `json:"description"`
		} `json:"error"`
		Message *struct {
			Data []byte `json:"data"`
		} `json:"message"`
	}
	if err := json.Unmarshal(msg.Data, &resp); err != nil {
		return false, fmt.Errorf("message get: %w", err)
	}
	if resp.Error != nil {
		if resp.Error.ErrCode == int(jetstream.JSErrCodeMessageNotFound) {
			return false, nil
		}
		return false, fmt.Errorf("message get: %d %s", resp.Error.ErrCode, resp.Error.Description)
	}
	if resp.Message == nil {
		return false, errors.New("message get: an answer without a message")
	}
	var info struct {
		Deleted bool `json:"deleted"`
	}
	if err := json.Unmarshal(resp.Message.Data, &info); err != nil {
		return false, fmt.Errorf("object %s: metadata: %w", key, err)
	}
	return !info.Deleted, nil
}

// scansAll marks ObjectStore for ListScansAll.
func (s *ObjectStore) scansAll() {}

// Bucket returns the object store's bucket name.
func (s *ObjectStore) Bucket() string { return s.bucket }

// Put implements Store.
func (s *ObjectStore) Put(ctx context.Context, key string, data []byte) error {
	if err := CheckKey(key); err != nil {
		return err
	}
	if err := retry(ctx, func(ctx context.Context) error {
		_, err := s.obs.PutBytes(ctx, key, data)
		return err
	}); err != nil {
		return fmt.Errorf("blob put %s: %w", key, err)
	}
	return nil
}

// Get implements Store.
func (s *ObjectStore) Get(ctx context.Context, key string) ([]byte, error) {
	if err := CheckKey(key); err != nil {
		return nil, err
	}
	var b []byte
	err := retry(ctx, func(ctx context.Context) (err error) {
		b, err = s.obs.GetBytes(ctx, key)
		return s.confirmMissing(ctx, key, err)
	})
	if errors.Is(err, jetstream.ErrObjectNotFound) {
		return nil, fmt.Errorf("blob get %s: %w", key, ErrNotExist)
	}
	if err != nil {
		return nil, fmt.Errorf("blob get %s: %w", key, err)
	}
	return b, nil
}

// Exists implements Store.
func (s *ObjectStore) Exists(ctx context.Context, key string) (bool, error) {
	if err := CheckKey(key); err != nil {
		return false, err
	}
	err := retry(ctx, func(ctx context.Context) error {
		_, err := s.obs.GetInfo(ctx, key)
		return s.confirmMissing(ctx, key, err)
	})
	if errors.Is(err, jetstream.ErrObjectNotFound) {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("blob exists %s: %w", key, err)
	}
	return true, nil
}

// Delete implements Store.
func (s *ObjectStore) Delete(ctx context.Context, key string) error {
	if err := CheckKey(key); err != nil {
		return err
	}
	err := retry(ctx, func(ctx context.Context) error { return s.obs.Delete(ctx, key) })
	if err != nil && !errors.Is(err, jetstream.ErrObjectNotFound) {
		return fmt.Errorf("blob delete %s: %w", key, err)
	}
	return nil
}

// List implements Store.
func (s *ObjectStore) List(ctx context.Context, prefix string) iter.Seq2[string, error] {
	return func(yield func(string, error) bool) {
		if err := checkPrefix(prefix); err != nil {
			yield("", err)
			return
		}
		var infos []*jetstream.ObjectInfo
		err := retry(ctx, func(ctx context.Context) (err error) {
			infos, err = s.obs.List(ctx)
			return err
		})
		if err != nil && !errors.Is(err, jetstream.ErrNoObjectsFound) {
			yield("", fmt.Errorf("blob list %s: %w", prefix, err))
			return
		}
		var keys []string
		for _, in := range infos {
			if !in.Deleted && strings.HasPrefix(in.Name, prefix) {
				keys = append(keys, in.Name)
			}
		}
		slices.Sort(keys)
		for _, k := range keys {
			if !yield(k, nil) {
				return
			}
		}
	}
}
