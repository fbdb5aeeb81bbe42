package symblob

import (
	"container/list"
	"context"
	"errors"
	"fmt"
	"hash/fnv"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/gobreakpad/gobreakpad/crashd/blob"
	"github.com/gobreakpad/gobreakpad/symbols"
	"github.com/gobreakpad/gobreakpad/symbols/symsrc"
	"github.com/gobreakpad/gobreakpad/symstore"
)

// DefaultMaxBytes bounds a Cache's .sym files when MaxBytes is 0.
const DefaultMaxBytes = 10 << 30

// Cache is a local Breakpad store directory (Dir, NAME/ID/NAME.sym) holding
// copies of the blob store's .sym files, fetched when a walk first needs
// one (Fill, symsrc.Config.Fill), their fast forms installed in FastCache;
// the oldest fetched are deleted past MaxBytes. It holds nothing that is
// not on the blob store: deleting it loses nothing.
type Cache struct {
	Store *Store
	// Dir is the local store; FastCache the symbol chain's cache
	// directory (symsrc.Config.CacheDir), "" for none.
	Dir, FastCache string
	// MaxBytes bounds the .sym files of Dir (0: DefaultMaxBytes); a file
	// bigger than it alone is still fetched.
	MaxBytes int64
	// Timeout bounds one fetch (0: 10 minutes).
	Timeout time.Duration

	locks [32]sync.Mutex

	mu    sync.Mutex
	lru   *list.List // of *entry, oldest first
	files map[string]*list.Element
	total int64
	// gen counts Forgets: a fetch that started before one does not
	// install what may be the replaced file.
	gen uint64
}

type entry struct {
	path string
	size int64
}

// maxFast bounds a fast form read from the blob store.
const maxFast = 4 << 30

