package symserver

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/gobreakpad/gobreakpad/crashd/auth"
	"github.com/gobreakpad/gobreakpad/crashd/blob"
	"github.com/gobreakpad/gobreakpad/symstore"
)

// Complete is the body of a sym-upload-v2 complete request: the module
// the uploaded file is for and its type (BREAKPAD, ELF, PE, MACHO, DSYM,
// PDB: sym_upload's -t, upper-cased by it).
type Complete struct {
	DebugFile, DebugID, Type string
}

// maxCompleteBody bounds a complete request's body.
const maxCompleteBody = 64 << 10

// ParseComplete reads a complete request's body leniently: JSON, or the
// JavaScript-like text Breakpad's Linux client writes (keys unquoted:
// `{ symbol_id: {debug_file: "f", debug_id: "ID" }, symbol_upload_type:
// "BREAKPAD" }`, sent as Content-Type "application/son"); the protocol
// text's camelCase names (debugFile, debugId) are taken too.
func ParseComplete(b []byte) (Complete, error) {
	var c Complete
	var v map[string]any
	if err := json.Unmarshal(b, &v); err != nil {
		q, qerr := quoteKeys(b)
		if qerr != nil {
			return c, qerr
		}
		if err := json.Unmarshal(q, &v); err != nil {
			return c, fmt.Errorf("complete request body: %w", err)
		}
	}
	str := func(m map[string]any, names ...string) string {
		for _, n := range names {
			if s, ok := m[n].(string); ok {
				return s
			}
		}
		return ""
	}
	id, _ := v["symbol_id"].(map[string]any)
	if id == nil {
		id, _ = v["symbolId"].(map[string]any)
	}
	if id == nil {
		return c, errors.New("complete request body: no symbol_id object")
	}
	c.DebugFile = str(id, "debug_file", "debugFile")
	c.DebugID = str(id, "debug_id", "debugId")
	c.Type = strings.ToUpper(str(v, "symbol_upload_type", "symbolUploadType"))
	if c.DebugFile == "" || c.DebugID == "" {
		return c, errors.New("complete request body: symbol_id without debug_file and debug_id")
	}
	return c, nil
}

// quoteKeys turns JavaScript-style object text with bare keys into JSON:
// every identifier outside a string that is not true, false or null gets
// quotes. Strings are copied as they are.
func quoteKeys(b []byte) ([]byte, error) {
	out := make([]byte, 0, len(b)+32)
	for i := 0; i < len(b); {
		c := b[i]
		switch {
		case c == '"':
			j := i + 1
			for ; j < len(b) && b[j] != '"'; j++ {
				if b[j] == '\\' {
					j++
				}
			}
			if j >= len(b) {
				return nil, errors.New("complete request body: unterminated string")
			}
			out = append(out, b[i:j+1]...)
			i = j + 1
		case c == '_' || c == '$' || 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z':
			j := i
			for j < len(b) && (b[j] == '_' || b[j] == '$' || 'a' <= b[j] && b[j] <= 'z' || 'A' <= b[j] && b[j] <= 'Z' || '0' <= b[j] && b[j] <= '9') {
				j++
			}
			switch w := string(b[i:j]); w {
			case "true", "false", "null":
				out = append(out, w...)
			default:
				out = append(out, '"')
				out = append(out, w...)
				out = append(out, '"')
			}
			i = j
		default:
			out = append(out, c)
			i++
		}
	}
	return out, nil
}

// v2 serves the sym-upload-v2 routes under /v1/.
func (s *Server) v2(w http.ResponseWriter, r *http.Request) {
	p := r.URL.Path
	switch {
	case strings.HasPrefix(p, "/v1/symbols/") && strings.HasSuffix(p, ":checkStatus"):
		if r.Method != http.MethodGet && r.Method != http.MethodHead {
			s.notAllowed(w, "GET")
			return
		}
		s.checkStatus(w, r, strings.TrimSuffix(strings.TrimPrefix(p, "/v1/symbols/"), ":checkStatus"))
	case p == "/v1/uploads:create":
		if r.Method != http.MethodPost {
			s.notAllowed(w, "POST")
			return
		}
		s.create(w, r)
	case strings.HasPrefix(p, "/v1/uploads/") && strings.HasSuffix(p, ":complete"):
		if r.Method != http.MethodPost {
			s.notAllowed(w, "POST")
			return
		}
		s.complete(w, r, strings.TrimSuffix(strings.TrimPrefix(p, "/v1/uploads/"), ":complete"))
	case strings.HasPrefix(p, "/v1/uploads/"):
		if r.Method != http.MethodPut {
			s.notAllowed(w, "PUT")
			return
		}
		s.put(w, r, strings.TrimPrefix(p, "/v1/uploads/"))
	default:
		writeJSON(w, http.StatusNotFound, map[string]any{"error": map[string]any{"code": 404, "message": "no such sym-upload-v2 operation"}})
	}
}

