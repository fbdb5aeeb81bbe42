// Package api is crashd's HTTP API for people and the tools and pages of
// the next issues: a crash with its processed crash, a search of the
// index, reprocessing, the dead letters; and the operations endpoints as
// Antenna serves them (Dockerflow): /__lbheartbeat__, /__heartbeat__ (the
// queue, the store and the index answer, and Config.Checks pass; Antenna's
// body), /__version__.
//
//	GET  /api/crashes/{id}            one crash: index row + processed crash
//	GET  /api/crashes?signature=&product=&version=&status=&since=&cursor=&limit=  (before= too)
//	POST /api/crashes/{id}/reprocess  queue the crash again (202)
//	POST /api/report/{id}/reprocess   the same (the pages' older name)
//	GET  /api/dead                    the dead letters
//
// Who may call what is crashd's route table's to decide (crashd/auth:
// auth.Crashd, checked before the handlers run); the handlers read the
// request's principal (auth.FromContext) only for what a route shows by
// scope: annotations marked personal need view_pii. Reprocessing is the
// one home of the pages' reprocess too (Reprocess): a crash waiting to be
// reprocessed is not queued again.
//
// Errors are JSON: {"error": "..."} with the HTTP status.
package api

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"runtime/debug"
	"strconv"
	"time"

	"github.com/gobreakpad/gobreakpad/crashd/auth"
	"github.com/gobreakpad/gobreakpad/crashd/blob"
	"github.com/gobreakpad/gobreakpad/crashd/crash"
	"github.com/gobreakpad/gobreakpad/crashd/index"
	"github.com/gobreakpad/gobreakpad/crashd/processor"
	"github.com/gobreakpad/gobreakpad/crashd/queue"
)

// Config configures the API.
type Config struct {
	// Version is what /__version__ reports as "version" (default: the
	// module version of the build).
	Version string
	// Checks are the heartbeat's checks beyond the queue, the store and
	// the index (the free disk space, the process's parts).
	Checks []Check
}

// Check is one check of /__heartbeat__: Run returns nil when healthy, else
// the error reported under Name.
type Check struct {
	Name string
	Run  func(context.Context) error
}

// HealthError is one failed check in /__heartbeat__'s answer, as Antenna
// writes it.
type HealthError struct {
	Name string `json:"name"`
	Msg  string `json:"msg"`
}

// API serves the endpoints. Queue, index or store may be nil in a process
// without them (roles, issue 26): their endpoints answer 503 and the
// heartbeat skips them.
type API struct {
	cfg   Config
	store blob.Store
	q     queue.Queue
	ix    index.Index
	log   *slog.Logger
}

// New returns the API over a store, a queue and an index.
func New(cfg Config, store blob.Store, q queue.Queue, ix index.Index, log *slog.Logger) *API {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	return &API{cfg: cfg, store: store, q: q, ix: ix, log: log}
}

// Register adds the API's routes to mux (crashd's route table decides
// who may call them; a bare *http.ServeMux lets anyone).
func (a *API) Register(mux auth.Mux) {
	mux.HandleFunc("GET /api/crashes/{id}", a.getCrash)
	mux.HandleFunc("GET /api/crashes", a.search)
	mux.HandleFunc("POST /api/crashes/{id}/reprocess", a.reprocess)
	mux.HandleFunc("POST /api/report/{id}/reprocess", a.reprocess)
	mux.HandleFunc("GET /api/dead", a.dead)
}

// RegisterHealth adds the Dockerflow endpoints to mux.
func (a *API) RegisterHealth(mux auth.Mux) {
	mux.HandleFunc("GET /__lbheartbeat__", func(w http.ResponseWriter, r *http.Request) {
		auth.WriteJSON(w, http.StatusOK, map[string]any{})
	})
	mux.HandleFunc("GET /__heartbeat__", a.heartbeat)
	mux.HandleFunc("GET /__version__", a.version)
}

// Crash is the answer of GET /api/crashes/{id}.
type Crash struct {
	CrashID               crash.ID                   `json:"crash_id"`
	Status                string                     `json:"status"`
	ReceivedAt            time.Time                  `json:"received_at,omitzero"`
	ProcessedAt           time.Time                  `json:"processed_at,omitzero"`
	Product               string                     `json:"product"`
	Version               string                     `json:"version"`
	ReleaseChannel        string                     `json:"release_channel,omitempty"`
	OS                    string                     `json:"os,omitempty"`
	OSVersion             string                     `json:"os_version,omitempty"`
	CPU                   string                     `json:"cpu,omitempty"`
	Signature             string                     `json:"signature"`
	CrashReason           string                     `json:"crash_reason"`
	CrashAddress          string                     `json:"crash_address,omitempty"`
	CrashingThread        *int                       `json:"crashing_thread"`
	ModulesMissingSymbols []string                   `json:"modules_missing_symbols,omitempty"`
	Success               *bool                      `json:"success,omitempty"`
	Attempts              int                        `json:"attempts"`
	Error                 string                     `json:"error,omitempty"`
	Notes                 []string                   `json:"notes"`
	Timings               map[string]float64         `json:"timings,omitempty"`
	Annotations           map[string]any             `json:"annotations,omitempty"`
	JSONDump              json.RawMessage            `json:"json_dump"`
	AdditionalDumps       map[string]json.RawMessage `json:"additional_minidumps,omitempty"`
}