// Scan counts the .sym files already in Dir (a restarted process's), the
// oldest first, deleting the oldest past MaxBytes.
func (c *Cache) Scan() error {
	type f struct {
		p string
		n int64
		t time.Time
	}
	var fs []f
	err := filepath.WalkDir(c.Dir, func(p string, d os.DirEntry, err error) error {
		if err != nil {
			if errors.Is(err, os.ErrNotExist) {
				return nil
			}
			return err
		}
		if d.Type().IsRegular() && strings.HasSuffix(p, ".sym") {
			if fi, err := d.Info(); err == nil {
				fs = append(fs, f{p, fi.Size(), fi.ModTime()})
			}
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("symbols cache %s: %w", c.Dir, err)
	}
	// Oldest first.
	slices.SortStableFunc(fs, func(a, b f) int { return a.t.Compare(b.t) })
	for _, x := range fs {
		c.note(x.p, x.n)
	}
	return nil
}

// Note counts a .sym this process wrote into Dir itself (the symbol
// server's upload) under the bound.
func (c *Cache) Note(debugFile, debugID string) {
	p, err := symstore.BreakpadFile(c.Dir, debugFile, debugID, ".sym")
	if err != nil {
		return
	}
	if fi, err := os.Stat(p); err == nil {
		c.note(p, fi.Size())
	}
}

// note adds path to the files counted (as the newest) and deletes the
// oldest past the bound.
func (c *Cache) note(path string, size int64) {
	maxBytes := c.MaxBytes
	if maxBytes <= 0 {
		maxBytes = DefaultMaxBytes
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.lru == nil {
		c.lru, c.files = list.New(), map[string]*list.Element{}
	}
	if e := c.files[path]; e != nil {
		c.total -= e.Value.(*entry).size
		c.lru.Remove(e)
	}
	c.files[path] = c.lru.PushBack(&entry{path, size})
	c.total += size
	for c.total > maxBytes && c.lru.Len() > 1 {
		e := c.lru.Front()
		old := e.Value.(*entry)
		c.lru.Remove(e)
		delete(c.files, old.path)
		c.total -= old.size
		// A walk holding it keeps its mapping; the next one fetches it
		// again.
		os.Remove(old.path)
	}
}

// Bytes returns the size of the .sym files counted in Dir.
func (c *Cache) Bytes() int64 {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.total
}

func (c *Cache) lock(key string) *sync.Mutex {
	h := fnv.New32a()
	h.Write([]byte(key))
	return &c.locks[h.Sum32()%uint32(len(c.locks))]
}

// Forget deletes the local copy of a module's .sym (its symbols were
// replaced on the blob store: the next Fill fetches the new file).
func (c *Cache) Forget(debugFile, debugID string) {
	c.mu.Lock()
	c.gen++
	c.mu.Unlock()
	for _, id := range []string{debugID, strings.ToUpper(debugID)} {
		p, err := symstore.BreakpadFile(c.Dir, debugFile, id, ".sym")
		if err != nil {
			return
		}
		c.mu.Lock()
		if e := c.files[p]; e != nil {
			c.total -= e.Value.(*entry).size
			c.lru.Remove(e)
			delete(c.files, p)
		}
		c.mu.Unlock()
		os.Remove(p)
	}
}

// Fill implements symsrc.Config.Fill: it copies the module's .sym (and its
// fast forms) from the blob store into Dir when Dir lacks it. A module the
// blob store lacks is an error wrapping symbols.ErrNotFound.
func (c *Cache) Fill(m symbols.Module) error {
	name := symstore.BaseName(m.DebugFile)
	if symstore.CheckName(name) != nil || symstore.CheckName(m.DebugID) != nil {
		return fmt.Errorf("%w: %q %q: unusable names", symbols.ErrNotFound, m.DebugFile, m.DebugID)
	}
	dst, err := symstore.BreakpadFile(c.Dir, name, m.DebugID, ".sym")
	if err != nil {
		return fmt.Errorf("%w: %v", symbols.ErrNotFound, err)
	}
	mu := c.lock(dst)
	mu.Lock()
	defer mu.Unlock()
	if exists(dst) {
		return nil
	}
	c.mu.Lock()
	gen := c.gen
	c.mu.Unlock()
	timeout := c.Timeout
	if timeout <= 0 {
		timeout = 10 * time.Minute
	}
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	rc, _, err := c.Store.Open(ctx, name, m.DebugID)
	if errors.Is(err, blob.ErrNotExist) {
		return fmt.Errorf("%w: %s %s not on the blob store", symbols.ErrNotFound, name, m.DebugID)
	}
	if err != nil {
		return fmt.Errorf("symbols from the blob store: %s %s: %w", name, m.DebugID, err)
	}
	n, err := writeAtomic(dst, rc)
	rc.Close()
	if err != nil {
		return fmt.Errorf("symbols from the blob store: %s %s: %w", name, m.DebugID, err)
	}
	c.mu.Lock()
	replaced := c.gen != gen
	c.mu.Unlock()
	if replaced {
		os.Remove(dst)
		return fmt.Errorf("%w: %s %s replaced while fetched", symbols.ErrNotFound, name, m.DebugID)
	}
	c.installFast(ctx, name, m.DebugID, dst)
	c.note(dst, n)
	return nil
}

// installFast fetches the module's fast forms into FastCache, if the blob
// store has them; without them the walk reads the .sym (and writes them).
func (c *Cache) installFast(ctx context.Context, name, id, symPath string) {
	if c.FastCache == "" {
		return
	}
	symcPath, indexPath, err := symsrc.FastFiles(c.FastCache, name, id)
	if err != nil {
		return
	}
	var rs []io.ReadCloser
	defer func() {
		for _, r := range rs {
			r.Close()
		}
	}()
	for _, p := range []string{symcPath, indexPath} {
		k, err := Key(name, id, filepath.Base(p))
		if err != nil {
			return
		}
		r, _, err := blob.Open(ctx, c.Store.Blobs, k)
		if err != nil {
			return
		}
		rs = append(rs, r)
	}
	_ = symsrc.InstallFast(c.FastCache, symPath, name, id, rs[0], rs[1], maxFast)
}

// writeAtomic writes r into a temporary file beside dst and renames it
// into place (a walk never sees a part).
func writeAtomic(dst string, r io.Reader) (int64, error) {
	if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
		return 0, err
	}
	f, err := os.CreateTemp(filepath.Dir(dst), ".fetch-*")
	if err != nil {
		return 0, err
	}
	n, err := io.Copy(f, r)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Chmod(f.Name(), 0o644)
	}
	if err == nil {
		err = os.Rename(f.Name(), dst)
	}
	if err != nil {
		os.Remove(f.Name())
		return 0, err
	}
	return n, nil
}
