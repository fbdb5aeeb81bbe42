// Package server wires crashd together: the blob store, the queue (the
// embedded NATS JetStream server, or an external one), the index, the
// symbol chain, the collector, the processor and the API, by role
// (collector, processor, web: all three in one process by default; issue 26
// runs them apart), with start-up recovery, /metrics and a graceful
// shutdown.
package server

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/gobreakpad/gobreakpad/crashd/api"
	"github.com/gobreakpad/gobreakpad/crashd/blob"
	"github.com/gobreakpad/gobreakpad/crashd/collector"
	"github.com/gobreakpad/gobreakpad/crashd/crash"
	"github.com/gobreakpad/gobreakpad/crashd/index"
	"github.com/gobreakpad/gobreakpad/crashd/processor"
	"github.com/gobreakpad/gobreakpad/crashd/queue"
	"github.com/gobreakpad/gobreakpad/crashd/symserver"
	"github.com/gobreakpad/gobreakpad/crashd/web"
	"github.com/gobreakpad/gobreakpad/stackwalk/signature"
	"github.com/gobreakpad/gobreakpad/symbols/symsrc"
)

// Server is a running crashd.
type Server struct {
	cfg    Config
	log    *slog.Logger
	unlock func()
	store  blob.Store
	jsq    *queue.JetStream
	q      queue.Queue
	ix     index.Index
	syms   *symsrc.Sources
	coll   *collector.Collector
	proc   *processor.Processor
	reg    *prometheus.Registry
	mux    *http.ServeMux
	closed sync.Once
	// The symbol server, and the background reprocessing of crashes
	// whose symbols arrived.
	symsrv       *symserver.Server
	reprocessSem chan struct{}
	bg           sync.WaitGroup
	// expired counts the crashes whose blobs retention deleted.
	expired prometheus.Counter
}

// NewLogger returns the slog logger of a configuration (format and
// level) writing to w.
func NewLogger(cfg Config, w *os.File) *slog.Logger {
	var level slog.Level
	_ = level.UnmarshalText([]byte(cfg.LogLevel))
	opts := &slog.HandlerOptions{Level: level}
	if cfg.LogFormat == "json" {
		return slog.New(slog.NewJSONHandler(w, opts))
	}
	return slog.New(slog.NewTextHandler(w, opts))
}

