// Package processor is crashd's processor: workers take crash ids from the
// queue, read the raw crash and its dumps from the blob store, walk every
// dump with package stackwalk and the symbol chain (symbols/symsrc, as
// minidump_stackwalk builds it), make the signature (stackwalk/signature,
// Socorro's rules, as --signature), store the processed crash at
// v1/processed_crash/<id> (its json_dump exactly what minidump_stackwalk
// --json writes for the dump with the same symbols), update the index and
// acknowledge.
//
// A crash whose processing fails (a panic in a walk, the per-crash timeout,
// a store or index error) is handed back to the queue and tried again after
// a delay; after MaxAttempts attempts (the queue's delivery count: a
// worker that died on the crash counts too) it is failed in the index and
// put on the queue's dead letters, from where Reprocess takes it back. A dump that
// is not a minidump is not a failure: its processed crash says so
// (success false, a note).
package processor

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"runtime"
	"runtime/debug"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/gobreakpad/gobreakpad/crashd/blob"
	"github.com/gobreakpad/gobreakpad/crashd/crash"
	"github.com/gobreakpad/gobreakpad/crashd/index"
	"github.com/gobreakpad/gobreakpad/crashd/queue"
	"github.com/gobreakpad/gobreakpad/minidump"
	"github.com/gobreakpad/gobreakpad/stackwalk"
	"github.com/gobreakpad/gobreakpad/stackwalk/jsonout"
	"github.com/gobreakpad/gobreakpad/stackwalk/signature"
	"github.com/gobreakpad/gobreakpad/symbols"
	"github.com/gobreakpad/gobreakpad/symbols/elfimage"
	"github.com/gobreakpad/gobreakpad/symstore"
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
	// without symbols, as minidump_stackwalk without symbol paths.
	Symbols symbols.Source
	// Prefetch is stackwalk.Options.Prefetch (symsrc.Sources.Prefetch).
	Prefetch int
	// Signature makes the signatures; nil: signature.Default().
	Signature *signature.Generator
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
}

type metrics struct {
	outcomes *prometheus.CounterVec
	seconds  prometheus.Histogram
	latency  prometheus.Histogram
	busy     prometheus.Gauge
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
	p := &Processor{cfg: cfg, store: store, q: q, ix: ix, log: log, now: time.Now, walks: make(chan struct{}, 2*cfg.Workers)}
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
	}
	for _, o := range []string{"processed", "retried", "failed"} {
		p.m.outcomes.WithLabelValues(o)
	}
	if reg != nil {
		for _, c := range []prometheus.Collector{p.m.outcomes, p.m.seconds, p.m.latency, p.m.busy} {
			if err := reg.Register(c); err != nil {
				return nil, fmt.Errorf("processor: metrics: %w", err)
			}
		}
	}
	return p, nil
}

// Run processes crashes with Config.Workers workers until ctx ends. Then no
// worker takes a new crash, each finishes the one it has (bounded by the
// per-crash timeout), crashes fetched but not started go back to the queue,
// and Run returns.
func (p *Processor) Run(ctx context.Context) error {
	cons, err := p.q.Consume(ctx)
	if err != nil {
		return fmt.Errorf("processor: %w", err)
	}
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
	cons.Stop()
	return nil
}

func (p *Processor) worker(ctx context.Context, w int, cons queue.Consumer) {
	for {
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
		// The crash is finished even when the server is stopping.
		p.handle(context.WithoutCancel(ctx), d)
	}
}

