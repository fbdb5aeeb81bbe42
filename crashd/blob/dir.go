package blob

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"iter"
	"os"
	"path"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"time"
)

// Dir is a Store of files under a root directory: the blob of key "a/b/c"
// is the file ROOT/a/b/c. Put writes a temporary file beside the target
// (".tmp-*", never listed), syncs it, renames it into place and syncs the
// directory (and the parents of directories it created), so a blob is
// either wholly there or not at all after a crash. All access goes through
// an os.Root, so neither keys nor symbolic links inside the root reach
// outside it.
//
// Files are created 0600 and directories 0700 (the owner alone reads
// crashes: they hold personal data), or 0640 and 0750 with
// DirOptions.GroupReadable; the process's umask can only narrow them.
type Dir struct {
	root *os.Root
	path string
	// fileMode and dirMode are the permissions of the files and
	// directories Put creates.
	fileMode, dirMode os.FileMode

	mu sync.Mutex
	// pending are the keys PutLazy wrote since the last Sync.
	pending map[string]bool
}

var _ Lazy = (*Dir)(nil)

// DirOptions are the options of OpenDirWith.
type DirOptions struct {
	// GroupReadable makes the files 0640 and the directories 0750 (the
	// owner's group reads the crashes, e.g. a backup or an operator's
	// tools) instead of 0600 and 0700.
	GroupReadable bool
}

// Modes returns the permissions of the files and directories created
// with these options.
func (o DirOptions) Modes() (file, dir os.FileMode) {
	if o.GroupReadable {
		return 0o640, 0o750
	}
	return 0o600, 0o700
}

// OpenDir returns the Dir store rooted at path with the default options
// (files 0600, directories 0700), creating the directory (and its parents)
// if needed.
func OpenDir(path string) (*Dir, error) { return OpenDirWith(path, DirOptions{}) }

// OpenDirWith returns the Dir store rooted at path, creating the directory
// (and its parents) if needed.
func OpenDirWith(path string, o DirOptions) (*Dir, error) {
	fm, dm := o.Modes()
	if err := os.MkdirAll(path, dm); err != nil {
		return nil, fmt.Errorf("blob dir: %w", err)
	}
	r, err := os.OpenRoot(path)
	if err != nil {
		return nil, fmt.Errorf("blob dir: %w", err)
	}
	return &Dir{root: r, path: path, fileMode: fm, dirMode: dm}, nil
}

// TempPrefix starts the names of Put's temporary files (never listed).
const TempPrefix = ".tmp-"

// RemoveTemp removes the temporary files Put left behind (a process killed
// between creating one and renaming it) that were last modified before
// before: a Put running now, whose temporary file is newer, is left alone.
// It walks the whole tree (a store of millions of crashes takes a while:
// run it in the background) and returns how many files it removed.
func (d *Dir) RemoveTemp(ctx context.Context, before time.Time) (int, error) {
	n := 0
	err := fs.WalkDir(d.root.FS(), ".", func(p string, e fs.DirEntry, err error) error {
		if err != nil {
			if errors.Is(err, fs.ErrNotExist) {
				return nil // removed while walking
			}
			return err
		}
		if err := ctx.Err(); err != nil {
			return err
		}
		if e.IsDir() || !e.Type().IsRegular() || !strings.HasPrefix(e.Name(), TempPrefix) {
			return nil
		}
		info, err := e.Info()
		if err != nil || !info.ModTime().Before(before) {
			return nil
		}
		if err := d.root.Remove(filepath.FromSlash(p)); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return fmt.Errorf("remove %s: %w", p, err)
		}
		n++
		return nil
	})
	if err != nil {
		return n, fmt.Errorf("blob temporary files: %w", err)
	}
	return n, nil
}

// Path returns the root directory of the store.
func (d *Dir) Path() string { return d.path }

// Close releases the root directory; the store is unusable afterwards.
func (d *Dir) Close() error { return d.root.Close() }

// Put implements Store: temporary file, write, fsync, rename, directory fsync.
func (d *Dir) Put(ctx context.Context, key string, data []byte) error {
	return d.put(ctx, key, bytes.NewReader(data), true)
}

// PutLazy implements Lazy: temporary file, write, rename, and the key
// remembered for the next Sync.
func (d *Dir) PutLazy(ctx context.Context, key string, data []byte) error {
	if err := d.put(ctx, key, bytes.NewReader(data), false); err != nil {
		return err
	}
	d.mu.Lock()
	if d.pending == nil {
		d.pending = map[string]bool{}
	}
	d.pending[key] = true
	d.mu.Unlock()
	return nil
}

