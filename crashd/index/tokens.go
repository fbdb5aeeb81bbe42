package index

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/gobreakpad/gobreakpad/crashd/auth"
)

// migrationAuth (schema version 8) keeps the tokens, login sessions and
// one-time login codes crashd manages at run time (auth.Manager), shared
// by every process of a deployment. Secrets are kept as their SHA-256
// only (auth.HashToken): the token's, the session cookie's (the session's
// id), the login code's. Times are TEXT in the package's fixed form, empty
// for none; scopes are comma-separated. A revoked token's row stays
// (revoked is set; the listing shows it) until a token of its name is
// created again.
const migrationAuth = `
CREATE TABLE auth_tokens (
	name    TEXT PRIMARY KEY,
	sha256  TEXT NOT NULL UNIQUE,
	scopes  TEXT NOT NULL,
	created TEXT NOT NULL,
	expires TEXT NOT NULL DEFAULT '',
	revoked TEXT NOT NULL DEFAULT ''
);
CREATE TABLE auth_sessions (
	id         TEXT PRIMARY KEY,
	csrf       TEXT NOT NULL,
	token_name TEXT NOT NULL,
	scopes     TEXT NOT NULL,
	expires    TEXT NOT NULL
);
CREATE INDEX auth_sessions_token ON auth_sessions (token_name);
CREATE INDEX auth_sessions_expires ON auth_sessions (expires);
CREATE TABLE auth_login_codes (
	hash       TEXT PRIMARY KEY,
	token_name TEXT NOT NULL,
	expires    TEXT NOT NULL
);
CREATE INDEX auth_login_codes_expires ON auth_login_codes (expires);
`

var _ auth.Manager = (*SQL)(nil)

// AuthCacheTTL is how long a process reuses an answer of TokenByHash or
// SessionByID: a token revoked, or a session ended, in another process
// stops working here within that time (in this process at once).
const AuthCacheTTL = 2 * time.Second

// authCacheMax bounds each of the cache's maps (requests with made-up
// tokens cannot grow it): a full map is emptied.
const authCacheMax = 4096

// authCache is the short memo of TokenByHash's and SessionByID's rows
// (found or not), keyed by hash and id. Validity at the time of the
// request (expiry) is decided on each answer, not cached.
type authCache struct {
	mu       sync.Mutex
	tokens   map[string]cachedToken
	sessions map[string]cachedSession
	// pruned is when expired sessions and codes were last deleted.
	pruned time.Time
}

type cachedToken struct {
	t     auth.Token
	found bool
	at    time.Time
}

type cachedSession struct {
	s            auth.Session
	tokenExpires time.Time
	found        bool
	at           time.Time
}

// forget empties the cache (a revocation or logout in this process).
func (c *authCache) forget() {
	c.mu.Lock()
	c.tokens, c.sessions = nil, nil
	c.mu.Unlock()
}

func joinScopes(s []string) string { return strings.Join(s, ",") }

func splitScopes(s string) []string {
	if s == "" {
		return nil
	}
	return strings.Split(s, ",")
}

// isHash reports whether s can be a hex SHA-256 (what the lookups take):
// anything else is not looked up at all.
func isHash(s string) bool {
	if len(s) != 64 {
		return false
	}
	for i := range len(s) {
		if c := s[i]; (c < '0' || c > '9') && (c < 'a' || c > 'f') {
			return false
		}
	}
	return true
}

// TokenByHash implements auth.Store.
func (s *SQL) TokenByHash(ctx context.Context, sha256Hex string) (auth.Token, bool, error) {
	if !isHash(sha256Hex) {
		return auth.Token{}, false, nil
	}
	now := s.now()
	c := &s.auth
	c.mu.Lock()
	e, hit := c.tokens[sha256Hex]
	c.mu.Unlock()
	if !hit || now.Sub(e.at) >= AuthCacheTTL || now.Before(e.at) {
		var scopes, created, expires string
		e = cachedToken{at: now, found: true}
		err := s.db.QueryRowContext(ctx, s.rebind(`SELECT name, sha256, scopes, created, expires FROM auth_tokens WHERE sha256 = ? AND revoked = ''`), sha256Hex).
			Scan(&e.t.Name, &e.t.SHA256, &scopes, &created, &expires)
		if errors.Is(err, sql.ErrNoRows) {
			e = cachedToken{at: now}
		} else if err != nil {
			return auth.Token{}, false, fmt.Errorf("index: token: %w", err)
		} else {
			e.t.Scopes, e.t.Created, e.t.Expires = splitScopes(scopes), parseTime(created), parseTime(expires)
		}
		c.mu.Lock()
		if c.tokens == nil || len(c.tokens) >= authCacheMax {
			c.tokens = map[string]cachedToken{}
		}
		c.tokens[sha256Hex] = e
		c.mu.Unlock()
	}
	if !e.found || !e.t.Valid(now) {
		return auth.Token{}, false, nil
	}
	e.t.Scopes = slices.Clone(e.t.Scopes)
	return e.t, true, nil
}