// New opens everything the configuration's roles need (creating the data
// directory), recovers the crashes stored but never queued (collector
// role), and returns the server, not yet serving.
func New(ctx context.Context, cfg Config, log *slog.Logger) (_ *Server, err error) {
	if err := cfg.Check(); err != nil {
		return nil, err
	}
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	s := &Server{cfg: cfg, log: log, reg: prometheus.NewRegistry(), mux: http.NewServeMux(), reprocessSem: make(chan struct{}, 2),
		expired: prometheus.NewCounter(prometheus.CounterOpts{Name: "crashd_retention_crashes_deleted_total", Help: "Crashes whose blobs retention deleted (retention_days)."})}
	defer func() {
		if err != nil {
			s.Close()
		}
	}()
	if err := os.MkdirAll(cfg.Data, 0o755); err != nil {
		return nil, fmt.Errorf("data directory: %w", err)
	}
	if cfg.NATSURL == "" {
		// The embedded queue and index are this process's alone.
		if s.unlock, err = lockDir(filepath.Join(cfg.Data, "crashd.lock")); err != nil {
			return nil, err
		}
	}
	qcfg := queue.Config{AckWait: time.Duration(cfg.AckWait), MaxDeliver: cfg.MaxAttempts + 5, Replicas: cfg.NATSReplicas}
	var q *queue.JetStream
	if cfg.NATSURL == "" {
		// Not HandBackOnOpen: the deliveries' counts must survive a
		// restart, or a crash that kills the process would be tried for
		// ever. A killed process's crashes come back after AckWait.
		ecfg := queue.EmbeddedConfig{Dir: filepath.Join(cfg.Data, "nats"), Listen: cfg.NATSListen, SyncAlways: cfg.QueueSync}
		if len(cfg.NATSCluster) > 0 {
			listen := cfg.NATSClusterListen
			if listen == "" {
				listen = "0.0.0.0:6222"
			}
			ecfg.Cluster = &queue.ClusterConfig{ServerName: cfg.NATSName, Listen: listen, Routes: cfg.NATSCluster}
		}
		q, err = queue.Embedded(ctx, ecfg, qcfg)
	} else {
		q, err = queue.Connect(ctx, cfg.NATSURL, qcfg)
	}
	if err != nil {
		return nil, err
	}
	s.q, s.jsq = q, q // not before: a nil *JetStream in the interface is not nil
	switch cfg.Blobs {
	case "nats":
		s.store, err = blob.OpenObjectStore(ctx, q.JetStream(), "crashd_blobs", q.Config().Replicas)
	case "s3":
		s.store, err = blob.OpenS3(ctx, blob.S3Config{Endpoint: cfg.S3Endpoint, Bucket: cfg.S3Bucket, Region: cfg.S3Region, Prefix: cfg.S3Prefix})
		if cfg.RecoverDays == 0 && cfg.Has(RoleCollector) {
			log.Warn("blobs on S3 with recover_days 0: every sweep lists every day's raw crashes; set recover_days (docs/scale.md)")
		}
	default:
		s.store, err = blob.OpenDir(cfg.Data)
	}
	if err != nil {
		return nil, fmt.Errorf("blob store: %w", err)
	}
	db := cfg.DB
	if db == "" {
		db = filepath.Join(cfg.Data, "index.sqlite")
	}
	ix, err := index.Open(ctx, db)
	if err != nil {
		return nil, err
	}
	ix.SetGroupWait(time.Duration(cfg.IndexGroupWait))
	s.ix = ix
	s.reg.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}), &gauges{s: s}, s.expired)

	if cfg.Has(RoleCollector) {
		if s.coll, err = collector.New(cfg.Collector, s.store, s.publish, log, s.reg); err != nil {
			return nil, err
		}
	}
	symDir, symCache := "", cfg.SymbolsCache
	if !cfg.SymbolServer.Disabled {
		if symCache == "" {
			// The processor's fast forms of uploaded symbols (and its
			// downloads) live here.
			symCache = filepath.Join(cfg.Data, "symbols-cache")
		}
		symDir = cfg.SymbolServer.Dir
		if symDir == "" {
			symDir = filepath.Join(cfg.Data, "symbols")
		}
		if cfg.Has(RoleSymbols) {
			if s.symsrv, err = symserver.New(symserver.Config{Dir: symDir, Tokens: cfg.SymbolServer.Tokens,
				OpenV1: cfg.SymbolServer.OpenV1, MaxUpload: cfg.SymbolServer.MaxUpload, FastCache: symCache, OnSymbols: s.symbolsArrived, Registerer: s.reg, Uploads: s.store}, log); err != nil {
				return nil, err
			}
		}
	}
	if cfg.Has(RoleProcessor) {
		paths := cfg.Symbols
		if symDir != "" {
			// What the symbol server stores comes first.
			if err := os.MkdirAll(symDir, 0o755); err != nil {
				return nil, fmt.Errorf("symbol server: %w", err)
			}
			paths = append([]string{symDir}, cfg.Symbols...)
		}
		scfg := symsrc.Config{Paths: paths, URLs: cfg.SymbolsURL, CacheDir: symCache,
			RequestTimeout: time.Duration(cfg.SymbolsTimeout), Prefetch: symsrc.DefaultPrefetch,
			// Modules the local stores lack are not looked for at every
			// walk; symbolsArrived and reprocessing forget them.
			LocalMissTTL: symsrc.DefaultLocalMissTTL}
		scfg.FromEnv()
		pcfg := processor.Config{Workers: cfg.Workers, WalkJobs: cfg.WalkJobs, Timeout: time.Duration(cfg.Timeout),
			MaxAttempts: cfg.MaxAttempts, RetryDelay: time.Duration(cfg.RetryDelay), Heartbeat: time.Duration(cfg.AckWait) / 3,
			// With the embedded queue this process alone processes into
			// the data directory (its lock): processed crashes are made
			// durable in batches, checked at start-up.
			LazyProcessed:      cfg.NATSURL == "",
			IndexedAnnotations: cfg.IndexedAnnotations, IndexPersonal: cfg.IndexPersonalAnnotations}
		if cfg.SignatureLists != "" {
			if pcfg.Signature, err = signature.Extended(cfg.SignatureLists); err != nil {
				return nil, fmt.Errorf("signature lists: %w", err)
			}
		}
		if !scfg.None() {
			if s.syms, err = symsrc.Open(scfg); err != nil {
				return nil, fmt.Errorf("symbols: %w", err)
			}
			for _, d := range s.syms.Dirs {
				if _, err := os.Stat(d); err != nil {
					log.Warn("symbol path: walking without it", "path", d, "err", err)
				}
			}
			pcfg.Symbols, pcfg.Prefetch = s.syms, s.syms.Prefetch()
		}
		if s.proc, err = processor.New(pcfg, s.store, s.q, s.ix, log, s.reg); err != nil {
			return nil, err
		}
	}
	a := api.New(api.Config{Token: cfg.APIToken}, s.store, s.q, s.ix, log)
	if cfg.Has(RoleWeb) {
		wcfg := web.Config{Tokens: cfg.SymbolServer.Tokens, Public: cfg.PublicPages, SecureCookie: cfg.SecureCookie,
			IndexedAnnotations: cfg.IndexedAnnotations}
		if !cfg.SymbolServer.Disabled {
			wcfg.MissingSymbols = s.missingList
			wcfg.RecentUploads = func(ctx context.Context, limit int) ([]web.Upload, error) {
				return recentUploads(ctx, symDir, limit)
			}
		}
		w, err := web.New(wcfg, s.store, s.q, s.ix, log)
		if err != nil {
			return nil, err
		}
		w.Register(s.mux)
		// The API of the crashd issue: open as before while no token is
		// configured; with tokens, its reads need one (or public_pages),
		// as the pages do. Reprocessing keeps its api_token.
		older := http.NewServeMux()
		a.Register(older)
		if !cfg.SymbolServer.Disabled {
			older.HandleFunc("GET /api/missing-symbols", s.missingSymbols)
			s.mux.Handle("GET /api/missing-symbols", w.GuardReads(older))
		}
		a.RegisterHealth(s.mux)
		s.mux.Handle("/api/crashes", w.GuardReads(older))
		s.mux.Handle("/api/crashes/", w.GuardReads(older))
		s.mux.Handle("/api/dead", w.GuardReads(older))
	} else {
		a.RegisterHealth(s.mux)
	}
	if s.coll != nil {
		s.mux.Handle("/", s.coll.Handler())
	}
	if s.symsrv != nil {
		s.symsrv.Register(s.mux)
	}
	s.mux.Handle("GET /metrics", promhttp.HandlerFor(s.reg, promhttp.HandlerOpts{}))

	if !cfg.Shared() {
		if err := s.requeueLost(ctx); err != nil {
			return nil, err
		}
	}
	if s.coll != nil {
		if err := s.sweep(ctx, "start-up recovery"); err != nil {
			return nil, err
		}
	}
	return s, nil
}

