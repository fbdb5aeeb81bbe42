// Package control is crashd's control socket: the token management
// (auth.Tokens) of a running `crashd serve` reached by `crashd token ...`
// through a Unix socket in the data directory (DATA/crashd.sock). The
// embedded server holds the data directory's lock and its index alone, so
// a command line that finds the lock taken manages the tokens through the
// server; the server's lookups then forget what they remembered at once.
//
// The socket is created with mode 0600 (who may read the data directory,
// its owner, may manage its tokens; nobody else may connect), under a
// temporary name renamed into place, so that it never exists with a wider
// mode; a stale one (of a server that died) is replaced; Serve's stop
// removes it. The protocol is JSON over HTTP:
//
//	GET  /tokens          the tokens (auth.TokenInfo, by name)
//	POST /tokens          keep the token of the body (auth.Token: its hash, never a secret); 409 for a name taken
//	POST /tokens/revoke   revoke the token named by the body's {"name": ...}; 404 for none
//
// Errors are {"error": "..."}.
package control

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"time"

	"github.com/gobreakpad/gobreakpad/crashd/auth"
)

// SocketName is the socket's file name in the data directory.
const SocketName = "crashd.sock"

// maxBody bounds a request's or an answer's body.
const maxBody = 1 << 20

// maxPath is the longest socket path the kernel takes (sun_path, less
// its terminating NUL; 108 bytes on Linux, 104 on BSDs and macOS).
const maxPath = 103

// Listen creates the socket at path, mode 0600, replacing what is there
// (a stale socket: the caller holds the data directory's lock).
func Listen(path string) (*net.UnixListener, error) {
	var b [6]byte
	_, _ = rand.Read(b[:])
	tmp := filepath.Join(filepath.Dir(path), ".sock-"+hex.EncodeToString(b[:]))
	if len(path) > maxPath || len(tmp) > maxPath {
		return nil, fmt.Errorf("control socket %s: the path is longer than a Unix socket's (%d bytes)", path, maxPath)
	}
	ln, err := net.ListenUnix("unix", &net.UnixAddr{Name: tmp, Net: "unix"})
	if err != nil {
		return nil, fmt.Errorf("control socket: %w", err)
	}
	ln.SetUnlinkOnClose(false)
	if err := os.Chmod(tmp, 0o600); err != nil {
		ln.Close()
		os.Remove(tmp)
		return nil, fmt.Errorf("control socket: %w", err)
	}
	if err := os.Rename(tmp, path); err != nil {
		ln.Close()
		os.Remove(tmp)
		return nil, fmt.Errorf("control socket: %w", err)
	}
	return ln, nil
}

// Serve serves t on a new socket at path (Listen) until stop, which
// closes and removes it.
func Serve(path string, t auth.Tokens, log *slog.Logger) (stop func(), err error) {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	ln, err := Listen(path)
	if err != nil {
		return nil, err
	}
	hs := &http.Server{Handler: Handler(t, log), ReadHeaderTimeout: 10 * time.Second, ReadTimeout: time.Minute, WriteTimeout: time.Minute,
		ErrorLog: slog.NewLogLogger(log.Handler(), slog.LevelWarn)}
	done := make(chan struct{})
	go func() {
		defer close(done)
		if err := hs.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
			log.Warn("control socket", "path", path, "err", err)
		}
	}()
	return func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = hs.Shutdown(ctx)
		<-done
		if err := os.Remove(path); err != nil && !errors.Is(err, os.ErrNotExist) {
			log.Warn("control socket: remove", "path", path, "err", err)
		}
	}, nil
}