// Sync implements Lazy. On Linux it is one syncfs(2) of the store's file
// system; elsewhere every file PutLazy wrote since the last Sync is
// fsynced, then each of their directories (and their parents, which may
// have been created on the way) once.
func (d *Dir) Sync(ctx context.Context) error {
	d.mu.Lock()
	keys := d.pending
	d.pending = nil
	d.mu.Unlock()
	if len(keys) == 0 {
		return nil
	}
	if done, err := d.syncAll(); done && !perFileSync {
		if err != nil {
			d.repend(keys)
		}
		return err
	}
	dirs := map[string]bool{}
	var first error
	for key := range keys {
		if err := ctx.Err(); err != nil {
			first = err
			break
		}
		for dir := path.Dir(key); ; dir = path.Dir(dir) {
			dirs[dir] = true
			if dir == "." {
				break
			}
		}
		f, err := d.root.OpenFile(filepath.FromSlash(key), os.O_RDONLY, 0)
		if errors.Is(err, fs.ErrNotExist) {
			continue // replaced or deleted since
		}
		if err == nil {
			err = f.Sync()
			if cerr := f.Close(); err == nil {
				err = cerr
			}
		}
		if err != nil && first == nil {
			first = fmt.Errorf("blob sync %s: %w", key, err)
		}
	}
	if first == nil {
		for dir := range dirs {
			if err := d.syncDir(dir); err != nil && !errors.Is(err, fs.ErrNotExist) && first == nil {
				first = fmt.Errorf("blob sync: %w", err)
			}
		}
	}
	if first != nil {
		d.repend(keys)
	}
	return first
}

// repend puts keys back among the pending ones: a failed Sync is tried
// again at the next.
func (d *Dir) repend(keys map[string]bool) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.pending == nil {
		d.pending = map[string]bool{}
	}
	for k := range keys {
		d.pending[k] = true
	}
}

// perFileSync makes Sync fsync file by file where it could syncfs (tests).
var perFileSync = false

func (d *Dir) put(ctx context.Context, key string, data io.Reader, durable bool) (err error) {
	if err := CheckKey(key); err != nil {
		return err
	}
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("blob put %s: %w", key, err)
	}
	dir := path.Dir(key)
	// The key's directory opened once as a root of its own: the
	// temporary file's creation and the rename are then one system call
	// each, where through d.root every one walks the whole path again
	// (an openat per directory: half of the CPU of a Put).
	sub, created, err := d.openDir(dir)
	if err != nil {
		return fmt.Errorf("blob put %s: %w", key, err)
	}
	if sub != d.root {
		defer sub.Close()
	}
	var rnd [8]byte
	_, _ = rand.Read(rnd[:])
	tmp := TempPrefix + hex.EncodeToString(rnd[:])
	f, err := sub.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_EXCL, d.fileMode)
	if err != nil {
		return fmt.Errorf("blob put %s: %w", key, err)
	}
	defer func() {
		if err != nil {
			f.Close()
			_ = sub.Remove(tmp)
		}
	}()
	if _, err = io.Copy(f, data); err != nil {
		return fmt.Errorf("blob put %s: %w", key, err)
	}
	if durable {
		if err = f.Sync(); err != nil {
			return fmt.Errorf("blob put %s: sync: %w", key, err)
		}
	}
	if err = f.Close(); err != nil {
		return fmt.Errorf("blob put %s: %w", key, err)
	}
	if err = sub.Rename(tmp, path.Base(key)); err != nil {
		return fmt.Errorf("blob put %s: %w", key, err)
	}
	if !durable {
		return nil
	}
	// The new name, then every directory created on the way, made durable
	// in their parents (innermost first).
	if err = syncRootDir(sub, dir); err != nil {
		return fmt.Errorf("blob put %s: %w", key, err)
	}
	for i := len(created) - 1; i >= 0; i-- {
		if err = d.syncDir(path.Dir(created[i])); err != nil {
			return fmt.Errorf("blob put %s: %w", key, err)
		}
	}
	return nil
}

// openDir opens dir under the root as a root of its own (the root itself
// for "."), creating it and its missing parents first if needed; created
// are the directories it made, outermost first.
func (d *Dir) openDir(dir string) (sub *os.Root, created []string, err error) {
	if dir == "." {
		return d.root, nil, nil
	}
	sub, err = d.root.OpenRoot(filepath.FromSlash(dir))
	if err == nil {
		return sub, nil, nil
	}
	if created, err = d.mkdirs(dir); err != nil {
		return nil, created, err
	}
	sub, err = d.root.OpenRoot(filepath.FromSlash(dir))
	return sub, created, err
}

