package auth

import (
	"slices"
	"testing"
	"time"
)

func TestExpand(t *testing.T) {
	for _, c := range []struct {
		in, want []string
	}{
		{[]string{ScopeUpload}, []string{ScopeUpload}},
		{[]string{ScopeViewPII}, []string{ScopeViewCrashes, ScopeViewPII}},
		{[]string{ScopeReprocess, ScopeViewRawDump}, []string{ScopeReprocess, ScopeViewCrashes, ScopeViewRawDump}},
		{[]string{ScopeAdmin}, []string{ScopeAdmin, ScopeReprocess, ScopeTriage, ScopeUpload, ScopeViewCrashes, ScopeViewPII, ScopeViewRawDump}},
	} {
		if got := Expand(c.in); !slices.Equal(got, c.want) {
			t.Errorf("Expand(%v) = %v, want %v", c.in, got, c.want)
		}
	}
}

func TestToken(t *testing.T) {
	secret, tok, err := NewToken("ci", ScopeUpload)
	if err != nil {
		t.Fatal(err)
	}
	if err := tok.Check(); err != nil {
		t.Fatal(err)
	}
	if !tok.Matches(secret) || tok.Matches(secret+"x") || tok.Matches("") {
		t.Error("Matches")
	}
	if tok.SHA256 != HashToken(secret) || len(secret) != 32 {
		t.Errorf("secret %q hash %q", secret, tok.SHA256)
	}
	now := time.Now()
	if !tok.Valid(now) {
		t.Error("a token without expiry is valid")
	}
	tok.Expires = now
	if tok.Valid(now) || !tok.Valid(now.Add(-time.Second)) {
		t.Error("Valid at the expiry")
	}
	for _, bad := range []Token{{SHA256: tok.SHA256}, {Name: "x", SHA256: "ab"}, {Name: "x", SHA256: tok.SHA256, Scopes: []string{"root"}}} {
		if bad.Check() == nil {
			t.Errorf("Check(%+v) passed", bad)
		}
	}
}

func TestParseExpiry(t *testing.T) {
	now := time.Date(2026, 11, 29, 5, 0, 0, 0, time.UTC)
	for in, want := range map[string]time.Time{
		"":                     {},
		"720h":                 now.Add(720 * time.Hour),
		"2027-01-31":           time.Date(2027, 2, 1, 0, 0, 0, 0, time.UTC),
		"2027-01-31T10:00:00Z": time.Date(2027, 1, 31, 10, 0, 0, 0, time.UTC),
	} {
		if got, err := ParseExpiry(in, now); err != nil || !got.Equal(want) {
			t.Errorf("ParseExpiry(%q) = %v, %v; want %v", in, got, err, want)
		}
	}
	for _, in := range []string{"-1h", "2020-01-01", "soon", "0s"} {
		if _, err := ParseExpiry(in, now); err == nil {
			t.Errorf("ParseExpiry(%q): no error", in)
		}
	}
}

// FuzzParseExpiry: the tokens page's expiry field is a client's: no
// panic, and what it accepts is after now.
func FuzzParseExpiry(f *testing.F) {
	for _, s := range []string{"", "720h", "2027-01-31", "2027-01-31T10:00:00Z", "-1h", "9999999999h", "2027-13-40"} {
		f.Add(s)
	}
	now := time.Date(2026, 11, 29, 5, 0, 0, 0, time.UTC)
	f.Fuzz(func(t *testing.T, s string) {
		got, err := ParseExpiry(s, now)
		if err == nil && !got.IsZero() && !got.After(now) {
			t.Errorf("ParseExpiry(%q) = %v, not after now", s, got)
		}
	})
}
