// Package alert is crashd's alerts (issue 38): events about signatures
// (a new signature, a regression, a spike) delivered as JSON POSTs to the
// webhooks of the configuration, Slack-compatible.
//
// Events are persisted in the index before anything is sent (its
// alert_events table, crashd/index alerts.go), keyed by an id derived from
// what they are about (index.AlertID): a new signature's event by the
// signature, a spike's by the signature and the hour. Two processes that
// see the same happening insert the same id and the index keeps one row,
// so each event is produced once however many processors run. The
// deliveries (one per event and matching webhook) are rows too, claimed
// by one process at a time with a lease column and retried with
// exponential backoff and jitter until delivered, MaxAttempts or MaxAge:
// a process that dies leaves its claims to another when their lease ends,
// and a restart carries on where the rows say. Delivery is therefore at
// least once: a receiver may see an event id again (a retry after a lost
// answer) and dedupes by id.
//
// Nothing here blocks the processor: [Dispatcher.Processed] records a
// signature in memory for the next spike check, and events are written to
// the index by the processor's own index transaction (new_signature) or
// by [Dispatcher.Notify] (one INSERT).
package alert

import (
	"fmt"
	"net/url"
	"slices"
	"strings"
	"time"

	"github.com/gobreakpad/gobreakpad/crashd/index"
)

// Event is an alert event: its kind (index.AlertNewSignature,
// AlertRegression, AlertSpike), the signature, product and version, the
// crash that made it, a count (a spike's crashes in the hour; 1
// otherwise), and its id (index.AlertID). The index is its home, as it is
// what persists it.
type Event = index.AlertEvent

// Webhook is one receiver of events (configuration "webhooks").
type Webhook struct {
	// Name names the webhook in the delivery log (the URL is not shown:
	// Slack's carry their secret); default the URL's host. Unique.
	Name string `json:"name"`
	// URL receives the POSTs: http or https.
	URL string `json:"url"`
	// Events are the kinds it receives (new_signature, regression,
	// spike); empty: all.
	Events []string `json:"events"`
	// Products restricts it to the events of these products; empty:
	// every product.
	Products []string `json:"products"`
}

// Wants says whether w receives e.
func (w Webhook) Wants(e Event) bool {
	if len(w.Events) > 0 && !slices.Contains(w.Events, e.Kind) {
		return false
	}
	return len(w.Products) == 0 || slices.Contains(w.Products, e.Product)
}

// CheckWebhooks checks a configuration's webhooks and fills in their
// default names: an absolute http(s) URL with a host and no user
// information (it would be sent in the clear in logs), known event kinds,
// unique names.
func CheckWebhooks(ws []Webhook) error {
	seen := map[string]bool{}
	for i := range ws {
		w := &ws[i]
		u, err := url.Parse(w.URL)
		if err != nil {
			return fmt.Errorf("webhooks[%d]: url: %w", i, err)
		}
		if (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			return fmt.Errorf("webhooks[%d]: url %q: an http:// or https:// URL with a host", i, u.Redacted())
		}
		if u.User != nil {
			return fmt.Errorf("webhooks[%d]: url %q: no user information in the URL", i, u.Redacted())
		}
		for _, k := range w.Events {
			if !slices.Contains(index.AlertKinds, k) {
				return fmt.Errorf("webhooks[%d]: event %q: one of %s", i, k, strings.Join(index.AlertKinds, ", "))
			}
		}
		if w.Name == "" {
			w.Name = u.Host
		}
		if len(w.Name) > 200 {
			return fmt.Errorf("webhooks[%d]: name longer than 200 bytes", i)
		}
		if seen[w.Name] {
			return fmt.Errorf("webhooks[%d]: name %q used twice (give each webhook a name)", i, w.Name)
		}
		seen[w.Name] = true
	}
	return nil
}

// The spike rule's defaults (Config.SpikeMin, SpikeFactor).
const (
	DefaultSpikeMin    = 10
	DefaultSpikeFactor = 5
)

