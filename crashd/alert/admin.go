package alert

import (
	"context"
	"encoding/json"
	"html/template"
	"log/slog"
	"net/http"
	"strconv"
	"time"

	"github.com/gobreakpad/gobreakpad/crashd/index"
)

// LogStore is what the delivery log needs of the index (index.SQL has
// it).
type LogStore interface {
	AlertDeliveries(ctx context.Context, limit int) ([]index.AlertDelivery, error)
	AlertAttempts(ctx context.Context, eventID string) ([]index.AlertAttempt, error)
}

// Admin serves the delivery log: the page /admin/webhooks and its JSON,
// /api/admin/webhooks (scope admin: crashd/auth's table). Webhooks are
// shown by name, events and products: never their URLs, which may hold a
// secret.
type Admin struct {
	Store    LogStore
	Webhooks []Webhook
	Log      *slog.Logger
}

// AdminWebhook is a configured webhook as the log shows it.
type AdminWebhook struct {
	Name     string   `json:"name"`
	Events   []string `json:"events"`
	Products []string `json:"products"`
}

// AdminLog is the delivery log's data: the webhooks, the most recent
// deliveries (newest first) and, with ?event=ID, that event's attempts.
type AdminLog struct {
	Webhooks   []AdminWebhook        `json:"webhooks"`
	Deliveries []index.AlertDelivery `json:"deliveries"`
	Event      string                `json:"event,omitempty"`
	Attempts   []index.AlertAttempt  `json:"attempts,omitempty"`
}

func (a *Admin) data(r *http.Request) (AdminLog, error) {
	out := AdminLog{Webhooks: []AdminWebhook{}, Deliveries: []index.AlertDelivery{}}
	for _, w := range a.Webhooks {
		aw := AdminWebhook{Name: w.Name, Events: w.Events, Products: w.Products}
		if len(aw.Events) == 0 {
			aw.Events = index.AlertKinds
		}
		out.Webhooks = append(out.Webhooks, aw)
	}
	limit, _ := strconv.Atoi(r.URL.Query().Get("limit"))
	if limit <= 0 || limit > index.MaxLimit {
		limit = index.DefaultLimit
	}
	ds, err := a.Store.AlertDeliveries(r.Context(), limit)
	if err != nil {
		return out, err
	}
	if ds != nil {
		out.Deliveries = ds
	}
	if ev := r.URL.Query().Get("event"); ev != "" && len(ev) <= 64 {
		out.Event = ev
		if out.Attempts, err = a.Store.AlertAttempts(r.Context(), ev); err != nil {
			return out, err
		}
	}
	return out, nil
}

// ServeAPI answers GET /api/admin/webhooks (?limit=N, ?event=ID).
func (a *Admin) ServeAPI(w http.ResponseWriter, r *http.Request) {
	d, err := a.data(r)
	if err != nil {
		a.fail(w, err)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	w.Header().Set("X-Content-Type-Options", "nosniff")
	_ = json.NewEncoder(w).Encode(d)
}

// ServePage answers GET /admin/webhooks: the log as a page (every value
// escaped by html/template).
func (a *Admin) ServePage(w http.ResponseWriter, r *http.Request) {
	d, err := a.data(r)
	if err != nil {
		a.fail(w, err)
		return
	}
	h := w.Header()
	h.Set("Content-Type", "text/html; charset=utf-8")
	h.Set("Cache-Control", "no-store")
	h.Set("Content-Security-Policy", "default-src 'none'; style-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'")
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("X-Frame-Options", "DENY")
	if err := adminPage.Execute(w, d); err != nil && a.Log != nil {
		a.Log.Warn("alert: admin page", "err", err)
	}
}

func (a *Admin) fail(w http.ResponseWriter, err error) {
	if a.Log != nil {
		a.Log.Error("alert: delivery log", "err", err)
	}
	http.Error(w, "the delivery log could not be read", http.StatusInternalServerError)
}

var adminPage = template.Must(template.New("webhooks").Funcs(template.FuncMap{
	"when": func(t time.Time) string {
		if t.IsZero() {
			return ""
		}
		return t.UTC().Format("2006-01-02 15:04:05Z")
	},
}).Parse(`<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>Webhooks — crashd</title>
<meta name="viewport" content="width=device-width, initial-scale=1">
<link rel="stylesheet" href="/static/style.css"></head>
<body><main>
<p><a href="/">Top crashers</a></p>
<h1>Webhooks</h1>
<table><caption>Configured webhooks (docs/crashd.md, "Alerts")</caption>
<thead><tr><th scope="col">Name</th><th scope="col">Events</th><th scope="col">Products</th></tr></thead>
<tbody>{{range .Webhooks}}<tr><th scope="row">{{.Name}}</th><td>{{range $i, $e := .Events}}{{if $i}}, {{end}}{{$e}}{{end}}</td><td>{{range $i, $p := .Products}}{{if $i}}, {{end}}{{$p}}{{else}}all{{end}}</td></tr>
{{else}}<tr><td colspan="3">No webhooks configured.</td></tr>{{end}}</tbody></table>
{{if .Event}}<h2>Attempts of event <code>{{.Event}}</code></h2>
<table><thead><tr><th scope="col">Webhook</th><th scope="col">Attempt</th><th scope="col">At</th><th scope="col">By</th><th scope="col">HTTP</th><th scope="col">Error</th></tr></thead>
<tbody>{{range .Attempts}}<tr><td>{{.Webhook}}</td><td>{{.Attempt}}</td><td>{{when .At}}</td><td>{{.Owner}}</td><td>{{if .Code}}{{.Code}}{{end}}</td><td>{{.Error}}</td></tr>
{{else}}<tr><td colspan="6">No attempts.</td></tr>{{end}}</tbody></table>{{end}}
<h2>Recent deliveries</h2>
<table><thead><tr><th scope="col">Updated</th><th scope="col">Event</th><th scope="col">Signature</th><th scope="col">Product</th><th scope="col">Webhook</th><th scope="col">State</th><th scope="col">Attempts</th><th scope="col">HTTP</th><th scope="col">Last error</th><th scope="col">Next try</th></tr></thead>
<tbody>{{range .Deliveries}}<tr><td>{{when .UpdatedAt}}</td><td><a href="?event={{.Event.ID}}">{{.Event.Kind}}</a></td><td>{{.Event.Signature}}</td><td>{{.Event.Product}} {{.Event.Version}}</td><td>{{.Webhook}}</td><td>{{.State}}</td><td>{{.Attempts}}</td><td>{{if .LastCode}}{{.LastCode}}{{end}}</td><td>{{.LastError}}</td><td>{{if eq .State "pending"}}{{when .NextAt}}{{end}}</td></tr>
{{else}}<tr><td colspan="10">No deliveries yet.</td></tr>{{end}}</tbody></table>
</main></body></html>
`))
