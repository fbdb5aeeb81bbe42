package web

import (
	"errors"
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/gobreakpad/gobreakpad/crashd/auth"
)

// The tokens page (scope admin) and the one-time login link: the run-time
// tokens of Config.Manager (crashd/index), listed, created (the secret
// shown once, in the answer to the form, never in a URL) and revoked,
// with forms carrying the session's CSRF field and no JavaScript.
//
//	GET  /tokens          the tokens and the form of a new one
//	POST /tokens          create (name, scope..., expires): the page with the secret
//	POST /tokens/revoke   revoke (name)
//	GET  /login?code=     a one-time login code (the first run's link) made a session

// registerTokens adds the tokens page to mux.
func (w *Web) registerTokens(mux auth.Mux) {
	mux.HandleFunc("GET /tokens", w.page(w.tokensPage, "tokens"))
	mux.HandleFunc("POST /tokens", w.tokensPost(w.createToken))
	mux.HandleFunc("POST /tokens/revoke", w.tokensPost(w.revokeToken))
}

// tokensData is the tokens page's data.
type tokensData struct {
	Tokens []tokenRow
	Scopes []string
	// Secret is the new token's secret, shown once; Created its name.
	Secret, Created string
	// Revoked names the token just revoked.
	Revoked string
	// Form is what the creation form held (kept when it failed).
	Form struct {
		Name, Expires string
		Scopes        []string
	}
}

// tokenRow is a token as the page lists it.
type tokenRow struct {
	auth.TokenInfo
	State string
}

// Has reports whether the form held scope (the checkboxes).
func (d *tokensData) Has(scope string) bool { return slices.Contains(d.Form.Scopes, scope) }

func (w *Web) tokensData(r *http.Request, p *principal) (*tokensData, error) {
	if !p.Can(auth.ScopeAdmin) {
		return nil, httpErr(http.StatusForbidden, "the tokens page needs a token with the admin scope")
	}
	if w.cfg.Manager == nil {
		return nil, httpErr(http.StatusNotFound, "this server keeps no tokens of its own (only the configuration file's)")
	}
	list, err := w.cfg.Manager.ListTokens(r.Context())
	if err != nil {
		return nil, err
	}
	d := &tokensData{Scopes: auth.Scopes}
	now := w.cfg.Now()
	for _, t := range list {
		d.Tokens = append(d.Tokens, tokenRow{TokenInfo: t, State: t.State(now)})
	}
	d.Form.Scopes = []string{auth.ScopeViewCrashes}
	return d, nil
}

func (w *Web) tokensPage(r *http.Request, p *principal) (any, error) { return w.tokensData(r, p) }

// tokensPost wraps a form's action: a session (or a header token) with
// the admin scope, the session's CSRF field; the page is rendered with
// what the action did.
func (w *Web) tokensPost(act func(r *http.Request, p *principal, d *tokensData) error) http.HandlerFunc {
	return func(rw http.ResponseWriter, r *http.Request) {
		securityHeaders(rw.Header())
		rw.Header().Set("Cache-Control", "no-store")
		r.Body = http.MaxBytesReader(rw, r.Body, 1<<16)
		p := who(r)
		if p == nil {
			http.Redirect(rw, r, "/login?next=/tokens", http.StatusSeeOther)
			return
		}
		l := layout{Page: "tokens", Who: p, Path: "/tokens"}
		if p.Session != nil {
			l.CSRF = p.Session.CSRF
		}
		fail := func(code int, msg string) {
			l.Page, l.Error, l.Data = "error", msg, nil
			w.render(rw, code, l)
		}
		if err := r.ParseForm(); err != nil {
			fail(http.StatusBadRequest, "a form")
			return
		}
		if !checkCSRF(r, p) {
			fail(http.StatusForbidden, "the form's csrf field does not match the session")
			return
		}
		d, err := w.tokensData(r, p)
		if err != nil {
			fail(statusOf(err), err.Error())
			return
		}
		code := http.StatusOK
		if err := act(r, p, d); err != nil {
			code = http.StatusBadRequest
			if errors.Is(err, auth.ErrTokenExists) {
				code = http.StatusConflict
			} else if errors.Is(err, auth.ErrNoToken) {
				code = http.StatusNotFound
			}
			l.Error = err.Error()
		}
		// The list again, with what the action changed.
		if fresh, err := w.tokensData(r, p); err == nil {
			d.Tokens = fresh.Tokens
		}
		l.Data = d
		w.render(rw, code, l)
	}
}

