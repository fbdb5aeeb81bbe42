// Package symserver is crashd's symbol server: it takes symbol files the
// way build systems already upload them and serves them in the layout every
// walker downloads from.
//
// Uploads:
//
//   - Breakpad's "sym-upload-v1": POST /symbols/upload, a multipart form as
//     Breakpad's Linux/Mac sym_upload and Windows symupload send it
//     (symbol_file, debug_file, debug_identifier, code_file, os, cpu,
//     version, product), answered 200.
//   - Breakpad's "sym-upload-v2" (docs/sym_upload_v2_protocol.md, and what
//     src/common/linux/symbol_collector_client.cc really parses):
//     GET /v1/symbols/{debug_file}/{debug_id}:checkStatus, POST
//     /v1/uploads:create, PUT of the file to the returned uploadUrl, POST
//     /v1/uploads/{key}:complete (whose body the Linux client writes with
//     unquoted keys: parsed leniently, see ParseComplete).
//   - Mozilla Tecken's: POST /upload/ with Auth-Token, a multipart form
//     whose first file is a zip of MODULE/ID/FILE.sym members (ZipMembers
//     checks them all before anything is written), answered 201 with the
//     upload's JSON; unchanged files are skipped.
//
// A native debug file the symbol formats' table (symbols/formats) can read
// (an ELF file with its debug information, a PDB, a PE) or a Mach-O file is
// converted into a .sym with our dump_syms code, and so is a zip of files
// that belong together (an ELF and its debug file, a PE and its PDB, a
// Mach-O and its dSYM: BundleMembers); a .sym is checked against the names
// the upload gives.
//
// Downloads: GET and HEAD /symbols/{debug_file}/{debug_id}/{name}.sym, the
// Breakpad HTTP layout minidump_stackwalk --symbols-url, rust-minidump and
// Breakpad's HTTP supplier read (gzip when asked for).
//
// The files live in a Breakpad-layout directory (Config.Dir) whose paths
// come from symstore alone (BreakpadFile, after CheckName of every name from
// an upload), so crashd's processor reads the same directory as a local
// symbol store. Each new or changed module is reported to Config.OnSymbols
// (crashd reprocesses the crashes that missed it).
//
// With Config.Symbols (crashd's blob store shared by every process: S3 or
// the NATS object store) the store is on the blob store in the same layout
// under symbols/ (crashd/symblob), written before the upload is answered,
// so any process may take an upload, serve checkStatus and downloads (or
// redirect them to a presigned URL, Config.Redirect), and complete a v2
// upload whose file another process received.
package symserver

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"hash/fnv"
	"log/slog"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/gobreakpad/gobreakpad/crashd/auth"
	"github.com/gobreakpad/gobreakpad/crashd/blob"
	"github.com/gobreakpad/gobreakpad/crashd/budget"
	"github.com/gobreakpad/gobreakpad/crashd/symblob"
)

// DefaultMaxUpload bounds an uploaded file when Config.MaxUpload is 0.
const DefaultMaxUpload = 2 << 30

// Config configures the symbol server.
type Config struct {
	// Dir is the Breakpad-layout symbol store the server writes and
	// serves (NAME/ID/NAME.sym).
	Dir string `json:"dir"`
	// Incoming holds uploads in progress; it must be on Dir's file system.
	// Default: Dir + ".incoming".
	Incoming string `json:"incoming"`
	// Tokens are the API tokens (Auth-Token header, or ?key=): those
	// with auth.ScopeUpload (or admin) may upload.
	Tokens []auth.Token `json:"tokens"`
	// Auth, when set, resolves the requests' tokens instead of Tokens
	// (crashd's one authenticator: the configuration's tokens and those
	// of its token store).
	Auth *auth.Authenticator `json:"-"`
	// OpenV1 lets sym-upload-v1 uploads in without a token (Breakpad's v1
	// clients cannot send headers; a ?key= on their URL works too).
	OpenV1 bool `json:"open_v1"`
	// MaxUpload bounds one uploaded file in bytes (0: DefaultMaxUpload).
	MaxUpload int64 `json:"max_upload"`
	// MaxSpool bounds the bytes of all uploads' files in Incoming
	// together (received files, zip members, conversions, v2 files
	// waiting for their complete; 0: DefaultMaxSpool times MaxUpload; at
	// least MaxUpload). An upload that would pass it within the budget's
	// wait is answered 503 with Retry-After.
	MaxSpool int64 `json:"max_spool"`
	// Budget is the uploads' budget shared with the collector (crashd's
	// max_inflight_bytes, max_uploads, budget_wait): each upload takes a
	// slot and the memory of its phases from it, the symbol uploads at
	// most half of it together (budget.go). Nil: a budget of the
	// defaults, the server's own.
	Budget *budget.Budget `json:"-"`
	// FastCache, when set, is the processor's symbol cache directory
	// (symsrc.Config.CacheDir, --symbols-cache): each stored .sym's fast
	// forms (SymCache and unwind index, symsrc.WriteFast) are written
	// there before the upload is answered, so no walk parses the .sym.
	FastCache string `json:"-"`
	// OnSymbols, when set, is called after a module's symbols were stored
	// (new or changed, not for a duplicate), with the debug file and
	// identifier of its MODULE line. It runs on the upload's goroutine
	// after the answer's status is decided; make it quick.
	OnSymbols func(ctx context.Context, debugFile, debugID string) `json:"-"`
	// Registerer, when set, receives the server's metrics
	// (crashd_symbols_*).
	Registerer prometheus.Registerer `json:"-"`
	// Uploads keeps the sym-upload-v2 upload keys (under
	// symserver/v2_uploads/): crashd's blob store, which every collector
	// process shares, so that the create, PUT and complete of one upload
	// may reach different processes (which must share Dir and Incoming
	// too). Nil: a store in memory, this process's alone.
	Uploads blob.Store `json:"-"`
	// Symbols, when set, is where the symbols live (crashd's blob store
	// shared by every process, docs/scale.md "Symbols on the blob
	// store"): each stored .sym and its fast forms are put there before
	// the upload is answered, duplicates are found there, checkStatus and
	// downloads answer from it, and a v2 upload's file waits there (under
	// symserver/v2_files/) between its PUT and its complete. Dir is then a
	// cache of this process's. Nil: Dir alone (one machine).
	Symbols *symblob.Store `json:"-"`
	// Catalog, when set with Symbols, records every module stored
	// (crashd's index): downloads and syminfo by code id find the module
	// there, in any process, instead of in the directory beside Dir.
	Catalog Catalog `json:"-"`
	// Redirect, when positive and Symbols' blob store hands out
	// presigned URLs (S3), answers a download with a 302 to such a URL
	// valid that long, as Tecken does, instead of relaying the file.
	Redirect time.Duration `json:"-"`
}

