package alert

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math/rand/v2"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/gobreakpad/gobreakpad/crashd/index"
)

// Store is what the dispatcher needs of the index (index.SQL has it).
type Store interface {
	AddAlertEvent(ctx context.Context, e index.AlertEvent) (bool, error)
	AlertEventsToFanOut(ctx context.Context, limit int) ([]index.AlertEvent, error)
	FanOutAlert(ctx context.Context, eventID string, webhooks []string) error
	ClaimAlertDeliveries(ctx context.Context, owner string, lease time.Duration, limit int) ([]index.AlertDelivery, error)
	FinishAlertAttempt(ctx context.Context, a index.AlertAttempt, state string, next time.Time) (bool, error)
	SignatureRate(ctx context.Context, signature string, now time.Time, minHour int) ([]index.Bucket, int, error)
	PruneAlerts(ctx context.Context, cutoff time.Time) error
}

// Config configures a Dispatcher. Zero fields take the defaults.
type Config struct {
	// Webhooks receive the events (checked by CheckWebhooks).
	Webhooks []Webhook
	// PublicURL is where people reach crashd's pages: the links of the
	// payloads.
	PublicURL string
	// Owner names this process in the deliveries' leases and the log.
	Owner string
	// SpikeMin and SpikeFactor are the spike rule's (Spike): defaults 10
	// and 5. SpikeInterval is how often the signatures seen since the
	// last check are checked (default 1m).
	SpikeMin, SpikeFactor int
	SpikeInterval         time.Duration
	// Poll is how often the index is read for deliveries due when nothing
	// wakes the dispatcher (an event of another process; a retry coming
	// due). Default 2s.
	Poll time.Duration
	// Timeout bounds one POST (connection, answer, body). Default 10s.
	Timeout time.Duration
	// BaseDelay and MaxDelay bound the backoff: attempt n waits
	// BaseDelay·2^(n-1), at most MaxDelay, with jitter taking it down to
	// half at random. Defaults 5s and 1h.
	BaseDelay, MaxDelay time.Duration
	// MaxAttempts and MaxAge end the retries of a delivery (failed):
	// defaults 12 attempts and 24h after the event.
	MaxAttempts int
	MaxAge      time.Duration
	// Senders is how many POSTs run at once (default 4).
	Senders int
	// Keep is how long finished events stay in the delivery log (default
	// 30 days).
	Keep time.Duration
}

func (c *Config) defaults() {
	if c.SpikeMin <= 0 {
		c.SpikeMin = DefaultSpikeMin
	}
	if c.SpikeFactor <= 0 {
		c.SpikeFactor = DefaultSpikeFactor
	}
	if c.SpikeInterval <= 0 {
		c.SpikeInterval = time.Minute
	}
	if c.Poll <= 0 {
		c.Poll = 2 * time.Second
	}
	if c.Timeout <= 0 {
		c.Timeout = 10 * time.Second
	}
	if c.BaseDelay <= 0 {
		c.BaseDelay = 5 * time.Second
	}
	if c.MaxDelay <= 0 {
		c.MaxDelay = time.Hour
	}
	if c.MaxAttempts <= 0 {
		c.MaxAttempts = 12
	}
	if c.MaxAge <= 0 {
		c.MaxAge = 24 * time.Hour
	}
	if c.Senders <= 0 {
		c.Senders = 4
	}
	if c.Keep <= 0 {
		c.Keep = 30 * 24 * time.Hour
	}
	if c.Owner == "" {
		c.Owner = "crashd"
	}
}

// maxCandidates bounds the signatures remembered between spike checks.
const maxCandidates = 10000

// maxBody bounds what is read of a webhook's answer; maxErrBody what of
// it is kept in the log.
const (
	maxBody    = 64 << 10
	maxErrBody = 200
)

// Dispatcher produces and delivers the events of one process.
type Dispatcher struct {
	cfg    Config
	store  Store
	log    *slog.Logger
	client *http.Client
	hooks  map[string]Webhook
	now    func() time.Time
	wake   chan struct{}

	mu sync.Mutex
	// candidates are the signatures processed since the last spike check,
	// each with its last crash; fired the hour of each signature's last
	// spike event.
	candidates map[string]string
	fired      map[string]string

	events     *prometheus.CounterVec
	deliveries *prometheus.CounterVec
	dropped    prometheus.Counter
}

