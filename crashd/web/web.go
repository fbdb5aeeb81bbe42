// Package web is crashd's pages and the JSON API behind them (issue 25):
// top crashers (the home page), a signature's page, a crash's report
// page, search with facets, the symbols page, and a login that takes an
// API token once into a cookie session.
//
// Pages are rendered on the server (html/template, embedded with
// go:embed), work without JavaScript (there is none) and draw their
// charts as inline SVG made here. Every page has its JSON twin under
// /api/ taking the same query parameters:
//
//	GET  /                       GET /api/topcrashers
//	GET  /signature?signature=   GET /api/signature?signature=
//	                             GET /api/signature/trend?signature=&days=&versions=
//	                             GET /api/signature/correlations?signature=&product=
//	GET  /report/{id}            GET /api/report/{id}
//	GET  /search?...             GET /api/search?...
//	GET  /symbols                GET /api/symbols
//	GET  /report/{id}/dump?name=   a dump (scope view_rawdump)
//	GET  /report/{id}/processed.json  the processed crash (scope view_crashes)
//	POST /report/{id}/reprocess  (scope reprocess; crashd/api serves the
//	                             JSON POST /api/report/{id}/reprocess)
//	POST /signature/triage       POST /api/signature/triage (scope triage)
//	GET, POST /login, POST /logout
//
// Who may see what is decided by crashd's route table (crashd/auth,
// auth.Crashd) before a handler runs: a request carries an API token
// ("Authorization: Bearer TOKEN" or "Auth-Token: TOKEN") or the session
// cookie the login page set; reading needs view_crashes (public_pages
// opens the reads), and the handlers read the principal
// (auth.FromContext) only for what a page shows by scope: annotations
// marked personal with view_pii, the download links with view_rawdump,
// the reprocess button with reprocess.
package web

import (
	"context"
	"crypto/subtle"
	"embed"
	"errors"
	"fmt"
	"html/template"
	"log/slog"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"

	"github.com/gobreakpad/gobreakpad/crashd/auth"
	"github.com/gobreakpad/gobreakpad/crashd/blob"
	"github.com/gobreakpad/gobreakpad/crashd/index"
	"github.com/gobreakpad/gobreakpad/crashd/queue"
	"github.com/gobreakpad/gobreakpad/crashd/sourcelink"
)

//go:embed templates/*.html
var templateFS embed.FS

//go:embed static
var staticFS embed.FS

// MissingModule is a module crashes were walked without symbols for.
type MissingModule struct {
	DebugFile string `json:"debug_file"`
	DebugID   string `json:"debug_id"`
	CodeFile  string `json:"code_file,omitempty"`
	CodeID    string `json:"code_id,omitempty"`
	// Crashes counts the crashes missing it; Latest is the newest's id.
	Crashes int    `json:"crashes"`
	Latest  string `json:"latest_crash_id,omitempty"`
}

// Upload is a symbol file the symbol server stored.
type Upload struct {
	DebugFile string    `json:"debug_file"`
	DebugID   string    `json:"debug_id"`
	Name      string    `json:"name"`
	Size      int64     `json:"size"`
	Time      time.Time `json:"time"`
}

// Config configures the pages.
type Config struct {
	// Auth resolves the login form's token and keeps the sessions
	// (crashd's one authenticator; nil: logins are refused).
	Auth *auth.Authenticator
	// SecureCookie marks the session cookie Secure (serve over TLS).
	SecureCookie bool
	// MissingSymbols, when set, ranks the modules crashes missed symbols
	// for (the symbols page).
	MissingSymbols func(ctx context.Context, limit int) ([]MissingModule, error)
	// RecentUploads, when set, lists the newest symbol uploads.
	RecentUploads func(ctx context.Context, limit int) ([]Upload, error)
	// IndexedAnnotations are the annotations the processor indexes: the
	// search takes annotation.NAME=VALUE for them and counts their values
	// beside the results (personal values only with view_pii).
	IndexedAnnotations []string
	// BugTrackers are the trackers the signature page offers "file a
	// bug" links to (bug_trackers).
	BugTrackers []BugTracker
	// PublicURL is where people reach crashd (public_url), for the links
	// of bug reports filed from a signature page ("" : paths alone).
	PublicURL string
	// SourceLinks links the frames' files to their source (nil: only
	// the source-server paths of Mozilla's symbol files are linked).
	SourceLinks *sourcelink.Linker
	// Manager keeps the tokens managed at run time (crashd/index): the
	// tokens page and the one-time login links; nil for none.
	Manager auth.Manager
	// Now is the clock (tests); nil is time.Now.
	Now func() time.Time
}