// PutSession implements auth.Store. It also deletes the expired sessions
// and login codes, at most once a minute.
func (s *SQL) PutSession(ctx context.Context, sess auth.Session) error {
	if !isHash(sess.ID) {
		return fmt.Errorf("index: session: the id is not a hex SHA-256")
	}
	if err := s.exec(ctx, "session", `INSERT INTO auth_sessions (id, csrf, token_name, scopes, expires) VALUES (?, ?, ?, ?, ?)`,
		sess.ID, sess.CSRF, sess.Token, joinScopes(sess.Scopes), formatTime(sess.Expires)); err != nil {
		return err
	}
	return s.pruneAuth(ctx)
}

// pruneAuth deletes expired sessions and login codes, at most once a
// minute per process.
func (s *SQL) pruneAuth(ctx context.Context) error {
	now := s.now()
	s.auth.mu.Lock()
	due := now.Sub(s.auth.pruned) >= time.Minute
	if due {
		s.auth.pruned = now
	}
	s.auth.mu.Unlock()
	if !due {
		return nil
	}
	return s.PruneAuth(ctx, now)
}

// PruneAuth deletes the sessions and login codes expired at now.
func (s *SQL) PruneAuth(ctx context.Context, now time.Time) error {
	if err := s.exec(ctx, "prune sessions", `DELETE FROM auth_sessions WHERE expires <= ?`, formatTime(now)); err != nil {
		return err
	}
	return s.exec(ctx, "prune login codes", `DELETE FROM auth_login_codes WHERE expires <= ?`, formatTime(now))
}

// SessionByID implements auth.Store. A session whose token (kept in the
// index) is revoked or expired is not answered; sessions of tokens the
// index does not keep (the configuration file's) end by their own expiry
// or logout.
func (s *SQL) SessionByID(ctx context.Context, id string) (auth.Session, bool, error) {
	if !isHash(id) {
		return auth.Session{}, false, nil
	}
	now := s.now()
	c := &s.auth
	c.mu.Lock()
	e, hit := c.sessions[id]
	c.mu.Unlock()
	if !hit || now.Sub(e.at) >= AuthCacheTTL || now.Before(e.at) {
		var scopes, expires, tokExpires string
		var revoked sql.NullString
		e = cachedSession{at: now, found: true}
		err := s.db.QueryRowContext(ctx, s.rebind(`
SELECT s.id, s.csrf, s.token_name, s.scopes, s.expires, t.revoked, COALESCE(t.expires, '')
FROM auth_sessions s LEFT JOIN auth_tokens t ON t.name = s.token_name
WHERE s.id = ?`), id).Scan(&e.s.ID, &e.s.CSRF, &e.s.Token, &scopes, &expires, &revoked, &tokExpires)
		switch {
		case errors.Is(err, sql.ErrNoRows):
			e = cachedSession{at: now}
		case err != nil:
			return auth.Session{}, false, fmt.Errorf("index: session: %w", err)
		case revoked.Valid && revoked.String != "":
			e = cachedSession{at: now}
		default:
			e.s.Scopes, e.s.Expires, e.tokenExpires = splitScopes(scopes), parseTime(expires), parseTime(tokExpires)
		}
		c.mu.Lock()
		if c.sessions == nil || len(c.sessions) >= authCacheMax {
			c.sessions = map[string]cachedSession{}
		}
		c.sessions[id] = e
		c.mu.Unlock()
	}
	if !e.found || !now.Before(e.s.Expires) || !e.tokenExpires.IsZero() && !now.Before(e.tokenExpires) {
		return auth.Session{}, false, nil
	}
	e.s.Scopes = slices.Clone(e.s.Scopes)
	return e.s, true, nil
}

// DeleteSession implements auth.Store.
func (s *SQL) DeleteSession(ctx context.Context, id string) error {
	err := s.exec(ctx, "logout", `DELETE FROM auth_sessions WHERE id = ?`, id)
	s.auth.forget()
	return err
}

