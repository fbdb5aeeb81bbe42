package blob

import (
	"context"
	"fmt"
	"iter"
	"slices"
	"strings"
	"sync"
)

// Mem is a Store in memory, for tests and servers whose crashes need not
// outlive the process. Put is "durable" for the life of the process.
type Mem struct {
	mu sync.RWMutex
	m  map[string][]byte
}

var _ Store = (*Mem)(nil)

// NewMem returns an empty in-memory store.
func NewMem() *Mem { return &Mem{m: map[string][]byte{}} }

// Put implements Store; it keeps a copy of data.
func (s *Mem) Put(ctx context.Context, key string, data []byte) error {
	if err := CheckKey(key); err != nil {
		return err
	}
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("blob put %s: %w", key, err)
	}
	s.mu.Lock()
	s.m[key] = slices.Clone(data)
	s.mu.Unlock()
	return nil
}

// Get implements Store; it returns a copy of the blob.
func (s *Mem) Get(ctx context.Context, key string) ([]byte, error) {
	if err := CheckKey(key); err != nil {
		return nil, err
	}
	s.mu.RLock()
	b, ok := s.m[key]
	s.mu.RUnlock()
	if !ok {
		return nil, fmt.Errorf("blob get %s: %w", key, ErrNotExist)
	}
	return slices.Clone(b), nil
}

// Exists implements Store.
func (s *Mem) Exists(ctx context.Context, key string) (bool, error) {
	if err := CheckKey(key); err != nil {
		return false, err
	}
	s.mu.RLock()
	_, ok := s.m[key]
	s.mu.RUnlock()
	return ok, nil
}

// Delete implements Store.
func (s *Mem) Delete(ctx context.Context, key string) error {
	if err := CheckKey(key); err != nil {
		return err
	}
	s.mu.Lock()
	delete(s.m, key)
	s.mu.Unlock()
	return nil
}

// List implements Store, in the order Dir lists (segment by segment).
func (s *Mem) List(ctx context.Context, prefix string) iter.Seq2[string, error] {
	return func(yield func(string, error) bool) {
		if err := checkPrefix(prefix); err != nil {
			yield("", err)
			return
		}
		s.mu.RLock()
		var keys []string
		for k := range s.m {
			if strings.HasPrefix(k, prefix) {
				keys = append(keys, k)
			}
		}
		s.mu.RUnlock()
		slices.SortFunc(keys, func(a, b string) int {
			return slices.Compare(strings.Split(a, "/"), strings.Split(b, "/"))
		})
		for _, k := range keys {
			if err := ctx.Err(); err != nil {
				yield("", fmt.Errorf("blob list %q: %w", prefix, err))
				return
			}
			if !yield(k, nil) {
				return
			}
		}
	}
}