// owner names this process in the leases it takes.
func (s *Server) owner() string {
	h, _ := os.Hostname()
	return fmt.Sprintf("%s pid %d (%s)", h, os.Getpid(), strings.Join(s.cfg.Roles, ","))
}

// sweep queues the crashes stored but never queued (collector.Recover),
// holding the lease "sweep" so that one collector of a deployment does it
// at a time (another one holding it is doing the same work).
func (s *Server) sweep(ctx context.Context, what string) error {
	var since time.Time
	if s.cfg.RecoverDays > 0 {
		since = time.Now().AddDate(0, 0, -s.cfg.RecoverDays)
	}
	t0 := time.Now()
	var n int
	ran, err := s.jsq.WithLease(ctx, "sweep", s.owner(), func(ctx context.Context) (err error) {
		n, err = collector.Recover(ctx, s.store, s.publish, since, s.log)
		return err
	})
	if err != nil {
		return fmt.Errorf("%s: %w", what, err)
	}
	if !ran {
		s.log.Info(what + ": another process holds the sweep lease")
		return nil
	}
	s.log.Info(what, "queued", n, "seconds", time.Since(t0).Seconds())
	return nil
}

// maintain keeps the index's partitions and retention (index.SQL's
// Maintain), holding the lease "retention".
func (s *Server) maintain(ctx context.Context) error {
	ix, ok := s.ix.(*index.SQL)
	if !ok {
		return nil
	}
	keep := time.Duration(s.cfg.RetentionDays) * 24 * time.Hour
	_, err := s.jsq.WithLease(ctx, "retention", s.owner(), func(ctx context.Context) error {
		now := time.Now()
		dropped, err := ix.Maintain(ctx, now, keep)
		if len(dropped) > 0 {
			s.log.Info("retention: index partitions dropped", "partitions", strings.Join(dropped, ","))
		}
		if err != nil || keep <= 0 {
			return err
		}
		// The index first: a crash it still lists keeps its blobs.
		t0 := time.Now()
		cutoff := index.RetentionCutoff(now, keep)
		n, more, err := expireBlobs(ctx, s.store, cutoff, retentionBatch)
		s.expired.Add(float64(n))
		if n > 0 || more || err != nil {
			s.log.Info("retention: blobs of old crashes deleted", "crashes", n, "before", cutoff.Format(time.DateOnly), "more", more, "seconds", time.Since(t0).Seconds())
		}
		return err
	})
	return err
}

