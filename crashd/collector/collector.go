// Package collector is the crash server's collector: the HTTP endpoints
// crash reporters post to, answering as the servers those clients were
// written for.
//
//   - POST /submit: Antenna's (Mozilla's collector) Breakpad endpoint, for
//     Breakpad's senders and minidump_upload, Crashpad, Electron's
//     crashReporter: multipart/form-data or multipart/mixed, gzip bodies,
//     chunked bodies, a JSON "extra" part, several dumps, URL parameters;
//     answers "CrashID=bp-<id>\n", "Discarded=rule_<name>",
//     "Discarded=malformed_<reason>" exactly as Antenna.
//   - POST /api/{project}/minidump/ (with or without the slash): Sentry's
//     minidump endpoint (sentry-native, Crashpad and Electron set up for
//     Sentry): the sentry_key checked, raw or multipart minidumps, compressed
//     minidumps; answers the event id as a hyphenated UUID.
//
// Each crash passes the throttle rules (Antenna's throttler: first matching
// rule decides), loses or marks the annotations that carry personal data,
// and is stored in the blob store (dumps, dump names, raw crash last; each
// Put durable) before the client gets its 200. Then the crash id is
// published to the processing queue and v1/queued/<id> is written; a crash
// stored but not published is answered 200 too, and Recover publishes it
// later.
//
// Every byte a client sends is hostile: bodies are read as they arrive
// (never into a buffer sized by Content-Length), inflated as they are read
// within a size and a ratio bound, kept in memory up to 1 MiB or spooled
// to an unlinked file; all uploads together hold at most
// Config.MaxInflightBytes of memory (503 with Retry-After past it); a body
// has an idle and a whole deadline; annotations are bounded in count and
// size; optional token buckets per client answer 429 (body.go, limits.go).
package collector

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"os"
	"path/filepath"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/gobreakpad/gobreakpad/crashd/blob"
	"github.com/gobreakpad/gobreakpad/crashd/budget"
	"github.com/gobreakpad/gobreakpad/crashd/crash"
)

// Default limits.
const (
	// DefaultMaxBodySize is the largest request body accepted, as received
	// (compressed or not): 25 MiB, Antenna's (its nginx's client_max_body_size).
	DefaultMaxBodySize = 25 << 20
	// DefaultMaxDecompressedSize bounds a gzip body (or a compressed
	// minidump) once inflated: 100 MiB. Inflating stops there; the upload is
	// refused with 413.
	DefaultMaxDecompressedSize = 100 << 20
	// DefaultBodyIdleTimeout is the longest wait for more of a body: 60 s.
	DefaultBodyIdleTimeout = 60 * time.Second
	// DefaultBodyTimeout is the longest a whole body may take: 2 minutes
	// (25 MiB at 1.7 Mbit/s), however steadily its bytes trickle in.
	DefaultBodyTimeout = 2 * time.Minute
	// DefaultMaxInflateRatio bounds how many times its compressed size a
	// body or a minidump may inflate to (beyond its first MiB): 200. Real
	// minidumps compress 3-10 times (the corpus's, gzipped: 4.8 times the
	// median, up to 121 times for Breakpad's stack_exhaustion.dmp, whose
	// stack is mostly zeros); a stream of zeros 1,000 times.
	DefaultMaxInflateRatio = 200
	// DefaultMaxInflightBytes bounds the memory all uploads together hold
	// (copy buffers, decompressors, decoded annotations): 256 MiB.
	DefaultMaxInflightBytes = budget.DefaultBytes
	// DefaultMaxUploads bounds the uploads read at once: 1024.
	DefaultMaxUploads = budget.DefaultUploads
	// DefaultBudgetWait is how long an upload waits for memory or a slot
	// before it is answered 503: 2 s.
	DefaultBudgetWait = budget.DefaultWait
	// DefaultMaxAnnotations bounds the annotations of a crash: 2,000
	// (Firefox sends about 150, Chromium and Electron fewer).
	DefaultMaxAnnotations = 2000
	// DefaultMaxAnnotationsSize bounds the bytes of a crash's annotation
	// parts (text fields and JSON extra) together: 8 MiB.
	DefaultMaxAnnotationsSize = 8 << 20
)

