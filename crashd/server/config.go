package server

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/gobreakpad/gobreakpad/crashd/alert"
	"github.com/gobreakpad/gobreakpad/crashd/collector"
	"github.com/gobreakpad/gobreakpad/crashd/sourcelink"
	"github.com/gobreakpad/gobreakpad/crashd/version"
	"github.com/gobreakpad/gobreakpad/crashd/web"
)

// The roles a process can play (Config.Roles).
const (
	// RoleCollector serves the collector's endpoints and recovers crashes
	// stored but never queued at start-up.
	RoleCollector = "collector"
	// RoleProcessor runs the processor's workers.
	RoleProcessor = "processor"
	// RoleWeb serves the API (/api/...).
	RoleWeb = "web"
	// RoleSymbols serves the symbol server (uploads and downloads of
	// symbols, reprocessing when they arrive).
	RoleSymbols = "symbols"
	// RoleAll is every role (the default).
	RoleAll = "all"
)

// Roles lists the roles a process can play, RoleAll aside.
var Roles = []string{RoleCollector, RoleProcessor, RoleWeb, RoleSymbols}

// Duration is a time.Duration written as Go writes durations ("30s",
// "2m") in the configuration file and the environment.
type Duration time.Duration

// UnmarshalJSON reads "30s" (or a number of seconds).
func (d *Duration) UnmarshalJSON(b []byte) error {
	var s string
	if err := json.Unmarshal(b, &s); err != nil {
		var n float64
		if err2 := json.Unmarshal(b, &n); err2 != nil {
			return fmt.Errorf("duration %s: a string such as \"30s\" or a number of seconds", b)
		}
		*d = Duration(n * float64(time.Second))
		return nil
	}
	v, err := time.ParseDuration(s)
	if err != nil {
		return fmt.Errorf("duration %q: %w", s, err)
	}
	*d = Duration(v)
	return nil
}

// MarshalJSON writes the duration as "30s".
func (d Duration) MarshalJSON() ([]byte, error) { return json.Marshal(time.Duration(d).String()) }

