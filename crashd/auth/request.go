package auth

import (
	"context"
	"crypto/subtle"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"time"
	"unicode"
)

// Principal is who a request is: the token it carried (or the token a
// session cookie was made from) and what that token allows.
type Principal struct {
	// Name is the token's name.
	Name string
	// Scopes are the token's scopes, expanded (Expand).
	Scopes []string
	// Session is the login session when the request came with the
	// session cookie (nil for a token in a header).
	Session *Session
}

// Can reports whether p has scope (directly or implied). A nil Principal
// (anonymous) has none.
func (p *Principal) Can(scope string) bool { return p != nil && slices.Contains(p.Scopes, scope) }

type ctxKey struct{}

// WithPrincipal returns ctx carrying p.
func WithPrincipal(ctx context.Context, p *Principal) context.Context {
	return context.WithValue(ctx, ctxKey{}, p)
}

// FromContext returns the principal the route table resolved for the
// request (nil: anonymous).
func FromContext(ctx context.Context) *Principal {
	p, _ := ctx.Value(ctxKey{}).(*Principal)
	return p
}

// SessionCookie is the name of the login session's cookie.
const SessionCookie = "crashd_session"

// DefaultSessionTTL bounds a login session when Authenticator.SessionTTL
// is 0.
const DefaultSessionTTL = 12 * time.Hour

// ErrUnknownToken is the error of a request whose token (or session
// cookie) is not known, revoked or expired.
var ErrUnknownToken = errors.New("unknown, revoked or expired API token")

// Authenticator resolves requests to their Principal: the tokens of the
// configuration file, those a Store keeps, and login sessions (kept in
// the Store, or in memory when there is none).
type Authenticator struct {
	// Tokens are the configuration's tokens (symbol_server.tokens, and
	// api_token as a token with the reprocess scope), their SHA256 in
	// lower case (NewAuthenticator).
	Tokens []Token
	// Store keeps the run-time tokens and the sessions; nil: no run-time
	// tokens, and sessions in this process's memory (NewMemory).
	Store Store
	// SessionTTL bounds a login session (0: DefaultSessionTTL).
	SessionTTL time.Duration
	// Now is the clock (tests); nil is time.Now.
	Now func() time.Time
}

// NewAuthenticator checks the configuration's tokens and returns the
// Authenticator over them and store (nil: a Memory for the sessions).
func NewAuthenticator(tokens []Token, store Store) (*Authenticator, error) {
	tokens = slices.Clone(tokens)
	for i := range tokens {
		if err := tokens[i].Check(); err != nil {
			return nil, fmt.Errorf("auth: token %d: %w", i, err)
		}
		tokens[i].SHA256 = strings.ToLower(tokens[i].SHA256)
	}
	if store == nil {
		store = NewMemory()
	}
	return &Authenticator{Tokens: tokens, Store: store}, nil
}

func (a *Authenticator) now() time.Time {
	if a.Now != nil {
		return a.Now()
	}
	return time.Now()
}

// Token returns the token whose secret is secret: the configuration's
// first, then the Store's; ok is false for none (or expired).
func (a *Authenticator) Token(ctx context.Context, secret string) (t Token, ok bool, err error) {
	if secret == "" {
		return Token{}, false, nil
	}
	// One hash, compared with each token's in constant time.
	h := []byte(HashToken(secret))
	for _, t := range a.Tokens {
		if subtle.ConstantTimeCompare([]byte(t.SHA256), h) == 1 {
			return t, t.Valid(a.now()), nil
		}
	}
	if a.Store == nil {
		return Token{}, false, nil
	}
	t, ok, err = a.Store.TokenByHash(ctx, HashToken(secret))
	if err != nil {
		return Token{}, false, fmt.Errorf("auth: token: %w", err)
	}
	return t, ok && t.Valid(a.now()), nil
}

// Secret returns the token a request carries in a header:
// "Authorization: Bearer TOKEN" or "Auth-Token: TOKEN" (Tecken's).
func Secret(r *http.Request) string {
	if s, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer "); ok {
		return strings.TrimSpace(s)
	}
	return strings.TrimSpace(r.Header.Get("Auth-Token"))
}

