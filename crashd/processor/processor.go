// Package processor is crashd's processor: workers take crash ids from the
// queue, have package crashd/walk read the raw crash and its dumps from the
// blob store, walk every dump with package stackwalk and the symbol chain
// (symbols/symsrc, as minidump_stackwalk builds it) and make the signature
// (stackwalk/signature, Socorro's rules, as --signature), store the
// processed crash at v1/processed_crash/<id> (its json_dump exactly what
// minidump_stackwalk --json writes for the dump with the same symbols),
// update the index and acknowledge.
//
// A crash whose processing fails (a panic in a walk, the per-crash timeout,
// a store or index error) is handed back to the queue and tried again after
// a delay; after MaxAttempts attempts (the queue's delivery count: a
// worker that died on the crash counts too) it is failed in the index and
// put on the queue's dead letters, from where Reprocess takes it back. A dump that
// is not a minidump is not a failure: its processed crash says so
// (success false, a note).
//
// An outage is not the crash's fault and costs it no attempt: while the
// storage is full (Config.Ready, ENOSPC) or the index does not answer its
// Ping, workers fetch no new crash, and a crash whose storing or indexing
// failed for that reason is held (its ack wait extended, no Nak: the
// queue counts every delivery) and tried again when the outage ends, for
// up to Config.MaxHold.
package processor

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"runtime"
	"runtime/debug"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/gobreakpad/gobreakpad/crashd/blob"
	"github.com/gobreakpad/gobreakpad/crashd/crash"
	"github.com/gobreakpad/gobreakpad/crashd/index"
	"github.com/gobreakpad/gobreakpad/crashd/queue"
	"github.com/gobreakpad/gobreakpad/crashd/walk"
	"github.com/gobreakpad/gobreakpad/stackwalk/signature"
	"github.com/gobreakpad/gobreakpad/symbols"
)

// Config tunes the processor.
type Config struct {
	// Workers is how many crashes are processed at once. Default: four
	// per CPU (a worker waits for the disk as much as it walks: the
	// processed crash is synced, the index written).
	Workers int
	// WalkJobs is how many threads of one dump are walked at once
	// (stackwalk.Options.Workers). Default 1: the workers are the
	// parallelism.
	WalkJobs int
	// Timeout bounds the processing of one crash. Default 2m.
	Timeout time.Duration
	// MaxAttempts is how many times a crash is tried before it is failed
	// and dead-lettered. Default 3.
	MaxAttempts int
	// RetryDelay is the wait before a failed crash is tried again,
	// multiplied by the attempt. Default 10s.
	RetryDelay time.Duration
	// Heartbeat is how often a worker tells the queue it is still on a
	// crash (Delivery.InProgress); a third of the queue's ack wait.
	// Default 10s.
	Heartbeat time.Duration
	// Symbols finds the modules' symbols (a *symsrc.Sources); nil walks
	// without symbols, as minidump_stackwalk without symbol paths. When it
	// remembers misses (a ForgetMisses method, as symsrc.Sources with
	// LocalMissTTL), a crash queued again (a Reprocess or Priority
	// delivery: symbols may have arrived, perhaps through another
	// process's symbol server) is walked after they are forgotten.
	Symbols symbols.Source
	// Prefetch is stackwalk.Options.Prefetch (symsrc.Sources.Prefetch).
	Prefetch int
	// Signature makes the signatures; nil: signature.Default().
	Signature *signature.Generator
	// LazyProcessed stores processed crashes without waiting for the disk
	// when the store can (blob.Lazy), making them durable every
	// SyncInterval, and checks at the start of Run those the last sync did
	// not cover (crash.ProcessedSyncedKey). Only for a store and index
	// this processor alone writes processed crashes to (the embedded
	// queue's single process). The raw crashes are durable regardless.
	LazyProcessed bool
	// SyncInterval is how often lazily stored processed crashes are made
	// durable. Default 1s.
	SyncInterval time.Duration
	// IndexedAnnotations names the annotations whose values are written
	// to the index (index.Details.Annotations) for search and facets.
	IndexedAnnotations []string
	// IndexPersonal lets IndexedAnnotations index an annotation the
	// collector marked personal (restricted) in a crash, marked personal
	// in the index; without it such an annotation is not indexed.
	IndexPersonal bool
	// Ready, when set, reports whether the storage can take processed
	// crashes (the server's free-space check): while it returns an error
	// no worker fetches a crash, and crashes that failed to be stored
	// are held (the index's Ping is checked the same way).
	Ready func(context.Context) error
	// MaxHold bounds how long one crash is held through an outage of the
	// storage or the index before it is handed back as a failed attempt.
	// Default 30m.
	MaxHold time.Duration
	// OnSignatureEvent, when set, is told each signature event the index
	// returned for a recorded crash (its first crash in the product; a
	// regression of a resolved signature), after the crash is
	// acknowledged. It runs on the recording goroutine: it must not
	// block for long. Every event is logged regardless.
	OnSignatureEvent func(index.SignatureEvent)
	// OutagePoll is how often an outage is checked for its end. Default
	// 1s.
	OutagePoll time.Duration
	// Alerts, when set, is told of every crash once it is indexed
	// (crashd/alert's Dispatcher: the spike check, the delivery of the
	// new-signature event the index recorded with the crash).
	Alerts Alerts
}