// Server is the symbol server's HTTP handler.
type Server struct {
	cfg   Config
	log   *slog.Logger
	mux   *http.ServeMux
	m     *metrics
	locks [64]sync.Mutex
	mu    sync.Mutex
	// mem is the symbol uploads' share of Config.Budget, disk the spool
	// disk's budget (budget.go).
	mem, disk *budget.Budget
	// kept is the spool disk held by the files of v2 uploads waiting in
	// Incoming for their complete, by key (under mu).
	kept map[string]int64
	// live is about how many v2 upload keys are live (counted at the
	// last sweep of Config.Uploads, plus those created since);
	// lastSweep is that sweep's time.
	live      int
	lastSweep time.Time
}

// pendingTTL is how long a v2 upload key lives; maxPending bounds the keys.
const (
	pendingTTL = time.Hour
	maxPending = 10000
)

// New returns the symbol server over cfg.Dir (created when missing).
func New(cfg Config, log *slog.Logger) (*Server, error) {
	if cfg.Dir == "" {
		return nil, errors.New("symserver: no symbol directory")
	}
	if cfg.Incoming == "" {
		cfg.Incoming = filepath.Clean(cfg.Dir) + ".incoming"
	}
	if cfg.MaxUpload <= 0 {
		cfg.MaxUpload = DefaultMaxUpload
	}
	if cfg.MaxSpool <= 0 {
		cfg.MaxSpool = DefaultMaxSpool * cfg.MaxUpload
	}
	if cfg.MaxSpool < cfg.MaxUpload {
		return nil, fmt.Errorf("symserver: max_spool %d: below max_upload %d", cfg.MaxSpool, cfg.MaxUpload)
	}
	if cfg.Budget == nil {
		cfg.Budget = budget.New(budget.DefaultBytes, budget.DefaultUploads, budget.DefaultWait)
	}
	for _, d := range []string{cfg.Dir, cfg.Incoming} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			return nil, fmt.Errorf("symserver: %w", err)
		}
	}
	// Files left in Incoming by a process that died mid-upload; those of
	// uploads younger than an upload key may be another process's.
	if ents, err := os.ReadDir(cfg.Incoming); err == nil {
		for _, e := range ents {
			if fi, err := e.Info(); err == nil && time.Since(fi.ModTime()) > pendingTTL {
				os.RemoveAll(filepath.Join(cfg.Incoming, e.Name()))
			}
		}
	}
	if cfg.Auth == nil {
		a, err := auth.NewAuthenticator(cfg.Tokens, nil)
		if err != nil {
			return nil, fmt.Errorf("symserver: %w", err)
		}
		cfg.Auth = a
	}
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	m, err := newMetrics(cfg.Registerer)
	if err != nil {
		return nil, fmt.Errorf("symserver: metrics: %w", err)
	}
	if cfg.Uploads == nil {
		cfg.Uploads = blob.NewMem()
	}
	s := &Server{cfg: cfg, log: log, mux: http.NewServeMux(), m: m,
		// Half the uploads' memory and slots at most: the crash uploads
		// always find the rest.
		mem:  cfg.Budget.Share(cfg.Budget.Max()/2, cfg.Budget.MaxUploads()/2),
		disk: budget.New(cfg.MaxSpool, 0, cfg.Budget.Wait()),
		kept: map[string]int64{}}
	s.Register(s.mux)
	return s, nil
}