func (a *API) crashID(w http.ResponseWriter, r *http.Request) (crash.ID, bool) {
	id, err := crash.Parse(r.PathValue("id"))
	if err != nil {
		auth.WriteError(w, http.StatusBadRequest, "%v", err)
		return "", false
	}
	return id, true
}

// Record is a crash as crashd keeps it, read for every route that shows
// one (GET /api/crashes/{id}, the report page and its JSON): the index's
// row, the raw crash, the dump names and the processed crash, each nil
// when missing (a crash received and not yet processed has no processed
// crash; a process without an index has no row).
type Record struct {
	ID        crash.ID
	Index     *index.Crash
	Raw       *crash.RawCrash
	Dumps     crash.DumpNames
	Processed *crash.ProcessedCrash
}

// Load reads the crash id; the error is an *Error (404 when crashd knows
// nothing of it, 503 without a blob store, 500 for what failed).
func Load(ctx context.Context, store blob.Store, ix index.Index, id crash.ID) (*Record, error) {
	if store == nil {
		return nil, &Error{http.StatusServiceUnavailable, "no blob store in this process"}
	}
	rec := &Record{ID: id}
	if ix != nil {
		c, err := ix.Get(ctx, string(id))
		switch {
		case err == nil:
			rec.Index = &c
		case !errors.Is(err, index.ErrNotFound):
			return nil, &Error{http.StatusInternalServerError, err.Error()}
		}
	}
	get := func(key, what string, v any) (bool, error) {
		b, err := store.Get(ctx, key)
		switch {
		case errors.Is(err, blob.ErrNotExist):
			return false, nil
		case err != nil:
			return false, &Error{http.StatusInternalServerError, err.Error()}
		}
		if err := json.Unmarshal(b, v); err != nil {
			return false, &Error{http.StatusInternalServerError, fmt.Sprintf("%s %s: %v", what, id, err)}
		}
		return true, nil
	}
	var raw crash.RawCrash
	ok, err := get(crash.RawCrashKey(id), "raw crash", &raw)
	if err != nil {
		return nil, err
	}
	if ok {
		rec.Raw = &raw
	}
	var names crash.DumpNames
	if ok, err := get(crash.DumpNamesKey(id), "dump names", &names); err != nil {
		return nil, err
	} else if ok {
		rec.Dumps = names
	} else if rec.Raw != nil {
		// Crashes stored before the names were kept have the minidump.
		rec.Dumps = crash.DumpNames{crash.MinidumpField}
	}
	var pc crash.ProcessedCrash
	if ok, err = get(crash.ProcessedCrashKey(id), "processed crash", &pc); err != nil {
		return nil, err
	}
	if ok {
		rec.Processed = &pc
	}
	if rec.Index == nil && rec.Raw == nil && rec.Processed == nil {
		return nil, &Error{http.StatusNotFound, fmt.Sprintf("crash %s: not found", id)}
	}
	return rec, nil
}

// Annotations returns the raw crash's annotations p may see (those marked
// personal only with view_pii) and how many were left out.
func (rec *Record) Annotations(p *auth.Principal) (shown map[string]any, hidden int) {
	if rec.Raw == nil {
		return nil, 0
	}
	if p.Can(auth.ScopeViewPII) {
		return rec.Raw.Annotations, 0
	}
	shown = rec.Raw.Public().Annotations
	return shown, len(rec.Raw.Annotations) - len(shown)
}

