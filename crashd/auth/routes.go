package auth

// RouteOptions are the settings of a deployment that change the access
// of crashd's routes.
type RouteOptions struct {
	// OpenV1 opens sym-upload-v1 uploads to anyone
	// (symbol_server.open_v1).
	OpenV1 bool
	// OpenMetrics opens /metrics to anyone who reaches the listener
	// (open_metrics: a Prometheus scraper on loopback or a private
	// network); by default it needs admin.
	OpenMetrics bool
	// PublicSymbolication opens the symbolication API to anyone
	// (public_symbolication).
	PublicSymbolication bool
}

// Crashd returns crashd's authorization table: every route any process
// of crashd serves (collector, API, pages, symbol server, metrics,
// health, static files), with the scope it requires. It is the one place
// where access is decided (docs/crashd.md, "Who may do what"); a route a
// part registers without an entry here is not served (Table.Err).
//
// Least privilege by default: without a token only the health
// endpoints, the collector's uploads, the symbol downloads (public, as
// Tecken's), the login page and the static files answer. public_pages
// opens the routes marked Public: reads of crashes, never personal
// annotations, dumps or actions.
func Crashd(o RouteOptions) map[string]Access {
	const (
		collector = "crash uploads of native clients (Breakpad, Crashpad, Electron, sentry-native): open, as Antenna's; collector.submitter_token is checked by the collector itself"
		health    = "Dockerflow health and version, for load balancers and orchestrators"
		crashes   = "a read of crashes: the processed crash's walk is view_crashes everywhere"
		page      = "a page reading crashes (anonymous: to the login page)"
		reprocess = "queues a crash again (once while it waits: deduplicated)"
		upload    = "symbol uploads of CI jobs (Breakpad's sym_upload, Tecken's zip)"
		triage    = "changes a signature's triage in a product: its state (resolved with fixed_in), bug links; every change recorded with who made it"
	)
	read := func(why string) Access { return Access{Scope: ScopeViewCrashes, Public: true, Why: why} }
	pageRead := func(why string) Access { return Access{Scope: ScopeViewCrashes, Public: true, Page: true, Why: why} }
	// The symbolication API changes nothing and answers any origin (CORS)
	// for browser tools such as the Firefox Profiler.
	symbolicate := Access{Scope: ScopeViewCrashes, CrossOrigin: true, Why: "symbolication of module offsets (Eliot's API) for tools with stacks but no dump"}
	if o.PublicSymbolication {
		symbolicate = Access{CrossOrigin: true, Why: "symbolication of module offsets (Eliot's API), opened by public_symbolication"}
	}
	uploadAccess := Access{Scope: ScopeUpload, CrossOrigin: true, Key: "key", Why: upload}
	t := map[string]Access{
		// The collector (crashd/collector).
		"POST /submit":                     {CrossOrigin: true, Why: collector},
		"/submit":                          {CrossOrigin: true, Why: "/submit's other methods: 405, OPTIONS 200, as Antenna's Falcon"},
		"/":                                Open("any path nothing else serves: Antenna's JSON 404"),
		"POST /api/{project}/minidump/{$}": {CrossOrigin: true, Why: collector + " (Sentry's minidump endpoint)"},
		"POST /api/{project}/minidump":     {CrossOrigin: true, Why: collector + " (Sentry's minidump endpoint)"},
		"GET /__lbheartbeat__":             Open(health),
		"GET /__heartbeat__":               Open(health),
		"GET /__version__":                 Open(health),
		"GET /api/crashes/{id}":            read(crashes + "; annotations marked personal need view_pii"),
		"GET /api/crashes":                 read(crashes + " (search)"),
		"POST /api/crashes/{id}/reprocess": Need(ScopeReprocess, reprocess),
		"GET /api/dead":                    read("the dead letters: crash ids and why they failed"),
		"GET /api/missing-symbols":         read("the modules crashes missed symbols for"),
		"GET /{$}":                         pageRead(page + ": top crashers"),
		"GET /signature":                   pageRead(page + ": a signature"),
		"GET /report/{id}":                 pageRead(page + ": a crash's report; personal annotations need view_pii"),
		"GET /search":                      pageRead(page + ": search; personal values need view_pii"),
		"GET /symbols":                     pageRead(page + ": symbols missing and uploaded"),
		"GET /api/topcrashers":             read("the home page's data"),
		"GET /api/signature":               read("the signature page's data"),
		"GET /api/signature/trend":         read("a signature's crashes per day and version (up to 90 days)"),
		"GET /api/signature/correlations":  read("a signature's correlations; personal annotation values counted only for view_pii"),
		"GET /api/report/{id}":             read("the report page's data; personal annotations need view_pii"),
		"GET /api/search":                  read("the search page's data; personal values need view_pii"),
		"GET /api/symbols":                 read("the symbols page's data"),
		"GET /report/{id}/processed.json":  read("the processed crash (the walk: view_crashes, as the API)"),
		"GET /report/{id}/dump":            Need(ScopeViewRawDump, "a crash's dumps: process memory"),
		"POST /report/{id}/reprocess":      Need(ScopeReprocess, reprocess+" (the report page's form, with its csrf field)"),
		"POST /api/report/{id}/reprocess":  Need(ScopeReprocess, reprocess+" (as POST /api/crashes/{id}/reprocess)"),
		"POST /api/signature/triage":       Need(ScopeTriage, triage),
		"POST /signature/triage":           Need(ScopeTriage, triage+" (the signature page's forms, with their csrf field)"),
		"GET /login":                       Open("the login form; ?code= uses up a one-time login code (the first run's link)"),
		"GET /tokens":                      {Scope: ScopeAdmin, Page: true, Why: "the tokens page: run-time tokens listed"},
		"POST /tokens":                     Need(ScopeAdmin, "creates a run-time token (the secret shown once; csrf field)"),
		"POST /tokens/revoke":              Need(ScopeAdmin, "revokes a run-time token and ends its sessions (csrf field)"),
		"GET /admin/webhooks":              {Scope: ScopeAdmin, Page: true, Why: "the alerts' delivery log: webhooks by name (never their URLs), recent deliveries and attempts"},
		"GET /api/admin/webhooks":          Need(ScopeAdmin, "the alerts' delivery log as JSON"),
		"POST /login":                      Open("takes a token into a session cookie (same origin only)"),
		"POST /logout":                     Open("ends the session (same origin only, csrf field)"),
		"GET /static/":                     Open("the pages' style sheet"),
		"POST /symbols/upload":             uploadAccess,
		"GET /symbols/":                    Open("symbol downloads in Breakpad's HTTP layout: public, as Tecken's (debuggers and stack walkers fetch them)"),
		"HEAD /symbols/":                   Open("symbol downloads in Breakpad's HTTP layout: public, as Tecken's"),
		"/v1/":                             uploadAccess,
		"PUT /v1/uploads/{key}":            {CrossOrigin: true, Why: "the file of a sym-upload-v2 upload, PUT to the uploadUrl an authorized create returned: its random key (one hour, one upload) is the credential, as a signed upload URL; Breakpad's client sends no token with it"},
		"POST /upload/":                    uploadAccess,
		"POST /upload":                     uploadAccess,
		"GET /api/syminfo/{file}/{id}":     Open("a module's symbol information by code or debug id, public as the downloads"),
		"POST /symbolicate/v5":             symbolicate,
		"POST /symbolicate/v4":             symbolicate,
		"OPTIONS /symbolicate/v5":          {CrossOrigin: true, Why: "the symbolication API's CORS preflight"},
		"OPTIONS /symbolicate/v4":          {CrossOrigin: true, Why: "the symbolication API's CORS preflight"},
		"GET /metrics":                     Need(ScopeAdmin, "Prometheus metrics: crash counts and rates, queue depth, versions (admin; open_metrics opens it for a scraper)"),
	}
	if o.OpenV1 {
		a := uploadAccess
		a.Scope, a.Why = "", upload+": symbol_server.open_v1 opens sym-upload-v1 (Breakpad's v1 clients cannot send a header)"
		t["POST /symbols/upload"] = a
	}
	if o.OpenMetrics {
		t["GET /metrics"] = Open("Prometheus metrics, opened by open_metrics")
	}
	return t
}