// Config is crashd's configuration: defaults, then a JSON file
// (LoadFile), then CRASHD_* environment variables (FromEnv), then
// command-line flags (cmd/crashd). docs/crashd.md lists every field.
type Config struct {
	// Listen is the HTTP address (host:port).
	Listen string `json:"listen"`
	// Data is the data directory: blobs under DATA/v1/..., the queue's
	// JetStream storage under DATA/nats, the index at DATA/index.sqlite.
	// It is made 0700, and what crashd creates 0600 (0700 directories).
	Data string `json:"data"`
	// DataGroupReadable lets the data directory's group read it: 0750 and
	// 0640 instead of 0700 and 0600 (a backup user, an operator's tools).
	DataGroupReadable bool `json:"data_group_readable"`
	// MinFreeBytes and MinFreePercent are the free space the data
	// directory's file system keeps: below the larger of the two the
	// heartbeat answers 503, uploads 503 (Retry-After) and the processor
	// pauses, until space returns. 0 and 0: no check.
	MinFreeBytes   int `json:"min_free_bytes"`
	MinFreePercent int `json:"min_free_percent"`
	// MaxHold bounds how long the processor holds a crash through an
	// outage of the storage or the index (no attempt counted) before it
	// is handed back as a failed attempt.
	MaxHold Duration `json:"max_hold"`
	// Roles are what this process does: any of collector, processor,
	// web, symbols, or all (the default).
	Roles []string `json:"roles"`
	// Symbols are symbol paths as minidump_stackwalk takes them (stores,
	// URLs, srv*CACHE*URL); SymbolsURL Breakpad-layout HTTP stores;
	// SymbolsCache the download cache. $_NT_SYMBOL_PATH and
	// $DEBUGINFOD_URLS are honoured as by minidump_stackwalk.
	Symbols      []string `json:"symbols"`
	SymbolsURL   []string `json:"symbols_url"`
	SymbolsCache string   `json:"symbols_cache"`
	// SymbolsTimeout bounds each symbol download.
	SymbolsTimeout Duration `json:"symbols_timeout"`
	// SymbolsRedirect, with blobs on S3, answers symbol downloads with a
	// 302 to a presigned URL of the object (valid 10 minutes), as Tecken
	// does, instead of relaying the file (docs/scale.md "Symbols on the
	// blob store").
	SymbolsRedirect bool `json:"symbols_redirect"`
	// SymbolsLocalMax bounds, in bytes, the local copies of the blob
	// store's .sym files a process keeps in its symbol directory when the
	// symbols are on the blob store (blobs nats or s3); 0: 10 GiB.
	SymbolsLocalMax int `json:"symbols_local_max"`
	// SignatureLists is a directory of signature lists added to the
	// defaults (as minidump_stackwalk --signature-lists; docs/signature.md).
	SignatureLists string `json:"signature_lists"`
	// Workers is how many crashes are processed at once (0: the CPUs);
	// WalkJobs how many threads of one dump are walked at once.
	Workers  int `json:"workers"`
	WalkJobs int `json:"walk_jobs"`
	// Timeout bounds the processing of one crash; MaxAttempts is how often
	// a crash is tried before it is failed; RetryDelay the wait before
	// the next attempt (times the attempt).
	Timeout     Duration `json:"timeout"`
	MaxAttempts int      `json:"max_attempts"`
	RetryDelay  Duration `json:"retry_delay"`
	// NATSURL is an external NATS server or cluster to use as the queue
	// (nats://h1:4222,nats://h2:4222,...: --nats); empty: the embedded
	// server.
	NATSURL string `json:"nats_url"`
	// NATSCluster makes the embedded NATS server a node of a cluster:
	// the other nodes' route URLs (nats-route://h2:6222,...); the node
	// listens for routes on NATSClusterListen (default 0.0.0.0:6222) and
	// is named NATSName (default: host name and route port).
	NATSCluster       []string `json:"nats_cluster"`
	NATSClusterListen string   `json:"nats_cluster_listen"`
	NATSName          string   `json:"nats_name"`
	// NATSReplicas is the replication of the streams, the object store
	// and the leases (default: 3 on a cluster, else 1).
	NATSReplicas int `json:"nats_replicas"`
	// Blobs is where blobs live: "dir" (the data directory, the default),
	// "nats" (a JetStream object store on the queue's NATS, replicated
	// as the streams: for processes on several machines) or "s3" (an
	// S3-compatible object store: S3Endpoint, S3Bucket, S3Region,
	// S3Prefix; credentials from the environment, AWS_ACCESS_KEY_ID and
	// AWS_SECRET_ACCESS_KEY or the AWS SDKs' other sources).
	Blobs string `json:"blobs"`
	// S3Endpoint is the S3 server's URL (http://127.0.0.1:8333,
	// https://storage.googleapis.com; empty: AWS S3); S3Bucket the bucket
	// (created when missing); S3Region its region; S3Prefix what every
	// key starts with (several deployments in one bucket).
	S3Endpoint string `json:"s3_endpoint"`
	S3Bucket   string `json:"s3_bucket"`
	S3Region   string `json:"s3_region"`
	S3Prefix   string `json:"s3_prefix"`
	// RetentionDays, when positive, removes from the index the crashes of
	// the weeks that ended more than that many days ago (PostgreSQL:
	// drops their weekly partitions), hourly, in one process at a time.
	RetentionDays int `json:"retention_days"`
	// SweepInterval is how often a collector looks for crashes stored but
	// never queued (under a lease, so one collector at a time); 0: only
	// at start-up.
	SweepInterval Duration `json:"sweep_interval"`
	// DB is the index: a postgres:// URL (PostgreSQL, shared by every
	// process of a deployment) or the path of a SQLite database; empty:
	// DATA/index.sqlite.
	DB string `json:"db"`
	// IndexGroupWait is how long the index's group commit waits for more
	// processed crashes to write in one transaction (0: none): a crash's
	// row appears that much later, and a busy processor spends much less
	// on its index (docs/crashd.md, "Benchmark").
	IndexGroupWait Duration `json:"index_group_wait"`
	// NATSListen makes the embedded server also listen on host:port (for
	// the nats CLI, or other crashd processes); empty: in-process only.
	NATSListen string `json:"nats_listen"`
	// QueueSync makes the embedded queue sync every message to disk
	// before accepting it (survives power loss).
	QueueSync bool `json:"queue_sync"`
	// AckWait is how long a crash handed to a worker may go without news
	// before the queue gives it to another.
	AckWait Duration `json:"ack_wait"`
	// RecoverDays bounds start-up recovery to the crashes of the last
	// RecoverDays days (0: every stored crash).
	RecoverDays int `json:"recover_days"`
	// ShutdownTimeout bounds the graceful shutdown (uploads in flight,
	// workers finishing their crash).
	ShutdownTimeout Duration `json:"shutdown_timeout"`
	// APIToken, when set, is a token (Authorization: Bearer, or
	// Auth-Token) with the reprocess scope, named "api_token" (which
	// implies view_crashes).
	APIToken string `json:"api_token"`
	// PublicPages opens the reads of crashes (the pages, their API and
	// the crash API: the view_crashes reads) to anyone, for a team behind
	// a VPN; by default only the health endpoints, the collector's
	// uploads, symbol downloads and the login answer without a token.
	// Personal annotations, dumps and every action always need a
	// token's scope.
	PublicPages bool `json:"public_pages"`
	// OpenMetrics opens /metrics to anyone who reaches the listener (a
	// Prometheus scraper on loopback or a private network); by default
	// it needs a token with the admin scope.
	OpenMetrics bool `json:"open_metrics"`
	// IndexedAnnotations names the annotations whose values the processor
	// writes to the index, searchable as annotation.NAME=VALUE with facet
	// counts (docs/crashd.md, "Search").
	IndexedAnnotations []string `json:"indexed_annotations"`
	// IndexPersonalAnnotations lets IndexedAnnotations index an
	// annotation the collector marked personal in a crash (then shown and
	// matched only for view_pii); by default such values are not indexed.
	IndexPersonalAnnotations bool `json:"index_personal_annotations"`
	// PublicSymbolication opens the symbolication API (/symbolicate/v5,
	// docs/crashd.md) to anyone; by default it needs a token with
	// view_crashes.
	PublicSymbolication bool `json:"public_symbolication"`
	// SourceLinks link the frames' source files to a source browser: a
	// file starting with a rule's prefix links to its URL, placeholders
	// {path} (the file without the prefix), {line}, {version} and
	// {product} filled in (crashd/sourcelink; docs/crashd.md, "Source
	// links"). Mozilla's hg:/git: source-server paths are linked without
	// configuration.
	SourceLinks []sourcelink.Rule `json:"source_links"`
	// PublicURL is the URL people reach crashd at (https://crashes.example.com,
	// behind a proxy), for the links it gives out: the first run's login
	// link (and later webhooks). Empty: http:// and the listen address
	// (as reached from this machine).
	PublicURL string `json:"public_url"`
	// VersionOrder is how product versions compare for signature triage
	// (a crash from a version at or after a resolved signature's fixed_in
	// regresses it): mozilla (the default: Mozilla's version comparator,
	// 2.0b3 < 2.0 < 2.0.1), semver or string (bytewise). VersionOrders
	// sets it per product: "PRODUCT=ORDER" entries.
	VersionOrder  string   `json:"version_order"`
	VersionOrders []string `json:"version_orders"`
	// BugTrackers are the trackers whose prefilled "file a bug" links
	// the signature page offers (docs/crashd.md, "Triage").
	BugTrackers []web.BugTracker `json:"bug_trackers"`
	// Webhooks receive the alerts (new signatures, regressions, spikes:
	// crashd/alert, docs/crashd.md "Alerts"); CRASHD_WEBHOOKS takes them
	// as a JSON list.
	Webhooks []alert.Webhook `json:"webhooks"`
	// SpikeMinCount and SpikeFactor are the spike rule's: a signature
	// spikes when its crashes of the last hour reach SpikeMinCount and
	// SpikeFactor times its hourly mean of the seven days before today
	// (defaults 10 and 5).
	SpikeMinCount int `json:"spike_min_count"`
	SpikeFactor   int `json:"spike_factor"`
	// SecureCookie marks the pages' session cookie Secure (crashd behind
	// a TLS proxy).
	SecureCookie bool `json:"secure_cookie"`
	// LogFormat is "text" or "json"; LogLevel debug, info, warn or error.
	LogFormat string `json:"log_format"`
	LogLevel  string `json:"log_level"`
	// Collector is the collector's configuration (limits, throttle rules,
	// personal data, products, Sentry projects): docs/crashd.md.
	Collector collector.Config `json:"collector"`
	// SymbolServer is the symbol server's configuration (uploads, tokens,
	// reprocessing when symbols arrive): docs/crashd.md "Symbol server".
	SymbolServer SymbolServerConfig `json:"symbol_server"`
}