// Alerts is what the processor tells the alerts (crashd/alert) of the
// crashes it indexed. Processed must not block: it runs on the path of
// every crash's acknowledgement.
type Alerts interface {
	Processed(ctx context.Context, c index.Crash)
}

func (c *Config) defaults() {
	if c.Workers <= 0 {
		c.Workers = 4 * runtime.GOMAXPROCS(0)
	}
	if c.WalkJobs <= 0 {
		c.WalkJobs = 1
	}
	if c.Timeout <= 0 {
		c.Timeout = 2 * time.Minute
	}
	if c.MaxAttempts <= 0 {
		c.MaxAttempts = 3
	}
	if c.RetryDelay <= 0 {
		c.RetryDelay = 10 * time.Second
	}
	if c.Heartbeat <= 0 {
		c.Heartbeat = 10 * time.Second
	}
	if c.Signature == nil {
		c.Signature = signature.Default()
	}
	if c.SyncInterval <= 0 {
		c.SyncInterval = time.Second
	}
	if c.MaxHold <= 0 {
		c.MaxHold = 30 * time.Minute
	}
	if c.OutagePoll <= 0 {
		c.OutagePoll = time.Second
	}
}

// Processor processes crashes from a queue.
type Processor struct {
	cfg Config
	// walks bounds the walks running, those that outlived their timeout
	// included: a worker waits for a slot before it starts one.
	walks chan struct{}
	store blob.Store
	q     queue.Queue
	ix    index.Index
	log   *slog.Logger
	m     metrics
	now   func() time.Time
	// walker makes the processed crashes, with now as its clock.
	walker walk.Walker
	// recording bounds, and recorders counts, the crashes being indexed
	// and acknowledged (record).
	recording chan struct{}
	recorders sync.WaitGroup
	// hard is the context of the crashes being processed: cancelled by
	// Abort, not by the end of Run's context (a worker finishes its crash).
	hard  context.Context
	abort context.CancelFunc
	// outage is the last result of checkOutage (an error or nil), and
	// outageAt when it was taken.
	outageMu sync.Mutex
	outageAt time.Time
	outage   error
	paused   atomic.Bool
}

type metrics struct {
	outcomes *prometheus.CounterVec
	seconds  prometheus.Histogram
	latency  prometheus.Histogram
	busy     prometheus.Gauge
	held     prometheus.Gauge
	holds    prometheus.Counter
	paused   prometheus.Gauge
}

// New returns a processor. Its metrics (crashd_processor_*) are registered
// with reg unless it is nil.
func New(cfg Config, store blob.Store, q queue.Queue, ix index.Index, log *slog.Logger, reg prometheus.Registerer) (*Processor, error) {
	if store == nil || q == nil || ix == nil {
		return nil, errors.New("processor: a store, a queue and an index are required")
	}
	cfg.defaults()
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	p := &Processor{cfg: cfg, store: store, q: q, ix: ix, log: log, now: time.Now, walks: make(chan struct{}, 2*cfg.Workers),
		recording: make(chan struct{}, maxRecording)}
	p.hard, p.abort = context.WithCancel(context.Background())
	p.walker = walk.Walker{Symbols: cfg.Symbols, Prefetch: cfg.Prefetch, Jobs: cfg.WalkJobs, Signature: cfg.Signature,
		Now: func() time.Time { return p.now() }}
	p.m = metrics{
		outcomes: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "crashd_processor_crashes_total",
			Help: "Crashes the processor finished, by outcome: processed, retried (handed back after a failure), failed (dead-lettered).",
		}, []string{"outcome"}),
		seconds: prometheus.NewHistogram(prometheus.HistogramOpts{
			Name:    "crashd_processor_seconds",
			Help:    "Time to process one crash (read, walk every dump, store, index).",
			Buckets: prometheus.ExponentialBuckets(0.005, 2, 16),
		}),
		latency: prometheus.NewHistogram(prometheus.HistogramOpts{
			Name:    "crashd_processor_latency_seconds",
			Help:    "Time from a crash's submission to its processed crash being stored (crashes processed at their first delivery).",
			Buckets: prometheus.ExponentialBuckets(0.01, 2, 20),
		}),
		busy: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "crashd_processor_busy_workers",
			Help: "Workers processing a crash now.",
		}),
		held: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "crashd_processor_held_crashes",
			Help: "Crashes held (not handed back, no attempt counted) until the storage or the index answers again.",
		}),
		holds: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "crashd_processor_holds_total",
			Help: "Crashes whose storing or indexing failed for an outage of the storage or the index and were held.",
		}),
		paused: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "crashd_processor_paused",
			Help: "1 while workers fetch no crash: the storage is full or the index does not answer.",
		}),
	}
	for _, o := range []string{"processed", "retried", "failed"} {
		p.m.outcomes.WithLabelValues(o)
	}
	if reg != nil {
		for _, c := range []prometheus.Collector{p.m.outcomes, p.m.seconds, p.m.latency, p.m.busy, p.m.held, p.m.holds, p.m.paused} {
			if err := reg.Register(c); err != nil {
				return nil, fmt.Errorf("processor: metrics: %w", err)
			}
		}
	}
	return p, nil
}