// Web serves the pages.
type Web struct {
	cfg   Config
	store blob.Store
	q     queue.Queue
	ix    index.Index
	tri   index.Triage
	st    index.SignatureTriager
	log   *slog.Logger
	tmpl  map[string]*template.Template

	mu       sync.Mutex
	optCache map[int]cachedOptions
	// The correlations' answers (under mu) and computations at once.
	corrCache map[corrKey]cachedCorrelations
	corrSlots chan struct{}
}

// SessionCookie is the name of the session cookie.
const SessionCookie = auth.SessionCookie

// New returns the pages over a store, a queue and an index (which must
// implement index.Triage for the pages that rank and search).
func New(cfg Config, store blob.Store, q queue.Queue, ix index.Index, log *slog.Logger) (*Web, error) {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	w := &Web{cfg: cfg, store: store, q: q, ix: ix, log: log, optCache: map[int]cachedOptions{},
		corrCache: map[corrKey]cachedCorrelations{}, corrSlots: make(chan struct{}, correlationSlots)}
	w.tri, _ = ix.(index.Triage)
	w.st, _ = ix.(index.SignatureTriager)
	for _, b := range cfg.BugTrackers {
		if err := b.Check(); err != nil {
			return nil, fmt.Errorf("web: %w", err)
		}
	}
	var err error
	if w.tmpl, err = parseTemplates(); err != nil {
		return nil, err
	}
	return w, nil
}

// Register adds the pages and their API to mux (crashd's route table
// decides who may see them).
func (w *Web) Register(mux auth.Mux) {
	mux.HandleFunc("GET /{$}", w.page(w.home, "home"))
	mux.HandleFunc("GET /api/topcrashers", w.api(w.home))
	mux.HandleFunc("GET /signature", w.page(w.signature, "signature"))
	mux.HandleFunc("GET /api/signature", w.api(w.signature))
	mux.HandleFunc("GET /api/signature/trend", w.api(w.signatureTrend))
	mux.HandleFunc("GET /api/signature/correlations", w.api(w.correlationsAPI))
	mux.HandleFunc("GET /report/{id}", w.page(w.report, "report"))
	mux.HandleFunc("GET /api/report/{id}", w.api(w.report))
	mux.HandleFunc("GET /search", w.page(w.search, "search"))
	mux.HandleFunc("GET /api/search", w.api(w.search))
	mux.HandleFunc("GET /symbols", w.page(w.symbols, "symbols"))
	mux.HandleFunc("GET /api/symbols", w.api(w.symbols))
	mux.HandleFunc("GET /report/{id}/dump", w.dump)
	mux.HandleFunc("GET /report/{id}/processed.json", w.processedJSON)
	mux.HandleFunc("POST /report/{id}/reprocess", w.reprocessPage)
	mux.HandleFunc("GET /login", w.loginPage)
	mux.HandleFunc("POST /login", w.login)
	mux.HandleFunc("POST /logout", w.logout)
	mux.HandleFunc("GET /static/", w.static)
	w.registerTokens(mux)
	w.registerTriage(mux)
}

// principal is who a request is (nil: anonymous, where the route table
// lets anyone in).
type principal = auth.Principal

// who returns the request's principal, as the route table resolved it.
func who(r *http.Request) *principal { return auth.FromContext(r.Context()) }

// errStatus is an error with its HTTP status.
type errStatus struct {
	code int
	msg  string
}

func (e *errStatus) Error() string { return e.msg }

func httpErr(code int, format string, args ...any) error {
	return &errStatus{code, fmt.Sprintf(format, args...)}
}

// statusOf is the HTTP status of err: an errStatus's code, else 500.
func statusOf(err error) int {
	var e *errStatus
	if errors.As(err, &e) {
		return e.code
	}
	return http.StatusInternalServerError
}

// handler computes a page's data (also its JSON answer).
type handler func(r *http.Request, p *principal) (any, error)

// securityHeaders are sent with every page.
func securityHeaders(h http.Header) {
	h.Set("Content-Security-Policy", "default-src 'none'; style-src 'self'; img-src 'self' data:; form-action 'self'; frame-ancestors 'none'; base-uri 'none'")
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("Referrer-Policy", "same-origin")
	h.Set("X-Frame-Options", "DENY")
}

// layout is what every page's template gets.
type layout struct {
	Title string
	Page  string
	Who   *principal
	CSRF  string
	// Path is the request's path and query (login's next=).
	Path string
	// Query is the request's query, for links that keep it.
	Query url.Values
	Data  any
	Error string
}

func (w *Web) page(h handler, name string) http.HandlerFunc {
	return func(rw http.ResponseWriter, r *http.Request) {
		securityHeaders(rw.Header())
		p := who(r)
		data, err := h(r, p)
		l := layout{Page: name, Who: p, Path: r.URL.RequestURI(), Query: r.URL.Query(), Data: data}
		if p != nil && p.Session != nil {
			l.CSRF = p.Session.CSRF
		}
		code := http.StatusOK
		if err != nil {
			code = http.StatusInternalServerError
			if e, ok := err.(*errStatus); ok {
				code = e.code
			} else {
				w.log.Warn("web: page", "path", r.URL.Path, "err", err)
			}
			l.Page, l.Error, l.Data = "error", err.Error(), nil
		}
		w.render(rw, code, l)
	}
}