// Register adds the server's routes to mux: /symbols/ (v1 upload and
// downloads), /v1/ (sym-upload-v2) and /upload/ (Tecken's zip upload).
func (s *Server) Register(mux auth.Mux) {
	mux.HandleFunc("POST /symbols/upload", s.uploadV1)
	mux.HandleFunc("GET /symbols/", s.download)
	mux.HandleFunc("HEAD /symbols/", s.download)
	mux.HandleFunc("/v1/", s.v2)
	// The file of a sym-upload-v2 upload, PUT to the uploadUrl the
	// authorized create returned: its random key is the credential
	// (Breakpad's client sends no token with it).
	mux.HandleFunc("PUT /v1/uploads/{key}", s.v2)
	mux.HandleFunc("POST /upload/", s.uploadZip)
	mux.HandleFunc("POST /upload", s.uploadZip)
	mux.HandleFunc("GET /api/syminfo/{file}/{id}", s.syminfo)
}

// ServeHTTP serves the symbol server's routes.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) { s.mux.ServeHTTP(w, r) }

// Dir returns the symbol store the server writes.
func (s *Server) Dir() string { return s.cfg.Dir }

// errAuth is an authentication failure and its status (401 or 403).
type errAuth struct {
	status int
	msg    string
}

func (e *errAuth) Error() string { return e.msg }

// authorize checks the request's token (Auth-Token or Authorization
// header, else ?key=) for scope. open lets requests without any token in.
// crashd's route table has checked the same before (auth.Table); this
// keeps the server safe when served alone.
func (s *Server) authorize(r *http.Request, scope string, open bool) (string, error) {
	p, err := s.cfg.Auth.Resolve(r, "key")
	switch {
	case errors.Is(err, auth.ErrUnknownToken):
		return "", &errAuth{http.StatusForbidden, "unknown API token"}
	case err != nil:
		return "", &errAuth{http.StatusServiceUnavailable, err.Error()}
	case p == nil || p.Session != nil:
		// A login cookie is no upload credential: uploads carry a token.
		if open {
			return "", nil
		}
		return "", &errAuth{http.StatusUnauthorized, "an API token is required (Auth-Token header or ?key=)"}
	case !p.Can(scope):
		return "", &errAuth{http.StatusForbidden, fmt.Sprintf("the token has no %s scope", scope)}
	}
	return p.Name, nil
}

// lock returns the mutex serializing the writes of one module's files.
func (s *Server) lock(path string) *sync.Mutex {
	h := fnv.New32a()
	h.Write([]byte(path))
	return &s.locks[h.Sum32()%uint32(len(s.locks))]
}

// writeJSON answers v in the indented form Breakpad's v2 client's regexes
// expect ("key": "value", one space after the colon), without HTML
// escaping.
func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	_ = enc.Encode(v)
}

// fail answers an error of an upload: its status (400 unless it says
// otherwise) and message, as JSON for v2 requests, as text for v1.
func (s *Server) fail(w http.ResponseWriter, r *http.Request, err error, asJSON bool) {
	status := http.StatusBadRequest
	var ae *errAuth
	var ue *uploadError
	switch {
	case errors.As(err, &ae):
		status = ae.status
	case errors.As(err, &ue):
		status = ue.status
	}
	if p := r.URL.Path; p == "/symbols/upload" || strings.HasSuffix(p, ":complete") || strings.HasPrefix(p, "/upload") {
		s.m.uploads.WithLabelValues(protocol(r), "refused").Inc()
	}
	if busy(err) {
		// As a crash upload refused for want of budget: come back later.
		w.Header().Set("Retry-After", budget.RetryAfter(s.mem.Wait()))
		s.log.Warn("symbol upload refused: busy", "path", r.URL.Path, "err", err)
	} else if status >= 500 {
		s.log.Error("symbol upload", "path", r.URL.Path, "err", err)
	} else {
		s.log.Info("symbol upload refused", "path", r.URL.Path, "status", status, "err", err)
	}
	if asJSON {
		writeJSON(w, status, map[string]any{"error": map[string]any{"code": status, "message": err.Error()}})
		return
	}
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	w.WriteHeader(status)
	fmt.Fprintln(w, err.Error())
}

// uploadError is an upload refused with a status.
type uploadError struct {
	status int
	err    error
}

func (e *uploadError) Error() string { return e.err.Error() }
func (e *uploadError) Unwrap() error { return e.err }

func badUpload(format string, args ...any) error {
	return &uploadError{http.StatusBadRequest, fmt.Errorf(format, args...)}
}

// normID is a debug identifier as the store names it: hyphens dropped,
// upper case (sym_upload's CompactIdentifier, Breakpad's MODULE lines).
func normID(id string) string {
	return strings.ToUpper(strings.ReplaceAll(id, "-", ""))
}
