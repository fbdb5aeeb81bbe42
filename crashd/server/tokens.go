package server

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/gobreakpad/gobreakpad/crashd/auth"
	"github.com/gobreakpad/gobreakpad/crashd/control"
	"github.com/gobreakpad/gobreakpad/crashd/index"
)

// AdminTokenFile is the file of the data directory where the first run
// writes the secret of the token it makes (mode 0600).
const AdminTokenFile = "admin-token"

// AdminTokenName is the name of the token the first run makes.
const AdminTokenName = "admin"

// FirstRun is what a process made when it found no token at all: the
// token AdminTokenName (scope admin), its secret in TokenFile, and a
// one-time login code for it.
type FirstRun struct {
	// TokenFile holds the admin token's secret.
	TokenFile string
	// Code is the one-time login code (GET /login?code=CODE), working
	// once until Expires.
	Code    string
	Expires time.Time
}

// LoginLink is the first run's login link at the server's base URL.
func (f *FirstRun) LoginLink(base string) string {
	return strings.TrimSuffix(base, "/") + "/login?code=" + url.QueryEscape(f.Code)
}

// LocalAddr is the address to reach a server listening on listen from
// this machine: a listen address without a host, or with an unspecified
// one (0.0.0.0, ::), is reached on 127.0.0.1.
func LocalAddr(listen string) string {
	host, port, err := net.SplitHostPort(listen)
	if err != nil {
		return listen
	}
	if ip := net.ParseIP(host); host == "" || ip != nil && ip.IsUnspecified() {
		host = "127.0.0.1"
	}
	return net.JoinHostPort(host, port)
}

// BaseURL is the URL people reach the server at, for the links it gives
// out (the first run's login link): public_url, or http:// and the
// address it listens on (listen: the listener's actual address, or the
// configured one) as reached from this machine.
func (c *Config) BaseURL(listen string) string {
	if c.PublicURL != "" {
		return strings.TrimSuffix(c.PublicURL, "/")
	}
	if listen == "" {
		listen = c.Listen
	}
	return "http://" + LocalAddr(listen)
}

// checkPublicURL checks public_url: an absolute http or https URL with a
// host, no query or fragment.
func checkPublicURL(s string) error {
	if s == "" {
		return nil
	}
	u, err := url.Parse(s)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || u.RawQuery != "" || u.Fragment != "" || u.User != nil {
		return fmt.Errorf("config: public_url %q: an http:// or https:// URL with a host and no query", s)
	}
	return nil
}

// firstRun makes the first token when the deployment has none: none in
// the configuration file, none in the index (a revoked one counts). Of
// several processes starting at once on one index exactly one makes it
// (index.SQL.EnsureFirstToken), writing its secret to DATA/admin-token
// (0600) before the token is committed; the secret never appears in a
// URL or a log.
func (s *Server) firstRun(ctx context.Context, ix *index.SQL) error {
	if len(s.cfg.SymbolServer.Tokens) > 0 {
		return nil
	}
	secret, tok, err := auth.NewToken(AdminTokenName, auth.ScopeAdmin)
	if err != nil {
		return err
	}
	file := filepath.Join(s.cfg.Data, AdminTokenFile)
	code, created, err := ix.EnsureFirstToken(ctx, tok, func() error { return writeSecret(file, secret) })
	if err != nil {
		os.Remove(file)
		return fmt.Errorf("first run: %w", err)
	}
	if created {
		s.first = &FirstRun{TokenFile: file, Code: code, Expires: time.Now().Add(auth.LoginCodeTTL)}
	}
	return nil
}

// writeSecret writes a secret to path, mode 0600, durably, replacing
// what is there (written under a temporary name and renamed).
func writeSecret(path, secret string) error {
	f, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+"-*")
	if err != nil {
		return err
	}
	tmp := f.Name()
	err = f.Chmod(0o600)
	if err == nil {
		_, err = f.WriteString(secret + "\n")
	}
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp, path)
	}
	if err != nil {
		os.Remove(tmp)
		return fmt.Errorf("%s: %w", path, err)
	}
	return nil
}

// FirstRun returns what the first run made, nil when this process made
// nothing.
func (s *Server) FirstRun() *FirstRun { return s.first }

// Tokens returns the token management of the server's index (nil when
// the index has none).
func (s *Server) Tokens() auth.Manager {
	m, _ := s.ix.(auth.Manager)
	return m
}

// isPostgres reports whether a configuration's db names PostgreSQL.
func isPostgres(db string) bool {
	return strings.HasPrefix(db, "postgres://") || strings.HasPrefix(db, "postgresql://")
}

// OpenTokens returns the token management of the deployment cfg
// describes, for `crashd token ...`, and its release: with PostgreSQL the
// shared index itself (every process sees a change within
// index.AuthCacheTTL); with SQLite, when no crashd holds the data
// directory, its index (the data directory's lock held until the
// release, so that no server starts meanwhile), and when one does, that
// server through its control socket (DATA/crashd.sock).
func OpenTokens(ctx context.Context, cfg Config) (auth.Tokens, func(), error) {
	if isPostgres(cfg.DB) {
		ix, err := index.OpenPostgres(ctx, cfg.DB)
		if err != nil {
			return nil, nil, err
		}
		return ix, func() { ix.Close() }, nil
	}
	if cfg.Data == "" {
		return nil, nil, errors.New("config: no data directory")
	}
	if err := os.MkdirAll(cfg.Data, 0o755); err != nil {
		return nil, nil, fmt.Errorf("data directory: %w", err)
	}
	unlock, err := lockDir(filepath.Join(cfg.Data, "crashd.lock"))
	if errors.Is(err, ErrLocked) {
		sock := filepath.Join(cfg.Data, control.SocketName)
		c := control.Dial(sock)
		if err := c.Ping(ctx); err != nil {
			return nil, nil, fmt.Errorf("a crashd holds %s, but its control socket does not answer: %w", cfg.Data, err)
		}
		return c, func() {}, nil
	}
	if err != nil {
		return nil, nil, err
	}
	db := cfg.DB
	if db == "" {
		db = filepath.Join(cfg.Data, "index.sqlite")
	}
	ix, err := index.OpenSQLite(ctx, db)
	if err != nil {
		unlock()
		return nil, nil, err
	}
	return ix, func() { ix.Close(); unlock() }, nil
}