func (s *Server) notAllowed(w http.ResponseWriter, allow string) {
	w.Header().Set("Allow", allow)
	writeJSON(w, http.StatusMethodNotAllowed, map[string]any{"error": map[string]any{"code": 405, "message": "method not allowed"}})
}

// checkStatus answers whether the store has a module's .sym:
// {"status": "FOUND"} or {"status": "MISSING"}.
func (s *Server) checkStatus(w http.ResponseWriter, r *http.Request, rest string) {
	if _, err := s.authorize(r, auth.ScopeUpload, false); err != nil {
		s.fail(w, r, err, true)
		return
	}
	i := strings.LastIndexByte(rest, '/')
	if i < 0 {
		s.fail(w, r, badUpload("checkStatus: want /v1/symbols/DEBUG_FILE/DEBUG_ID:checkStatus"), true)
		return
	}
	file, id := rest[:i], normID(rest[i+1:])
	if err := checkNames(file, id); err != nil {
		s.fail(w, r, badUpload("checkStatus: %v", err), true)
		return
	}
	path, err := symstore.BreakpadFile(s.cfg.Dir, file, id, ".sym")
	if err != nil {
		s.fail(w, r, badUpload("checkStatus: %v", err), true)
		return
	}
	status := "MISSING"
	if s.cfg.Symbols != nil {
		ok, err := s.cfg.Symbols.Exists(r.Context(), file, id)
		if err != nil {
			s.fail(w, r, &uploadError{http.StatusInternalServerError, fmt.Errorf("checkStatus: %w", err)}, true)
			return
		}
		if ok {
			status = "FOUND"
		}
	} else if st, err := os.Stat(path); err == nil && st.Mode().IsRegular() {
		status = "FOUND"
	}
	writeJSON(w, http.StatusOK, map[string]string{"status": status})
}

// checkNames checks a debug file's base name and a debug identifier from a
// request with the one safe-name rule.
func checkNames(file, id string) error {
	if err := symstore.CheckName(file); err != nil {
		return fmt.Errorf("debug file: %w", err)
	}
	if err := symstore.CheckName(id); err != nil {
		return fmt.Errorf("debug identifier: %w", err)
	}
	return nil
}

// create answers a new upload key and the URL to PUT the file to. The key
// is recorded in Config.Uploads (the blob store several collector
// processes share), so the PUT and the complete may reach another
// process.
func (s *Server) create(w http.ResponseWriter, r *http.Request) {
	if _, err := s.authorize(r, auth.ScopeUpload, false); err != nil {
		s.fail(w, r, err, true)
		return
	}
	var b [16]byte
	if _, err := rand.Read(b[:]); err != nil {
		s.fail(w, r, &uploadError{http.StatusInternalServerError, err}, true)
		return
	}
	key := hex.EncodeToString(b[:])
	live, err := s.sweepKeys(r.Context())
	if err != nil {
		s.fail(w, r, &uploadError{http.StatusInternalServerError, fmt.Errorf("upload keys: %w", err)}, true)
		return
	}
	if live >= maxPending {
		s.fail(w, r, &uploadError{http.StatusServiceUnavailable, errors.New("too many uploads in progress")}, true)
		return
	}
	rec, _ := json.Marshal(pendingUpload{Created: time.Now().UTC()})
	if err := s.cfg.Uploads.Put(r.Context(), uploadKeyPrefix+key, rec); err != nil {
		s.fail(w, r, &uploadError{http.StatusInternalServerError, fmt.Errorf("upload key: %w", err)}, true)
		return
	}
	s.mu.Lock()
	s.live++
	s.mu.Unlock()
	scheme := "http"
	if r.TLS != nil {
		scheme = "https"
	}
	writeJSON(w, http.StatusOK, map[string]string{
		"uploadUrl": scheme + "://" + r.Host + "/v1/uploads/" + key,
		"uploadKey": key,
	})
}

// uploadKeyPrefix is where the v2 upload keys live in Config.Uploads:
// one blob per key, its pendingUpload.
const uploadKeyPrefix = "symserver/v2_uploads/"

// pendingFilePrefix is where a v2 upload's file waits for its complete on
// the blob store (Config.Symbols), under its key.
const pendingFilePrefix = "symserver/v2_files/"

// pendingUpload is the record of a v2 upload key.
type pendingUpload struct {
	Created time.Time `json:"created"`
}

// sweepInterval is how often a process lists the upload keys to delete
// the expired ones (and the files PUT for them) and count the live ones.
const sweepInterval = time.Minute