// Run processes crashes with Config.Workers workers until ctx ends. Then no
// worker takes a new crash, each finishes the one it has (bounded by the
// per-crash timeout, or cut short by Abort), crashes fetched but not
// started go back to the queue, and Run returns. An error is Run failing
// to start (the start-up check of lazily stored crashes, the queue), not its
// being stopped while it starts.
func (p *Processor) Run(ctx context.Context) error {
	// A start on a full disk (or with the index away) waits for it.
	if !p.waitAvailable(ctx) {
		return nil
	}
	lazy := p.lazyStore()
	if lazy != nil {
		if err := p.checkUnsynced(ctx); err != nil {
			if ctx.Err() != nil {
				return nil // stopped while starting: no failure
			}
			return fmt.Errorf("processor: %w", err)
		}
	}
	cons, err := p.q.Consume(ctx)
	if err != nil {
		if ctx.Err() != nil {
			return nil
		}
		return fmt.Errorf("processor: %w", err)
	}
	var syncWG sync.WaitGroup
	syncCtx, stopSync := context.WithCancel(context.WithoutCancel(ctx))
	if lazy != nil {
		syncWG.Add(1)
		go func() {
			defer syncWG.Done()
			p.syncLoop(syncCtx, lazy)
		}()
	}
	defer func() {
		stopSync()
		syncWG.Wait()
		if lazy != nil {
			// What the workers stored last.
			p.syncOnce(context.Background(), lazy)
		}
	}()
	var wg sync.WaitGroup
	for w := range p.cfg.Workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			p.worker(ctx, w, cons)
		}()
	}
	<-ctx.Done()
	wg.Wait()
	p.recorders.Wait()
	cons.Stop()
	return nil
}

// Abort ends the processing of the crashes the workers hold (a shutdown
// past its deadline): each is handed back to the queue at once, and Run
// returns. Walks that overran their timeout may still run (Walking).
func (p *Processor) Abort() { p.abort() }

// Walking returns how many walks run now, those that overran their
// timeout included (they read the store and the symbols until they end).
func (p *Processor) Walking() int { return len(p.walks) }

// WaitWalks waits up to d for the walks running now, those that overran
// their timeout included, to end, and reports whether they did. When it
// returns true, everything those walks did happens before what its caller
// does next (closing the symbols they read, say); Walking alone does not
// order them.
func (p *Processor) WaitWalks(d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	n := 0 // slots taken: all of them means no walk runs
	defer func() {
		for ; n > 0; n-- {
			<-p.walks
		}
	}()
	for n < cap(p.walks) {
		select {
		case p.walks <- struct{}{}:
			n++
		case <-t.C:
			return false
		}
	}
	return true
}

func (p *Processor) worker(ctx context.Context, w int, cons queue.Consumer) {
	for {
		if !p.waitAvailable(ctx) {
			return
		}
		d, err := cons.Next(ctx)
		if err != nil {
			if ctx.Err() != nil || errors.Is(err, queue.ErrClosed) {
				return
			}
			p.log.Warn("processor: next crash", "worker", w, "err", err)
			select {
			case <-time.After(time.Second):
			case <-ctx.Done():
				return
			}
			continue
		}
		// The crash is finished even when the server is stopping (unless
		// Abort).
		p.handle(p.hard, d)
	}
}