// Config configures a Collector. The zero value is Antenna's defaults:
// 25 MiB bodies, accept everything, Antenna's personal-data fields dropped,
// no Sentry projects.
type Config struct {
	// MaxBodySize is the largest body accepted as received, in bytes
	// (0: DefaultMaxBodySize). One byte more is answered 413.
	MaxBodySize int64 `json:"max_body_size,omitempty"`
	// MaxDecompressedSize is the largest body once gzip is undone, and the
	// largest decompressed Sentry minidump (0: DefaultMaxDecompressedSize).
	MaxDecompressedSize int64 `json:"max_decompressed_size,omitempty"`
	// BodyIdleTimeout is the longest wait for the next bytes of a request
	// body (0: DefaultBodyIdleTimeout, nginx's client_body_timeout, which
	// Antenna runs behind); a client that stops sending (a Content-Length
	// longer than its body) is answered 408 Discarded=timeout.
	BodyIdleTimeout Duration `json:"body_idle_timeout,omitempty"`
	// BodyTimeout is the longest a whole request body may take to arrive
	// (0: DefaultBodyTimeout); unlike BodyIdleTimeout, bytes arriving do
	// not extend it. Answered 408 Discarded=timeout.
	BodyTimeout Duration `json:"body_timeout,omitempty"`
	// MaxInflateRatio bounds the inflation of a gzip body and of a
	// compressed Sentry minidump: past its first MiB, the output may be at
	// most this many times the compressed bytes read (0:
	// DefaultMaxInflateRatio). Past it: 413 Discarded=too_large, nothing stored.
	MaxInflateRatio int64 `json:"max_inflate_ratio,omitempty"`
	// MaxCrashSize bounds what one crash stores: its dumps and annotation
	// parts together (0: MaxDecompressedSize).
	MaxCrashSize int64 `json:"max_crash_size,omitempty"`
	// MaxInflightBytes bounds the memory all uploads together hold (0:
	// DefaultMaxInflightBytes); an upload that cannot get its share within
	// BudgetWait is answered 503 with Retry-After.
	MaxInflightBytes int64 `json:"max_inflight_bytes,omitempty"`
	// MaxUploads bounds the uploads read at once (0: DefaultMaxUploads),
	// with the same answer past it.
	MaxUploads int `json:"max_uploads,omitempty"`
	// BudgetWait is how long an upload waits for MaxInflightBytes or
	// MaxUploads to allow it (0: DefaultBudgetWait).
	BudgetWait Duration `json:"budget_wait,omitempty"`
	// MaxAnnotations bounds the annotations of one crash (0:
	// DefaultMaxAnnotations); MaxAnnotationsSize the bytes of its text
	// fields and JSON extra together (0: DefaultMaxAnnotationsSize). Past
	// either: 413 Discarded=too_large.
	MaxAnnotations     int   `json:"max_annotations,omitempty"`
	MaxAnnotationsSize int64 `json:"max_annotations_size,omitempty"`
	// Budget, when set, is the budget the uploads take their memory and
	// slots from, shared with the symbol server's uploads (crashd's
	// wiring makes it with NewBudget); nil: NewBudget's, the collector's
	// own.
	Budget *budget.Budget `json:"-"`
	// SpoolDir is where bodies are written while they are read ("": the
	// directory ".spool" of a dir blob store, else the system's temporary
	// directory). Spool files are unlinked as soon as they are created
	// (on Unix), so a killed process leaves none.
	SpoolDir string `json:"spool_dir,omitempty"`
	// RateLimits are optional per-client token buckets; an upload over
	// any of them is answered 429 with Retry-After (nil: none).
	RateLimits []RateLimit `json:"rate_limits,omitempty"`
	// Throttle are the throttle rules, in order (nil: DefaultRules, accept
	// everything). When rules are given and none decides, the crash is
	// rejected with rule NO_MATCH, as in Antenna: end the list with an
	// accept rule without conditions to accept the rest.
	Throttle []Rule `json:"throttle,omitempty"`
	// PersonalData says what to do with annotations that carry personal
	// data (nil: DefaultPersonalData).
	PersonalData *PersonalData `json:"personal_data,omitempty"`
	// Products holds per-product options, by ProductName (or what stands
	// for it: prod, _productName, the product URL parameter).
	Products map[string]Product `json:"products,omitempty"`
	// SubmitterToken, when set, lets a client that sends
	// "Authorization: Bearer TOKEN" choose the crash id with a "uuid"
	// annotation (Antenna's stage submitter). Without it, a crash with a
	// uuid annotation is refused (401 Discarded=unauthorized_uuid), as in Antenna.
	SubmitterToken string `json:"submitter_token,omitempty"`
	// Sentry lists the Sentry projects whose minidump endpoint is served.
	Sentry []SentryProject `json:"sentry,omitempty"`
}