// sweepKeys returns about how many upload keys are live, listing them
// (and deleting the expired) at most every sweepInterval, or when the
// count reached maxPending.
func (s *Server) sweepKeys(ctx context.Context) (int, error) {
	s.mu.Lock()
	if time.Since(s.lastSweep) < sweepInterval && s.live < maxPending {
		n := s.live
		s.mu.Unlock()
		return n, nil
	}
	s.lastSweep = time.Now()
	s.mu.Unlock()
	live := 0
	seen := map[string]bool{}
	for k, err := range s.cfg.Uploads.List(ctx, uploadKeyPrefix) {
		if err != nil {
			return 0, err
		}
		key := strings.TrimPrefix(k, uploadKeyPrefix)
		if _, ok, err := s.pendingKey(ctx, key); err == nil && !ok {
			// Expired or unreadable: its file too.
			_ = s.cfg.Uploads.Delete(ctx, k)
			if validKey(key) {
				os.Remove(s.pendingPath(key))
				if s.cfg.Symbols != nil {
					_ = s.cfg.Symbols.Blobs.Delete(ctx, pendingFilePrefix+key)
				}
			}
			continue
		}
		live++
		seen[key] = true
	}
	s.mu.Lock()
	s.live = live
	var gone int64
	for key, n := range s.kept {
		// Files this process received whose key is gone: completed by
		// another process sharing Incoming, or expired.
		if !seen[key] {
			gone += n
			delete(s.kept, key)
			os.Remove(s.pendingPath(key))
		}
	}
	s.mu.Unlock()
	s.disk.Release(gone, false)
	return live, nil
}

// validKey reports whether key has the form of an upload key (32 hex
// digits): it names a blob and a file, so nothing else may pass.
func validKey(key string) bool {
	if len(key) != 32 {
		return false
	}
	_, err := hex.DecodeString(key)
	return err == nil && strings.ToLower(key) == key
}

func (s *Server) pendingPath(key string) string {
	return filepath.Join(s.cfg.Incoming, "v2-"+key)
}

// pendingKey reads the record of an upload key: ok is false for a key
// that is not live (unknown, malformed or expired).
func (s *Server) pendingKey(ctx context.Context, key string) (pendingUpload, bool, error) {
	var p pendingUpload
	if !validKey(key) {
		return p, false, nil
	}
	b, err := s.cfg.Uploads.Get(ctx, uploadKeyPrefix+key)
	if errors.Is(err, blob.ErrNotExist) {
		return p, false, nil
	}
	if err != nil {
		return p, false, err
	}
	if json.Unmarshal(b, &p) != nil || time.Since(p.Created) > pendingTTL {
		return p, false, nil
	}
	return p, true, nil
}

// checkKey answers a request for an upload key that is not live (404) or
// that could not be looked up (500); it returns true when key is live.
func (s *Server) checkKey(w http.ResponseWriter, r *http.Request, key string) bool {
	_, ok, err := s.pendingKey(r.Context(), key)
	switch {
	case err != nil:
		s.fail(w, r, &uploadError{http.StatusInternalServerError, fmt.Errorf("upload key: %w", err)}, true)
	case !ok:
		s.fail(w, r, &uploadError{http.StatusNotFound, errors.New("unknown or expired upload key")}, true)
	}
	return ok && err == nil
}

// put takes the file of an upload key (the key is the capability, as the
// signed URL of Google's service): exactly 200, no body, when received.
// The file is kept in Incoming under the key's name until the complete
// request, which any process sharing Incoming may serve.
func (s *Server) put(w http.ResponseWriter, r *http.Request, key string) {
	if !s.checkKey(w, r, key) {
		return
	}
	u, err := s.begin(r.Context())
	if err != nil {
		s.fail(w, r, err, true)
		return
	}
	defer u.done()
	tmp, err := s.receive(u, r.Body)
	if err != nil {
		s.fail(w, r, err, true)
		return
	}
	if s.cfg.Symbols != nil {
		// Any process may serve the complete: the file waits on the
		// blob store.
		err := blob.PutFile(r.Context(), s.cfg.Symbols.Blobs, pendingFilePrefix+key, tmp)
		os.Remove(tmp)
		if err != nil {
			s.fail(w, r, &uploadError{http.StatusInternalServerError, fmt.Errorf("upload file: %w", err)}, true)
			return
		}
		w.WriteHeader(http.StatusOK)
		return
	}
	if err := os.Rename(tmp, s.pendingPath(key)); err != nil {
		os.Remove(tmp)
		s.fail(w, r, &uploadError{http.StatusInternalServerError, err}, true)
		return
	}
	// The file waits for its complete: its spool disk stays taken until
	// it is claimed or its key expires.
	s.keep(key, u.disk.Keep(u.disk.Bytes()))
	w.WriteHeader(http.StatusOK)
}