func (a *API) getCrash(w http.ResponseWriter, r *http.Request) {
	id, ok := a.crashID(w, r)
	if !ok {
		return
	}
	rec, err := Load(r.Context(), a.store, a.ix, id)
	if err != nil {
		var e *Error
		errors.As(err, &e)
		auth.WriteError(w, e.Status, "%s", e.Message)
		return
	}
	out := Crash{CrashID: id, Status: crash.StatusReceived, Notes: []string{}, JSONDump: json.RawMessage("null")}
	if c := rec.Index; c != nil {
		out.Status, out.ReceivedAt, out.ProcessedAt = string(c.Status), c.ReceivedAt, c.ProcessedAt
		out.Product, out.Version, out.OS, out.CPU = c.Product, c.Version, c.OS, c.CPU
		out.Signature, out.CrashReason, out.Attempts, out.Error = c.Signature, c.CrashReason, c.Attempts, c.Error
	}
	if raw := rec.Raw; raw != nil {
		out.Annotations, _ = rec.Annotations(auth.FromContext(r.Context()))
		if out.ReceivedAt.IsZero() {
			out.ReceivedAt = raw.SubmittedTimestamp
		}
		if out.Product == "" {
			out.Product, out.Version = raw.ProductName(), raw.ProductVersion()
		}
	}
	if pc := rec.Processed; pc != nil {
		if out.Status == crash.StatusReceived && rec.Index == nil {
			out.Status = crash.StatusProcessed
		}
		if out.ProcessedAt.IsZero() {
			out.ProcessedAt = pc.CompletedAt
		}
		out.Product, out.Version, out.ReleaseChannel = pc.ProductName, pc.Version, pc.ReleaseChannel
		out.OS, out.OSVersion, out.CPU = pc.OSName, pc.OSVersion, pc.CPUArch
		out.Signature, out.CrashReason, out.CrashAddress, out.CrashingThread = pc.Signature, pc.CrashReason, pc.CrashAddress, pc.CrashingThread
		out.ModulesMissingSymbols, out.Timings = pc.ModulesMissingSymbols, pc.Timings
		out.Success = &pc.Success
		if pc.ProcessorNotes != nil {
			out.Notes = pc.ProcessorNotes
		}
		if pc.JSONDump != nil {
			out.JSONDump = pc.JSONDump
		}
		out.AdditionalDumps = pc.AdditionalDumps
	}
	auth.WriteJSON(w, http.StatusOK, out)
}

// parseTime reads a query time: RFC 3339, or a UTC date YYYY-MM-DD.
func parseTime(s string) (time.Time, error) {
	if t, err := time.Parse(time.RFC3339Nano, s); err == nil {
		return t, nil
	}
	return time.Parse("2006-01-02", s)
}

// SearchResult is the answer of GET /api/crashes.
type SearchResult struct {
	Crashes []index.Crash `json:"crashes"`
	// Next, when more crashes may match, is the query string of the next
	// page: cursor= the last crash's received_at and id (index.Cursor), so
	// that crashes sharing its time are neither skipped nor repeated.
	Next string `json:"next,omitempty"`
}

func (a *API) search(w http.ResponseWriter, r *http.Request) {
	if a.ix == nil {
		auth.WriteError(w, http.StatusServiceUnavailable, "no index in this process")
		return
	}
	v := r.URL.Query()
	q := index.Query{Signature: v.Get("signature"), Product: v.Get("product"), Version: v.Get("version"), Status: index.Status(v.Get("status"))}
	switch q.Status {
	case "", index.Received, index.Processed, index.Failed:
	default:
		auth.WriteError(w, http.StatusBadRequest, "status %q: received, processed or failed", q.Status)
		return
	}
	for _, p := range []struct {
		name string
		t    *time.Time
	}{{"since", &q.Since}, {"before", &q.Before}} {
		if s := v.Get(p.name); s != "" {
			t, err := parseTime(s)
			if err != nil {
				auth.WriteError(w, http.StatusBadRequest, "%s=%q: an RFC 3339 time or a date YYYY-MM-DD", p.name, s)
				return
			}
			*p.t = t
		}
	}
	if s := v.Get("cursor"); s != "" {
		c, err := index.ParseCursor(s)
		if err != nil {
			auth.WriteError(w, http.StatusBadRequest, "cursor=: %v", err)
			return
		}
		q.After = c
	}
	if s := v.Get("limit"); s != "" {
		n, err := strconv.Atoi(s)
		if err != nil || n < 1 || n > index.MaxLimit {
			auth.WriteError(w, http.StatusBadRequest, "limit=%q: a number from 1 to %d", s, index.MaxLimit)
			return
		}
		q.Limit = n
	}
	cs, err := a.ix.Search(r.Context(), q)
	if err != nil {
		auth.WriteError(w, http.StatusInternalServerError, "%v", err)
		return
	}
	res := SearchResult{Crashes: cs}
	limit := q.Limit
	if limit == 0 {
		limit = index.DefaultLimit
	}
	if len(cs) == limit {
		// The cursor replaces before= (kept for older clients: a page
		// that started from one still pages exactly from here on).
		nv := r.URL.Query()
		nv.Del("before")
		nv.Set("cursor", index.CursorOf(cs[len(cs)-1]).String())
		res.Next = nv.Encode()
	}
	auth.WriteJSON(w, http.StatusOK, res)
}