// PersonalData lists the annotations that carry personal data by
// convention and what happens to them.
type PersonalData struct {
	// Drop are removed before the crash is stored (a collector note says
	// "Removed NAME from raw crash.", as Antenna).
	Drop []string `json:"drop"`
	// Restrict are kept, and listed in the raw crash's
	// metadata.restricted_annotations: only readers with the permission to
	// see personal data may be shown them.
	Restrict []string `json:"restrict"`
}

// DefaultPersonalData drops Antenna's BAD_FIELDS (Email, TelemetryClientId,
// TelemetryServerURL, TelemetrySessionId) and restricts URL and Comments.
func DefaultPersonalData() PersonalData {
	return PersonalData{
		Drop:     []string{"Email", "TelemetryClientId", "TelemetryServerURL", "TelemetrySessionId"},
		Restrict: []string{"URL", "Comments"},
	}
}

// Product holds options of one product.
type Product struct {
	// Response is how /submit answers an accepted crash of this product:
	// "" (Antenna's "CrashID=bp-<id>\n") or "hex16": the first 16
	// hexadecimal digits of the crash id, nothing else, which Chromium's
	// Linux uploader requires (the crash can be looked up by that prefix).
	Response string `json:"response,omitempty"`
}

// ResponseHex16 is Product.Response for Chromium's Linux uploader.
const ResponseHex16 = "hex16"

// SentryProject is a Sentry project whose minidump endpoint is served.
type SentryProject struct {
	// ID is the project id of the URL (/api/ID/minidump/).
	ID string `json:"id"`
	// Keys are the accepted public keys (sentry_key; a DSN's user part).
	Keys []string `json:"keys"`
	// Product is the ProductName given to its crashes that name none (default "sentry-ID").
	Product string `json:"product,omitempty"`
}

// Duration is a time.Duration that configuration files write as Go's
// duration text ("60s", "1m30s") or as a number of seconds.
type Duration time.Duration

// UnmarshalJSON reads "60s" or 60.
func (d *Duration) UnmarshalJSON(b []byte) error {
	var v any
	if err := json.Unmarshal(b, &v); err != nil {
		return fmt.Errorf("duration: %w", err)
	}
	switch v := v.(type) {
	case float64:
		*d = Duration(v * float64(time.Second))
	case string:
		x, err := time.ParseDuration(v)
		if err != nil {
			return fmt.Errorf("duration: %w", err)
		}
		*d = Duration(x)
	default:
		return fmt.Errorf("duration: %s: want \"60s\" or a number of seconds", b)
	}
	return nil
}

// MarshalJSON writes Go's duration text.
func (d Duration) MarshalJSON() ([]byte, error) { return json.Marshal(time.Duration(d).String()) }

// Publisher queues a stored crash for processing.
type Publisher func(ctx context.Context, id crash.ID) error

// Unqueued is a durable record of the crashes stored (or being stored)
// but not yet queued, for a blob store whose listing is costly (the NATS
// object store reads every object's metadata): the collector adds a
// crash's id before its first blob Put and removes it once the crash is
// published, and RecoverUnqueued reads it instead of listing the store
// (crashd/queue.Unqueued: a JetStream KV bucket).
type Unqueued interface {
	// Add records id, durably when it returns; the revision goes to Remove.
	Add(ctx context.Context, id string) (rev uint64, err error)
	// Remove forgets id (not there: no error).
	Remove(ctx context.Context, id string, rev uint64) error
	// Scan calls f with each recorded id, its revision and when it was
	// added, at most limit of them (<= 0: all).
	Scan(ctx context.Context, limit int, f func(id string, rev uint64, added time.Time) error) error
}

// Collector serves the collector's endpoints.
type Collector struct {
	cfg      Config
	store    blob.Store
	publish  Publisher
	log      *slog.Logger
	throttle *throttler
	drop     map[string]bool
	restrict map[string]bool
	sentry   map[string]*SentryProject
	m        *metrics
	now      func() time.Time
	budget   *budget.Budget
	limits   []*limiter
	spoolDir string
	unqueued Unqueued
}

// NewBudget returns the uploads' budget of cfg: MaxInflightBytes,
// MaxUploads and BudgetWait (or their defaults).
func (cfg Config) NewBudget() *budget.Budget {
	n, u, w := cfg.MaxInflightBytes, cfg.MaxUploads, time.Duration(cfg.BudgetWait)
	if n <= 0 {
		n = DefaultMaxInflightBytes
	}
	if u <= 0 {
		u = DefaultMaxUploads
	}
	if w <= 0 {
		w = DefaultBudgetWait
	}
	return budget.New(n, u, w)
}