// New returns a dispatcher over store. Its metrics (crashd_alert_*) are
// registered with reg unless it is nil.
func New(cfg Config, store Store, log *slog.Logger, reg prometheus.Registerer) (*Dispatcher, error) {
	if store == nil {
		return nil, errors.New("alert: an index is required")
	}
	if err := CheckWebhooks(cfg.Webhooks); err != nil {
		return nil, fmt.Errorf("alert: %w", err)
	}
	cfg.defaults()
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	d := &Dispatcher{cfg: cfg, store: store, log: log, now: time.Now, wake: make(chan struct{}, 1),
		hooks: map[string]Webhook{}, candidates: map[string]string{}, fired: map[string]string{}}
	for _, w := range cfg.Webhooks {
		d.hooks[w.Name] = w
	}
	d.client = &http.Client{
		Timeout: cfg.Timeout,
		Transport: &http.Transport{
			Proxy:                 http.ProxyFromEnvironment,
			TLSHandshakeTimeout:   cfg.Timeout,
			ResponseHeaderTimeout: cfg.Timeout,
			MaxIdleConnsPerHost:   cfg.Senders,
			IdleConnTimeout:       time.Minute,
		},
		// Redirects: to the same host only, three at most; another
		// host's answer is the 3xx itself (a failed attempt).
		CheckRedirect: func(req *http.Request, via []*http.Request) error {
			if len(via) >= 3 {
				return errors.New("more than 3 redirects")
			}
			if req.URL.Host != via[0].URL.Host || (req.URL.Scheme != "http" && req.URL.Scheme != "https") {
				return http.ErrUseLastResponse
			}
			return nil
		},
	}
	d.events = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "crashd_alert_events_total",
		Help: "Alert events this process produced (recorded first in the index), by kind.",
	}, []string{"kind"})
	d.deliveries = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "crashd_alert_deliveries_total",
		Help: "Webhook delivery attempts of this process, by outcome: delivered, retried (to be tried again), failed (given up).",
	}, []string{"outcome"})
	d.dropped = prometheus.NewCounter(prometheus.CounterOpts{
		Name: "crashd_alert_spike_candidates_dropped_total",
		Help: "Signatures not checked for a spike because more than 10,000 distinct ones were processed between two checks.",
	})
	for _, k := range index.AlertKinds {
		d.events.WithLabelValues(k)
	}
	for _, o := range []string{"delivered", "retried", "failed"} {
		d.deliveries.WithLabelValues(o)
	}
	if reg != nil {
		for _, c := range []prometheus.Collector{d.events, d.deliveries, d.dropped} {
			if err := reg.Register(c); err != nil {
				return nil, fmt.Errorf("alert: metrics: %w", err)
			}
		}
	}
	return d, nil
}

// Notify records an event (regressions from the index's triage; any
// source) and wakes the delivery. An event whose id is recorded already
// (another process saw the same) is not recorded again: it is delivered
// by the process that recorded it.
func (d *Dispatcher) Notify(ctx context.Context, e Event) error {
	if e.CreatedAt.IsZero() {
		e.CreatedAt = d.now()
	}
	ok, err := d.store.AddAlertEvent(ctx, e)
	if err != nil {
		return fmt.Errorf("alert: %w", err)
	}
	if ok {
		d.events.WithLabelValues(e.Kind).Inc()
		d.log.Info("alert: event", "id", e.ID, "event", e.Kind, "signature", e.Signature, "product", e.Product, "crash_id", e.CrashID)
	}
	d.Wake()
	return nil
}

// Processed tells the dispatcher of a crash the processor indexed: its
// signature is checked for a spike at the next check, and the events the
// index recorded with it (a new signature) are delivered. It never
// blocks on I/O.
func (d *Dispatcher) Processed(_ context.Context, c index.Crash) {
	if c.Signature != "" {
		d.mu.Lock()
		if _, ok := d.candidates[c.Signature]; ok || len(d.candidates) < maxCandidates {
			d.candidates[c.Signature] = c.ID
		} else {
			d.dropped.Inc()
		}
		d.mu.Unlock()
	}
	d.Wake()
}