// handle takes one delivery to its end: ack, nak or term. A crash walked
// and stored is handed to record, which indexes it and acknowledges it on
// a goroutine of its own while the worker takes the next crash: concurrent
// crashes then share the index's transactions (its group commit) in
// batches as large as the crashes walked while one commits.
func (p *Processor) handle(ctx context.Context, d queue.Delivery) {
	p.m.busy.Inc()
	defer p.m.busy.Dec()
	start := p.now()
	log := p.log.With("crash_id", d.ID(), "kind", string(d.Kind()), "delivery", d.Attempt())
	id, err := crash.Parse(d.ID())
	if err != nil {
		log.Error("processor: not a crash id; dropped from the queue", "err", err)
		_ = d.Term("not a crash id")
		return
	}
	stop := p.heartbeat(d)
	handedOn := false // to record, which then ends the heartbeat
	defer func() {
		if !handedOn {
			stop()
		}
	}()
	if d.Kind() != queue.Normal {
		if f, ok := p.cfg.Symbols.(interface {
			ForgetMisses(debugFile, debugID string)
		}); ok {
			f.ForgetMisses("", "")
		}
	}

	raw, err := walk.ReadRaw(ctx, p.store, id)
	received := idTime(id)
	if raw != nil && !raw.SubmittedTimestamp.IsZero() {
		received = raw.SubmittedTimestamp
	}
	attempts := d.Attempt()
	if errors.Is(err, blob.ErrNotExist) {
		// Nothing to process, now or later.
		p.fail(ctx, log, d, id, received, attempts, "no raw crash in the store")
		return
	}
	if attempts > p.cfg.MaxAttempts {
		p.fail(ctx, log, d, id, received, attempts-1, fmt.Sprintf("%d attempts without an outcome (the worker died or was stopped each time)", attempts-1))
		return
	}
	var heldSince time.Time
	var pc *crash.ProcessedCrash
	var missing []crash.Module
	for err == nil {
		if pc == nil {
			pc, missing, err = p.processGuarded(ctx, id, raw)
			if err == nil && d.Kind() != queue.Normal {
				p.markStackChange(ctx, log, pc)
			}
		}
		var o index.Outcome
		if err == nil {
			o, err = p.save(ctx, pc, raw, missing, received, attempts)
		}
		if err == nil {
			p.record(ctx, job{d: d, log: log, id: id, o: o, start: start, received: received, attempts: attempts, stop: stop})
			handedOn = true
			return
		}
		// Storage full or index away: not the crash's fault.
		first := heldSince.IsZero()
		if first {
			heldSince = p.now()
		}
		if out := p.outageOf(ctx, err); out == nil || !p.hold(ctx, log, heldSince, first, out) {
			break
		}
		err = nil
	}
	p.retry(ctx, log, d, id, received, attempts, err)
}

// markStackChange compares the crashing thread of pc, a crash processed
// again, with the processed crash it replaces (walk.CompareStacks) and
// records what changed in pc.StackChange. A previous processed crash that
// cannot be read is noted in pc, not an error of the crash.
func (p *Processor) markStackChange(ctx context.Context, log *slog.Logger, pc *crash.ProcessedCrash) {
	b, err := p.store.Get(ctx, crash.ProcessedCrashKey(pc.CrashID))
	if errors.Is(err, blob.ErrNotExist) {
		return // never processed (a crash queued again before its first walk)
	}
	var prev crash.ProcessedCrash
	if err == nil {
		err = json.Unmarshal(b, &prev)
	}
	if err == nil {
		pc.StackChange, err = walk.CompareStacks(&prev, pc, pc.CompletedAt)
	}
	if err != nil {
		log.Warn("processor: comparing the stack with the previous processing", "err", err)
		pc.ProcessorNotes = append(pc.ProcessorNotes, fmt.Sprintf("stack change: previous processed crash: %v", err))
		return
	}
	if c := pc.StackChange; c != nil && c.At.Equal(pc.CompletedAt.UTC()) {
		log.Info("processor: reprocess changed the crashing thread's stack", "previous_signature", c.PreviousSignature,
			"signature", c.Signature, "first_difference", c.FirstDifference)
	}
}

// outageOf returns the outage that err is a symptom of: the disk full
// (ENOSPC, EDQUOT), the storage not ready (Config.Ready) or the index not
// answering its Ping; nil for an error of the crash's own.
func (p *Processor) outageOf(ctx context.Context, err error) error {
	if diskFull(err) {
		return fmt.Errorf("storage full: %w", err)
	}
	if ctx.Err() != nil {
		return nil
	}
	return p.checkOutage(ctx, true)
}