// New returns a collector storing into store and publishing with publish.
// A nil log discards; a nil reg registers no metrics. It returns an error
// for a configuration it cannot use (bad rule, duplicate Sentry project, ...).
func New(cfg Config, store blob.Store, publish Publisher, log *slog.Logger, reg prometheus.Registerer) (*Collector, error) {
	if store == nil || publish == nil {
		return nil, errors.New("collector: a store and a publisher are required")
	}
	if cfg.MaxBodySize <= 0 {
		cfg.MaxBodySize = DefaultMaxBodySize
	}
	if cfg.MaxDecompressedSize <= 0 {
		cfg.MaxDecompressedSize = DefaultMaxDecompressedSize
	}
	if cfg.BodyIdleTimeout <= 0 {
		cfg.BodyIdleTimeout = Duration(DefaultBodyIdleTimeout)
	}
	if cfg.BodyTimeout <= 0 {
		cfg.BodyTimeout = Duration(DefaultBodyTimeout)
	}
	if cfg.MaxInflateRatio <= 0 {
		cfg.MaxInflateRatio = DefaultMaxInflateRatio
	}
	if cfg.MaxCrashSize <= 0 {
		cfg.MaxCrashSize = cfg.MaxDecompressedSize
	}
	if cfg.MaxInflightBytes <= 0 {
		cfg.MaxInflightBytes = DefaultMaxInflightBytes
	}
	if cfg.MaxUploads <= 0 {
		cfg.MaxUploads = DefaultMaxUploads
	}
	if cfg.BudgetWait <= 0 {
		cfg.BudgetWait = Duration(DefaultBudgetWait)
	}
	if cfg.MaxAnnotations <= 0 {
		cfg.MaxAnnotations = DefaultMaxAnnotations
	}
	if cfg.MaxAnnotationsSize <= 0 {
		cfg.MaxAnnotationsSize = DefaultMaxAnnotationsSize
	}
	if cfg.Budget == nil {
		cfg.Budget = cfg.NewBudget()
	}
	if cfg.Budget.Max() < copyBufSize+zstdCost+2*cfg.MaxAnnotationsSize {
		return nil, fmt.Errorf("collector: max_inflight_bytes %d: below what one upload may need (%d)",
			cfg.Budget.Max(), copyBufSize+zstdCost+2*cfg.MaxAnnotationsSize)
	}
	spoolDir := cfg.SpoolDir
	if spoolDir == "" {
		if d, ok := store.(*blob.Dir); ok {
			spoolDir = filepath.Join(d.Path(), ".spool")
		} else {
			spoolDir = os.TempDir()
		}
	}
	if err := os.MkdirAll(spoolDir, 0o700); err != nil {
		return nil, fmt.Errorf("collector: spool: %w", err)
	}
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	t, err := newThrottler(cfg.Throttle)
	if err != nil {
		return nil, fmt.Errorf("collector: %w", err)
	}
	pd := DefaultPersonalData()
	if cfg.PersonalData != nil {
		pd = *cfg.PersonalData
	}
	c := &Collector{
		cfg: cfg, store: store, publish: publish, log: log, throttle: t,
		drop: map[string]bool{}, restrict: map[string]bool{}, sentry: map[string]*SentryProject{},
		now:    time.Now,
		budget: cfg.Budget, spoolDir: spoolDir,
	}
	for i, rl := range cfg.RateLimits {
		l, err := newLimiter(rl, func() time.Time { return c.now() })
		if err != nil {
			return nil, fmt.Errorf("collector: rate limit %d: %w", i+1, err)
		}
		c.limits = append(c.limits, l)
	}
	for _, n := range pd.Drop {
		c.drop[n] = true
	}
	for _, n := range pd.Restrict {
		if c.drop[n] {
			return nil, fmt.Errorf("collector: personal data: %q both dropped and restricted", n)
		}
		c.restrict[n] = true
	}
	for name, p := range cfg.Products {
		if p.Response != "" && p.Response != ResponseHex16 {
			return nil, fmt.Errorf("collector: product %q: response %q: want \"\" or %q", name, p.Response, ResponseHex16)
		}
	}
	for i := range cfg.Sentry {
		p := cfg.Sentry[i]
		if p.ID == "" || len(p.Keys) == 0 {
			return nil, fmt.Errorf("collector: sentry project %d: an id and at least one key are required", i+1)
		}
		if c.sentry[p.ID] != nil {
			return nil, fmt.Errorf("collector: sentry project %q configured twice", p.ID)
		}
		if p.Product == "" {
			p.Product = "sentry-" + p.ID
		}
		c.sentry[p.ID] = &p
	}
	c.m, err = newMetrics(reg)
	if err != nil {
		return nil, fmt.Errorf("collector: metrics: %w", err)
	}
	if reg != nil {
		for _, g := range []prometheus.Collector{
			prometheus.NewGaugeFunc(prometheus.GaugeOpts{
				Name: "crashd_collector_inflight_bytes", Help: "Memory held by the uploads being read, crashes and symbol files (the budget max_inflight_bytes bounds).",
			}, func() float64 { n, _ := c.budget.InUse(); return float64(n) }),
			prometheus.NewGaugeFunc(prometheus.GaugeOpts{
				Name: "crashd_collector_inflight_uploads", Help: "Uploads being read, crashes and symbol files (max_uploads bounds them).",
			}, func() float64 { _, u := c.budget.InUse(); return float64(u) }),
		} {
			if err := reg.Register(g); err != nil {
				return nil, fmt.Errorf("collector: metrics: %w", err)
			}
		}
	}
	return c, nil
}