// Wake makes Run look for events and deliveries now.
func (d *Dispatcher) Wake() {
	select {
	case d.wake <- struct{}{}:
	default:
	}
}

// Run fans events out into deliveries, delivers them and checks for
// spikes until ctx ends; a POST in flight is cancelled then (its delivery
// is claimed again when its lease ends, by this process's next start or
// another). Errors of the index are logged and retried at the next poll.
func (d *Dispatcher) Run(ctx context.Context) error {
	poll := time.NewTicker(d.cfg.Poll)
	defer poll.Stop()
	spikes := time.NewTicker(d.cfg.SpikeInterval)
	defer spikes.Stop()
	prune := time.NewTicker(time.Hour)
	defer prune.Stop()
	for {
		d.step(ctx)
		select {
		case <-ctx.Done():
			return nil
		case <-d.wake:
		case <-poll.C:
		case <-spikes.C:
			d.CheckSpikes(ctx)
		case <-prune.C:
			if err := d.store.PruneAlerts(ctx, d.now().Add(-d.cfg.Keep)); err != nil {
				d.log.Warn("alert: prune", "err", err)
			}
		}
	}
}

// step fans out the events recorded and sends the deliveries due, until
// none is left (or ctx ends).
func (d *Dispatcher) step(ctx context.Context) {
	for ctx.Err() == nil {
		fanned, err := d.fanOut(ctx)
		if err != nil {
			d.log.Warn("alert: fan-out", "err", err)
			return
		}
		sent, err := d.deliverDue(ctx)
		if err != nil {
			d.log.Warn("alert: deliveries", "err", err)
			return
		}
		if fanned == 0 && sent == 0 {
			return
		}
	}
}

// fanOut makes the deliveries of the events not fanned out yet.
func (d *Dispatcher) fanOut(ctx context.Context) (int, error) {
	evs, err := d.store.AlertEventsToFanOut(ctx, 100)
	if err != nil {
		return 0, err
	}
	for _, e := range evs {
		var names []string
		for _, w := range d.cfg.Webhooks {
			if w.Wants(e) {
				names = append(names, w.Name)
			}
		}
		if err := d.store.FanOutAlert(ctx, e.ID, names); err != nil {
			return 0, err
		}
	}
	return len(evs), nil
}

// deliverDue claims the deliveries due and sends them, Senders at once.
func (d *Dispatcher) deliverDue(ctx context.Context) (int, error) {
	lease := d.cfg.Timeout + 30*time.Second
	due, err := d.store.ClaimAlertDeliveries(ctx, d.cfg.Owner, lease, 4*d.cfg.Senders)
	if err != nil {
		return 0, err
	}
	sem := make(chan struct{}, d.cfg.Senders)
	var wg sync.WaitGroup
	for _, dl := range due {
		sem <- struct{}{}
		wg.Go(func() {
			defer func() { <-sem }()
			d.deliver(ctx, dl)
		})
	}
	wg.Wait()
	return len(due), nil
}

// deliver makes one attempt of a claimed delivery and records it.
func (d *Dispatcher) deliver(ctx context.Context, dl index.AlertDelivery) {
	log := d.log.With("id", dl.Event.ID, "event", dl.Event.Kind, "webhook", dl.Webhook)
	a := index.AlertAttempt{EventID: dl.Event.ID, Webhook: dl.Webhook, Attempt: dl.Attempts + 1, Owner: d.cfg.Owner}
	w, ok := d.hooks[dl.Webhook]
	if ok {
		code, err := d.post(ctx, w, NewPayload(dl.Event, d.cfg.PublicURL))
		a.Code = code
		if err != nil {
			a.Error = err.Error()
		}
		if ctx.Err() != nil {
			// Shutdown: not the webhook's failure. The claim ends with
			// its lease and the delivery is tried again.
			return
		}
	} else {
		a.Error = "webhook no longer configured in this process"
	}
	a.At = d.now()
	state, next, outcome := index.DeliveryDelivered, time.Time{}, "delivered"
	if a.Error != "" {
		switch {
		case !ok || a.Attempt >= d.cfg.MaxAttempts || a.At.Sub(dl.Event.CreatedAt) >= d.cfg.MaxAge:
			state, outcome = index.DeliveryFailed, "failed"
		default:
			state, next, outcome = index.DeliveryPending, a.At.Add(d.backoff(a.Attempt)), "retried"
		}
	}
	recorded, err := d.store.FinishAlertAttempt(context.WithoutCancel(ctx), a, state, next)
	switch {
	case err != nil:
		log.Warn("alert: recording the attempt (it is made again when the claim ends)", "err", err)
		return
	case !recorded:
		log.Warn("alert: the claim was lost (an attempt outlived its lease); another process retries it")
		return
	}
	d.deliveries.WithLabelValues(outcome).Inc()
	switch outcome {
	case "delivered":
		log.Info("alert: delivered", "attempt", a.Attempt, "code", a.Code)
	case "retried":
		log.Warn("alert: delivery failed; retried", "attempt", a.Attempt, "code", a.Code, "err", a.Error, "next", next)
	default:
		log.Error("alert: delivery failed; given up", "attempt", a.Attempt, "code", a.Code, "err", a.Error)
	}
}