// keep records the spool disk n held by the file waiting for key (a PUT
// again replaces the file: the old one's is given back).
func (s *Server) keep(key string, n int64) {
	s.mu.Lock()
	old := s.kept[key]
	s.kept[key] = n
	s.mu.Unlock()
	s.disk.Release(old, false)
}

// unkeep returns (and forgets) the spool disk held by the file waiting for
// key: 0 when this process did not receive it.
func (s *Server) unkeep(key string) int64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	n := s.kept[key]
	delete(s.kept, key)
	return n
}

// complete stores the file PUT for key: {"result": "OK"}, or
// {"result": "DUPLICATE_DATA"} when the store held the same bytes.
func (s *Server) complete(w http.ResponseWriter, r *http.Request, key string) {
	if _, err := s.authorize(r, auth.ScopeUpload, false); err != nil {
		s.fail(w, r, err, true)
		return
	}
	if !s.checkKey(w, r, key) {
		return
	}
	body, err := io.ReadAll(io.LimitReader(r.Body, maxCompleteBody+1))
	if err != nil || len(body) > maxCompleteBody {
		s.fail(w, r, badUpload("complete request body unreadable or over %d bytes", maxCompleteBody), true)
		return
	}
	c, err := ParseComplete(body)
	if err != nil {
		s.fail(w, r, badUpload("%v", err), true)
		return
	}
	if err := checkNames(symstore.BaseName(c.DebugFile), normID(c.DebugID)); err != nil {
		s.fail(w, r, badUpload("complete: %v", err), true)
		return
	}
	u, err := s.begin(r.Context())
	if err != nil {
		s.fail(w, r, err, true)
		return
	}
	defer u.done()
	// The file is claimed by renaming it: of two completes of one key
	// (in any processes sharing Incoming), one gets it.
	path, err := s.claim(r.Context(), u, key)
	if err != nil {
		s.fail(w, r, err, true)
		return
	}
	_ = s.cfg.Uploads.Delete(r.Context(), uploadKeyPrefix+key)
	st, err := s.ingest(r.Context(), u, path, Want{DebugFile: c.DebugFile, DebugID: c.DebugID})
	if err != nil {
		s.fail(w, r, err, true)
		return
	}
	s.stored(r, st)
	result := "OK"
	if st.Duplicate {
		result = "DUPLICATE_DATA"
	}
	writeJSON(w, http.StatusOK, map[string]string{"result": result})
}

// claim takes the file PUT for key for this complete request: it is
// renamed to a name of this request's own, so that no other complete
// (of this process or another) gets it.
//
// With the files on the blob store (Config.Symbols) the file is copied
// here and deleted there: two completes of one key at once may both store
// it (the second a duplicate).
func (s *Server) claim(ctx context.Context, u *upload, key string) (string, error) {
	var b [8]byte
	if _, err := rand.Read(b[:]); err != nil {
		return "", &uploadError{http.StatusInternalServerError, err}
	}
	path := filepath.Join(s.cfg.Incoming, "up-claimed-"+key+"-"+hex.EncodeToString(b[:]))
	if s.cfg.Symbols != nil {
		rc, size, err := blob.Open(ctx, s.cfg.Symbols.Blobs, pendingFilePrefix+key)
		if errors.Is(err, blob.ErrNotExist) {
			return "", badUpload("nothing was uploaded for this key (or it was completed already)")
		}
		if err != nil {
			return "", &uploadError{http.StatusInternalServerError, fmt.Errorf("upload file: %w", err)}
		}
		defer rc.Close()
		if err := u.spool(min(size, s.cfg.MaxUpload)); err != nil {
			return "", err
		}
		f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
		if err != nil {
			return "", &uploadError{http.StatusInternalServerError, err}
		}
		_, err = io.Copy(f, io.LimitReader(rc, s.cfg.MaxUpload))
		if cerr := f.Close(); err == nil {
			err = cerr
		}
		if err != nil {
			os.Remove(path)
			return "", &uploadError{http.StatusInternalServerError, fmt.Errorf("upload file: %w", err)}
		}
		_ = s.cfg.Symbols.Blobs.Delete(ctx, pendingFilePrefix+key)
		return path, nil
	}
	if err := os.Rename(s.pendingPath(key), path); err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return "", badUpload("nothing was uploaded for this key (or it was completed already)")
		}
		return "", &uploadError{http.StatusInternalServerError, err}
	}
	// The file's spool disk, taken by its PUT (in this process), is this
	// request's now: given back when it is done with the file.
	u.disk.Adopt(s.unkeep(key))
	return path, nil
}