// diskFull reports whether err is a file system out of space: ENOSPC or
// EDQUOT from the store, SQLite's SQLITE_FULL or PostgreSQL's disk_full
// (SQLSTATE 53100) from the index (whose drivers say so only in words).
func diskFull(err error) bool {
	if errors.Is(err, syscall.ENOSPC) || errors.Is(err, syscall.EDQUOT) {
		return true
	}
	msg := err.Error()
	return strings.Contains(msg, "database or disk is full") || strings.Contains(msg, "SQLSTATE 53100")
}

// checkOutage returns why crashes cannot be stored or indexed now (nil:
// they can): Config.Ready, then the index's Ping. The answer is kept for
// OutagePoll unless fresh.
func (p *Processor) checkOutage(ctx context.Context, fresh bool) error {
	p.outageMu.Lock()
	defer p.outageMu.Unlock()
	if !fresh && !p.outageAt.IsZero() && p.now().Sub(p.outageAt) < p.cfg.OutagePoll {
		return p.outage
	}
	cctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	var err error
	if p.cfg.Ready != nil {
		if err = p.cfg.Ready(cctx); err != nil {
			err = fmt.Errorf("storage: %w", err)
		}
	}
	if err == nil {
		if err = p.ix.Ping(cctx); err != nil {
			err = fmt.Errorf("index: %w", err)
		}
	}
	p.outage, p.outageAt = err, p.now()
	return err
}

// hold keeps a delivery (its heartbeat running) through an outage: true
// when the outage ended within MaxHold of since (try the crash again),
// false when it did not or the processing was aborted. first is the
// crash's first hold (counted and logged).
func (p *Processor) hold(ctx context.Context, log *slog.Logger, since time.Time, first bool, outage error) bool {
	if p.now().Sub(since) >= p.cfg.MaxHold {
		log.Warn("processor: crash held for max_hold; handed back as a failed attempt", "outage", outage)
		return false
	}
	p.m.held.Inc()
	defer p.m.held.Dec()
	if first {
		p.m.holds.Inc()
		log.Warn("processor: storage or index unavailable; crash held until it answers", "outage", outage, "max_hold", p.cfg.MaxHold.String())
	}
	t := time.NewTicker(p.cfg.OutagePoll)
	defer t.Stop()
	for {
		select {
		case <-t.C:
		case <-ctx.Done():
			return false
		}
		if err := p.checkOutage(ctx, false); err == nil {
			log.Debug("processor: outage over; crash tried again", "held_seconds", p.now().Sub(since).Seconds())
			return true
		}
		if p.now().Sub(since) >= p.cfg.MaxHold {
			log.Warn("processor: crash held for max_hold; handed back as a failed attempt", "outage", outage)
			return false
		}
	}
}

// waitAvailable waits, before a worker fetches a crash, while the storage
// is full or the index away (paused); false when ctx ended.
func (p *Processor) waitAvailable(ctx context.Context) bool {
	for {
		if ctx.Err() != nil {
			return false
		}
		err := p.checkOutage(ctx, false)
		if err == nil {
			if p.paused.CompareAndSwap(true, false) {
				p.m.paused.Set(0)
				p.log.Info("processor: storage and index answer; fetching crashes again")
			}
			return true
		}
		if ctx.Err() != nil {
			return false
		}
		if p.paused.CompareAndSwap(false, true) {
			p.m.paused.Set(1)
			p.log.Warn("processor: fetching no crash until the storage and the index answer", "outage", err)
		}
		select {
		case <-time.After(p.cfg.OutagePoll):
		case <-ctx.Done():
			return false
		}
	}
}

// job is a crash walked and stored, on its way to the index and the ack.
type job struct {
	d        queue.Delivery
	log      *slog.Logger
	id       crash.ID
	o        index.Outcome
	start    time.Time
	received time.Time
	attempts int
	stop     func() // ends the delivery's heartbeat
}

// maxRecording bounds the crashes walked and stored but not yet indexed
// and acknowledged (deliveries held unacknowledged): a worker waits for a
// slot before it hands a crash on.
const maxRecording = 128

