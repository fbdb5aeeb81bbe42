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

	"github.com/gobreakpad/gobreakpad/crashd/alert"
	"github.com/gobreakpad/gobreakpad/crashd/auth"
	"github.com/gobreakpad/gobreakpad/crashd/blob"
	"github.com/gobreakpad/gobreakpad/crashd/collector"
	"github.com/gobreakpad/gobreakpad/crashd/control"
	"github.com/gobreakpad/gobreakpad/crashd/crash"
	"github.com/gobreakpad/gobreakpad/crashd/index"
	"github.com/gobreakpad/gobreakpad/crashd/processor"
	"github.com/gobreakpad/gobreakpad/crashd/queue"
	"github.com/gobreakpad/gobreakpad/crashd/symblob"
	"github.com/gobreakpad/gobreakpad/crashd/symbolicate"
	"github.com/gobreakpad/gobreakpad/crashd/symserver"
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
	// alerts delivers the webhooks' events (processor role, webhooks
	// configured).
	alerts *alert.Dispatcher
	reg    *prometheus.Registry
	// mux serves every route, each with its access (routes.go); authn
	// resolves requests to their principal.
	mux    *auth.Table
	authn  *auth.Authenticator
	closed sync.Once
	// The symbol server, and the background reprocessing of crashes
	// whose symbols arrived.
	symsrv       *symserver.Server
	symbolicate  *symbolicate.Service
	reprocessSem chan struct{}
	bg           sync.WaitGroup
	// symBlobs is the symbols on the blob store and symLocal their local
	// copies (blobs nats or s3; nil with blobs dir); symStops end the
	// symbols events' consumers.
	symBlobs *symblob.Store
	symLocal *symblob.Cache
	symStops []func()
	// expired counts the crashes whose blobs retention deleted.
	expired prometheus.Counter
	// sigEvents counts the signature events of recorded crashes by kind
	// (new_signature, regression: crashd/index.SignatureEvent).
	sigEvents *prometheus.CounterVec
	// unqueued records the crashes stored and not yet queued when the
	// blobs are in the NATS object store (nil otherwise); swept counts
	// what the sweep did with its records.
	unqueued *queue.Unqueued
	swept    *prometheus.CounterVec
	// first is what the first run made (tokens.go), nil for nothing.
	first *FirstRun
	// disk checks the data directory's free space; refused counts the
	// uploads refused for want of it.
	disk    *diskSpace
	refused prometheus.Counter
	// partErr are the errors of the parts that stopped (heartbeat).
	partsMu sync.Mutex
	partErr map[string]error
	// started is when New began: temporary files older are an earlier
	// process's.
	started time.Time
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
	s := &Server{cfg: cfg, log: log, reg: prometheus.NewRegistry(), reprocessSem: make(chan struct{}, 2),
		expired: prometheus.NewCounter(prometheus.CounterOpts{Name: "crashd_retention_crashes_deleted_total", Help: "Crashes whose blobs retention deleted (retention_days)."}),
		refused: prometheus.NewCounter(prometheus.CounterOpts{Name: "crashd_uploads_refused_disk_full_total", Help: "Uploads answered 503 because the data directory's disk was below its free-space threshold."}),
		sigEvents: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "crashd_signature_events_total",
			Help: "Signature events of processed crashes: new_signature (the first crash of a product's signature), regression (a crash of a resolved signature from a version at or after its fixed_in)."}, []string{"kind"}),
		started: time.Now()}
	defer func() {
		if err != nil {
			s.Close()
		}
	}()
	// Crashes hold personal data: what crashd creates is its user's alone
	// (or its group's too, data_group_readable), the queue's and the
	// index's files included.
	blobOpts := blob.DirOptions{GroupReadable: cfg.DataGroupReadable}
	_, dirMode := blobOpts.Modes()
	restrictUmask(cfg.DataGroupReadable)
	if err := os.MkdirAll(cfg.Data, dirMode); err != nil {
		return nil, fmt.Errorf("data directory: %w", err)
	}
	if err := restrictDir(cfg.Data, dirMode, log); err != nil {
		return nil, fmt.Errorf("data directory: %w", err)
	}
	s.disk = newDiskSpace(cfg, log)
	if err := s.disk.Check(ctx); err != nil {
		// Started all the same: the heartbeat says so, uploads are refused
		// and processing waits until space returns.
		log.Error("start-up: disk nearly full", "err", err)
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
		s.store, err = blob.OpenDirWith(cfg.Data, blobOpts)
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
	order, err := cfg.VersionOrderOf()
	if err != nil {
		ix.Close()
		return nil, err
	}
	ix.SetVersionOrder(order)
	// With webhooks, a new signature's first crash records its alert
	// event in the crash's transaction.
	ix.SetAlerts(len(cfg.Webhooks) > 0)
	s.ix = ix
	if s.authn, err = cfg.Authenticator(tokenStore(ix)); err != nil {
		return nil, err
	}
	s.reg.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}), &gauges{s: s}, s.expired, s.refused, s.disk.free, s.sigEvents)

	// One budget for every upload this process reads, crashes and symbol
	// files (max_inflight_bytes, max_uploads, budget_wait).
	uploads := cfg.Collector.NewBudget()
	if cfg.Has(RoleCollector) {
		ccfg := cfg.Collector
		ccfg.Budget = uploads
		if s.coll, err = collector.New(ccfg, s.store, s.publish, log, s.reg); err != nil {
			return nil, err
		}
		if cfg.Blobs == "nats" {
			// Listing the object store reads every object's metadata: the
			// sweep reads the record of unqueued crashes instead.
			if s.unqueued, err = q.Unqueued(ctx); err != nil {
				return nil, err
			}
			s.coll.SetUnqueued(s.unqueued)
			s.swept = prometheus.NewCounterVec(prometheus.CounterOpts{
				Name: "crashd_sweep_unqueued_total",
				Help: "Records of unqueued crashes the sweep handled, by outcome (published: queued by the sweep; queued: queued already; orphan: no crash stored, removed after the grace).",
			}, []string{"outcome"})
			s.reg.MustRegister(s.swept)
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
		if cfg.symbolsOnBlobs() {
			// The symbols live on the blob store every process shares;
			// symDir holds local copies only (docs/scale.md).
			s.symBlobs = &symblob.Store{Blobs: s.store}
			s.symLocal = &symblob.Cache{Store: s.symBlobs, Dir: symDir, FastCache: symCache, MaxBytes: int64(cfg.SymbolsLocalMax)}
			if err := s.symLocal.Scan(); err != nil {
				return nil, err
			}
		}
		var redirect time.Duration
		if cfg.SymbolsRedirect {
			redirect = symbolsRedirectFor
		}
		var catalog symserver.Catalog
		if s.symBlobs != nil {
			// Every process finds a module by its code id in the index.
			catalog = symbolCatalog{ix}
		}
		if cfg.Has(RoleSymbols) {
			if s.symsrv, err = symserver.New(symserver.Config{Catalog: catalog, Dir: symDir, Tokens: cfg.SymbolServer.Tokens,
				OpenV1: cfg.SymbolServer.OpenV1, MaxUpload: cfg.SymbolServer.MaxUpload, MaxSpool: cfg.SymbolServer.MaxSpool, Budget: uploads, FastCache: symCache, OnSymbols: s.symbolsArrived, Registerer: s.reg, Uploads: s.store, Auth: s.authn,
				Symbols: s.symBlobs, Redirect: redirect}, log); err != nil {
				return nil, err
			}
		}
	}
	// The symbol chain: the processor walks with it, the symbols role
	// answers the symbolication API from it.
	if cfg.Has(RoleProcessor) || s.symsrv != nil {
		paths := cfg.Symbols
		if symDir != "" {
			// What the symbol server stores comes first.
			if err := os.MkdirAll(symDir, dirMode); err != nil {
				return nil, fmt.Errorf("symbol server: %w", err)
			}
			paths = append([]string{symDir}, cfg.Symbols...)
		}
		scfg := symsrc.Config{Paths: paths, URLs: cfg.SymbolsURL, CacheDir: symCache,
			RequestTimeout: time.Duration(cfg.SymbolsTimeout), Prefetch: symsrc.DefaultPrefetch,
			// Modules the local stores lack are not looked for at every
			// walk; symbolsArrived and reprocessing forget them.
			LocalMissTTL: symsrc.DefaultLocalMissTTL}
		if s.symLocal != nil {
			scfg.Fill = s.symLocal.Fill
		}
		scfg.FromEnv()
		// The environment adds sources nobody configured: say which.
		log.Info("symbols: sources", "paths", strings.Join(scfg.Paths, ","), "urls", strings.Join(scfg.URLs, ","),
			"cache", scfg.CacheDir, "_NT_SYMBOL_PATH", scfg.NTSymbolPath, "DEBUGINFOD_URLS", strings.Join(scfg.DebuginfodURLs, ","))
		if !scfg.None() {
			if s.syms, err = symsrc.Open(scfg); err != nil {
				return nil, fmt.Errorf("symbols: %w", err)
			}
			for _, d := range s.syms.Dirs {
				if _, err := os.Stat(d); err != nil {
					log.Warn("symbol path: walking without it", "path", d, "err", err)
				}
			}
		}
	}
	if s.symsrv != nil && s.syms != nil {
		s.symbolicate = symbolicate.New(symbolicate.Config{Source: s.syms, SymFile: s.syms.File})
	}
	if cfg.Has(RoleProcessor) {
		pcfg := processor.Config{Workers: cfg.Workers, WalkJobs: cfg.WalkJobs, Timeout: time.Duration(cfg.Timeout),
			MaxAttempts: cfg.MaxAttempts, RetryDelay: time.Duration(cfg.RetryDelay), Heartbeat: time.Duration(cfg.AckWait) / 3,
			// With the embedded queue this process alone processes into
			// the data directory (its lock): processed crashes are made
			// durable in batches, checked at start-up.
			LazyProcessed:      cfg.NATSURL == "",
			IndexedAnnotations: cfg.IndexedAnnotations, IndexPersonal: cfg.IndexPersonalAnnotations,
			// A full disk or an index away pauses the workers and holds
			// their crashes (no attempt counted).
			Ready: s.disk.Check, MaxHold: time.Duration(cfg.MaxHold),
			OnSignatureEvent: s.signatureEvent}
		if cfg.SignatureLists != "" {
			if pcfg.Signature, err = signature.Extended(cfg.SignatureLists); err != nil {
				return nil, fmt.Errorf("signature lists: %w", err)
			}
		}
		if s.syms != nil {
			pcfg.Symbols, pcfg.Prefetch = s.syms, s.syms.Prefetch()
		}
		if len(cfg.Webhooks) > 0 {
			if s.alerts, err = alert.New(alert.Config{Webhooks: cfg.Webhooks, PublicURL: cfg.BaseURL(""), Owner: s.owner(),
				SpikeMin: cfg.SpikeMinCount, SpikeFactor: cfg.SpikeFactor}, ix, log, s.reg); err != nil {
				return nil, err
			}
			pcfg.Alerts = s.alerts
		}
		if s.proc, err = processor.New(pcfg, s.store, s.q, s.ix, log, s.reg); err != nil {
			return nil, err
		}
	}
	if err := s.watchSymbols(ctx); err != nil {
		return nil, err
	}
	if cfg.Has(RoleWeb) {
		if err := s.firstRun(ctx, ix); err != nil {
			return nil, err
		}
	}
	if err := s.routes(); err != nil {
		return nil, err
	}

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
		if s.unqueued != nil {
			return s.sweepUnqueued(ctx, since, &n)
		}
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

// listedFlag is set in the unqueued record once a listing sweep has run
// on the store: crashes stored before the record existed (an upgrade) are
// found by that one listing.
const listedFlag = "_listed"

// sweepUnqueued is the sweep with the record of unqueued crashes
// (collector.RecoverUnqueued); the first one of a deployment also lists the
// store once (collector.Recover) for crashes stored before the record.
func (s *Server) sweepUnqueued(ctx context.Context, since time.Time, n *int) error {
	listed, err := s.unqueued.Flag(ctx, listedFlag)
	if err != nil {
		return err
	}
	if !listed {
		m, err := collector.Recover(ctx, s.store, s.publish, since, s.log)
		*n += m
		if err != nil {
			return err
		}
		if err := s.unqueued.SetFlag(ctx, listedFlag); err != nil {
			return err
		}
		s.log.Info("sweep: the store listed once for crashes stored before the unqueued record", "queued", m)
	}
	st, err := collector.RecoverUnqueued(ctx, s.store, s.publish, s.unqueued, time.Now(), s.log)
	*n += st.Published
	s.swept.WithLabelValues("published").Add(float64(st.Published))
	s.swept.WithLabelValues("queued").Add(float64(st.Queued))
	s.swept.WithLabelValues("orphan").Add(float64(st.Orphans))
	if st.Published+st.Queued+st.Orphans > 0 || err != nil {
		s.log.Info("sweep: unqueued records", "records", st.Records, "published", st.Published, "queued", st.Queued, "orphans", st.Orphans)
	}
	return err
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

// Serve serves HTTP on ln and runs the processor and the background work
// until ctx ends or one of them fails (its error logged, reported by the
// heartbeat, returned: the process stops). Then it shuts down gracefully:
// no new connections, uploads in flight finished, workers finishing the
// crash they hold (fetched crashes not started go back to the queue), all
// within ShutdownTimeout; past it, the workers' crashes are handed back.
// The queue, the index and the store are closed once every worker has
// returned.
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
	// The shutdown's deadline starts when the first part stops.
	var (
		deadlineOnce sync.Once
		sctx         context.Context
		scancel      context.CancelFunc = func() {}
	)
	deadline := func() context.Context {
		deadlineOnce.Do(func() {
			sctx, scancel = context.WithTimeout(context.Background(), time.Duration(s.cfg.ShutdownTimeout))
		})
		return sctx
	}
	defer func() { scancel() }()

	var g group
	// The signal (ctx) ends the group without an error.
	sigCtx, sigStop := context.WithCancel(ctx)
	defer sigStop()
	g.addEnd("signal", func() error {
		<-sigCtx.Done()
		if ctx.Err() != nil {
			s.log.Info("crashd shutting down")
		}
		return nil
	}, sigStop)
	g.add("http", func() error {
		if err := hs.Serve(ln); !errors.Is(err, http.ErrServerClosed) {
			return err
		}
		return nil
	}, func() {
		if err := hs.Shutdown(deadline()); err != nil {
			s.log.Warn("shutdown: uploads still in flight were cut", "err", err)
			hs.Close()
		}
	})
	bgCtx, bgStop := context.WithCancel(context.WithoutCancel(ctx))
	defer bgStop()
	g.add("background", func() error {
		s.background(bgCtx)
		return nil
	}, bgStop)
	if s.proc != nil {
		pctx, pstop := context.WithCancel(context.WithoutCancel(ctx))
		defer pstop()
		procDone := make(chan struct{})
		g.add("processor", func() error {
			defer close(procDone)
			return s.proc.Run(pctx)
		}, func() {
			pstop()
			// Run's end waits for the workers; past the deadline their
			// crashes are handed back and Run returns.
			go func() {
				select {
				case <-procDone:
				case <-deadline().Done():
					s.log.Warn("shutdown: workers still busy at shutdown_timeout; their crashes are handed back")
					s.proc.Abort()
				}
			}()
		})
	}
	if s.alerts != nil {
		actx, astop := context.WithCancel(context.WithoutCancel(ctx))
		defer astop()
		g.add("alerts", func() error { return s.alerts.Run(actx) }, astop)
	}
	if s.unlock != nil {
		// This process holds the data directory: `crashd token ...`
		// manages its tokens through it.
		if ix, ok := s.ix.(*index.SQL); ok {
			stopControl, err := control.Serve(filepath.Join(s.cfg.Data, control.SocketName), ix, s.log)
			if err != nil {
				s.log.Warn("control socket: crashd token cannot manage this server's tokens while it runs", "err", err)
			} else {
				defer stopControl()
			}
		}
	}
	if f := s.first; f != nil {
		// The secret stays in its file; the link's code works once.
		s.log.Warn("first run: made the token "+AdminTokenName+" (scope admin); its secret is in "+f.TokenFile+
			"; sign in once within 15 minutes at the login link", "token_file", f.TokenFile, "login_link", f.LoginLink(s.cfg.BaseURL(ln.Addr().String())))
	}
	// Temporary files of a killed process, in the background: a big store
	// takes a while to walk.
	tmpCtx, tmpStop := context.WithCancel(context.WithoutCancel(ctx))
	tmpDone := make(chan struct{})
	go func() {
		defer close(tmpDone)
		s.removeTemp(tmpCtx, s.started)
	}()
	defer func() {
		tmpStop()
		<-tmpDone
	}()

	s.log.Info("crashd serving", "listen", ln.Addr().String(), "data", s.cfg.Data, "roles", strings.Join(s.cfg.Roles, ","))
	err := g.run(s.log, s.failed)
	s.log.Info("crashd stopped")
	return err
}

// Close releases everything New opened.
func (s *Server) Close() error {
	s.closed.Do(func() {
		for _, stop := range s.symStops {
			stop()
		}
		s.bg.Wait() // reprocessing started by symbol uploads
		if s.q != nil {
			s.q.Close()
		}
		if s.ix != nil {
			s.ix.Close()
		}
		if s.syms != nil {
			if s.proc != nil && !s.proc.WaitWalks(2*time.Second) {
				// Walks that overran their timeout still read the
				// symbols: left open, the process is ending.
				s.log.Warn("shutdown: walks still running; symbol files left open", "walks", s.proc.Walking())
			} else {
				s.syms.Close()
			}
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
	unqueuedDesc = prometheus.NewDesc("crashd_unqueued_crashes", "Records in the KV bucket of crashes stored and not yet queued (blobs \"nats\": crashes being stored or published, and those the sweep will queue).", nil, nil)
)

func (g *gauges) Describe(ch chan<- *prometheus.Desc) {
	ch <- depthDesc
	ch <- inFlightDesc
	ch <- deadDesc
	ch <- crashesDesc
	ch <- unqueuedDesc
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
	if g.s.unqueued != nil {
		if n, err := g.s.unqueued.Len(ctx); err == nil {
			ch <- prometheus.MustNewConstMetric(unqueuedDesc, prometheus.GaugeValue, float64(n))
		} else {
			ch <- prometheus.NewInvalidMetric(unqueuedDesc, err)
		}
	}
}

// ErrLocked is returned when another crashd uses the data directory.
var ErrLocked = errors.New("data directory in use by another crashd")

// signatureEvent is told each signature event of a processed crash
// (processor.Config.OnSignatureEvent): counted in
// crashd_signature_events_total. (Webhooks build on it: issue 38.)
func (s *Server) signatureEvent(e index.SignatureEvent) {
	s.sigEvents.WithLabelValues(string(e.Kind)).Inc()
}