func (w *Web) render(rw http.ResponseWriter, code int, l layout) {
	t := w.tmpl[l.Page]
	if t == nil {
		t = w.tmpl["error"]
	}
	var b strings.Builder
	if err := t.ExecuteTemplate(&b, "layout", l); err != nil {
		w.log.Error("web: template", "page", l.Page, "err", err)
		http.Error(rw, "template error", http.StatusInternalServerError)
		return
	}
	rw.Header().Set("Content-Type", "text/html; charset=utf-8")
	rw.WriteHeader(code)
	_, _ = rw.Write([]byte(b.String()))
}

func (w *Web) api(h handler) http.HandlerFunc {
	return func(rw http.ResponseWriter, r *http.Request) {
		data, err := h(r, who(r))
		if err != nil {
			w.writeErr(rw, err)
			return
		}
		auth.WriteJSON(rw, http.StatusOK, data)
	}
}

func (w *Web) static(rw http.ResponseWriter, r *http.Request) {
	rw.Header().Set("Cache-Control", "max-age=3600")
	rw.Header().Set("X-Content-Type-Options", "nosniff")
	http.FileServerFS(staticFS).ServeHTTP(rw, r)
}

func (w *Web) loginPage(rw http.ResponseWriter, r *http.Request) {
	if code := r.URL.Query().Get("code"); code != "" {
		w.loginCode(rw, r, code)
		return
	}
	securityHeaders(rw.Header())
	w.render(rw, http.StatusOK, layout{Page: "login", Who: who(r), Data: map[string]string{"Next": auth.SafeNext(r.URL.Query().Get("next"))}})
}

func (w *Web) login(rw http.ResponseWriter, r *http.Request) {
	securityHeaders(rw.Header())
	r.Body = http.MaxBytesReader(rw, r.Body, 1<<16)
	if err := r.ParseForm(); err != nil {
		w.render(rw, http.StatusBadRequest, layout{Page: "login", Error: "a form with the token", Data: map[string]string{"Next": "/"}})
		return
	}
	next := auth.SafeNext(r.PostForm.Get("next"))
	if w.cfg.Auth == nil {
		w.render(rw, http.StatusServiceUnavailable, layout{Page: "login", Error: "logins are not configured", Data: map[string]string{"Next": next}})
		return
	}
	cookie, s, err := w.cfg.Auth.Login(r.Context(), strings.TrimSpace(r.PostForm.Get("token")))
	switch {
	case errors.Is(err, auth.ErrUnknownToken):
		w.render(rw, http.StatusForbidden, layout{Page: "login", Error: "unknown token", Data: map[string]string{"Next": next}})
		return
	case err != nil:
		w.log.Error("web: login", "err", err)
		w.render(rw, http.StatusServiceUnavailable, layout{Page: "login", Error: "the login failed; try again", Data: map[string]string{"Next": next}})
		return
	}
	http.SetCookie(rw, &http.Cookie{Name: SessionCookie, Value: cookie, Path: "/", HttpOnly: true, Secure: w.cfg.SecureCookie,
		SameSite: http.SameSiteLaxMode, Expires: s.Expires})
	w.log.Info("web: login", "token", s.Token)
	http.Redirect(rw, r, next, http.StatusSeeOther)
}

// checkCSRF checks a form post of a cookie session: its csrf field.
func checkCSRF(r *http.Request, p *principal) bool {
	if p == nil || p.Session == nil {
		return true // a token in a header: no cookie to ride on
	}
	return subtle.ConstantTimeCompare([]byte(r.PostFormValue("csrf")), []byte(p.Session.CSRF)) == 1
}

func (w *Web) logout(rw http.ResponseWriter, r *http.Request) {
	r.Body = http.MaxBytesReader(rw, r.Body, 1<<16)
	p := who(r)
	if p != nil && p.Session != nil && checkCSRF(r, p) && w.cfg.Auth != nil {
		if err := w.cfg.Auth.Logout(r.Context(), p.Session.ID); err != nil {
			w.log.Error("web: logout", "err", err)
			auth.WriteJSON(rw, http.StatusServiceUnavailable, map[string]string{"error": "the logout failed; try again"})
			return
		}
	}
	http.SetCookie(rw, &http.Cookie{Name: SessionCookie, Value: "", Path: "/", MaxAge: -1, HttpOnly: true})
	http.Redirect(rw, r, "/login", http.StatusSeeOther)
}
