package auth

import (
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/url"
	"slices"
	"strings"
)

// Access is what a route of a Table requires of a request.
type Access struct {
	// Scope is the scope the request's principal needs; "" is a route
	// open to anyone.
	Scope string `json:"scope,omitempty"`
	// Public marks a read of crashes that public_pages opens to anyone
	// (the view_crashes reads; nothing personal, no dumps, no action).
	Public bool `json:"public,omitempty"`
	// Page marks an HTML page: a request without a principal is sent to
	// the login page (303) instead of being answered 401.
	Page bool `json:"page,omitempty"`
	// CrossOrigin exempts the route from the cross-origin protection of
	// state-changing requests: uploads of native clients (which send no
	// Origin), an API meant for other origins.
	CrossOrigin bool `json:"cross_origin,omitempty"`
	// Key names a query parameter that may carry the token instead of a
	// header (sym-upload-v1's ?key=: Breakpad's v1 clients cannot send
	// headers).
	Key string `json:"key,omitempty"`
	// Why says who the route is for and why it is open or needs its
	// scope (docs, test output).
	Why string `json:"why"`
}

// Open is the Access of a route anyone may call.
func Open(why string) Access { return Access{Why: why} }

// Need is the Access of a route needing scope.
func Need(scope, why string) Access { return Access{Scope: scope, Why: why} }

// Route is a route of a Table: its pattern (net/http.ServeMux's) and its
// Access.
type Route struct {
	Pattern string `json:"pattern"`
	Access
}

// Table is the one place where the routes of a server get their Access:
// the parts register their handlers into it (it has ServeMux's Handle and
// HandleFunc), each pattern must have an entry of the access map given to
// NewTable, and every request is resolved to its principal (carried in
// its context, FromContext) and checked against its route's Access before
// its handler runs. A pattern without an entry is not served and makes
// Err fail: no route is registered without a declared permission.
type Table struct {
	access  map[string]Access
	authn   *Authenticator
	public  bool
	log     *slog.Logger
	mux     *http.ServeMux
	cop     *http.CrossOriginProtection
	routes  []Route
	missing []string
}

// NewTable returns a table over the access of each pattern. public opens
// the routes marked Public to anyone (public_pages).
func NewTable(access map[string]Access, authn *Authenticator, public bool, log *slog.Logger) *Table {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	for p, a := range access {
		if a.Scope != "" && !Known(a.Scope) {
			panic(fmt.Sprintf("auth: route %q: unknown scope %q", p, a.Scope))
		}
	}
	return &Table{access: access, authn: authn, public: public, log: log, mux: http.NewServeMux(), cop: http.NewCrossOriginProtection()}
}

// Handle registers h for pattern with the pattern's Access.
func (t *Table) Handle(pattern string, h http.Handler) {
	a, ok := t.access[pattern]
	if !ok {
		t.missing = append(t.missing, pattern)
		return
	}
	t.routes = append(t.routes, Route{Pattern: pattern, Access: a})
	t.mux.Handle(pattern, t.guard(a, h))
}

// HandleFunc registers f for pattern with the pattern's Access.
func (t *Table) HandleFunc(pattern string, f func(http.ResponseWriter, *http.Request)) {
	t.Handle(pattern, http.HandlerFunc(f))
}

// Err returns an error naming the patterns registered without an entry.
func (t *Table) Err() error {
	if len(t.missing) == 0 {
		return nil
	}
	return fmt.Errorf("auth: routes without an access entry (not served): %s", strings.Join(t.missing, ", "))
}

// Routes returns the routes registered, in registration order.
func (t *Table) Routes() []Route { return slices.Clone(t.routes) }

// Unused returns the access entries no route was registered for, sorted.
func (t *Table) Unused() []string {
	var out []string
	for p := range t.access {
		if !slices.ContainsFunc(t.routes, func(r Route) bool { return r.Pattern == p }) {
			out = append(out, p)
		}
	}
	slices.Sort(out)
	return out
}