// Default returns the defaults.
func Default() Config {
	return Config{
		Listen:          "127.0.0.1:8000",
		Data:            "crashd-data",
		MinFreeBytes:    256 << 20,
		MinFreePercent:  1,
		MaxHold:         Duration(30 * time.Minute),
		Roles:           []string{RoleAll},
		SweepInterval:   Duration(5 * time.Minute),
		SymbolsTimeout:  Duration(30 * time.Second),
		Timeout:         Duration(2 * time.Minute),
		MaxAttempts:     3,
		RetryDelay:      Duration(10 * time.Second),
		AckWait:         Duration(30 * time.Second),
		ShutdownTimeout: Duration(30 * time.Second),
		IndexGroupWait:  Duration(20 * time.Millisecond),
		LogFormat:       "text",
		LogLevel:        "info",
	}
}

// LoadFile reads a JSON configuration file over c: the fields it names
// replace c's. Unknown fields are an error.
func (c *Config) LoadFile(path string) error {
	b, err := os.ReadFile(path)
	if err != nil {
		return fmt.Errorf("config: %w", err)
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	if err := dec.Decode(c); err != nil {
		return fmt.Errorf("config %s: %w", path, err)
	}
	return nil
}

// EnvPrefix starts the environment variables that configure crashd:
// CRASHD_ and a field's JSON name upper-cased (CRASHD_LISTEN,
// CRASHD_SYMBOLS_URL, ...). Lists are comma-separated.
const EnvPrefix = "CRASHD_"

// EnvNames returns the environment variables FromEnv reads.
func EnvNames() []string {
	var out []string
	t := reflect.TypeFor[Config]()
	for i := range t.NumField() {
		if name, ok := envName(t.Field(i)); ok {
			out = append(out, name)
		}
	}
	return out
}

func envName(f reflect.StructField) (string, bool) {
	tag, _, _ := strings.Cut(f.Tag.Get("json"), ",")
	if tag == "" || tag == "-" || f.Type.Kind() == reflect.Struct {
		return "", false
	}
	return EnvPrefix + strings.ToUpper(tag), true
}

// FromEnv sets the fields named by CRASHD_* variables that lookup finds
// (os.LookupEnv).
func (c *Config) FromEnv(lookup func(string) (string, bool)) error {
	v := reflect.ValueOf(c).Elem()
	t := v.Type()
	for i := range t.NumField() {
		name, ok := envName(t.Field(i))
		if !ok {
			continue
		}
		s, ok := lookup(name)
		if !ok {
			continue
		}
		f := v.Field(i)
		switch {
		case f.Type() == reflect.TypeFor[Duration]():
			d, err := time.ParseDuration(s)
			if err != nil {
				return fmt.Errorf("%s=%q: %w", name, s, err)
			}
			f.SetInt(int64(d))
		case f.Kind() == reflect.String:
			f.SetString(s)
		case f.Kind() == reflect.Int:
			n, err := strconv.Atoi(s)
			if err != nil {
				return fmt.Errorf("%s=%q: not a number", name, s)
			}
			f.SetInt(int64(n))
		case f.Kind() == reflect.Bool:
			b, err := strconv.ParseBool(s)
			if err != nil {
				return fmt.Errorf("%s=%q: not true or false", name, s)
			}
			f.SetBool(b)
		case f.Kind() == reflect.Slice && f.Type().Elem().Kind() == reflect.Struct:
			// A list of objects (bug_trackers, source_links, webhooks): JSON.
			p := reflect.New(f.Type())
			if err := json.Unmarshal([]byte(s), p.Interface()); err != nil {
				return fmt.Errorf("%s: a JSON list: %w", name, err)
			}
			f.Set(p.Elem())
		case f.Kind() == reflect.Slice && f.Type().Elem().Kind() == reflect.String:
			var list []string
			for e := range strings.SplitSeq(s, ",") {
				if e = strings.TrimSpace(e); e != "" {
					list = append(list, e)
				}
			}
			f.Set(reflect.ValueOf(list))
		}
	}
	return nil
}

// Check returns an error for a configuration that cannot work.
func (c *Config) Check() error {
	if c.Data == "" {
		return fmt.Errorf("config: no data directory")
	}
	if len(c.Roles) == 0 {
		return fmt.Errorf("config: no roles")
	}
	for _, r := range c.Roles {
		if r != RoleAll && !slices.Contains(Roles, r) {
			return fmt.Errorf("config: role %q: any of %s, or %s", r, strings.Join(Roles, ", "), RoleAll)
		}
	}
	switch c.Blobs {
	case "", "dir":
	case "nats":
	case "s3":
		if c.S3Bucket == "" {
			return fmt.Errorf("config: blobs s3 needs s3_bucket")
		}
	default:
		return fmt.Errorf("config: blobs %q: dir, nats or s3", c.Blobs)
	}
	if c.NATSURL != "" && len(c.NATSCluster) > 0 {
		return fmt.Errorf("config: nats_url (an external NATS) and nats_cluster (the embedded server in a cluster) exclude each other")
	}
	if c.MinFreeBytes < 0 || c.MinFreePercent < 0 || c.MinFreePercent > 99 || c.MaxHold < 0 {
		return fmt.Errorf("config: min_free_bytes and max_hold cannot be negative, min_free_percent is 0 to 99")
	}
	if c.NATSReplicas < 0 || c.RetentionDays < 0 || c.SweepInterval < 0 {
		return fmt.Errorf("config: nats_replicas, retention_days and sweep_interval cannot be negative")
	}
	if _, err := sourcelink.New(c.SourceLinks); err != nil {
		return fmt.Errorf("config: %w", err)
	}
	if err := alert.CheckWebhooks(c.Webhooks); err != nil {
		return fmt.Errorf("config: %w", err)
	}
	if c.SpikeMinCount < 0 || c.SpikeFactor < 0 {
		return fmt.Errorf("config: spike_min_count and spike_factor: not negative")
	}
	if err := checkPublicURL(c.PublicURL); err != nil {
		return err
	}
	if _, err := c.VersionOrderOf(); err != nil {
		return err
	}
	for _, b := range c.BugTrackers {
		if err := b.Check(); err != nil {
			return fmt.Errorf("config: bug_trackers: %w", err)
		}
	}
	switch c.LogFormat {
	case "", "text", "json":
	default:
		return fmt.Errorf("config: log format %q: text or json", c.LogFormat)
	}
	if c.Workers < 0 || c.WalkJobs < 0 || c.MaxAttempts < 0 || c.RecoverDays < 0 {
		return fmt.Errorf("config: workers, walk_jobs, max_attempts and recover_days cannot be negative")
	}
	return nil
}

// VersionOrderOf returns how each product's versions compare
// (version_order, version_orders).
func (c *Config) VersionOrderOf() (func(product string) version.Order, error) {
	def, err := version.ParseOrder(c.VersionOrder)
	if err != nil {
		return nil, fmt.Errorf("config: version_order: %w", err)
	}
	per := map[string]version.Order{}
	for _, e := range c.VersionOrders {
		p, o, ok := strings.Cut(e, "=")
		if !ok || p == "" {
			return nil, fmt.Errorf("config: version_orders %q: PRODUCT=ORDER (mozilla, semver or string)", e)
		}
		if per[p], err = version.ParseOrder(o); err != nil {
			return nil, fmt.Errorf("config: version_orders %q: %w", e, err)
		}
	}
	return func(product string) version.Order {
		if o, ok := per[product]; ok {
			return o
		}
		return def
	}, nil
}

// Has reports whether the configuration gives the process role r (all
// gives every role).
func (c *Config) Has(r string) bool {
	for _, v := range c.Roles {
		if v == r || v == RoleAll {
			return true
		}
	}
	return false
}

// Shared reports whether the queue is shared with other processes (an
// external NATS, or the embedded server in a cluster).
func (c *Config) Shared() bool { return c.NATSURL != "" || len(c.NATSCluster) > 0 }
