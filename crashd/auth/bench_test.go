package auth

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"testing"
)

// BenchmarkTable is the route table's cost per request: the principal
// resolved among 100 configuration tokens (a header token, a session
// cookie) and checked, before a handler that does nothing.
func BenchmarkTable(b *testing.B) {
	var tokens []Token
	var secret string
	for i := range 100 {
		s, t, err := NewToken(fmt.Sprint("t", i), ScopeViewCrashes)
		if err != nil {
			b.Fatal(err)
		}
		tokens, secret = append(tokens, t), s
	}
	a, err := NewAuthenticator(tokens, nil)
	if err != nil {
		b.Fatal(err)
	}
	cookie, _, err := a.Login(b.Context(), secret)
	if err != nil {
		b.Fatal(err)
	}
	tab := NewTable(Crashd(RouteOptions{}), a, false, nil)
	tab.HandleFunc("GET /api/crashes", func(http.ResponseWriter, *http.Request) {})
	tab.HandleFunc("POST /submit", func(http.ResponseWriter, *http.Request) {})
	for _, c := range []struct {
		name, method, path string
		set                func(*http.Request)
	}{
		{"bearer", "GET", "/api/crashes", func(r *http.Request) { r.Header.Set("Authorization", "Bearer "+secret) }},
		{"session", "GET", "/api/crashes", func(r *http.Request) { r.AddCookie(&http.Cookie{Name: SessionCookie, Value: cookie}) }},
		{"anonymous_refused", "GET", "/api/crashes", func(*http.Request) {}},
		{"open_upload", "POST", "/submit", func(r *http.Request) { r.Header.Set("Authorization", "Bearer made-up") }},
	} {
		b.Run(c.name, func(b *testing.B) {
			r := httptest.NewRequest(c.method, c.path, nil)
			c.set(r)
			for b.Loop() {
				tab.ServeHTTP(httptest.NewRecorder(), r)
			}
		})
	}
}