// SetUnqueued makes the collector record each crash in u from before it is
// stored until it is published (call it before serving). An upload whose
// record cannot be added is refused (503), as one that cannot be stored:
// a crash answered 200 is always either queued or in u.
func (c *Collector) SetUnqueued(u Unqueued) { c.unqueued = u }

// Handler returns the collector's routes: POST /submit and, with Sentry
// projects configured, POST /api/{project}/minidump/ (and without the
// slash); any other path is answered 404 with Antenna's JSON error.
func (c *Collector) Handler() http.Handler {
	mux := http.NewServeMux()
	c.Register(mux)
	mux.HandleFunc("/", NotFound)
	return mux
}

// Register adds the collector's routes to mux (for a server that serves
// other routes beside them: crashd's route table, which opens them to
// anyone).
func (c *Collector) Register(mux interface {
	HandleFunc(pattern string, handler func(http.ResponseWriter, *http.Request))
}) {
	mux.HandleFunc("POST /submit", c.Submit)
	mux.HandleFunc("/submit", submitMethods)
	if len(c.sentry) > 0 {
		mux.HandleFunc("POST /api/{project}/minidump/{$}", c.SentryMinidump)
		mux.HandleFunc("POST /api/{project}/minidump", c.SentryMinidump)
	}
}

// metrics are the collector's Prometheus metrics.
type metrics struct {
	received  *prometheus.CounterVec
	accepted  *prometheus.CounterVec
	rejected  *prometheus.CounterVec
	throttled *prometheus.CounterVec
	errors    *prometheus.CounterVec
	size      *prometheus.HistogramVec
	seconds   *prometheus.HistogramVec
}

func newMetrics(reg prometheus.Registerer) (*metrics, error) {
	m := &metrics{
		received: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "crashd_collector_received_total", Help: "Crash uploads received, by endpoint (submit, sentry).",
		}, []string{"endpoint"}),
		accepted: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "crashd_collector_accepted_total", Help: "Crashes stored and answered with their id, by endpoint.",
		}, []string{"endpoint"}),
		rejected: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "crashd_collector_rejected_total",
			Help: "Crash uploads not stored, by endpoint and reason (malformed_<reason>, rule_<name>, fakeaccept_<name>, too_large, timeout, busy, rate_limited, unauthorized, store_error).",
		}, []string{"endpoint", "reason"}),
		throttled: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "crashd_collector_throttle_total", Help: "Throttle decisions, by rule and result.",
		}, []string{"rule", "result"}),
		errors: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "crashd_collector_errors_total", Help: "Failures after a crash was accepted, by step (publish, queued_marker, unqueued_remove).",
		}, []string{"step"}),
		size: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name: "crashd_collector_payload_bytes", Help: "Sizes of accepted bodies as received, by compression (gzip, none).",
			Buckets: prometheus.ExponentialBuckets(1<<10, 4, 9),
		}, []string{"compressed"}),
		seconds: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name: "crashd_collector_request_seconds", Help: "Time to read, store and answer an upload, by endpoint.",
			Buckets: prometheus.ExponentialBuckets(0.001, 2.5, 10),
		}, []string{"endpoint"}),
	}
	if reg != nil {
		for _, col := range []prometheus.Collector{m.received, m.accepted, m.rejected, m.throttled, m.errors, m.size, m.seconds} {
			if err := reg.Register(col); err != nil {
				return nil, err
			}
		}
	}
	return m, nil
}
