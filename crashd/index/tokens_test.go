package index

import (
	"context"
	"errors"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/gobreakpad/gobreakpad/crashd/auth"
)

// clock is a settable clock for an index's now.
type clock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *clock) now() time.Time { c.mu.Lock(); defer c.mu.Unlock(); return c.t }
func (c *clock) add(d time.Duration) {
	c.mu.Lock()
	c.t = c.t.Add(d)
	c.mu.Unlock()
}

// twoProcesses opens the test's index twice (two processes of a
// deployment) on one settable clock.
func twoProcesses(t *testing.T, open opener) (a, b *SQL, clk *clock) {
	ctx := context.Background()
	clk = &clock{t: time.Now().UTC().Truncate(time.Second)}
	a, b = open.must(t, ctx), open.must(t, ctx)
	a.now, b.now = clk.now, clk.now
	return a, b, clk
}

// TestTokens: create (names unique), list, look up, revoke (effective in
// the revoking process at once, in another within AuthCacheTTL), a
// revoked name made again, expiry.
func TestTokens(t *testing.T) { backends(t, testTokens) }

func testTokens(t *testing.T, open opener) {
	ctx := context.Background()
	a, b, clk := twoProcesses(t, open)
	secret, tok, err := auth.NewToken("ci", auth.ScopeUpload, auth.ScopeTriage)
	if err != nil {
		t.Fatal(err)
	}
	if err := a.CreateToken(ctx, tok); err != nil {
		t.Fatal(err)
	}
	_, dup, _ := auth.NewToken("ci", auth.ScopeAdmin)
	if err := b.CreateToken(ctx, dup); !errors.Is(err, auth.ErrTokenExists) {
		t.Errorf("same name again: %v", err)
	}
	if err := a.CreateToken(ctx, auth.Token{Name: "bad", SHA256: "xyz"}); err == nil {
		t.Error("a token without a hash was kept")
	}
	for _, ix := range []*SQL{a, b} {
		got, ok, err := ix.TokenByHash(ctx, auth.HashToken(secret))
		if err != nil || !ok || got.Name != "ci" || !slices.Equal(got.Scopes, tok.Scopes) || !got.Created.Equal(tok.Created) {
			t.Errorf("lookup: %+v %v %v", got, ok, err)
		}
	}
	if _, ok, err := a.TokenByHash(ctx, auth.HashToken("wrong")); ok || err != nil {
		t.Errorf("a wrong secret: %v %v", ok, err)
	}
	if _, ok, err := a.TokenByHash(ctx, "'; DROP TABLE auth_tokens; --"); ok || err != nil {
		t.Errorf("not a hash: %v %v", ok, err)
	}

	// A session made from the token in process b.
	sess := auth.Session{ID: auth.HashToken("cookie"), CSRF: "c", Token: "ci", Scopes: tok.Scopes, Expires: clk.now().Add(time.Hour)}
	if err := b.PutSession(ctx, sess); err != nil {
		t.Fatal(err)
	}
	if got, ok, err := a.SessionByID(ctx, sess.ID); err != nil || !ok || got.Token != "ci" || got.CSRF != "c" || !slices.Equal(got.Scopes, tok.Scopes) {
		t.Errorf("session: %+v %v %v", got, ok, err)
	}

	// Revoked through a: a forgets at once; b answers from its memo for
	// at most AuthCacheTTL.
	if err := a.RevokeToken(ctx, "ci"); err != nil {
		t.Fatal(err)
	}
	if _, ok, _ := a.TokenByHash(ctx, auth.HashToken(secret)); ok {
		t.Error("revoked token still works in the revoking process")
	}
	if _, ok, _ := a.SessionByID(ctx, sess.ID); ok {
		t.Error("revoked token's session still works in the revoking process")
	}
	clk.add(AuthCacheTTL)
	if _, ok, _ := b.TokenByHash(ctx, auth.HashToken(secret)); ok {
		t.Errorf("revoked token still works in another process after %v", AuthCacheTTL)
	}
	if _, ok, _ := b.SessionByID(ctx, sess.ID); ok {
		t.Errorf("revoked token's session still works in another process after %v", AuthCacheTTL)
	}
	if err := a.RevokeToken(ctx, "ci"); err != nil {
		t.Errorf("revoking again: %v", err)
	}
	if err := a.RevokeToken(ctx, "nobody"); !errors.Is(err, auth.ErrNoToken) {
		t.Errorf("revoking an unknown token: %v", err)
	}
	list, err := b.ListTokens(ctx)
	if err != nil || len(list) != 1 || list[0].Name != "ci" || list[0].Revoked.IsZero() || list[0].State(clk.now()) != "revoked" {
		t.Errorf("list: %+v %v", list, err)
	}

	// The name made again: a new secret, the old one stays dead.
	secret2, tok2, _ := auth.NewToken("ci", auth.ScopeAdmin)
	tok2.Expires = clk.now().Add(time.Hour)
	if err := b.CreateToken(ctx, tok2); err != nil {
		t.Fatalf("a revoked name made again: %v", err)
	}
	if _, ok, _ := a.TokenByHash(ctx, auth.HashToken(secret)); ok {
		t.Error("the revoked secret works again")
	}
	if got, ok, _ := a.TokenByHash(ctx, auth.HashToken(secret2)); !ok || got.Scopes[0] != auth.ScopeAdmin {
		t.Errorf("new token of the name: %+v %v", got, ok)
	}
	_, tok3, _ := auth.NewToken("alpha", auth.ScopeViewCrashes)
	if err := a.CreateToken(ctx, tok3); err != nil {
		t.Fatal(err)
	}
	list, _ = a.ListTokens(ctx)
	if len(list) != 2 || list[0].Name != "alpha" || list[1].Name != "ci" || list[1].State(clk.now()) != "active" || !list[1].Expires.Equal(tok2.Expires) {
		t.Errorf("list: %+v", list)
	}
	// Expiry needs no memo to run out.
	clk.add(time.Hour)
	if _, ok, _ := a.TokenByHash(ctx, auth.HashToken(secret2)); ok {
		t.Error("an expired token works")
	}
	if list, _ = a.ListTokens(ctx); list[1].State(clk.now()) != "expired" {
		t.Errorf("expired: %+v", list[1])
	}
}