// syncRootDir fsyncs the directory of root r (dir names it in errors);
// not on Windows, as syncDir.
func syncRootDir(r *os.Root, dir string) error {
	if runtime.GOOS == "windows" {
		return nil
	}
	f, err := r.Open(".")
	if err != nil {
		return fmt.Errorf("sync directory %s: %w", dir, err)
	}
	err = f.Sync()
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("sync directory %s: %w", dir, err)
	}
	return nil
}

// mkdirs creates dir and its missing parents under the root, returning the
// directories it created, outermost first.
func (d *Dir) mkdirs(dir string) ([]string, error) {
	if dir == "." {
		return nil, nil
	}
	if st, err := d.root.Stat(filepath.FromSlash(dir)); err == nil && st.IsDir() {
		return nil, nil
	}
	var created []string
	segs := strings.Split(dir, "/")
	for i := range segs {
		p := strings.Join(segs[:i+1], "/")
		err := d.root.Mkdir(filepath.FromSlash(p), d.dirMode)
		switch {
		case err == nil:
			created = append(created, p)
		case errors.Is(err, fs.ErrExist):
		default:
			return created, err
		}
	}
	return created, nil
}

// syncDir fsyncs a directory under the root ("." for the root itself).
// Windows cannot sync directories; there the rename is as durable as NTFS makes it.
func (d *Dir) syncDir(dir string) error {
	if runtime.GOOS == "windows" {
		return nil
	}
	f, err := d.root.Open(filepath.FromSlash(dir))
	if err != nil {
		return err
	}
	err = f.Sync()
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("sync directory %s: %w", dir, err)
	}
	return nil
}

// Get implements Store.
func (d *Dir) Get(ctx context.Context, key string) ([]byte, error) {
	if err := CheckKey(key); err != nil {
		return nil, err
	}
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("blob get %s: %w", key, err)
	}
	b, err := d.root.ReadFile(filepath.FromSlash(key))
	if err != nil {
		return nil, fmt.Errorf("blob get %s: %w", key, err)
	}
	return b, nil
}

// Exists implements Store.
func (d *Dir) Exists(ctx context.Context, key string) (bool, error) {
	if err := CheckKey(key); err != nil {
		return false, err
	}
	st, err := d.root.Stat(filepath.FromSlash(key))
	switch {
	case err == nil:
		return st.Mode().IsRegular(), nil
	case errors.Is(err, fs.ErrNotExist):
		return false, nil
	default:
		return false, fmt.Errorf("blob exists %s: %w", key, err)
	}
}

// Delete implements Store.
func (d *Dir) Delete(ctx context.Context, key string) error {
	if err := CheckKey(key); err != nil {
		return err
	}
	if err := d.root.Remove(filepath.FromSlash(key)); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("blob delete %s: %w", key, err)
	}
	return nil
}

// List implements Store, walking the directory tree below the prefix's last
// complete segment.
func (d *Dir) List(ctx context.Context, prefix string) iter.Seq2[string, error] {
	return func(yield func(string, error) bool) {
		if err := checkPrefix(prefix); err != nil {
			yield("", err)
			return
		}
		base := "."
		if i := strings.LastIndexByte(prefix, '/'); i >= 0 {
			base = prefix[:i]
		}
		if st, err := d.root.Stat(filepath.FromSlash(base)); err != nil || !st.IsDir() {
			return // nothing under the prefix
		}
		stop := errors.New("stop")
		err := fs.WalkDir(d.root.FS(), base, func(p string, e fs.DirEntry, err error) error {
			if err != nil {
				if errors.Is(err, fs.ErrNotExist) {
					return nil // removed while walking
				}
				return err
			}
			if err := ctx.Err(); err != nil {
				return err
			}
			if p != base && strings.HasPrefix(e.Name(), ".") {
				if e.IsDir() {
					return fs.SkipDir
				}
				return nil
			}
			if e.IsDir() {
				// Skip directories that cannot hold keys with the prefix.
				if p != "." && !strings.HasPrefix(p+"/", prefix) && !strings.HasPrefix(prefix, p+"/") {
					return fs.SkipDir
				}
				return nil
			}
			if !e.Type().IsRegular() || !strings.HasPrefix(p, prefix) {
				return nil
			}
			if !yield(p, nil) {
				return stop
			}
			return nil
		})
		if err != nil && err != stop {
			yield("", fmt.Errorf("blob list %q: %w", prefix, err))
		}
	}
}