// ServeHTTP serves the registered routes.
func (t *Table) ServeHTTP(w http.ResponseWriter, r *http.Request) { t.mux.ServeHTTP(w, r) }

// ErrForbidden and ErrUnauthorized are the refusals of a route's check.
var (
	ErrUnauthorized = errors.New("an API token is required (Authorization: Bearer TOKEN, Auth-Token: TOKEN, or the login session)")
	ErrForbidden    = errors.New("the token lacks the scope")
)

// Allow checks a principal against an Access (public: public_pages):
// nil, ErrUnauthorized (no principal) or ErrForbidden (a principal without
// the scope).
func Allow(a Access, p *Principal, public bool) error {
	switch {
	case a.Scope == "" || p.Can(a.Scope) || a.Public && public:
		return nil
	case p == nil:
		return ErrUnauthorized
	}
	return fmt.Errorf("%w %s", ErrForbidden, a.Scope)
}

func (t *Table) guard(a Access, h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !a.CrossOrigin {
			if err := t.cop.Check(r); err != nil {
				t.log.Info("auth: cross-origin request refused", "method", r.Method, "path", r.URL.Path,
					"origin", r.Header.Get("Origin"), "sec_fetch_site", r.Header.Get("Sec-Fetch-Site"))
				WriteError(w, http.StatusForbidden, "cross-origin request refused: state-changing requests come from crashd's own pages or from clients that are not browsers")
				return
			}
		}
		var p *Principal
		var err error
		if a.Scope == "" {
			// An open route looks up no token (a flood of uploads with
			// made-up tokens costs no store lookup); the login pages show
			// who the session is.
			if !a.CrossOrigin {
				p, err = t.authn.Session(r)
			}
		} else {
			p, err = t.authn.Resolve(r, a.Key)
		}
		switch {
		case errors.Is(err, ErrUnknownToken):
			w.Header().Set("WWW-Authenticate", `Bearer error="invalid_token"`)
			WriteError(w, http.StatusUnauthorized, "%v", err)
			return
		case err != nil:
			t.log.Error("auth: resolving the request's principal", "path", r.URL.Path, "err", err)
			WriteError(w, http.StatusServiceUnavailable, "authorization unavailable: %v", err)
			return
		}
		if err := Allow(a, p, t.public); err != nil {
			if p == nil && a.Page && (r.Method == http.MethodGet || r.Method == http.MethodHead) {
				http.Redirect(w, r, "/login?next="+url.QueryEscape(r.URL.RequestURI()), http.StatusSeeOther)
				return
			}
			if p == nil {
				w.Header().Set("WWW-Authenticate", "Bearer")
				WriteError(w, http.StatusUnauthorized, "%v", err)
				return
			}
			t.log.Info("auth: refused", "path", r.URL.Path, "token", p.Name, "scope", a.Scope)
			WriteError(w, http.StatusForbidden, "%v", err)
			return
		}
		h.ServeHTTP(w, r.WithContext(WithPrincipal(r.Context(), p)))
	})
}

// WriteError answers {"error": the formatted message} as JSON with
// status (WriteJSON): the route table's refusals and crashd's API errors.
func WriteError(w http.ResponseWriter, status int, format string, args ...any) {
	WriteJSON(w, status, map[string]string{"error": fmt.Sprintf(format, args...)})
}

// WriteJSON answers v as JSON with status: not sniffed as anything else,
// "<", ">" and "&" left as they are (crashd's API and pages' JSON).
func WriteJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("X-Content-Type-Options", "nosniff")
	w.WriteHeader(status)
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(v)
}

// Mux is where a part of crashd registers its routes: a Table, or a
// *http.ServeMux (a part served alone, its tests).
type Mux interface {
	Handle(pattern string, h http.Handler)
	HandleFunc(pattern string, f func(http.ResponseWriter, *http.Request))
}