// background runs the periodic work of a process until ctx ends: the sweep
// (collector role, every SweepInterval) and the index's maintenance
// (hourly), each under its lease.
func (s *Server) background(ctx context.Context) {
	sweep := time.Duration(s.cfg.SweepInterval)
	var sweepC <-chan time.Time
	if s.coll != nil && sweep > 0 {
		t := time.NewTicker(sweep)
		defer t.Stop()
		sweepC = t.C
	}
	hourly := time.NewTicker(time.Hour)
	defer hourly.Stop()
	if err := s.maintain(ctx); err != nil && ctx.Err() == nil {
		s.log.Warn("index maintenance", "err", err)
	}
	for {
		select {
		case <-ctx.Done():
			return
		case <-sweepC:
			if err := s.sweep(ctx, "sweep"); err != nil && ctx.Err() == nil {
				s.log.Warn("sweep", "err", err)
			}
		case <-hourly.C:
			if err := s.maintain(ctx); err != nil && ctx.Err() == nil {
				s.log.Warn("index maintenance", "err", err)
			}
		}
	}
}

// requeueLost queues again the crashes the index has as received when the
// embedded queue holds no work at all: their queue messages were lost (a
// power loss before the queue's background sync; the v1/queued/ marker
// keeps start-up recovery from finding them). With an empty queue nothing
// can be waiting or in flight elsewhere, so this queues nothing twice.
func (s *Server) requeueLost(ctx context.Context) error {
	d, err := s.q.Depth(ctx)
	if err != nil {
		return err
	}
	if d.Total() > 0 || d.InFlight > 0 {
		return nil
	}
	n := 0
	q := index.Query{Status: index.Received, Limit: index.MaxLimit}
	for {
		cs, err := s.ix.Search(ctx, q)
		if err != nil {
			return err
		}
		for _, c := range cs {
			if err := s.q.Publish(ctx, queue.Normal, c.ID); err != nil {
				return fmt.Errorf("requeue %s: %w", c.ID, err)
			}
			n++
		}
		if len(cs) < q.Limit {
			break
		}
		// received_at ties at a page's edge would be skipped: step back a
		// microsecond (a crash queued twice is processed once more).
		q.Before = cs[len(cs)-1].ReceivedAt.Add(time.Microsecond)
		if q.Before.Equal(cs[0].ReceivedAt.Add(time.Microsecond)) {
			break
		}
	}
	if n > 0 {
		s.log.Warn("start-up: crashes the index has as received were not in the empty queue; queued again", "queued", n)
	}
	return nil
}

// publish queues a stored crash (the collector's Publisher) and records it
// in the index.
func (s *Server) publish(ctx context.Context, id crash.ID) error {
	if err := s.q.Publish(ctx, queue.Normal, string(id)); err != nil {
		return err
	}
	c := index.Crash{ID: string(id)}
	c.ReceivedAt, _ = id.Date()
	if b, err := s.store.Get(ctx, crash.RawCrashKey(id)); err == nil {
		var raw crash.RawCrash
		if json.Unmarshal(b, &raw) == nil {
			c.ReceivedAt, c.Product, c.Version = raw.SubmittedTimestamp, raw.ProductName(), raw.ProductVersion()
		}
	}
	if err := s.ix.Received(ctx, c); err != nil {
		// Queued all the same; the processor's attempt records it.
		s.log.Warn("index: received crash", "crash_id", string(id), "err", err)
	}
	return nil
}

// Handler is the server's HTTP handler.
func (s *Server) Handler() http.Handler { return s.mux }

// Store, Queue and Index return the server's parts (for tests and tools).
func (s *Server) Store() blob.Store  { return s.store }
func (s *Server) Queue() queue.Queue { return s.q }
func (s *Server) Index() index.Index { return s.ix }