// TestSessions: sessions expire, end at logout, and those of tokens the
// index does not keep (the configuration file's) work until then.
func TestSessions(t *testing.T) { backends(t, testSessions) }

func testSessions(t *testing.T, open opener) {
	ctx := context.Background()
	a, b, clk := twoProcesses(t, open)
	s := auth.Session{ID: auth.HashToken("c1"), CSRF: "x", Token: "from-config", Scopes: []string{auth.ScopeViewCrashes}, Expires: clk.now().Add(time.Minute)}
	if err := a.PutSession(ctx, s); err != nil {
		t.Fatal(err)
	}
	if err := a.PutSession(ctx, auth.Session{ID: "short"}); err == nil {
		t.Error("a session id that is no hash was kept")
	}
	if _, ok, err := b.SessionByID(ctx, s.ID); !ok || err != nil {
		t.Fatalf("session: %v %v", ok, err)
	}
	if _, ok, _ := b.SessionByID(ctx, auth.HashToken("c2")); ok {
		t.Error("an unknown session")
	}
	if err := b.DeleteSession(ctx, s.ID); err != nil {
		t.Fatal(err)
	}
	if _, ok, _ := b.SessionByID(ctx, s.ID); ok {
		t.Error("session after logout")
	}
	s.ID = auth.HashToken("c3")
	if err := a.PutSession(ctx, s); err != nil {
		t.Fatal(err)
	}
	clk.add(time.Minute)
	if _, ok, _ := b.SessionByID(ctx, s.ID); ok {
		t.Error("an expired session")
	}
	// Expired sessions are pruned.
	if err := a.PruneAuth(ctx, clk.now()); err != nil {
		t.Fatal(err)
	}
	var n int
	if err := a.db.QueryRowContext(ctx, `SELECT COUNT(*) FROM auth_sessions`).Scan(&n); err != nil || n != 0 {
		t.Errorf("sessions after pruning: %d %v", n, err)
	}
}

// TestLoginCodes: a code works once, within its time, for a token that
// still works; of concurrent consumers exactly one gets it.
func TestLoginCodes(t *testing.T) { backends(t, testLoginCodes) }

func testLoginCodes(t *testing.T, open opener) {
	ctx := context.Background()
	a, b, clk := twoProcesses(t, open)
	if _, err := a.NewLoginCode(ctx, "nobody", 0); !errors.Is(err, auth.ErrNoToken) {
		t.Errorf("code for an unknown token: %v", err)
	}
	_, tok, _ := auth.NewToken("admin", auth.ScopeAdmin)
	if err := a.CreateToken(ctx, tok); err != nil {
		t.Fatal(err)
	}
	code, err := a.NewLoginCode(ctx, "admin", 0)
	if err != nil || len(code) != 32 {
		t.Fatalf("code %q: %v", code, err)
	}
	var stored string
	if err := a.db.QueryRowContext(ctx, `SELECT hash FROM auth_login_codes`).Scan(&stored); err != nil || stored != auth.HashToken(code) {
		t.Errorf("kept %q (%v): only the code's hash is kept", stored, err)
	}
	got, ok, err := b.ConsumeLoginCode(ctx, code)
	if err != nil || !ok || got.Name != "admin" || got.Scopes[0] != auth.ScopeAdmin {
		t.Fatalf("consume: %+v %v %v", got, ok, err)
	}
	if _, ok, _ := a.ConsumeLoginCode(ctx, code); ok {
		t.Error("a code used twice")
	}

	// Many requests with one code at once: exactly one gets in.
	code, _ = a.NewLoginCode(ctx, "admin", 0)
	var wins atomic.Int32
	var wg sync.WaitGroup
	for i := range 8 {
		ix := a
		if i%2 == 1 {
			ix = b
		}
		wg.Go(func() {
			_, ok, err := ix.ConsumeLoginCode(ctx, code)
			if err != nil {
				t.Error(err)
			}
			if ok {
				wins.Add(1)
			}
		})
	}
	wg.Wait()
	if wins.Load() != 1 {
		t.Errorf("%d concurrent consumers got one code", wins.Load())
	}

	// Expiry: 15 minutes by default.
	code, _ = a.NewLoginCode(ctx, "admin", 0)
	clk.add(auth.LoginCodeTTL)
	if _, ok, _ := b.ConsumeLoginCode(ctx, code); ok {
		t.Error("an expired code works")
	}
	code, _ = a.NewLoginCode(ctx, "admin", 0)
	clk.add(auth.LoginCodeTTL - time.Second)
	if _, ok, _ := b.ConsumeLoginCode(ctx, code); !ok {
		t.Error("a code within its time fails")
	}
	// Revoking the token ends its codes.
	code, _ = a.NewLoginCode(ctx, "admin", 0)
	if err := b.RevokeToken(ctx, "admin"); err != nil {
		t.Fatal(err)
	}
	if _, ok, _ := a.ConsumeLoginCode(ctx, code); ok {
		t.Error("the code of a revoked token works")
	}
	if _, ok, _ := a.ConsumeLoginCode(ctx, ""); ok {
		t.Error("an empty code works")
	}
}

