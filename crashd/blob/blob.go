// Package blob is the crash server's blob store: raw crashes, dumps and
// processed crashes under slash-separated keys (crashd/crash's storage
// keys). Store is the interface the roles of the server use; Dir keeps blobs
// as files under a root directory, Mem in memory (for tests and
// throw-away servers), ObjectStore in a NATS JetStream object store, S3 on
// an S3-compatible object store (AWS S3, SeaweedFS, MinIO, GCS).
package blob

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"iter"
	"strings"
)

// ErrNotExist is the error (matched with errors.Is) of Get for a key that
// holds no blob. It is fs.ErrNotExist.
var ErrNotExist = fs.ErrNotExist

// Store keeps blobs under keys. Keys are slash-separated paths whose
// segments are made of ASCII letters, digits, '_', '-' and '.', none empty
// or starting with '.' (CheckKey). Implementations are safe for concurrent
// use.
type Store interface {
	// Put stores data under key, replacing any blob there. When Put returns
	// nil the blob is durable: it survives a crash of the process or of
	// the machine (for Dir: written, synced, renamed into place, directory
	// synced). A reader sees the old blob or the new one, never a part.
	Put(ctx context.Context, key string, data []byte) error
	// Get returns the blob under key, or an error matching ErrNotExist.
	Get(ctx context.Context, key string) ([]byte, error)
	// Exists reports whether a blob is stored under key.
	Exists(ctx context.Context, key string) (bool, error)
	// Delete removes the blob under key; deleting a missing key is not an error.
	Delete(ctx context.Context, key string) error
	// List yields the keys that start with prefix (a string prefix, not
	// only whole segments), segment by segment in lexical order; an error
	// ends the sequence. Keys stored while listing may or may not be seen.
	List(ctx context.Context, prefix string) iter.Seq2[string, error]
}

// Lazy is a Store that can also store a blob without making it durable at
// once, for blobs that can be made again from others (the processed crash,
// from the raw crash and its dumps), and make such blobs durable later,
// many at a time, off the writer's path.
type Lazy interface {
	Store
	// PutLazy stores data under key as Put does (a reader sees the old
	// blob or the new one, never a part), but the blob survives only the
	// process being killed, not necessarily a crash of the machine, until
	// the next Sync returns nil.
	PutLazy(ctx context.Context, key string, data []byte) error
	// Sync makes durable every blob PutLazy stored before the call. After
	// an error the blobs are tried again at the next Sync.
	Sync(ctx context.Context) error
}

// ListScansAll reports whether s's List reads the metadata of every blob of
// the store whatever the prefix (ObjectStore: the JetStream object store
// has no listing by prefix). A caller with many prefixes to list (the
// sweep's days) lists their common prefix once on such a store, and each
// prefix on the others (Dir, Mem, S3), which read only what they list.
func ListScansAll(s Store) bool {
	_, ok := s.(interface{ scansAll() })
	return ok
}

// maxKey bounds the length of a key.
const maxKey = 1024

// CheckKey returns an error if key is not a valid key: empty, longer than
// 1024 bytes, with an empty segment or one starting with '.', or with a byte
// other than ASCII letters, digits, '_', '-', '.' and the separator '/'.
// Valid keys never leave a store's root.
func CheckKey(key string) error {
	if key == "" || len(key) > maxKey {
		return fmt.Errorf("blob key %q: empty or longer than %d bytes", key, maxKey)
	}
	for seg := range strings.SplitSeq(key, "/") {
		if seg == "" || seg[0] == '.' {
			return fmt.Errorf("blob key %q: empty segment or one starting with '.'", key)
		}
		for i := 0; i < len(seg); i++ {
			c := seg[i]
			if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '-' || c == '.') {
				return fmt.Errorf("blob key %q: byte %#02x not allowed", key, c)
			}
		}
	}
	return nil
}

// checkPrefix returns an error if prefix could not begin a valid key (the
// empty prefix lists everything).
func checkPrefix(prefix string) error {
	if prefix == "" {
		return nil
	}
	k := prefix
	if strings.HasSuffix(k, "/") {
		k += "x"
	}
	if err := CheckKey(k); err != nil {
		return fmt.Errorf("blob prefix %q: %w", prefix, errors.Unwrap(err))
	}
	return nil
}
