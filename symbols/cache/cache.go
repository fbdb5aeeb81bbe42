// Package cache is the on-disk cache of symbol downloads shared by the
// symbol sources that fetch from servers (package symbols/remote), by every
// process using the same directory.
//
// Files are kept in the layout of the store they came from, so the cache is
// itself a store: Breakpad files as NAME/ID/NAME.sym (a Breakpad symbol path
// for Breakpad's own tools), Microsoft symbol-server files as
// name.pdb/GUIDAGE/name.pdb and name.exe/TIMESTAMPSIZE/name.exe (a downstream
// store), debuginfod files as buildid/BUILDID/debuginfo and
// buildid/BUILDID/executable. Forms converted from a download are kept beside
// it (buildid/BUILDID/debuginfo.sym).
//
// Every file is written to a temporary file in its final directory and
// renamed into place, so a reader (in this process or another) sees the whole
// file or none. Misses are remembered with an empty marker file beside the
// missing file's place, named after the server, for Cache.MissTTL.
//
// Every name becomes a path only after symstore.CheckName accepted it: no
// empty names, "." or "..", separators, NUL or other control bytes, nothing
// over 255 bytes. Nothing is written outside Dir.
package cache

import (
	"bufio"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/gobreakpad/gobreakpad/symstore"
)

// DefaultMissTTL is how long a miss is remembered when Cache.MissTTL is zero.
const DefaultMissTTL = 24 * time.Hour

// ErrBadName is wrapped by errors about names that cannot be a path element:
// symstore.ErrBadName.
var ErrBadName = symstore.ErrBadName

// ErrTooLarge is wrapped by errors about downloads over their size limit.
var ErrTooLarge = errors.New("cache: file too large")

// A Cache is a cache directory.
type Cache struct {
	// Dir is the cache's root directory, created when first written.
	Dir string
	// MissTTL is how long a miss is remembered: zero means DefaultMissTTL,
	// a negative value not at all.
	MissTTL time.Duration
	// TempDir, when set, is where files are written before they are renamed
	// into place (rust-minidump's --symbols-tmp); it should be on Dir's file
	// system. When the rename fails across file systems, the file is copied
	// into a temporary file in its final directory and renamed from there.
	// Empty: the final directory itself.
	TempDir string
}

// DefaultDir returns the default cache directory: gobreakpad in the user's
// cache directory ($XDG_CACHE_HOME or ~/.cache on Linux).
func DefaultDir() (string, error) {
	d, err := os.UserCacheDir()
	if err != nil {
		return "", err
	}
	return filepath.Join(d, "gobreakpad"), nil
}

// DirOr returns dir, cleaned, or when it is empty the default directory
// (DefaultDir), with an error saying how to give one when there is none.
func DirOr(dir string) (string, error) {
	if dir == "" {
		d, err := DefaultDir()
		if err != nil {
			return "", fmt.Errorf("symbol cache: %w (give one with --symbols-cache)", err)
		}
		dir = d
	}
	return filepath.Clean(dir), nil
}

// Path returns the path in the cache of the file named by elems, each
// checked with symstore.CheckName.
func (c *Cache) Path(elems ...string) (string, error) {
	if len(elems) == 0 {
		return "", fmt.Errorf("%w: no name", ErrBadName)
	}
	for _, e := range elems {
		if err := symstore.CheckName(e); err != nil {
			return "", err
		}
	}
	p := filepath.Join(append([]string{c.Dir}, elems...)...)
	if rel, err := filepath.Rel(c.Dir, p); err != nil || !filepath.IsLocal(rel) {
		return "", fmt.Errorf("%w: %q leaves the cache", ErrBadName, p)
	}
	return p, nil
}

// Lookup returns the path of the cached file named by elems, and whether it
// exists.
func (c *Cache) Lookup(elems ...string) (string, bool) {
	p, err := c.Path(elems...)
	if err != nil {
		return "", false
	}
	st, err := os.Stat(p)
	return p, err == nil && st.Mode().IsRegular()
}

// Write stores what r yields as the file named by elems, atomically, and
// returns its path. More than limit bytes (when limit > 0) is an error
// wrapping ErrTooLarge, and nothing is stored.
func (c *Cache) Write(r io.Reader, limit int64, elems ...string) (string, error) {
	return c.WriteFunc(func(w io.Writer) error {
		src := r
		if limit > 0 {
			src = io.LimitReader(r, limit+1)
		}
		n, err := io.Copy(w, src)
		if err == nil && limit > 0 && n > limit {
			err = fmt.Errorf("%w: more than %d bytes", ErrTooLarge, limit)
		}
		return err
	}, elems...)
}

// WriteFunc stores the file named by elems, written by fill into a
// temporary file in its final directory (buffered) then renamed into place,
// and returns its path. When fill fails nothing is stored.
func (c *Cache) WriteFunc(fill func(w io.Writer) error, elems ...string) (string, error) {
	p, err := c.Path(elems...)
	if err != nil {
		return "", err
	}
	dir := filepath.Dir(p)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", err
	}
	tmpDir := dir
	if c.TempDir != "" {
		if err := os.MkdirAll(c.TempDir, 0o755); err != nil {
			return "", err
		}
		tmpDir = c.TempDir
	}
	tmp, err := os.CreateTemp(tmpDir, ".tmp-"+filepath.Base(p)+"-*")
	if err != nil {
		return "", err
	}
	defer os.Remove(tmp.Name()) // after the rename, a no-op
	bw := bufio.NewWriterSize(tmp, 256<<10)
	err = fill(bw)
	if err == nil {
		err = bw.Flush()
	}
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return "", fmt.Errorf("%s: %w", p, err)
	}
	if err := os.Chmod(tmp.Name(), 0o644); err != nil {
		return "", err
	}
	if err := os.Rename(tmp.Name(), p); err != nil {
		if tmpDir == dir {
			return "", err
		}
		// Another file system: copy into the final directory, then rename.
		return c.copyInto(tmp.Name(), elems)
	}
	return p, nil
}

// copyInto copies the file at src into the cache as elems, through a
// temporary file in its final directory.
func (c *Cache) copyInto(src string, elems []string) (string, error) {
	in, err := os.Open(src)
	if err != nil {
		return "", err
	}
	defer in.Close()
	return (&Cache{Dir: c.Dir, MissTTL: c.MissTTL}).WriteFunc(func(w io.Writer) error {
		_, err := io.Copy(w, in)
		return err
	}, elems...)
}

// missName is the marker of a miss of the file named by elems at server.
func missElems(server string, elems []string) []string {
	h := sha256.Sum256([]byte(server))
	out := append([]string(nil), elems...)
	out[len(out)-1] += ".miss-" + hex.EncodeToString(h[:6])
	return out
}

// Missed reports whether server was found not to have the file named by
// elems less than MissTTL ago.
func (c *Cache) Missed(server string, elems ...string) bool {
	ttl := c.MissTTL
	if ttl == 0 {
		ttl = DefaultMissTTL
	}
	if ttl < 0 || len(elems) == 0 {
		return false
	}
	p, err := c.Path(missElems(server, elems)...)
	if err != nil {
		return false
	}
	st, err := os.Stat(p)
	return err == nil && time.Since(st.ModTime()) < ttl
}

// RememberMiss records that server does not have the file named by elems.
func (c *Cache) RememberMiss(server string, elems ...string) error {
	if c.MissTTL < 0 || len(elems) == 0 {
		return nil
	}
	_, err := c.Write(strings.NewReader(""), 0, missElems(server, elems)...)
	return err
}