// handle takes one delivery to its end: ack, nak or term.
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
	defer stop()

	raw, err := p.readRaw(ctx, id)
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
	if err == nil {
		var pc *crash.ProcessedCrash
		var missing []index.Module
		pc, missing, err = p.processGuarded(ctx, id, raw)
		if err == nil {
			err = p.save(ctx, pc, missing, received, attempts)
		}
		if err == nil {
			if aerr := d.Ack(); aerr != nil {
				log.Warn("processor: ack (the crash will be processed again)", "err", aerr)
			}
			el := p.now().Sub(start)
			p.m.seconds.Observe(el.Seconds())
			if d.Kind() == queue.Normal && d.Attempt() == 1 {
				p.m.latency.Observe(p.now().Sub(received).Seconds())
			}
			p.m.outcomes.WithLabelValues("processed").Inc()
			log.Info("processed", "signature", pc.Signature, "seconds", el.Seconds())
			return
		}
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

// fail records a crash as failed and dead-letters it.
func (p *Processor) fail(ctx context.Context, log *slog.Logger, d queue.Delivery, id crash.ID, received time.Time, attempts int, reason string) {
	log.Error("processor: failed for good; dead-lettered", "reason", reason)
	if err := p.ix.Failed(ctx, string(id), received, attempts, reason); err != nil {
		log.Error("processor: index", "err", err)
	}
	if err := p.q.DeadLetter(ctx, string(id), reason); err != nil {
		log.Error("processor: dead letter (the crash stays queued)", "err", err)
		_ = d.Nak(p.cfg.RetryDelay)
		return
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

func (p *Processor) readRaw(ctx context.Context, id crash.ID) (*crash.RawCrash, error) {
	b, err := p.store.Get(ctx, crash.RawCrashKey(id))
	if err != nil {
		return nil, fmt.Errorf("raw crash: %w", err)
	}
	var raw crash.RawCrash
	if err := json.Unmarshal(b, &raw); err != nil {
		// Processed anyway: the dumps may be fine.
		return &crash.RawCrash{UUID: id}, nil
	}
	return &raw, nil
}

// ErrTimeout is the error of a crash whose processing took longer than
// Config.Timeout.
var ErrTimeout = errors.New("processing timed out")

// processGuarded runs Process with the per-crash timeout, a panic turned
// into an error. A walk that overruns is left to finish on its own
// goroutine (walks cannot be interrupted); its result is dropped. At most
// twice Config.Workers walks run at once, overrun ones included, so that
// dumps that make the walk slow cannot pile up goroutines without bound.
func (p *Processor) processGuarded(ctx context.Context, id crash.ID, raw *crash.RawCrash) (*crash.ProcessedCrash, []index.Module, error) {
	type result struct {
		pc      *crash.ProcessedCrash
		missing []index.Module
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
		pc, missing, err := p.process(ctx, id, raw)
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
// processed crash (not stored). raw is its raw crash (nil: read from the
// store). Errors are those of the store; what is wrong with the dumps is
// said in the processed crash's notes. A panic in the walk of an
// additional dump is recovered and noted; one in the minidump's walk
// propagates (the caller recovers it and fails the attempt).
func (p *Processor) Process(ctx context.Context, id crash.ID, raw *crash.RawCrash) (*crash.ProcessedCrash, error) {
	pc, _, err := p.process(ctx, id, raw)
	return pc, err
}

// process is Process, also returning the modules of the minidump's walk
// that had no symbols (for the index's missing_symbols).
func (p *Processor) process(ctx context.Context, id crash.ID, raw *crash.RawCrash) (*crash.ProcessedCrash, []index.Module, error) {
	start := p.now()
	if raw == nil {
		var err error
		if raw, err = p.readRaw(ctx, id); err != nil {
			return nil, nil, err
		}
	}
	var missing []index.Module
	pc := &crash.ProcessedCrash{
		CrashID: id, UUID: id,
		ProductName:    raw.ProductName(),
		Version:        raw.ProductVersion(),
		ReleaseChannel: raw.Annotation("ReleaseChannel"),
		ProcessType:    raw.Annotation("ProcessType"),
		ProcessorNotes: []string{},
		StartedAt:      start.UTC(),
		Timings:        map[string]float64{},
	}
	if pc.ProcessType == "" {
		pc.ProcessType = raw.Annotation("process_type")
	}
	names, err := p.dumpNames(ctx, id)
	if err != nil {
		return nil, nil, err
	}
	annotations := map[string]string{}
	for k, v := range raw.Annotations {
		annotations[k] = crash.AnnotationString(v)
	}
	seenMain := false
	for _, name := range names {
		t0 := p.now()
		b, err := p.store.Get(ctx, crash.DumpKey(id, name))
		if errors.Is(err, blob.ErrNotExist) {
			pc.ProcessorNotes = append(pc.ProcessorNotes, fmt.Sprintf("dump %s: listed but not in the store", name))
			continue
		}
		if err != nil {
			return nil, nil, fmt.Errorf("dump %s: %w", name, err)
		}
		main := crash.DumpFileName(name) == crash.MinidumpFile
		w, err := p.walkOne(b, main, annotations)
		pc.Timings["walk_"+crash.DumpFileName(name)] = p.now().Sub(t0).Seconds()
		if err != nil {
			pc.ProcessorNotes = append(pc.ProcessorNotes, fmt.Sprintf("dump %s: %v", name, err))
			continue
		}
		for _, n := range w.notes {
			pc.ProcessorNotes = append(pc.ProcessorNotes, fmt.Sprintf("dump %s: %s", name, n))
		}
		if !main {
			if pc.AdditionalDumps == nil {
				pc.AdditionalDumps = map[string]json.RawMessage{}
			}
			pc.AdditionalDumps[name] = w.json
			continue
		}
		seenMain = true
		pc.Success = true
		pc.JSONDump = w.json
		pc.Signature = w.signature
		st := w.st
		pc.CrashReason = st.CrashReason
		if st.Crashed {
			pc.CrashAddress = fmt.Sprintf("0x%x", st.CrashAddress)
		}
		if st.RequestingThread >= 0 && st.RequestingThread < len(st.Threads) {
			ct := st.RequestingThread
			pc.CrashingThread = &ct
		}
		pc.OSName, pc.OSVersion, pc.CPUArch = st.System.OS, st.System.OSVersion, st.System.CPU
		for _, m := range st.Modules {
			pc.Modules = append(pc.Modules, symstore.BaseName(m.CodeFile))
			if m.MissingSymbols {
				pc.ModulesMissingSymbols = append(pc.ModulesMissingSymbols, symstore.BaseName(m.DebugFile)+"/"+m.DebugID)
				missing = append(missing, index.Module{
					DebugFile: symstore.BaseName(m.DebugFile), DebugID: m.DebugID,
					CodeFile: symstore.BaseName(m.CodeFile), CodeID: m.CodeID,
				})
			}
		}
	}
	if !seenMain {
		pc.ProcessorNotes = append(pc.ProcessorNotes, "no minidump walked (upload_file_minidump missing or unreadable)")
		pc.Signature = p.cfg.Signature.Process(nil).Signature
	}
	pc.CompletedAt = p.now().UTC()
	pc.Timings["total"] = pc.CompletedAt.Sub(start).Seconds()
	return pc, missing, nil
}

// dumpNames returns the crash's dump names, the minidump first.
func (p *Processor) dumpNames(ctx context.Context, id crash.ID) ([]string, error) {
	b, err := p.store.Get(ctx, crash.DumpNamesKey(id))
	if errors.Is(err, blob.ErrNotExist) {
		return []string{crash.MinidumpField}, nil
	}
	if err != nil {
		return nil, fmt.Errorf("dump names: %w", err)
	}
	var names crash.DumpNames
	if err := json.Unmarshal(b, &names); err != nil {
		return nil, fmt.Errorf("dump names: %w", err)
	}
	slices.SortStableFunc(names, func(a, b string) int {
		am, bm := crash.DumpFileName(a) == crash.MinidumpFile, crash.DumpFileName(b) == crash.MinidumpFile
		switch {
		case am && !bm:
			return -1
		case bm && !am:
			return 1
		}
		return strings.Compare(a, b)
	})
	return names, nil
}

// walked is one dump's walk.
type walked struct {
	st        *stackwalk.ProcessState
	json      json.RawMessage
	signature string
	notes     []string
}

// walkOne walks one dump as minidump_stackwalk --json does. A panic in an
// additional dump's walk is an error of that dump; in the minidump's it
// propagates.
func (p *Processor) walkOne(b []byte, main bool, annotations map[string]string) (w walked, err error) {
	if !main {
		defer func() {
			if r := recover(); r != nil {
				err = fmt.Errorf("panic in the walk: %v", r)
			}
		}()
	}
	f, err := minidump.NewFileBytes(b)
	if err != nil {
		return w, fmt.Errorf("not a minidump: %w", err)
	}
	defer f.Close()
	opt := stackwalk.Options{Workers: p.cfg.WalkJobs}
	if p.cfg.Symbols != nil {
		opt.Symbols = p.cfg.Symbols
		opt.Prefetch = p.cfg.Prefetch
		opt.ImageSymbols = elfimage.Load
	}
	st, err := stackwalk.Process(f, opt)
	if err != nil {
		return w, fmt.Errorf("walk: %w", err)
	}
	for _, e := range st.Problems {
		w.notes = append(w.notes, stackwalk.Escape(e.Error()))
	}
	var buf bytes.Buffer
	if err := jsonout.Write(&buf, st, false); err != nil {
		return w, err
	}
	w.st, w.json = st, bytes.TrimSuffix(buf.Bytes(), []byte("\n"))
	if main {
		c := signature.FromProcess(st)
		c.Annotate(annotations)
		r := p.cfg.Signature.Generate(c)
		w.signature = r.Signature
		for _, n := range r.Notes {
			w.notes = append(w.notes, "signature: "+n)
		}
	}
	return w, nil
}

// save stores the processed crash and indexes it with the modules its walk
// had no symbols for; received is the crash's receipt time as handle found
// it.
func (p *Processor) save(ctx context.Context, pc *crash.ProcessedCrash, missing []index.Module, received time.Time, attempts int) error {
	b, err := Marshal(pc)
	if err != nil {
		return err
	}
	if err := p.store.Put(ctx, crash.ProcessedCrashKey(pc.CrashID), b); err != nil {
		return fmt.Errorf("store processed crash: %w", err)
	}
	c := index.Crash{
		ID: string(pc.CrashID), ReceivedAt: received, ProcessedAt: pc.CompletedAt,
		Product: pc.ProductName, Version: pc.Version, OS: pc.OSName, CPU: pc.CPUArch,
		Signature: pc.Signature, CrashReason: pc.CrashReason, Attempts: attempts,
	}
	if err := p.ix.Processed(ctx, c); err != nil {
		return err
	}
	if err := p.ix.SetMissingSymbols(ctx, string(pc.CrashID), received, missing); err != nil {
		return err
	}
	if t, ok := p.ix.(index.Triage); ok {
		return t.ProcessedDetails(ctx, c, index.Details{ProcessType: pc.ProcessType, OSVersion: pc.OSVersion,
			CrashAddress: pc.CrashAddress, Modules: pc.Modules})
	}
	return nil
}

// Marshal writes a processed crash as stored: JSON without HTML escaping
// (json_dump as minidump_stackwalk --json writes it). The walks' JSON
// texts (json_dump, additional_minidumps) are spliced in as they are,
// after the other keys, not parsed and compacted again as encoding/json
// does with a json.RawMessage: they come from jsonout.
func Marshal(pc *crash.ProcessedCrash) ([]byte, error) {
	c := *pc
	c.JSONDump, c.AdditionalDumps = nil, nil
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(&c); err != nil {
		return nil, fmt.Errorf("processed crash %s: %w", pc.CrashID, err)
	}
	b := bytes.TrimSuffix(bytes.TrimSuffix(buf.Bytes(), []byte("\n")), []byte("}"))
	if len(pc.JSONDump) > 0 {
		b = append(append(b, `,"json_dump":`...), pc.JSONDump...)
	}
	if len(pc.AdditionalDumps) > 0 {
		b = append(b, `,"additional_minidumps":{`...)
		names := slices.Sorted(maps.Keys(pc.AdditionalDumps))
		for i, name := range names {
			if i > 0 {
				b = append(b, ',')
			}
			k, _ := json.Marshal(name)
			b = append(append(append(b, k...), ':'), pc.AdditionalDumps[name]...)
		}
		b = append(b, '}')
	}
	return append(b, '}'), nil
}

// Reprocess queues crashes again (Kind Reprocess): their attempts start
// over, a failed crash is received again and leaves the dead letters.
// Each id must name a raw crash in the store.
func Reprocess(ctx context.Context, store blob.Store, q queue.Queue, ix index.Index, ids ...crash.ID) error {
	for _, id := range ids {
		ok, err := store.Exists(ctx, crash.RawCrashKey(id))
		if err != nil {
			return fmt.Errorf("reprocess %s: %w", id, err)
		}
		if !ok {
			return fmt.Errorf("reprocess %s: %w", id, blob.ErrNotExist)
		}
		if err := ix.Requeued(ctx, string(id)); err != nil {
			return fmt.Errorf("reprocess %s: %w", id, err)
		}
		if err := q.Undead(ctx, string(id)); err != nil {
			return fmt.Errorf("reprocess %s: %w", id, err)
		}
		if err := q.Publish(ctx, queue.Reprocess, string(id)); err != nil {
			return fmt.Errorf("reprocess %s: %w", id, err)
		}
	}
	return nil
}
