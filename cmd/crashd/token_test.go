package main

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/gobreakpad/gobreakpad/crashd/auth"
	"github.com/gobreakpad/gobreakpad/internal/testkit/cmdtest"
)

// TestTokenCreate: the secret is printed once, the configuration entry
// holds only its SHA-256 and the scopes.
func TestTokenCreate(t *testing.T) {
	prog := cmdtest.Build(t, ".")
	r := cmdtest.Run(t, prog, "token", "create", "--name", "ci", "--scopes", "upload_symbols")
	lines := strings.Split(strings.TrimSpace(r.Stdout), "\n")
	if r.Code != 0 || len(lines) != 3 || !strings.HasPrefix(lines[0], "token: ") {
		t.Fatalf("token create: %d %q %q", r.Code, r.Stdout, r.Stderr)
	}
	secret := strings.TrimPrefix(lines[0], "token: ")
	var tok auth.Token
	if err := json.Unmarshal([]byte(lines[2]), &tok); err != nil || tok.SHA256 != auth.HashToken(secret) || tok.Name != "ci" ||
		len(tok.Scopes) != 1 || tok.Scopes[0] != auth.ScopeUpload || strings.Contains(lines[2], secret) {
		t.Errorf("entry %q for secret %q (%v)", lines[2], secret, err)
	}
	if r := cmdtest.Run(t, prog, "token", "create", "--scopes", "root"); r.Code != 2 || !strings.Contains(r.Stderr, `unknown scope "root"`) {
		t.Errorf("unknown scope: %d %q", r.Code, r.Stderr)
	}
}