// record indexes a crash's outcome and acknowledges its delivery on a
// goroutine of its own (a retry or failure if the index refuses it); Run
// waits for every one before it returns.
func (p *Processor) record(ctx context.Context, j job) {
	p.recording <- struct{}{}
	p.recorders.Add(1)
	go func() {
		defer p.recorders.Done()
		defer func() { <-p.recording }()
		defer j.stop()
		var heldSince time.Time
		var events []index.SignatureEvent
		for {
			var err error
			events, err = p.ix.RecordProcessed(ctx, j.o)
			if err == nil {
				break
			}
			first := heldSince.IsZero()
			if first {
				heldSince = p.now()
			}
			if out := p.outageOf(ctx, err); out == nil || !p.hold(ctx, j.log, heldSince, first, out) {
				p.retry(ctx, j.log, j.d, j.id, j.received, j.attempts, err)
				return
			}
		}
		if p.cfg.Alerts != nil {
			p.cfg.Alerts.Processed(ctx, j.o.Crash)
		}
		if aerr := j.d.Ack(); aerr != nil {
			j.log.Warn("processor: ack (the crash will be processed again)", "err", aerr)
		}
		el := p.now().Sub(j.start)
		p.m.seconds.Observe(el.Seconds())
		if j.d.Kind() == queue.Normal && j.d.Attempt() == 1 {
			p.m.latency.Observe(p.now().Sub(j.received).Seconds())
		}
		p.m.outcomes.WithLabelValues("processed").Inc()
		j.log.Info("processed", "signature", j.o.Crash.Signature, "seconds", el.Seconds())
		for _, e := range events {
			j.log.Info("processor: signature event", "kind", string(e.Kind), "product", e.Product, "signature", e.Signature, "version", e.Version, "fixed_in", e.FixedIn)
			if p.cfg.OnSignatureEvent != nil {
				p.cfg.OnSignatureEvent(e)
			}
		}
	}()
}

// retry hands a crash whose processing failed with err back to the queue
// with a delay growing with its attempts, or fails it for good after
// Config.MaxAttempts.
func (p *Processor) retry(ctx context.Context, log *slog.Logger, d queue.Delivery, id crash.ID, received time.Time, attempts int, err error) {
	if p.hard.Err() != nil {
		// Abort: not the crash's failure. Back at once, for another
		// process or the next start.
		log.Warn("processor: stopped before the crash was finished; handed back", "err", err)
		_ = d.Nak(0)
		return
	}
	if attempts >= p.cfg.MaxAttempts {
		p.fail(ctx, log, d, id, received, attempts, fmt.Sprintf("attempt %d of %d: %v", attempts, p.cfg.MaxAttempts, err))
		return
	}
	delay := p.cfg.RetryDelay * time.Duration(attempts)
	log.Warn("processor: failed; handed back", "attempt", attempts, "retry_in", delay.String(), "err", err)
	_ = d.Nak(delay)
	p.m.outcomes.WithLabelValues("retried").Inc()
}

// fail dead-letters a crash and then records it as failed: an index that
// says failed has the dead letter to show (and a crash that could not be
// dead-lettered stays queued, not failed).
func (p *Processor) fail(ctx context.Context, log *slog.Logger, d queue.Delivery, id crash.ID, received time.Time, attempts int, reason string) {
	log.Error("processor: failed for good; dead-lettered", "reason", reason)
	if err := p.q.DeadLetter(ctx, string(id), reason); err != nil {
		log.Error("processor: dead letter (the crash stays queued)", "err", err)
		_ = d.Nak(p.cfg.RetryDelay)
		return
	}
	if err := p.ix.Failed(ctx, string(id), received, attempts, reason); err != nil {
		log.Error("processor: index", "err", err)
	}
	_ = d.Term(reason)
	p.m.outcomes.WithLabelValues("failed").Inc()
}

// heartbeat extends the delivery's ack wait until stopped.
func (p *Processor) heartbeat(d queue.Delivery) func() {
	done := make(chan struct{})
	go func() {
		t := time.NewTicker(p.cfg.Heartbeat)
		defer t.Stop()
		for {
			select {
			case <-t.C:
				_ = d.InProgress()
			case <-done:
				return
			}
		}
	}()
	return func() { close(done) }
}

// idTime is the date written into the id, the receipt time of a crash
// whose raw crash says nothing.
func idTime(id crash.ID) time.Time {
	t, _ := id.Date()
	return t
}

// ErrTimeout is the error of a crash whose processing took longer than
// Config.Timeout.
var ErrTimeout = errors.New("processing timed out")

