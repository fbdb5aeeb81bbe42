// Package auth is crashd's one home for who may do what: the token scopes
// and what each implies, API tokens (kept as a SHA-256 of their secret),
// login sessions, and Store, where a deployment keeps the tokens and
// sessions it manages at run time (crashd/index implements it, so every
// process of a deployment sees them). The route table that names the
// scope each HTTP route requires, and the resolution of a request to its
// Principal, build on this vocabulary.
package auth

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/hex"
	"errors"
	"fmt"
	"slices"
	"time"
)

// The token scopes.
const (
	// ScopeViewCrashes shows crashes: the pages, the API's crashes and
	// their processed walk, search.
	ScopeViewCrashes = "view_crashes"
	// ScopeViewPII shows the annotations marked personal.
	ScopeViewPII = "view_pii"
	// ScopeViewRawDump allows downloading a crash's dumps and memory.
	ScopeViewRawDump = "view_rawdump"
	// ScopeReprocess allows queueing a crash again.
	ScopeReprocess = "reprocess"
	// ScopeUpload allows symbol uploads.
	ScopeUpload = "upload_symbols"
	// ScopeTriage allows changing a signature's triage state and links.
	ScopeTriage = "triage"
	// ScopeAdmin manages tokens; it implies every other scope.
	ScopeAdmin = "admin"
)

// Scopes are the known scopes.
var Scopes = []string{ScopeViewCrashes, ScopeViewPII, ScopeViewRawDump, ScopeReprocess, ScopeUpload, ScopeTriage, ScopeAdmin}

// Known reports whether s is a known scope.
func Known(s string) bool { return slices.Contains(Scopes, s) }

// implies lists, for a scope, the other scopes it grants. Tokens of
// configuration files written before view_crashes existed hold view_pii,
// view_rawdump or reprocess and could read crashes: they still can.
// upload_symbols alone (a CI secret) reads nothing.
var implies = map[string][]string{
	ScopeViewPII:     {ScopeViewCrashes},
	ScopeViewRawDump: {ScopeViewCrashes},
	ScopeReprocess:   {ScopeViewCrashes},
	ScopeTriage:      {ScopeViewCrashes},
	ScopeAdmin:       {ScopeViewCrashes, ScopeViewPII, ScopeViewRawDump, ScopeReprocess, ScopeUpload, ScopeTriage},
}

// Expand returns scopes with every scope they imply, sorted, without
// duplicates.
func Expand(scopes []string) []string {
	out := slices.Clone(scopes)
	for _, s := range scopes {
		out = append(out, implies[s]...)
	}
	slices.Sort(out)
	return slices.Compact(out)
}

// Token is an API token as crashd keeps it: its SHA-256 (the secret itself
// is never stored), whose it is and what it may do. The JSON form is the
// configuration file's (symbol_server.tokens).
type Token struct {
	// Name says whose token it is (logs, revocation); unique among the
	// tokens a Store keeps.
	Name string `json:"name"`
	// SHA256 is HashToken of the secret, in hex.
	SHA256 string `json:"sha256"`
	// Scopes are what the token allows (as given; Expand adds what they
	// imply).
	Scopes []string `json:"scopes"`
	// Created is when the token was made (zero when unknown).
	Created time.Time `json:"created,omitzero"`
	// Expires, when not zero, is when the token stops working.
	Expires time.Time `json:"expires,omitzero"`
}

// Valid reports whether the token works at now (not expired).
func (t *Token) Valid(now time.Time) bool { return t.Expires.IsZero() || now.Before(t.Expires) }

// Check returns an error for a token that cannot work: a name, a 64-digit
// hex hash and known scopes.
func (t *Token) Check() error {
	if t.Name == "" {
		return errors.New("token: no name")
	}
	if b, err := hex.DecodeString(t.SHA256); err != nil || len(b) != sha256.Size {
		return fmt.Errorf("token %q: sha256 is not 64 hex digits", t.Name)
	}
	for _, s := range t.Scopes {
		if !Known(s) {
			return fmt.Errorf("token %q: unknown scope %q", t.Name, s)
		}
	}
	return nil
}

// Matches reports, in constant time, whether secret is the token's.
func (t *Token) Matches(secret string) bool {
	want, err := hex.DecodeString(t.SHA256)
	sum := sha256.Sum256([]byte(secret))
	return err == nil && subtle.ConstantTimeCompare(sum[:], want) == 1
}

// HashToken returns the hex SHA-256 of a secret (a token's, a session
// cookie's, a login code's): the form in which crashd keeps them.
func HashToken(secret string) string {
	h := sha256.Sum256([]byte(secret))
	return hex.EncodeToString(h[:])
}

// NewSecret returns a new random secret of n random bytes, in hex.
func NewSecret(n int) (string, error) {
	b := make([]byte, n)
	if _, err := rand.Read(b); err != nil {
		return "", fmt.Errorf("random secret: %w", err)
	}
	return hex.EncodeToString(b), nil
}

// NewToken returns a new random secret (32 hex digits) and its Token with
// the given scopes, created now.
func NewToken(name string, scopes ...string) (secret string, t Token, err error) {
	if secret, err = NewSecret(16); err != nil {
		return "", Token{}, fmt.Errorf("token: %w", err)
	}
	return secret, Token{Name: name, SHA256: HashToken(secret), Scopes: scopes, Created: time.Now().UTC().Truncate(time.Second)}, nil
}

// Session is a login: a cookie whose secret's hash is ID, made from the
// token named Token, carrying that token's scopes and a CSRF secret for
// the forms of its pages.
type Session struct {
	// ID is HashToken of the cookie's value (a stolen copy of the store
	// does not give the cookies).
	ID string
	// CSRF is the secret the session's forms carry.
	CSRF string
	// Token is the name of the token the session was made from; revoking
	// the token ends its sessions.
	Token string
	// Scopes are the token's scopes at login.
	Scopes []string
	// Expires is when the session ends.
	Expires time.Time
}

// Store keeps the tokens and sessions a deployment manages at run time,
// shared by every process that serves it (crashd/index implements it).
// Tokens of the configuration file are not in it.
type Store interface {
	// TokenByHash returns the token whose secret hashes to sha256Hex
	// (HashToken); ok is false when there is none, or it was revoked or
	// has expired.
	TokenByHash(ctx context.Context, sha256Hex string) (t Token, ok bool, err error)
	// PutSession keeps a new session.
	PutSession(ctx context.Context, s Session) error
	// SessionByID returns the session whose ID is id; ok is false when
	// there is none or it has expired, or its token was revoked.
	SessionByID(ctx context.Context, id string) (s Session, ok bool, err error)
	// DeleteSession ends a session (logout).
	DeleteSession(ctx context.Context, id string) error
}