// Serve serves HTTP on ln and runs the processor until ctx ends; then it
// shuts down gracefully: no new connections, uploads in flight finished,
// workers finishing the crash they hold (fetched crashes not started go
// back to the queue), all within ShutdownTimeout, and closes everything.
func (s *Server) Serve(ctx context.Context, ln net.Listener) error {
	defer s.Close()
	hs := &http.Server{
		Handler:           s.mux,
		ReadHeaderTimeout: 10 * time.Second,
		ReadTimeout:       5 * time.Minute,
		WriteTimeout:      5 * time.Minute,
		IdleTimeout:       2 * time.Minute,
		MaxHeaderBytes:    1 << 20,
		ErrorLog:          slog.NewLogLogger(s.log.Handler(), slog.LevelWarn),
	}
	serveErr := make(chan error, 1)
	go func() { serveErr <- hs.Serve(ln) }()
	pctx, pcancel := context.WithCancel(context.WithoutCancel(ctx))
	defer pcancel()
	bgDone := make(chan struct{})
	go func() {
		defer close(bgDone)
		s.background(pctx)
	}()
	procDone := make(chan struct{})
	if s.proc != nil {
		go func() {
			defer close(procDone)
			_ = s.proc.Run(pctx)
		}()
	} else {
		close(procDone)
	}
	s.log.Info("crashd serving", "listen", ln.Addr().String(), "data", s.cfg.Data, "roles", strings.Join(s.cfg.Roles, ","))
	var err error
	select {
	case <-ctx.Done():
		s.log.Info("crashd shutting down")
	case err = <-serveErr:
		err = fmt.Errorf("http: %w", err)
	}
	sctx, cancel := context.WithTimeout(context.Background(), time.Duration(s.cfg.ShutdownTimeout))
	defer cancel()
	if serr := hs.Shutdown(sctx); serr != nil {
		s.log.Warn("shutdown: uploads still in flight were cut", "err", serr)
	}
	pcancel()
	select {
	case <-procDone:
	case <-sctx.Done():
		s.log.Warn("shutdown: workers still busy; their crashes go back to the queue")
	}
	<-bgDone
	s.log.Info("crashd stopped")
	return err
}

// Close releases everything New opened.
func (s *Server) Close() error {
	s.closed.Do(func() {
		s.bg.Wait() // reprocessing started by symbol uploads
		if s.q != nil {
			s.q.Close()
		}
		if s.ix != nil {
			s.ix.Close()
		}
		if s.syms != nil {
			s.syms.Close()
		}
		if c, ok := s.store.(io.Closer); ok {
			c.Close()
		}
		if s.unlock != nil {
			s.unlock()
		}
	})
	return nil
}

// gauges are the metrics read from the queue and the index at scrape time.
type gauges struct{ s *Server }

var (
	depthDesc    = prometheus.NewDesc("crashd_queue_depth", "Crashes waiting in the queue, by kind of work.", []string{"kind"}, nil)
	inFlightDesc = prometheus.NewDesc("crashd_queue_in_flight", "Crashes handed to workers and not yet acknowledged.", nil, nil)
	deadDesc     = prometheus.NewDesc("crashd_queue_dead_letters", "Crashes that failed too often (dead letters).", nil, nil)
	crashesDesc  = prometheus.NewDesc("crashd_index_crashes", "Crashes in the index, by status.", []string{"status"}, nil)
)

func (g *gauges) Describe(ch chan<- *prometheus.Desc) {
	ch <- depthDesc
	ch <- inFlightDesc
	ch <- deadDesc
	ch <- crashesDesc
}

func (g *gauges) Collect(ch chan<- prometheus.Metric) {
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
	defer cancel()
	if d, err := g.s.q.Depth(ctx); err == nil {
		for _, k := range queue.Kinds {
			ch <- prometheus.MustNewConstMetric(depthDesc, prometheus.GaugeValue, float64(d.Waiting[k]), string(k))
		}
		ch <- prometheus.MustNewConstMetric(inFlightDesc, prometheus.GaugeValue, float64(d.InFlight))
		ch <- prometheus.MustNewConstMetric(deadDesc, prometheus.GaugeValue, float64(d.Dead))
	} else {
		ch <- prometheus.NewInvalidMetric(depthDesc, err)
	}
	if n, err := g.s.ix.Counts(ctx); err == nil {
		for _, st := range []index.Status{index.Received, index.Processed, index.Failed} {
			ch <- prometheus.MustNewConstMetric(crashesDesc, prometheus.GaugeValue, float64(n[st]), string(st))
		}
	} else {
		ch <- prometheus.NewInvalidMetric(crashesDesc, err)
	}
}

// ErrLocked is returned when another crashd uses the data directory.
var ErrLocked = errors.New("data directory in use by another crashd")