// processGuarded runs Process with the per-crash timeout, a panic turned
// into an error. A walk that overruns is left to finish on its own
// goroutine (walks cannot be interrupted); its result is dropped. At most
// twice Config.Workers walks run at once, overrun ones included, so that
// dumps that make the walk slow cannot pile up goroutines without bound.
func (p *Processor) processGuarded(ctx context.Context, id crash.ID, raw *crash.RawCrash) (*crash.ProcessedCrash, []crash.Module, error) {
	type result struct {
		pc      *crash.ProcessedCrash
		missing []crash.Module
		err     error
	}
	t := time.NewTimer(p.cfg.Timeout)
	defer t.Stop()
	select {
	case p.walks <- struct{}{}:
	case <-t.C:
		return nil, nil, fmt.Errorf("%w after %v waiting for earlier walks that overran theirs", ErrTimeout, p.cfg.Timeout)
	case <-ctx.Done():
		return nil, nil, ctx.Err()
	}
	ch := make(chan result, 1)
	go func() {
		defer func() { <-p.walks }()
		defer func() {
			if r := recover(); r != nil {
				ch <- result{err: fmt.Errorf("panic: %v\n%s", r, debug.Stack())}
			}
		}()
		pc, missing, err := p.walker.Process(ctx, p.store, id, raw)
		ch <- result{pc, missing, err}
	}()
	select {
	case r := <-ch:
		return r.pc, r.missing, r.err
	case <-t.C:
		return nil, nil, fmt.Errorf("%w after %v", ErrTimeout, p.cfg.Timeout)
	case <-ctx.Done():
		return nil, nil, ctx.Err()
	}
}

// Process reads crash id's dumps from the store and walks them into a
// processed crash (not stored): walk.Walker.Process with the processor's
// symbols, signature rules and clock. raw is its raw crash (nil: read from
// the store).
func (p *Processor) Process(ctx context.Context, id crash.ID, raw *crash.RawCrash) (*crash.ProcessedCrash, error) {
	pc, _, err := p.walker.Process(ctx, p.store, id, raw)
	return pc, err
}

// save stores the processed crash and returns what the index is to
// record of it: the modules its walk had no symbols for and the
// annotations of raw the configuration indexes; received is the crash's
// receipt time as handle found it.
func (p *Processor) save(ctx context.Context, pc *crash.ProcessedCrash, raw *crash.RawCrash, missing []crash.Module, received time.Time, attempts int) (index.Outcome, error) {
	b, err := walk.Marshal(pc)
	if err != nil {
		return index.Outcome{}, err
	}
	put := p.store.Put
	if lazy := p.lazyStore(); lazy != nil {
		put = lazy.PutLazy // made durable by syncLoop
	}
	if err := put(ctx, crash.ProcessedCrashKey(pc.CrashID), b); err != nil {
		return index.Outcome{}, fmt.Errorf("store processed crash: %w", err)
	}
	c := index.Crash{
		ID: string(pc.CrashID), ReceivedAt: received, ProcessedAt: pc.CompletedAt,
		Product: pc.ProductName, Version: pc.Version, OS: pc.OSName, CPU: pc.CPUArch,
		Signature: pc.Signature, CrashReason: pc.CrashReason, Attempts: attempts,
	}
	// Everything in one index transaction (one commit per crash, or fewer:
	// the index's group commit).
	return index.Outcome{Crash: c, Missing: missing,
		Details: index.Details{ProcessType: pc.ProcessType, OSVersion: pc.OSVersion,
			CrashAddress: pc.CrashAddress, Modules: pc.Modules, Annotations: p.indexedAnnotations(raw),
			CPUInfo: pc.CPUInfo, ModuleVersions: pc.ModuleVersions}}, nil
}

// indexedAnnotations returns the annotations of raw that Config.IndexedAnnotations
// names (personal ones only with Config.IndexPersonal).
func (p *Processor) indexedAnnotations(raw *crash.RawCrash) []index.Annotation {
	if raw == nil {
		return nil
	}
	var out []index.Annotation
	for _, name := range p.cfg.IndexedAnnotations {
		v, ok := raw.Annotations[name]
		if !ok {
			continue
		}
		personal := raw.IsRestricted(name)
		if personal && !p.cfg.IndexPersonal {
			continue
		}
		out = append(out, index.Annotation{Name: name, Value: crash.AnnotationString(v), Personal: personal})
	}
	return out
}

// lazyStore returns the store as a blob.Lazy when processed crashes are
// stored lazily (Config.LazyProcessed and a store that can), else nil.
func (p *Processor) lazyStore() blob.Lazy {
	if !p.cfg.LazyProcessed {
		return nil
	}
	l, _ := p.store.(blob.Lazy)
	return l
}

// syncLoop makes the lazily stored processed crashes durable every
// SyncInterval until ctx ends.
func (p *Processor) syncLoop(ctx context.Context, lazy blob.Lazy) {
	t := time.NewTicker(p.cfg.SyncInterval)
	defer t.Stop()
	for {
		select {
		case <-t.C:
			p.syncOnce(ctx, lazy)
		case <-ctx.Done():
			return
		}
	}
}