// ReprocessResult is the answer of a reprocess request (202).
type ReprocessResult struct {
	CrashID crash.ID `json:"crash_id"`
	// Status is "queued", or "already_queued" when the crash waited to
	// be reprocessed already (it is not queued twice).
	Status string `json:"status"`
}

// Reprocess queues the crash again, once while it waits (the one home of
// every reprocess route: the API's and the report page's form). The
// error is an *Error with the HTTP status to answer.
func Reprocess(ctx context.Context, store blob.Store, q queue.Queue, ix index.Index, id crash.ID) (ReprocessResult, error) {
	if store == nil || q == nil || ix == nil {
		return ReprocessResult{}, &Error{http.StatusServiceUnavailable, "reprocessing needs the store, the queue and the index"}
	}
	queued, err := processor.ReprocessOne(ctx, store, q, ix, id)
	switch {
	case errors.Is(err, blob.ErrNotExist):
		return ReprocessResult{}, &Error{http.StatusNotFound, fmt.Sprintf("crash %s: not found", id)}
	case err != nil:
		return ReprocessResult{}, &Error{http.StatusInternalServerError, err.Error()}
	case !queued:
		return ReprocessResult{CrashID: id, Status: "already_queued"}, nil
	}
	return ReprocessResult{CrashID: id, Status: "queued"}, nil
}

// Error is an error with the HTTP status that answers it.
type Error struct {
	Status  int
	Message string
}

func (e *Error) Error() string { return e.Message }

func (a *API) reprocess(w http.ResponseWriter, r *http.Request) {
	id, ok := a.crashID(w, r)
	if !ok {
		return
	}
	res, err := Reprocess(r.Context(), a.store, a.q, a.ix, id)
	if err != nil {
		var e *Error
		errors.As(err, &e)
		auth.WriteError(w, e.Status, "%s", e.Message)
		return
	}
	who := ""
	if p := auth.FromContext(r.Context()); p != nil {
		who = p.Name
	}
	a.log.Info("reprocess", "crash_id", string(id), "status", res.Status, "token", who)
	auth.WriteJSON(w, http.StatusAccepted, res)
}

func (a *API) dead(w http.ResponseWriter, r *http.Request) {
	if a.q == nil {
		auth.WriteError(w, http.StatusServiceUnavailable, "no queue in this process")
		return
	}
	dl, err := a.q.Dead(r.Context(), 0)
	if err != nil {
		auth.WriteError(w, http.StatusInternalServerError, "%v", err)
		return
	}
	if dl == nil {
		dl = []queue.DeadLetter{}
	}
	auth.WriteJSON(w, http.StatusOK, map[string]any{"dead_letters": dl})
}

// heartbeat answers as Antenna's __heartbeat__: 200 {"errors": []} when
// every check passes, else 503 with each failed check's name and message
// ({"errors": [{"name": "disk", "msg": "..."}]}).
func (a *API) heartbeat(w http.ResponseWriter, r *http.Request) {
	ctx, cancel := context.WithTimeout(r.Context(), 5*time.Second)
	defer cancel()
	errs := []HealthError{}
	check := func(name string, err error) {
		if err != nil {
			errs = append(errs, HealthError{Name: name, Msg: err.Error()})
		}
	}
	if a.q != nil {
		check("queue", a.q.Ping(ctx))
	}
	if a.store != nil {
		// A read of a key that is never written: the store answers.
		_, err := a.store.Exists(ctx, crash.KeyRoot+"/heartbeat")
		check("store", err)
	}
	if a.ix != nil {
		check("index", a.ix.Ping(ctx))
	}
	for _, c := range a.cfg.Checks {
		check(c.Name, c.Run(ctx))
	}
	code := http.StatusOK
	if len(errs) > 0 {
		code = http.StatusServiceUnavailable
	}
	auth.WriteJSON(w, code, map[string]any{"errors": errs})
}

// version answers as Dockerflow's __version__: source, version, commit.
func (a *API) version(w http.ResponseWriter, r *http.Request) {
	out := map[string]string{"source": "https://github.com/gobreakpad/gobreakpad", "version": a.cfg.Version, "commit": "", "build": ""}
	if bi, ok := debug.ReadBuildInfo(); ok {
		if out["version"] == "" {
			out["version"] = bi.Main.Version
		}
		out["build"] = bi.GoVersion
		for _, s := range bi.Settings {
			if s.Key == "vcs.revision" {
				out["commit"] = s.Value
			}
		}
	}
	auth.WriteJSON(w, http.StatusOK, out)
}