// TestFirstTokenOnce: processes starting at once on an empty index make
// exactly one first token; a restart makes none, even when every token
// was revoked.
func TestFirstTokenOnce(t *testing.T) { backends(t, testFirstTokenOnce) }

func testFirstTokenOnce(t *testing.T, open opener) {
	ctx := context.Background()
	const procs = 6
	ixs := make([]*SQL, procs)
	for i := range ixs {
		ixs[i] = open.must(t, ctx)
	}
	var made, kept atomic.Int32
	var wg sync.WaitGroup
	secrets := make([]string, procs)
	for i, ix := range ixs {
		wg.Go(func() {
			secret, tok, err := auth.NewToken("admin", auth.ScopeAdmin)
			if err != nil {
				t.Error(err)
				return
			}
			secrets[i] = secret
			code, created, err := ix.EnsureFirstToken(ctx, tok, func() error { kept.Add(1); return nil })
			if err != nil {
				t.Errorf("process %d: %v", i, err)
				return
			}
			if created {
				made.Add(1)
				if _, ok, err := ixs[(i+1)%procs].ConsumeLoginCode(ctx, code); !ok || err != nil {
					t.Errorf("first login code: %v %v", ok, err)
				}
				if _, ok, _ := ix.TokenByHash(ctx, auth.HashToken(secret)); !ok {
					t.Error("the first token does not work")
				}
			} else if code != "" {
				t.Errorf("process %d: a code %q without a token", i, code)
			}
		})
	}
	wg.Wait()
	if made.Load() != 1 || kept.Load() != 1 {
		t.Errorf("%d first tokens made (%d kept), want 1", made.Load(), kept.Load())
	}
	list, err := ixs[0].ListTokens(ctx)
	if err != nil || len(list) != 1 || list[0].Name != "admin" {
		t.Errorf("tokens: %+v %v", list, err)
	}
	if err := ixs[0].RevokeToken(ctx, "admin"); err != nil {
		t.Fatal(err)
	}
	_, tok, _ := auth.NewToken("admin", auth.ScopeAdmin)
	if _, created, err := ixs[1].EnsureFirstToken(ctx, tok, nil); created || err != nil {
		t.Errorf("a first token again after revocation: %v %v", created, err)
	}
	// keep's error rolls everything back.
	fresh := ixs[2]
	if _, err := fresh.db.ExecContext(ctx, `DELETE FROM auth_tokens`); err != nil {
		t.Fatal(err)
	}
	if _, _, err := fresh.EnsureFirstToken(ctx, tok, func() error { return errors.New("disk full") }); err == nil {
		t.Error("keep's error was not returned")
	}
	if list, _ := fresh.ListTokens(ctx); len(list) != 0 {
		t.Errorf("kept after keep failed: %+v", list)
	}
}

// BenchmarkTokenByHash: the per-request lookup, from the memo and from
// the database.
func BenchmarkTokenByHash(b *testing.B) {
	ctx := context.Background()
	ix, err := OpenSQLite(ctx, b.TempDir()+"/index.sqlite")
	if err != nil {
		b.Fatal(err)
	}
	defer ix.Close()
	secret, tok, _ := auth.NewToken("ci", auth.ScopeUpload)
	if err := ix.CreateToken(ctx, tok); err != nil {
		b.Fatal(err)
	}
	h := auth.HashToken(secret)
	b.Run("memo", func(b *testing.B) {
		for b.Loop() {
			if _, ok, _ := ix.TokenByHash(ctx, h); !ok {
				b.Fatal("not found")
			}
		}
	})
	b.Run("sqlite", func(b *testing.B) {
		for b.Loop() {
			ix.auth.forget()
			if _, ok, _ := ix.TokenByHash(ctx, h); !ok {
				b.Fatal("not found")
			}
		}
	})
}
