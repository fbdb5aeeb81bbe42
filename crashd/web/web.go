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
//	GET  /report/{id}            GET /api/report/{id}
//	GET  /search?...             GET /api/search?...
//	GET  /symbols                GET /api/symbols
//	GET  /report/{id}/dump?name=   a dump (scope view_rawdump)
//	GET  /report/{id}/processed.json  the processed crash (scope view_rawdump)
//	POST /report/{id}/reprocess  POST /api/report/{id}/reprocess (scope reprocess)
//	GET, POST /login, POST /logout
//
// Who may see what: a request carries an API token (symserver.Token,
// "Authorization: Bearer TOKEN" or "Auth-Token: TOKEN") or the session
// cookie the login page set. Any known token may read the pages; the
// scopes view_pii (annotations marked personal), view_rawdump (dumps and
// processed crash downloads) and reprocess allow more. Without a token
// nothing is shown unless Config.Public opens the read-only pages.
package web

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"embed"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"html/template"
	"log/slog"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/gobreakpad/gobreakpad/crashd/auth"
	"github.com/gobreakpad/gobreakpad/crashd/blob"
	"github.com/gobreakpad/gobreakpad/crashd/index"
	"github.com/gobreakpad/gobreakpad/crashd/queue"
	"github.com/gobreakpad/gobreakpad/crashd/symserver"
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
	// Tokens are the API tokens (the symbol server's; scopes
	// symserver.Scope*).
	Tokens []symserver.Token
	// Public shows the read-only pages and their API without a token
	// (for a team behind a VPN); personal annotations, downloads and
	// reprocessing still need a token's scopes.
	Public bool
	// SecureCookie marks the session cookie Secure (serve over TLS).
	SecureCookie bool
	// SessionTTL bounds a login session (0: 12 hours).
	SessionTTL time.Duration
	// MissingSymbols, when set, ranks the modules crashes missed symbols
	// for (the symbols page).
	MissingSymbols func(ctx context.Context, limit int) ([]MissingModule, error)
	// RecentUploads, when set, lists the newest symbol uploads.
	RecentUploads func(ctx context.Context, limit int) ([]Upload, error)
	// IndexedAnnotations are the annotations the processor indexes: the
	// search takes annotation.NAME=VALUE for them and counts their values
	// beside the results (personal values only with view_pii).
	IndexedAnnotations []string
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
	log   *slog.Logger
	tmpl  map[string]*template.Template

	mu       sync.Mutex
	sessions map[string]*session
	optCache map[int]cachedOptions
}

// session is a login: the token's name and scopes, a CSRF secret.
type session struct {
	id, csrf string
	name     string
	scopes   []string
	expires  time.Time
}

// maxSessions bounds the sessions kept (the oldest go first).
const maxSessions = 10000

// SessionCookie is the name of the session cookie.
const SessionCookie = "crashd_session"