// createToken is CreateToken's statement: a new row, or the row of a
// revoked token of the same name replaced.
const createToken = `
INSERT INTO auth_tokens (name, sha256, scopes, created, expires, revoked) VALUES (?, ?, ?, ?, ?, '')
ON CONFLICT (name) DO UPDATE SET sha256 = excluded.sha256, scopes = excluded.scopes, created = excluded.created,
	expires = excluded.expires, revoked = ''
WHERE auth_tokens.revoked <> ''`

// CreateToken implements auth.Tokens.
func (s *SQL) CreateToken(ctx context.Context, t auth.Token) error {
	if err := t.Check(); err != nil {
		return err
	}
	if t.Created.IsZero() {
		t.Created = s.now()
	}
	defer s.lockWrites()()
	res, err := s.db.ExecContext(ctx, s.rebind(createToken), t.Name, t.SHA256, joinScopes(t.Scopes), formatTime(t.Created), formatTime(t.Expires))
	if err != nil {
		return fmt.Errorf("index: token %q: %w", t.Name, err)
	}
	if n, err := res.RowsAffected(); err != nil {
		return fmt.Errorf("index: token %q: %w", t.Name, err)
	} else if n == 0 {
		return fmt.Errorf("token %q: %w", t.Name, auth.ErrTokenExists)
	}
	s.auth.forget() // a cached "unknown" of this hash
	return nil
}

// ListTokens implements auth.Tokens.
func (s *SQL) ListTokens(ctx context.Context) ([]auth.TokenInfo, error) {
	rows, err := s.db.QueryContext(ctx, `SELECT name, sha256, scopes, created, expires, revoked FROM auth_tokens`)
	if err != nil {
		return nil, fmt.Errorf("index: tokens: %w", err)
	}
	defer rows.Close()
	out := []auth.TokenInfo{}
	for rows.Next() {
		var t auth.TokenInfo
		var scopes, created, expires, revoked string
		if err := rows.Scan(&t.Name, &t.SHA256, &scopes, &created, &expires, &revoked); err != nil {
			return nil, fmt.Errorf("index: tokens: %w", err)
		}
		t.Scopes, t.Created, t.Expires, t.Revoked = splitScopes(scopes), parseTime(created), parseTime(expires), parseTime(revoked)
		out = append(out, t)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("index: tokens: %w", err)
	}
	slices.SortFunc(out, func(a, b auth.TokenInfo) int { return strings.Compare(a.Name, b.Name) })
	return out, nil
}

// RevokeToken implements auth.Tokens: in one transaction the token is
// marked revoked and its sessions and login codes deleted.
func (s *SQL) RevokeToken(ctx context.Context, name string) error {
	err := s.inTx(ctx, func(tx *sql.Tx) error {
		res, err := tx.ExecContext(ctx, s.rebind(`UPDATE auth_tokens SET revoked = ? WHERE name = ? AND revoked = ''`), formatTime(s.now()), name)
		if err != nil {
			return err
		}
		if n, err := res.RowsAffected(); err != nil {
			return err
		} else if n == 0 {
			var one int
			err := tx.QueryRowContext(ctx, s.rebind(`SELECT 1 FROM auth_tokens WHERE name = ?`), name).Scan(&one)
			if errors.Is(err, sql.ErrNoRows) {
				return fmt.Errorf("token %q: %w", name, auth.ErrNoToken)
			}
			if err != nil {
				return err
			}
		}
		if _, err := tx.ExecContext(ctx, s.rebind(`DELETE FROM auth_sessions WHERE token_name = ?`), name); err != nil {
			return err
		}
		_, err = tx.ExecContext(ctx, s.rebind(`DELETE FROM auth_login_codes WHERE token_name = ?`), name)
		return err
	})
	s.auth.forget()
	if err != nil && !errors.Is(err, auth.ErrNoToken) {
		return fmt.Errorf("index: revoke %q: %w", name, err)
	}
	return err
}

// inTx runs f in a transaction (a write: on SQLite under wmu and BEGIN
// IMMEDIATE), committed when f returns nil.
func (s *SQL) inTx(ctx context.Context, f func(tx *sql.Tx) error) error {
	defer s.lockWrites()()
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	defer tx.Rollback()
	if err := f(tx); err != nil {
		return err
	}
	return tx.Commit()
}

// insertCode keeps a login code for a token that is kept and not revoked.
const insertCode = `INSERT INTO auth_login_codes (hash, token_name, expires) SELECT ?, name, ? FROM auth_tokens WHERE name = ? AND revoked = ''`

