package control

import (
	"context"
	"errors"
	"net"
	"os"
	"path/filepath"
	"testing"

	"github.com/gobreakpad/gobreakpad/crashd/auth"
	"github.com/gobreakpad/gobreakpad/crashd/index"
)

// TestSocket: a server's tokens managed through its socket (mode 0600,
// a stale socket replaced, removed at stop), errors mapped back.
func TestSocket(t *testing.T) {
	ctx := context.Background()
	dir, err := os.MkdirTemp("", "ctl") // short: a socket path has at most 103 bytes
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	ix, err := index.OpenSQLite(ctx, filepath.Join(dir, "index.sqlite"))
	if err != nil {
		t.Fatal(err)
	}
	defer ix.Close()
	path := filepath.Join(dir, SocketName)
	// A stale socket of a server that died.
	stale, err := net.ListenUnix("unix", &net.UnixAddr{Name: path, Net: "unix"})
	if err != nil {
		t.Fatal(err)
	}
	stale.SetUnlinkOnClose(false)
	stale.Close()
	stop, err := Serve(path, ix, nil)
	if err != nil {
		t.Fatal(err)
	}
	fi, err := os.Stat(path)
	if err != nil || fi.Mode()&os.ModeSocket == 0 || fi.Mode().Perm() != 0o600 {
		t.Fatalf("socket %v: %v", fi.Mode(), err)
	}
	c := Dial(path)
	secret, tok, _ := auth.NewToken("ci", auth.ScopeUpload)
	if err := c.CreateToken(ctx, tok); err != nil {
		t.Fatal(err)
	}
	if err := c.CreateToken(ctx, tok); !errors.Is(err, auth.ErrTokenExists) {
		t.Errorf("again: %v", err)
	}
	if err := c.CreateToken(ctx, auth.Token{Name: "x", SHA256: "00"}); err == nil || errors.Is(err, auth.ErrTokenExists) {
		t.Errorf("bad token: %v", err)
	}
	if _, ok, _ := ix.TokenByHash(ctx, auth.HashToken(secret)); !ok {
		t.Error("the server does not know the token")
	}
	list, err := c.ListTokens(ctx)
	if err != nil || len(list) != 1 || list[0].Name != "ci" || list[0].SHA256 != tok.SHA256 {
		t.Errorf("list: %+v %v", list, err)
	}
	if err := c.RevokeToken(ctx, "ci"); err != nil {
		t.Fatal(err)
	}
	if _, ok, _ := ix.TokenByHash(ctx, auth.HashToken(secret)); ok {
		t.Error("revoked through the socket: still works in the server")
	}
	if err := c.RevokeToken(ctx, "nobody"); !errors.Is(err, auth.ErrNoToken) {
		t.Errorf("unknown: %v", err)
	}
	stop()
	if _, err := os.Stat(path); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("socket after stop: %v", err)
	}
	if err := c.Ping(ctx); err == nil {
		t.Error("a stopped server answers")
	}
	matches, _ := filepath.Glob(filepath.Join(dir, ".sock-*"))
	if len(matches) > 0 {
		t.Errorf("temporary sockets left: %v", matches)
	}
}

// TestLongPath: a path too long for a socket is an error, not a
// truncated socket elsewhere.
func TestLongPath(t *testing.T) {
	long := filepath.Join(t.TempDir(), "a-rather-long-directory-name-for-a-socket-to-live-in-0123456789", SocketName)
	if len(long) <= maxPath {
		t.Skip("temporary directory too short")
	}
	if _, err := Listen(long); err == nil {
		t.Error("no error")
	}
}
