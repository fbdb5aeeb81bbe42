package server

import (
	"fmt"
	"net/http"
	"path/filepath"

	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/gobreakpad/gobreakpad/crashd/alert"
	"github.com/gobreakpad/gobreakpad/crashd/api"
	"github.com/gobreakpad/gobreakpad/crashd/auth"
	"github.com/gobreakpad/gobreakpad/crashd/collector"
	"github.com/gobreakpad/gobreakpad/crashd/sourcelink"
	"github.com/gobreakpad/gobreakpad/crashd/web"
)

// Authenticator returns the configuration's authenticator: the symbol
// server's tokens, api_token as a token with the reprocess scope (named
// "api_token"), and store's tokens and sessions (nil: sessions in this
// process's memory).
func (c *Config) Authenticator(store auth.Store) (*auth.Authenticator, error) {
	tokens := append([]auth.Token(nil), c.SymbolServer.Tokens...)
	if c.APIToken != "" {
		tokens = append(tokens, auth.Token{Name: "api_token", SHA256: auth.HashToken(c.APIToken), Scopes: []string{auth.ScopeReprocess}})
	}
	a, err := auth.NewAuthenticator(tokens, store)
	if err != nil {
		return nil, fmt.Errorf("config: %w", err)
	}
	return a, nil
}

// RouteOptions are the configuration's settings of the route table.
func (c *Config) RouteOptions() auth.RouteOptions {
	return auth.RouteOptions{OpenV1: c.SymbolServer.OpenV1, OpenMetrics: c.OpenMetrics, PublicSymbolication: c.PublicSymbolication}
}

// tokenStore is the index as the deployment's token and session store,
// when it is one (nil: sessions in this process's memory).
func tokenStore(ix any) auth.Store {
	if st, ok := ix.(auth.Store); ok {
		return st
	}
	return nil
}

// routes registers every route of the process's roles into its route
// table (auth.Crashd: the one place where each route's access is
// declared). A route without an entry there is an error: nothing is
// served without a declared permission.
func (s *Server) routes() error {
	cfg, authn := s.cfg, s.authn
	t := auth.NewTable(auth.Crashd(cfg.RouteOptions()), authn, cfg.PublicPages, s.log)
	checks := []api.Check{{Name: "disk", Run: s.disk.Check}, {Name: "background", Run: s.partCheck("background")}, {Name: "http", Run: s.partCheck("http")}}
	if s.proc != nil {
		checks = append(checks, api.Check{Name: "processor", Run: s.partCheck("processor")})
	}
	a := api.New(api.Config{Checks: checks}, s.store, s.q, s.ix, s.log)
	a.RegisterHealth(t)
	if cfg.Has(RoleWeb) {
		wcfg := web.Config{Auth: authn, SecureCookie: cfg.SecureCookie, IndexedAnnotations: cfg.IndexedAnnotations,
			BugTrackers: cfg.BugTrackers, PublicURL: cfg.PublicURL}
		links, err := sourcelink.New(cfg.SourceLinks)
		if err != nil {
			return fmt.Errorf("config: %w", err)
		}
		wcfg.SourceLinks = links
		if m, ok := s.ix.(auth.Manager); ok {
			wcfg.Manager = m
		}
		if !cfg.SymbolServer.Disabled {
			symDir := cfg.SymbolServer.Dir
			if symDir == "" {
				symDir = filepath.Join(cfg.Data, "symbols")
			}
			wcfg.MissingSymbols = s.missingList
			wcfg.RecentUploads = s.recentUploadsIn(symDir)
			t.HandleFunc("GET /api/missing-symbols", s.missingSymbols)
		}
		w, err := web.New(wcfg, s.store, s.q, s.ix, s.log)
		if err != nil {
			return err
		}
		w.Register(t)
		a.Register(t)
		if ix, ok := s.ix.(alert.LogStore); ok {
			admin := &alert.Admin{Store: ix, Webhooks: cfg.Webhooks, Log: s.log}
			t.HandleFunc("GET /admin/webhooks", admin.ServePage)
			t.HandleFunc("GET /api/admin/webhooks", admin.ServeAPI)
		}
	}
	if s.coll != nil {
		// Uploads are refused (503) while the disk is below its threshold.
		s.coll.Register(refusingWhenFull{t, s})
	}
	if s.symsrv != nil {
		s.symsrv.Register(t)
	}
	if s.symbolicate != nil {
		t.HandleFunc("POST /symbolicate/v5", s.symbolicate.ServeV5)
		t.HandleFunc("POST /symbolicate/v4", s.symbolicate.ServeV4)
		t.HandleFunc("OPTIONS /symbolicate/v5", s.symbolicate.Preflight)
		t.HandleFunc("OPTIONS /symbolicate/v4", s.symbolicate.Preflight)
	}
	t.Handle("GET /metrics", promhttp.HandlerFor(s.reg, promhttp.HandlerOpts{}))
	t.HandleFunc("/", collector.NotFound)
	if err := t.Err(); err != nil {
		return err
	}
	s.mux = t
	return nil
}

// Routes returns the routes the server serves, each with its access.
func (s *Server) Routes() []auth.Route { return s.mux.Routes() }

// refusingWhenFull registers the collector's routes into a mux, each
// refusing uploads while the data directory's disk is below its free-space
// threshold (Server.refuseWhenFull).
type refusingWhenFull struct {
	mux auth.Mux
	s   *Server
}

// HandleFunc registers f for pattern behind the free-space check.
func (m refusingWhenFull) HandleFunc(pattern string, f func(http.ResponseWriter, *http.Request)) {
	m.mux.Handle(pattern, m.s.refuseWhenFull(http.HandlerFunc(f)))
}