// newCode makes a login code for the token named name in tx.
func (s *SQL) newCode(ctx context.Context, tx *sql.Tx, name string, ttl time.Duration) (string, error) {
	code, err := auth.NewSecret(16)
	if err != nil {
		return "", err
	}
	res, err := tx.ExecContext(ctx, s.rebind(insertCode), auth.HashToken(code), formatTime(s.now().Add(ttl)), name)
	if err != nil {
		return "", err
	}
	if n, err := res.RowsAffected(); err != nil {
		return "", err
	} else if n == 0 {
		return "", fmt.Errorf("token %q: %w", name, auth.ErrNoToken)
	}
	return code, nil
}

// NewLoginCode implements auth.Manager.
func (s *SQL) NewLoginCode(ctx context.Context, token string, ttl time.Duration) (string, error) {
	if ttl <= 0 {
		ttl = auth.LoginCodeTTL
	}
	var code string
	err := s.inTx(ctx, func(tx *sql.Tx) (err error) {
		code, err = s.newCode(ctx, tx, token, ttl)
		return err
	})
	if err != nil {
		if errors.Is(err, auth.ErrNoToken) {
			return "", err
		}
		return "", fmt.Errorf("index: login code: %w", err)
	}
	return code, s.pruneAuth(ctx)
}

// ConsumeLoginCode implements auth.Manager: the code's row is deleted and
// read in one statement (DELETE ... RETURNING), so two requests with one
// code cannot both get it.
func (s *SQL) ConsumeLoginCode(ctx context.Context, code string) (auth.Token, bool, error) {
	if code == "" || len(code) > 128 {
		return auth.Token{}, false, nil
	}
	var name, expires string
	err := func() error {
		defer s.lockWrites()()
		return s.db.QueryRowContext(ctx, s.rebind(`DELETE FROM auth_login_codes WHERE hash = ? RETURNING token_name, expires`), auth.HashToken(code)).Scan(&name, &expires)
	}()
	if errors.Is(err, sql.ErrNoRows) {
		return auth.Token{}, false, nil
	}
	if err != nil {
		return auth.Token{}, false, fmt.Errorf("index: login code: %w", err)
	}
	now := s.now()
	if !now.Before(parseTime(expires)) {
		return auth.Token{}, false, nil
	}
	var t auth.Token
	var scopes, created, texp string
	err = s.db.QueryRowContext(ctx, s.rebind(`SELECT name, sha256, scopes, created, expires FROM auth_tokens WHERE name = ? AND revoked = ''`), name).
		Scan(&t.Name, &t.SHA256, &scopes, &created, &texp)
	if errors.Is(err, sql.ErrNoRows) {
		return auth.Token{}, false, nil
	}
	if err != nil {
		return auth.Token{}, false, fmt.Errorf("index: login code: %w", err)
	}
	t.Scopes, t.Created, t.Expires = splitScopes(scopes), parseTime(created), parseTime(texp)
	if !t.Valid(now) {
		return auth.Token{}, false, nil
	}
	return t, true, nil
}

// EnsureFirstToken keeps t, and a one-time login code for it working for
// auth.LoginCodeTTL, if and only if the index keeps no token at all (a
// revoked one counts: a deployment whose tokens were all revoked gets no
// new one by restarting). It runs in one transaction under a lock
// (SQLite's one writer; PostgreSQL's transaction advisory lock), so of
// several processes starting at once on one empty index exactly one
// makes it. keep, when not nil, is called before the commit (to write the
// secret where its owner finds it): its error rolls everything back; the
// caller undoes what keep did when EnsureFirstToken returns an error.
// created is false, and code empty, when the index keeps tokens already.
func (s *SQL) EnsureFirstToken(ctx context.Context, t auth.Token, keep func() error) (code string, created bool, err error) {
	if err := t.Check(); err != nil {
		return "", false, err
	}
	if t.Created.IsZero() {
		t.Created = s.now()
	}
	err = s.inTx(ctx, func(tx *sql.Tx) error {
		if err := s.d.txLock(ctx, tx); err != nil {
			return err
		}
		var n int
		if err := tx.QueryRowContext(ctx, `SELECT COUNT(*) FROM auth_tokens`).Scan(&n); err != nil {
			return err
		}
		if n > 0 {
			return nil
		}
		if _, err := tx.ExecContext(ctx, s.rebind(createToken), t.Name, t.SHA256, joinScopes(t.Scopes), formatTime(t.Created), formatTime(t.Expires)); err != nil {
			return err
		}
		var err error
		if code, err = s.newCode(ctx, tx, t.Name, auth.LoginCodeTTL); err != nil {
			return err
		}
		if keep != nil {
			if err := keep(); err != nil {
				return err
			}
		}
		created = true
		return nil
	})
	if err != nil {
		return "", false, fmt.Errorf("index: first token: %w", err)
	}
	s.auth.forget()
	return code, created, nil
}
