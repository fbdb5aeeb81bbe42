package auth

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"
)

// The management of the tokens a Store keeps: what `crashd token ...`,
// the tokens page and the first run of `crashd serve` do, whether the
// store is the index itself (crashd/index) or a running server reached
// through its control socket (crashd/control).

// Errors of token management.
var (
	// ErrTokenExists: a token of that name is kept (and not revoked).
	ErrTokenExists = errors.New("a token of that name exists")
	// ErrNoToken: no token of that name is kept.
	ErrNoToken = errors.New("no token of that name")
)

// LoginCodeTTL is how long a one-time login code works.
const LoginCodeTTL = 15 * time.Minute

// TokenInfo is a kept token as a listing shows it.
type TokenInfo struct {
	Token
	// Revoked, when not zero, is when the token was revoked.
	Revoked time.Time `json:"revoked,omitzero"`
}

// State says whether the token works at now: "active", "expired" or
// "revoked".
func (t *TokenInfo) State(now time.Time) string {
	switch {
	case !t.Revoked.IsZero():
		return "revoked"
	case !t.Valid(now):
		return "expired"
	}
	return "active"
}

// Tokens manages the tokens a Store keeps.
type Tokens interface {
	// CreateToken keeps a new token (t.Check must pass); a token of the
	// same name that is kept and not revoked is ErrTokenExists (a revoked
	// one is replaced).
	CreateToken(ctx context.Context, t Token) error
	// ListTokens returns every kept token, revoked and expired ones too,
	// by name.
	ListTokens(ctx context.Context) ([]TokenInfo, error)
	// RevokeToken revokes the token named name and ends its sessions;
	// ErrNoToken when there is none (revoking a revoked token again is
	// not an error).
	RevokeToken(ctx context.Context, name string) error
}

// Manager is a Store with its management and one-time login codes
// (crashd/index implements it).
type Manager interface {
	Store
	Tokens
	// NewLoginCode returns a new one-time login code for the kept token
	// named token, working once within ttl (only its hash is kept).
	NewLoginCode(ctx context.Context, token string, ttl time.Duration) (code string, err error)
	// ConsumeLoginCode uses a login code up, atomically (of concurrent
	// callers at most one gets it), and returns its token; ok is false
	// when the code is unknown, used, expired, or its token was revoked
	// or has expired since.
	ConsumeLoginCode(ctx context.Context, code string) (t Token, ok bool, err error)
}

// ParseExpiry reads when a new token expires, as `crashd token create
// --expires` and the tokens page take it: empty for never, a duration
// from now ("720h", "90m"), a date ("2027-01-31", the end of that day in
// UTC) or an RFC 3339 time. It must be after now.
func ParseExpiry(s string, now time.Time) (time.Time, error) {
	s = strings.TrimSpace(s)
	if s == "" {
		return time.Time{}, nil
	}
	var t time.Time
	if d, err := time.ParseDuration(s); err == nil {
		t = now.Add(d)
	} else if day, err := time.Parse(time.DateOnly, s); err == nil {
		t = day.AddDate(0, 0, 1)
	} else if t, err = time.Parse(time.RFC3339, s); err != nil {
		return time.Time{}, fmt.Errorf("expiry %q: a duration (720h), a date (2027-01-31) or an RFC 3339 time", s)
	}
	if t = t.UTC().Truncate(time.Second); !t.After(now) {
		return time.Time{}, fmt.Errorf("expiry %q: not in the future", s)
	}
	return t, nil
}