// syncOnce syncs the store and, when that worked, records the time taken
// before it as crash.ProcessedSyncedKey: every processed crash indexed
// before then was stored (PutLazy returned) before the Sync began.
func (p *Processor) syncOnce(ctx context.Context, lazy blob.Lazy) {
	t := p.now().UTC()
	if err := lazy.Sync(ctx); err != nil {
		p.log.Warn("processor: syncing processed crashes (tried again)", "err", err)
		return
	}
	if err := p.store.Put(ctx, crash.ProcessedSyncedKey, []byte(t.Format(time.RFC3339Nano))); err != nil {
		p.log.Warn("processor: recording the sync of processed crashes", "err", err)
	}
}

// checkUnsynced queues again the crashes indexed as processed since the
// last recorded sync whose processed crash is missing or not JSON (the
// machine stopped before the disk had it), then records now as synced:
// nothing has been stored lazily by this process yet. Without a recorded
// sync there is nothing to check (processed crashes were stored durably,
// or none was stored).
func (p *Processor) checkUnsynced(ctx context.Context) error {
	start := p.now().UTC()
	b, err := p.store.Get(ctx, crash.ProcessedSyncedKey)
	switch {
	case errors.Is(err, blob.ErrNotExist):
	case err != nil:
		return fmt.Errorf("last sync of processed crashes: %w", err)
	default:
		since, err := time.Parse(time.RFC3339Nano, string(b))
		if err != nil {
			since = time.Time{} // unreadable: check every processed crash
		}
		ids, err := p.ix.ProcessedSince(ctx, since)
		if err != nil {
			return err
		}
		queued := 0
		for _, s := range ids {
			id, err := crash.Parse(s)
			if err != nil {
				continue
			}
			b, err := p.store.Get(ctx, crash.ProcessedCrashKey(id))
			if err == nil && json.Valid(b) {
				continue
			}
			if err != nil && !errors.Is(err, blob.ErrNotExist) {
				return fmt.Errorf("check processed crash %s: %w", id, err)
			}
			if err := p.ix.Requeued(ctx, s); err != nil {
				return err
			}
			if err := p.q.Publish(ctx, queue.Reprocess, s); err != nil && !errors.Is(err, queue.ErrQueued) {
				return fmt.Errorf("queue %s again: %w", s, err)
			}
			queued++
		}
		if queued > 0 {
			p.log.Warn("start-up: processed crashes lost with the machine's last stop; queued again", "queued", queued, "checked", len(ids))
		} else {
			p.log.Info("start-up: processed crashes since the last sync checked", "checked", len(ids))
		}
	}
	if err := p.store.Put(ctx, crash.ProcessedSyncedKey, []byte(start.Format(time.RFC3339Nano))); err != nil {
		return fmt.Errorf("record the sync of processed crashes: %w", err)
	}
	return nil
}

// Reprocess queues crashes again (Kind Reprocess): their attempts start
// over, a failed crash is received again and leaves the dead letters.
// Each id must name a raw crash in the store.
func Reprocess(ctx context.Context, store blob.Store, q queue.Queue, ix index.Index, ids ...crash.ID) error {
	for _, id := range ids {
		if _, err := ReprocessOne(ctx, store, q, ix, id); err != nil {
			return err
		}
	}
	return nil
}

// ReprocessOne queues the crash id again as Reprocess does; queued is
// false when it already waited to be reprocessed (queue.ErrQueued: it is
// not queued twice).
func ReprocessOne(ctx context.Context, store blob.Store, q queue.Queue, ix index.Index, id crash.ID) (queued bool, err error) {
	ok, err := store.Exists(ctx, crash.RawCrashKey(id))
	if err != nil {
		return false, fmt.Errorf("reprocess %s: %w", id, err)
	}
	if !ok {
		return false, fmt.Errorf("reprocess %s: %w", id, blob.ErrNotExist)
	}
	if err := ix.Requeued(ctx, string(id)); err != nil {
		return false, fmt.Errorf("reprocess %s: %w", id, err)
	}
	if err := q.Undead(ctx, string(id)); err != nil {
		return false, fmt.Errorf("reprocess %s: %w", id, err)
	}
	switch err := q.Publish(ctx, queue.Reprocess, string(id)); {
	case errors.Is(err, queue.ErrQueued):
		return false, nil
	case err != nil:
		return false, fmt.Errorf("reprocess %s: %w", id, err)
	}
	return true, nil
}