// backoff is the wait after the n-th failed attempt: BaseDelay·2^(n-1) up
// to MaxDelay, less up to half of it at random (jitter: processes and
// webhooks that failed together do not retry together).
func (d *Dispatcher) backoff(n int) time.Duration {
	w := d.cfg.BaseDelay
	for i := 1; i < n && w < d.cfg.MaxDelay; i++ {
		w *= 2
	}
	w = min(w, d.cfg.MaxDelay)
	return w - time.Duration(rand.Int64N(int64(w/2)+1))
}

// post sends p to w and returns the answer's status; an error for no
// answer or one outside 2xx.
func (d *Dispatcher) post(ctx context.Context, w Webhook, p Payload) (int, error) {
	body, err := json.Marshal(p)
	if err != nil {
		return 0, err
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, w.URL, bytes.NewReader(body))
	if err != nil {
		return 0, err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("User-Agent", "crashd-alerts")
	// Receivers that dedupe by header rather than body.
	req.Header.Set("Idempotency-Key", p.ID)
	req.Header.Set("X-Crashd-Event", p.Event)
	resp, err := d.client.Do(req)
	if err != nil {
		var ue *url.Error
		if errors.As(err, &ue) {
			// *url.Error quotes the URL, which may hold a secret.
			err = fmt.Errorf("%s: %w", ue.Op, ue.Err)
		}
		return 0, err
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(io.LimitReader(resp.Body, maxBody))
	if resp.StatusCode/100 == 2 {
		return resp.StatusCode, nil
	}
	msg := strings.ToValidUTF8(string(b[:min(len(b), maxErrBody)]), "?")
	return resp.StatusCode, fmt.Errorf("HTTP %d: %s", resp.StatusCode, strings.TrimSpace(msg))
}

// CheckSpikes checks the signatures processed since the last check
// against the spike rule and records a spike event for each that spikes
// (once per signature and clock hour, across processes: the hour is in
// the id).
func (d *Dispatcher) CheckSpikes(ctx context.Context) {
	d.mu.Lock()
	cands := d.candidates
	d.candidates = map[string]string{}
	d.mu.Unlock()
	now := d.now().UTC()
	hourKey := now.Format("2006-01-02T15")
	for sig, crashID := range cands {
		if ctx.Err() != nil {
			return
		}
		d.mu.Lock()
		done := d.fired[sig] == hourKey
		d.mu.Unlock()
		if done {
			continue
		}
		hour, week, err := d.store.SignatureRate(ctx, sig, now, d.cfg.SpikeMin)
		if err != nil {
			d.log.Warn("alert: spike check", "signature", sig, "err", err)
			continue
		}
		n := 0
		for _, b := range hour {
			n += b.Count
		}
		if !Spike(n, week, d.cfg.SpikeMin, d.cfg.SpikeFactor) {
			continue
		}
		e := index.NewAlertEvent(index.AlertSpike, hour[0].Value, sig, "", crashID, n, now)
		if err := d.Notify(ctx, e); err != nil {
			d.log.Warn("alert: spike event", "signature", sig, "err", err)
			continue
		}
		d.mu.Lock()
		if len(d.fired) >= maxCandidates {
			clear(d.fired)
		}
		d.fired[sig] = hourKey
		d.mu.Unlock()
	}
}