// New returns the pages over a store, a queue and an index (which must
// implement index.Triage for the pages that rank and search).
func New(cfg Config, store blob.Store, q queue.Queue, ix index.Index, log *slog.Logger) (*Web, error) {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	if cfg.SessionTTL <= 0 {
		cfg.SessionTTL = 12 * time.Hour
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	w := &Web{cfg: cfg, store: store, q: q, ix: ix, log: log, sessions: map[string]*session{}, optCache: map[int]cachedOptions{}}
	w.tri, _ = ix.(index.Triage)
	var err error
	if w.tmpl, err = parseTemplates(); err != nil {
		return nil, err
	}
	return w, nil
}

// Register adds the pages and their API to mux.
func (w *Web) Register(mux *http.ServeMux) {
	mux.HandleFunc("GET /{$}", w.page(w.home, "home"))
	mux.HandleFunc("GET /api/topcrashers", w.api(w.home))
	mux.HandleFunc("GET /signature", w.page(w.signature, "signature"))
	mux.HandleFunc("GET /api/signature", w.api(w.signature))
	mux.HandleFunc("GET /report/{id}", w.page(w.report, "report"))
	mux.HandleFunc("GET /api/report/{id}", w.api(w.report))
	mux.HandleFunc("GET /search", w.page(w.search, "search"))
	mux.HandleFunc("GET /api/search", w.api(w.search))
	mux.HandleFunc("GET /symbols", w.page(w.symbols, "symbols"))
	mux.HandleFunc("GET /api/symbols", w.api(w.symbols))
	mux.HandleFunc("GET /report/{id}/dump", w.dump)
	mux.HandleFunc("GET /report/{id}/processed.json", w.processedJSON)
	mux.HandleFunc("POST /report/{id}/reprocess", w.reprocessPage)
	mux.HandleFunc("POST /api/report/{id}/reprocess", w.reprocessAPI)
	mux.HandleFunc("GET /login", w.loginPage)
	mux.HandleFunc("POST /login", w.login)
	mux.HandleFunc("POST /logout", w.logout)
	mux.HandleFunc("GET /static/", w.static)
	w.registerTokens(mux)
}

// principal is who a request is: a token's name and scopes, and its
// session when it came with the cookie.
type principal struct {
	Name   string
	Scopes []string
	sess   *session
}

// Can reports whether p has scope.
func (p *principal) Can(scope string) bool { return p != nil && slices.Contains(p.Scopes, scope) }

func (w *Web) token(secret string) *symserver.Token {
	sum := sha256.Sum256([]byte(secret))
	for i, t := range w.cfg.Tokens {
		want, err := hex.DecodeString(t.SHA256)
		if err == nil && subtle.ConstantTimeCompare(sum[:], want) == 1 {
			return &w.cfg.Tokens[i]
		}
	}
	return nil
}

// who returns the request's principal, nil for none.
func (w *Web) who(r *http.Request) *principal {
	secret, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
	if !ok {
		secret = r.Header.Get("Auth-Token")
	}
	if secret != "" {
		if t := w.token(secret); t != nil {
			return &principal{Name: t.Name, Scopes: t.Scopes}
		}
		return nil
	}
	c, err := r.Cookie(SessionCookie)
	if err != nil {
		return nil
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	s := w.sessions[c.Value]
	if s == nil {
		return nil
	}
	if w.cfg.Now().After(s.expires) {
		delete(w.sessions, s.id)
		return nil
	}
	return &principal{Name: s.name, Scopes: s.scopes, sess: s}
}

func randomHex() string {
	var b [24]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

func (w *Web) newSession(t *symserver.Token) *session {
	s := &session{id: randomHex(), csrf: randomHex(), name: t.Name, scopes: slices.Clone(t.Scopes), expires: w.cfg.Now().Add(w.cfg.SessionTTL)}
	w.mu.Lock()
	defer w.mu.Unlock()
	now := w.cfg.Now()
	if len(w.sessions) >= maxSessions {
		var oldest *session
		for _, o := range w.sessions {
			if now.After(o.expires) {
				delete(w.sessions, o.id)
			} else if oldest == nil || o.expires.Before(oldest.expires) {
				oldest = o
			}
		}
		if len(w.sessions) >= maxSessions && oldest != nil {
			delete(w.sessions, oldest.id)
		}
	}
	w.sessions[s.id] = s
	return s
}

// errStatus is an error with its HTTP status.
type errStatus struct {
	code int
	msg  string
}

func (e *errStatus) Error() string { return e.msg }

func httpErr(code int, format string, args ...any) error {
	return &errStatus{code, fmt.Sprintf(format, args...)}
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
		p := w.who(r)
		if p == nil && !w.cfg.Public {
			http.Redirect(rw, r, "/login?next="+url.QueryEscape(r.URL.RequestURI()), http.StatusSeeOther)
			return
		}
		data, err := h(r, p)
		l := layout{Page: name, Who: p, Path: r.URL.RequestURI(), Query: r.URL.Query(), Data: data}
		if p != nil && p.sess != nil {
			l.CSRF = p.sess.csrf
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
		p := w.who(r)
		if p == nil && !w.cfg.Public {
			writeJSON(rw, http.StatusUnauthorized, map[string]string{"error": "an API token is required (Authorization: Bearer TOKEN, or the login session)"})
			return
		}
		data, err := h(r, p)
		if err != nil {
			code := http.StatusInternalServerError
			if e, ok := err.(*errStatus); ok {
				code = e.code
			}
			writeJSON(rw, code, map[string]string{"error": err.Error()})
			return
		}
		writeJSON(rw, http.StatusOK, data)
	}
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("X-Content-Type-Options", "nosniff")
	w.WriteHeader(status)
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(v)
}

func (w *Web) static(rw http.ResponseWriter, r *http.Request) {
	rw.Header().Set("Cache-Control", "max-age=3600")
	rw.Header().Set("X-Content-Type-Options", "nosniff")
	http.FileServerFS(staticFS).ServeHTTP(rw, r)
}

// safeNext is the page to go to after the login: a local path only.
func safeNext(s string) string {
	if !strings.HasPrefix(s, "/") || strings.HasPrefix(s, "//") || strings.HasPrefix(s, "/\\") || strings.ContainsAny(s, "\r\n") {
		return "/"
	}
	return s
}

func (w *Web) loginPage(rw http.ResponseWriter, r *http.Request) {
	if code := r.URL.Query().Get("code"); code != "" {
		w.loginCode(rw, r, code)
		return
	}
	securityHeaders(rw.Header())
	w.render(rw, http.StatusOK, layout{Page: "login", Who: w.who(r), Data: map[string]string{"Next": safeNext(r.URL.Query().Get("next"))}})
}

func (w *Web) login(rw http.ResponseWriter, r *http.Request) {
	securityHeaders(rw.Header())
	r.Body = http.MaxBytesReader(rw, r.Body, 1<<16)
	if err := r.ParseForm(); err != nil {
		w.render(rw, http.StatusBadRequest, layout{Page: "login", Error: "a form with the token", Data: map[string]string{"Next": "/"}})
		return
	}
	next := safeNext(r.PostForm.Get("next"))
	t := w.token(strings.TrimSpace(r.PostForm.Get("token")))
	if t == nil {
		w.render(rw, http.StatusForbidden, layout{Page: "login", Error: "unknown token", Data: map[string]string{"Next": next}})
		return
	}
	s := w.newSession(t)
	http.SetCookie(rw, &http.Cookie{Name: SessionCookie, Value: s.id, Path: "/", HttpOnly: true, Secure: w.cfg.SecureCookie,
		SameSite: http.SameSiteLaxMode, Expires: s.expires})
	w.log.Info("web: login", "token", t.Name)
	http.Redirect(rw, r, next, http.StatusSeeOther)
}

// checkCSRF checks a form post of a cookie session: its csrf field.
func checkCSRF(r *http.Request, p *principal) bool {
	if p == nil || p.sess == nil {
		return true // a token in a header: no cookie to ride on
	}
	return subtle.ConstantTimeCompare([]byte(r.PostFormValue("csrf")), []byte(p.sess.csrf)) == 1
}

func (w *Web) logout(rw http.ResponseWriter, r *http.Request) {
	r.Body = http.MaxBytesReader(rw, r.Body, 1<<16)
	p := w.who(r)
	if p != nil && p.sess != nil && checkCSRF(r, p) {
		w.mu.Lock()
		delete(w.sessions, p.sess.id)
		w.mu.Unlock()
	}
	http.SetCookie(rw, &http.Cookie{Name: SessionCookie, Value: "", Path: "/", MaxAge: -1, HttpOnly: true})
	http.Redirect(rw, r, "/login", http.StatusSeeOther)
}

// GuardReads wraps the handler of an older API (crashd/api's /api/crashes,
// /api/dead): while no token is configured it is open as before; with
// tokens, its GET and HEAD requests need a known token or the session
// (unless Config.Public), answered 401 otherwise. Other methods go
// through (reprocessing checks its own api_token).
func (w *Web) GuardReads(h http.Handler) http.Handler {
	return http.HandlerFunc(func(rw http.ResponseWriter, r *http.Request) {
		if len(w.cfg.Tokens) > 0 && !w.cfg.Public && (r.Method == http.MethodGet || r.Method == http.MethodHead) && w.who(r) == nil {
			writeJSON(rw, http.StatusUnauthorized, map[string]string{"error": "an API token is required (Authorization: Bearer TOKEN, or the login session)"})
			return
		}
		h.ServeHTTP(rw, r)
	})
}
