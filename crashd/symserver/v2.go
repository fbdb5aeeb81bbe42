package symserver

import (
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
	if _, err := s.authorize(r, ScopeUpload, false); err != nil {
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
	if st, err := os.Stat(path); err == nil && st.Mode().IsRegular() {
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

// create answers a new upload key and the URL to PUT the file to.
func (s *Server) create(w http.ResponseWriter, r *http.Request) {
	if _, err := s.authorize(r, ScopeUpload, false); err != nil {
		s.fail(w, r, err, true)
		return
	}
	var b [16]byte
	if _, err := rand.Read(b[:]); err != nil {
		s.fail(w, r, &uploadError{http.StatusInternalServerError, err}, true)
		return
	}
	key := hex.EncodeToString(b[:])
	now := time.Now()
	s.mu.Lock()
	for k, t := range s.pending {
		if now.Sub(t) > pendingTTL {
			delete(s.pending, k)
			os.Remove(s.pendingPath(k))
		}
	}
	full := len(s.pending) >= maxPending
	if !full {
		s.pending[key] = now
	}
	s.mu.Unlock()
	if full {
		s.fail(w, r, &uploadError{http.StatusServiceUnavailable, errors.New("too many uploads in progress")}, true)
		return
	}
	scheme := "http"
	if r.TLS != nil {
		scheme = "https"
	}
	writeJSON(w, http.StatusOK, map[string]string{
		"uploadUrl": scheme + "://" + r.Host + "/v1/uploads/" + key,
		"uploadKey": key,
	})
}

func (s *Server) pendingPath(key string) string {
	return filepath.Join(s.cfg.Incoming, "v2-"+key)
}

// isPending reports whether key is a live upload key.
func (s *Server) isPending(key string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	t, ok := s.pending[key]
	return ok && time.Since(t) <= pendingTTL
}

// put takes the file of an upload key (the key is the capability, as the
// signed URL of Google's service): exactly 200, no body, when received.
func (s *Server) put(w http.ResponseWriter, r *http.Request, key string) {
	if !s.isPending(key) {
		s.fail(w, r, &uploadError{http.StatusNotFound, errors.New("unknown or expired upload key")}, true)
		return
	}
	tmp, err := s.receive(r.Body)
	if err != nil {
		s.fail(w, r, err, true)
		return
	}
	if err := os.Rename(tmp, s.pendingPath(key)); err != nil {
		os.Remove(tmp)
		s.fail(w, r, &uploadError{http.StatusInternalServerError, err}, true)
		return
	}
	w.WriteHeader(http.StatusOK)
}

// complete stores the file PUT for key: {"result": "OK"}, or
// {"result": "DUPLICATE_DATA"} when the store held the same bytes.
func (s *Server) complete(w http.ResponseWriter, r *http.Request, key string) {
	if _, err := s.authorize(r, ScopeUpload, false); err != nil {
		s.fail(w, r, err, true)
		return
	}
	if !s.isPending(key) {
		s.fail(w, r, &uploadError{http.StatusNotFound, errors.New("unknown or expired upload key")}, true)
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
	s.mu.Lock()
	_, ok := s.pending[key]
	delete(s.pending, key)
	s.mu.Unlock()
	if !ok {
		s.fail(w, r, &uploadError{http.StatusNotFound, errors.New("unknown or expired upload key")}, true)
		return
	}
	path := s.pendingPath(key)
	if _, err := os.Stat(path); err != nil {
		s.fail(w, r, badUpload("nothing was uploaded for this key"), true)
		return
	}
	st, err := s.ingest(r.Context(), path, Want{DebugFile: c.DebugFile, DebugID: c.DebugID})
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