// Handler serves t (the protocol of the package comment).
func Handler(t auth.Tokens, log *slog.Logger) http.Handler {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	mux := http.NewServeMux()
	mux.HandleFunc("GET /tokens", func(w http.ResponseWriter, r *http.Request) {
		list, err := t.ListTokens(r.Context())
		if err != nil {
			writeErr(w, err)
			return
		}
		writeJSON(w, http.StatusOK, list)
	})
	mux.HandleFunc("POST /tokens", func(w http.ResponseWriter, r *http.Request) {
		var tok auth.Token
		if err := readJSON(w, r, &tok); err != nil {
			writeJSON(w, http.StatusBadRequest, errBody{err.Error()})
			return
		}
		if err := tok.Check(); err != nil {
			writeJSON(w, http.StatusBadRequest, errBody{err.Error()})
			return
		}
		if err := t.CreateToken(r.Context(), tok); err != nil {
			writeErr(w, err)
			return
		}
		log.Info("control: token created", "token", tok.Name, "scopes", tok.Scopes)
		writeJSON(w, http.StatusCreated, struct{}{})
	})
	mux.HandleFunc("POST /tokens/revoke", func(w http.ResponseWriter, r *http.Request) {
		var req struct {
			Name string `json:"name"`
		}
		if err := readJSON(w, r, &req); err != nil || req.Name == "" {
			writeJSON(w, http.StatusBadRequest, errBody{"a JSON body {\"name\": ...}"})
			return
		}
		if err := t.RevokeToken(r.Context(), req.Name); err != nil {
			writeErr(w, err)
			return
		}
		log.Info("control: token revoked", "token", req.Name)
		writeJSON(w, http.StatusOK, struct{}{})
	})
	return mux
}

type errBody struct {
	Error string `json:"error"`
}

func readJSON(w http.ResponseWriter, r *http.Request, v any) error {
	dec := json.NewDecoder(http.MaxBytesReader(w, r.Body, maxBody))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return fmt.Errorf("body: %w", err)
	}
	return nil
}

func writeErr(w http.ResponseWriter, err error) {
	code := http.StatusInternalServerError
	switch {
	case errors.Is(err, auth.ErrTokenExists):
		code = http.StatusConflict
	case errors.Is(err, auth.ErrNoToken):
		code = http.StatusNotFound
	}
	writeJSON(w, code, errBody{err.Error()})
}

func writeJSON(w http.ResponseWriter, code int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(code)
	_ = json.NewEncoder(w).Encode(v)
}

// Client is auth.Tokens of the server listening on a control socket.
type Client struct {
	path string
	hc   *http.Client
}

var _ auth.Tokens = (*Client)(nil)

// Dial returns the client of the socket at path (connecting at each
// call).
func Dial(path string) *Client {
	return &Client{path: path, hc: &http.Client{Timeout: 30 * time.Second, Transport: &http.Transport{
		DialContext: func(ctx context.Context, _, _ string) (net.Conn, error) {
			var d net.Dialer
			return d.DialContext(ctx, "unix", path)
		},
	}}}
}

// Ping reports whether a server answers on the socket.
func (c *Client) Ping(ctx context.Context) error {
	_, err := c.ListTokens(ctx)
	return err
}

func (c *Client) do(ctx context.Context, method, path string, in, out any) error {
	var body io.Reader
	if in != nil {
		b, err := json.Marshal(in)
		if err != nil {
			return err
		}
		body = bytes.NewReader(b)
	}
	req, err := http.NewRequestWithContext(ctx, method, "http://crashd"+path, body)
	if err != nil {
		return err
	}
	resp, err := c.hc.Do(req)
	if err != nil {
		return fmt.Errorf("control socket %s: %w", c.path, err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(io.LimitReader(resp.Body, maxBody))
	if err != nil {
		return fmt.Errorf("control socket %s: %w", c.path, err)
	}
	if resp.StatusCode >= 300 {
		var e errBody
		if json.Unmarshal(b, &e) != nil || e.Error == "" {
			e.Error = resp.Status
		}
		switch resp.StatusCode {
		case http.StatusConflict:
			return fmt.Errorf("%s: %w", e.Error, auth.ErrTokenExists)
		case http.StatusNotFound:
			return fmt.Errorf("%s: %w", e.Error, auth.ErrNoToken)
		}
		return fmt.Errorf("control socket %s: %s", c.path, e.Error)
	}
	if out != nil {
		if err := json.Unmarshal(b, out); err != nil {
			return fmt.Errorf("control socket %s: answer: %w", c.path, err)
		}
	}
	return nil
}

// CreateToken implements auth.Tokens.
func (c *Client) CreateToken(ctx context.Context, t auth.Token) error {
	return c.do(ctx, http.MethodPost, "/tokens", t, nil)
}

// ListTokens implements auth.Tokens.
func (c *Client) ListTokens(ctx context.Context) ([]auth.TokenInfo, error) {
	var out []auth.TokenInfo
	return out, c.do(ctx, http.MethodGet, "/tokens", nil, &out)
}

// RevokeToken implements auth.Tokens.
func (c *Client) RevokeToken(ctx context.Context, name string) error {
	return c.do(ctx, http.MethodPost, "/tokens/revoke", map[string]string{"name": name}, nil)
}