// Resolve returns the request's principal: the token of its header (key,
// when not empty, is a token given in the URL's query instead, for
// Breakpad's sym-upload-v1 clients which cannot send headers), else the
// session of its cookie. (nil, nil) is anonymous; ErrUnknownToken a
// token or cookie that is not (or no longer) known.
func (a *Authenticator) Resolve(r *http.Request, key string) (*Principal, error) {
	secret := Secret(r)
	if secret == "" && key != "" {
		secret = r.URL.Query().Get(key)
	}
	if secret != "" {
		t, ok, err := a.Token(r.Context(), secret)
		if err != nil {
			return nil, err
		}
		if !ok {
			return nil, ErrUnknownToken
		}
		return &Principal{Name: t.Name, Scopes: Expand(t.Scopes)}, nil
	}
	return a.Session(r)
}

// Session returns the principal of the request's session cookie, nil
// without one (or for one that ended).
func (a *Authenticator) Session(r *http.Request) (*Principal, error) {
	c, err := r.Cookie(SessionCookie)
	if err != nil || c.Value == "" || a.Store == nil {
		return nil, nil
	}
	s, ok, err := a.Store.SessionByID(r.Context(), HashToken(c.Value))
	if err != nil {
		return nil, fmt.Errorf("auth: session: %w", err)
	}
	if !ok || !a.now().Before(s.Expires) {
		// An old cookie: anonymous (the login page sets a new one).
		return nil, nil
	}
	return &Principal{Name: s.Token, Scopes: Expand(s.Scopes), Session: &s}, nil
}

// Login makes a session of the token whose secret is given: it returns
// the cookie's value (the session's ID is its hash) and the session.
func (a *Authenticator) Login(ctx context.Context, secret string) (cookie string, s Session, err error) {
	t, ok, err := a.Token(ctx, secret)
	if err != nil {
		return "", Session{}, err
	}
	if !ok {
		return "", Session{}, ErrUnknownToken
	}
	return a.NewSession(ctx, t)
}

// NewSession makes a session of token t (a login, or a one-time login
// code used up): it returns the cookie's value (the session's ID is its
// hash) and the session, which ends with the token if it expires first.
func (a *Authenticator) NewSession(ctx context.Context, t Token) (cookie string, s Session, err error) {
	if a.Store == nil {
		return "", Session{}, errors.New("auth: login: no session store")
	}
	if cookie, err = NewSecret(24); err != nil {
		return "", Session{}, err
	}
	csrf, err := NewSecret(24)
	if err != nil {
		return "", Session{}, err
	}
	ttl := a.SessionTTL
	if ttl <= 0 {
		ttl = DefaultSessionTTL
	}
	s = Session{ID: HashToken(cookie), CSRF: csrf, Token: t.Name, Scopes: slices.Clone(t.Scopes), Expires: a.now().Add(ttl)}
	if !t.Expires.IsZero() && t.Expires.Before(s.Expires) {
		s.Expires = t.Expires
	}
	if err := a.Store.PutSession(ctx, s); err != nil {
		return "", Session{}, fmt.Errorf("auth: login: %w", err)
	}
	return cookie, s, nil
}

// Logout ends the session id.
func (a *Authenticator) Logout(ctx context.Context, id string) error {
	if a.Store == nil {
		return nil
	}
	return a.Store.DeleteSession(ctx, id)
}

// SafeNext returns s when it is a local path to go to after a login (or
// any redirect a request names), else "/": it must start with one "/",
// and hold no backslash, whitespace (a tab included: browsers drop it,
// and "/\t/evil.com" becomes "//evil.com"), control character, scheme or
// host; its path not even once percent-decoded.
func SafeNext(s string) string {
	if !localPath(s) {
		return "/"
	}
	path, _, _ := strings.Cut(s, "?")
	if d, err := url.PathUnescape(path); err != nil || !localPath(d) {
		return "/"
	}
	u, err := url.Parse(s)
	if err != nil || u.Scheme != "" || u.Host != "" || u.User != nil || u.Opaque != "" {
		return "/"
	}
	return s
}

func localPath(s string) bool {
	if len(s) > 4096 || !strings.HasPrefix(s, "/") || strings.HasPrefix(s, "//") {
		return false
	}
	for _, r := range s {
		if r == '\\' || r < 0x20 || r == 0x7f || unicode.IsSpace(r) || unicode.IsControl(r) || r == unicode.ReplacementChar {
			return false
		}
	}
	return true
}