// hoursPerWeek is the baseline's hours: seven days.
const hoursPerWeek = 7 * 24

// Spike is the spike rule: a signature spikes when its processed crashes
// received in the last hour (hour) reach both min and factor times its
// hourly mean over the seven UTC days before today (week / 168).
//
// Why: crash counts per hour are roughly Poisson. With a mean μ of at
// least 1 an hour, factor 5 puts the threshold at 5μ, above μ + 4√μ (four
// standard deviations) for every μ ≥ 1: noise does not pass it, a real
// surge does. With a small or no history (a signature seen rarely, or new
// this week) the mean says little and 5μ is a handful of crashes; the
// floor min (10) keeps a burst of a few from alerting: for μ = 2,
// P(N ≥ 10) ≈ 5·10⁻⁵ an hour. Whole days from the daily rollup make the
// baseline cheap (seven rows per signature) and immune to the spike
// itself (today is not in it).
func Spike(hour, week, min, factor int) bool {
	return hour >= min && hour*hoursPerWeek >= factor*week
}

// Payload is the JSON body of a webhook POST: the event's fields, a link
// to its signature's page at public_url, and a one-line text that
// Slack-compatible receivers (Slack, Mattermost, Rocket.Chat, Discord's
// /slack endpoint) show as the message.
type Payload struct {
	ID        string    `json:"id"`
	Event     string    `json:"event"`
	Signature string    `json:"signature"`
	Product   string    `json:"product"`
	Version   string    `json:"version"`
	CrashID   string    `json:"crash_id"`
	Count     int       `json:"count"`
	Link      string    `json:"link"`
	CrashLink string    `json:"crash_link,omitempty"`
	CreatedAt time.Time `json:"created_at"`
	Text      string    `json:"text"`
}

// NewPayload makes e's payload with links under publicURL (no trailing
// slash needed).
func NewPayload(e Event, publicURL string) Payload {
	base := strings.TrimSuffix(publicURL, "/")
	p := Payload{ID: e.ID, Event: e.Kind, Signature: e.Signature, Product: e.Product, Version: e.Version,
		CrashID: e.CrashID, Count: e.Count, CreatedAt: e.CreatedAt.UTC(),
		Link: base + "/signature?signature=" + url.QueryEscape(e.Signature)}
	if e.CrashID != "" {
		p.CrashLink = base + "/report/" + url.PathEscape(e.CrashID)
	}
	p.Text = text(p)
	return p
}

// maxTextSignature bounds the signature quoted in the text line.
const maxTextSignature = 300

// text is the Slack-compatible line of p: plain words, the user's strings
// escaped as Slack asks (&, <, >), and a <link|label>.
func text(p Payload) string {
	sig := p.Signature
	if len(sig) > maxTextSignature {
		sig = strings.ToValidUTF8(sig[:maxTextSignature], "") + "…"
	}
	what := slackEscape(sig)
	prod := slackEscape(strings.TrimSpace(p.Product + " " + p.Version))
	if prod == "" {
		prod = "an unnamed product"
	}
	link := "<" + p.Link + "|signature>"
	switch p.Event {
	case index.AlertNewSignature:
		return fmt.Sprintf("New crash signature in %s: %s (%s)", prod, what, link)
	case index.AlertRegression:
		return fmt.Sprintf("Regression in %s: %s crashes again after it was fixed (%s)", prod, what, link)
	case index.AlertSpike:
		return fmt.Sprintf("Crash spike: %s, %d crashes in the last hour, most in %s (%s)", what, p.Count, prod, link)
	}
	return fmt.Sprintf("%s in %s: %s (%s)", slackEscape(p.Event), prod, what, link)
}

// slackEscape escapes the three characters Slack's message text reserves
// (its "Escaping text" rules); controls become spaces.
func slackEscape(s string) string {
	s = strings.Map(func(r rune) rune {
		if r < 0x20 || r == 0x7f {
			return ' '
		}
		return r
	}, s)
	return strings.NewReplacer("&", "&amp;", "<", "&lt;", ">", "&gt;").Replace(s)
}
