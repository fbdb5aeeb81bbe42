// Package symblob keeps crashd's symbol files on its blob store, so that
// any process of a deployment may receive an upload and any processor walk
// with it (docs/scale.md "Symbols on the blob store").
//
// The keys are Breakpad's layout under "symbols/" (Key): a module's .sym at
// symbols/NAME/ID/NAME.sym and its fast forms (symsrc.WriteFast's SymCache
// and unwind index) beside it, under the same names as in a processor's
// cache. Store writes and reads them; Cache is the processors' side, a
// local Breakpad store directory filled from the blob store on demand
// (symsrc.Config.Fill) and bounded in size.
package symblob

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/gobreakpad/gobreakpad/crashd/blob"
	"github.com/gobreakpad/gobreakpad/symbols/symsrc"
	"github.com/gobreakpad/gobreakpad/symstore"
)

// Prefix is the folder of the blob store holding the symbols (beside the
// crashes' v1/).
const Prefix = "symbols/"

// escaped is the folder of modules whose names are not blob keys
// (libstdc++.so.6's '+', a space): symbols/_x/HEX(NAME)/HEX(ID)/HEX(FILE),
// five segments where a plain key has four, so the two never meet.
const escaped = Prefix + "_x/"

// Key returns the blob key of a module's file named file in its Breakpad
// directory (NAME.sym, or a fast form's name): symbols/NAME/ID/FILE. Every
// name passes symstore.CheckName first (the symbol server's one name
// rule); names that are valid but not blob keys are hex-encoded under
// symbols/_x/.
func Key(debugFile, debugID, file string) (string, error) {
	elems, err := symstore.BreakpadPath(debugFile, debugID, ".sym")
	if err != nil {
		return "", err
	}
	elems[2] = file
	for _, e := range elems {
		if err := symstore.CheckName(e); err != nil {
			return "", err
		}
	}
	k := Prefix + strings.Join(elems, "/")
	if blob.CheckKey(k) == nil && elems[0] != "_x" {
		return k, nil
	}
	for i, e := range elems {
		elems[i] = hex.EncodeToString([]byte(e))
	}
	k = escaped + strings.Join(elems, "/")
	if err := blob.CheckKey(k); err != nil {
		// Names near the length bound, doubled.
		return "", fmt.Errorf("symbols of %s %s: %w", debugFile, debugID, err)
	}
	return k, nil
}

// symName is the module's .sym name in its directory (NAME.sym, NAME
// without ".pdb").
func symName(debugFile, debugID string) (string, error) {
	elems, err := symstore.BreakpadPath(debugFile, debugID, ".sym")
	if err != nil {
		return "", err
	}
	return elems[2], nil
}

// SymKey returns the blob key of a module's .sym.
func SymKey(debugFile, debugID string) (string, error) {
	n, err := symName(debugFile, debugID)
	if err != nil {
		return "", err
	}
	return Key(debugFile, debugID, n)
}

// Store is the symbols on a blob store.
type Store struct {
	// Blobs is the deployment's blob store.
	Blobs blob.Store
}

// Put stores the .sym at symPath as the module's, streamed, and then its
// fast forms found in fastCache (symsrc.FastFiles; none when fastCache is
// empty or they are missing). The .sym is durable when Put returns nil.
func (s *Store) Put(ctx context.Context, debugFile, debugID, symPath, fastCache string) error {
	key, err := SymKey(debugFile, debugID)
	if err != nil {
		return err
	}
	// The fast forms first: a reader finding the .sym finds them too
	// (those of an older .sym are refused by their stamp).
	if fastCache != "" {
		symc, index, err := symsrc.FastFiles(fastCache, debugFile, debugID)
		if err == nil && exists(symc) && exists(index) {
			for _, p := range []string{symc, index} {
				k, err := Key(debugFile, debugID, filepath.Base(p))
				if err != nil {
					return err
				}
				if err := blob.PutFile(ctx, s.Blobs, k, p); err != nil {
					return err
				}
			}
		}
	}
	return blob.PutFile(ctx, s.Blobs, key, symPath)
}

func exists(p string) bool {
	fi, err := os.Stat(p)
	return err == nil && fi.Mode().IsRegular()
}

// Open returns a reader of the module's .sym and its size; an error
// matching blob.ErrNotExist when the store has none.
func (s *Store) Open(ctx context.Context, debugFile, debugID string) (io.ReadCloser, int64, error) {
	key, err := SymKey(debugFile, debugID)
	if err != nil {
		return nil, 0, fmt.Errorf("%w: %v", blob.ErrNotExist, err)
	}
	return blob.Open(ctx, s.Blobs, key)
}

// Exists reports whether the store has the module's .sym.
func (s *Store) Exists(ctx context.Context, debugFile, debugID string) (bool, error) {
	key, err := SymKey(debugFile, debugID)
	if err != nil {
		return false, nil
	}
	return s.Blobs.Exists(ctx, key)
}

// Same reports whether the store holds the module's .sym with exactly
// size bytes whose SHA-256 is sum (read back only when the size matches).
func (s *Store) Same(ctx context.Context, debugFile, debugID string, sum [sha256.Size]byte, size int64) (bool, error) {
	rc, n, err := s.Open(ctx, debugFile, debugID)
	if errors.Is(err, blob.ErrNotExist) {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	defer rc.Close()
	if n != size {
		return false, nil
	}
	h := sha256.New()
	if _, err := io.Copy(h, rc); err != nil {
		return false, err
	}
	return [sha256.Size]byte(h.Sum(nil)) == sum, nil
}

// URL returns a presigned URL of the module's .sym valid for expires,
// when the blob store hands such URLs out (blob.Presigner: S3); ok is false
// otherwise.
func (s *Store) URL(ctx context.Context, debugFile, debugID string, expires time.Duration) (u *url.URL, ok bool, err error) {
	p, isP := s.Blobs.(blob.Presigner)
	if !isP {
		return nil, false, nil
	}
	key, err := SymKey(debugFile, debugID)
	if err != nil {
		return nil, false, err
	}
	u, err = p.PresignGet(ctx, key, expires)
	return u, err == nil, err
}