func (w *Web) createToken(r *http.Request, p *principal, d *tokensData) error {
	f := r.PostForm
	d.Form.Name, d.Form.Expires, d.Form.Scopes = strings.TrimSpace(f.Get("name")), f.Get("expires"), f["scope"]
	if d.Form.Name == "" || len(d.Form.Name) > 200 {
		return errors.New("a name (at most 200 bytes) for the new token")
	}
	if len(d.Form.Scopes) == 0 {
		return errors.New("at least one scope")
	}
	for _, s := range d.Form.Scopes {
		if !auth.Known(s) {
			return errors.New("unknown scope " + s)
		}
	}
	exp, err := auth.ParseExpiry(d.Form.Expires, w.cfg.Now())
	if err != nil {
		return err
	}
	secret, tok, err := auth.NewToken(d.Form.Name, d.Form.Scopes...)
	if err != nil {
		return err
	}
	tok.Expires = exp
	if err := w.cfg.Manager.CreateToken(r.Context(), tok); err != nil {
		return err
	}
	w.log.Info("web: token created", "token", tok.Name, "scopes", tok.Scopes, "by", p.Name)
	d.Secret, d.Created = secret, tok.Name
	d.Form.Name, d.Form.Expires = "", ""
	return nil
}

func (w *Web) revokeToken(r *http.Request, p *principal, d *tokensData) error {
	name := r.PostForm.Get("name")
	if err := w.cfg.Manager.RevokeToken(r.Context(), name); err != nil {
		return err
	}
	w.log.Info("web: token revoked", "token", name, "by", p.Name)
	d.Revoked = name
	return nil
}

// loginCode makes a one-time login code (GET /login?code=..., the link
// the first run prints) into a session: the code is used up whether or
// not the browser keeps the cookie.
func (w *Web) loginCode(rw http.ResponseWriter, r *http.Request, code string) {
	securityHeaders(rw.Header())
	rw.Header().Set("Cache-Control", "no-store")
	next := auth.SafeNext(r.URL.Query().Get("next"))
	if w.cfg.Manager == nil {
		w.render(rw, http.StatusNotFound, layout{Page: "login", Error: "this server makes no login links", Data: map[string]string{"Next": next}})
		return
	}
	t, ok, err := w.cfg.Manager.ConsumeLoginCode(r.Context(), code)
	if err != nil {
		w.log.Warn("web: login code", "err", err)
		w.render(rw, http.StatusInternalServerError, layout{Page: "login", Error: "the login link could not be checked", Data: map[string]string{"Next": next}})
		return
	}
	if !ok {
		w.render(rw, http.StatusForbidden, layout{Page: "login", Error: "this login link was used already or has expired: log in with the token",
			Data: map[string]string{"Next": next}})
		return
	}
	if w.cfg.Auth == nil {
		w.render(rw, http.StatusServiceUnavailable, layout{Page: "login", Error: "logins are not configured", Data: map[string]string{"Next": next}})
		return
	}
	cookie, s, err := w.cfg.Auth.NewSession(r.Context(), t)
	if err != nil {
		w.log.Error("web: login code", "err", err)
		w.render(rw, http.StatusServiceUnavailable, layout{Page: "login", Error: "the login failed; try again", Data: map[string]string{"Next": next}})
		return
	}
	http.SetCookie(rw, &http.Cookie{Name: SessionCookie, Value: cookie, Path: "/", HttpOnly: true, Secure: w.cfg.SecureCookie,
		SameSite: http.SameSiteLaxMode, Expires: s.Expires})
	w.log.Info("web: login with a one-time code", "token", t.Name)
	http.Redirect(rw, r, next, http.StatusSeeOther)
}

// expiresText is a token's expiry as the page shows it.
func expiresText(t time.Time) string {
	if t.IsZero() {
		return "never"
	}
	return t.UTC().Format("2006-01-02 15:04 MST")
}
