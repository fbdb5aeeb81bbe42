package processor

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"sync/atomic"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/gobreakpad/gobreakpad/crashd/blob"
	"github.com/gobreakpad/gobreakpad/crashd/crash"
	"github.com/gobreakpad/gobreakpad/crashd/index"
	"github.com/gobreakpad/gobreakpad/crashd/queue"
	"github.com/gobreakpad/gobreakpad/internal/testkit/corpus"
	"github.com/gobreakpad/gobreakpad/minidump"
	"github.com/gobreakpad/gobreakpad/stackwalk"
	"github.com/gobreakpad/gobreakpad/stackwalk/jsonout"
	"github.com/gobreakpad/gobreakpad/symbols"
	"github.com/gobreakpad/gobreakpad/symbols/elfimage"
	"github.com/gobreakpad/gobreakpad/symbols/symsrc"
)

// flaky is a symbol source that panics or stalls while told to.
type flaky struct {
	src   symbols.Source
	panic atomic.Bool
	stall atomic.Bool
}

func (f *flaky) Load(m symbols.Module) (*symbols.Symbols, error) {
	if f.panic.Load() {
		panic("flaky symbols")
	}
	if f.stall.Load() {
		time.Sleep(3 * time.Second)
	}
	return f.src.Load(m)
}

// waitWalks waits (up to 30 s) for p's walks that overran their timeout
// to end: the test closes their symbol source only then, as crashd's
// shutdown leaves symbol files open while walks run.
func waitWalks(p *Processor) { p.WaitWalks(30 * time.Second) }

type env struct {
	store blob.Store
	q     *queue.JetStream
	ix    *index.SQL
}

func newEnv(t *testing.T) *env {
	t.Helper()
	ctx := context.Background()
	dir := t.TempDir()
	q, err := queue.Embedded(ctx, queue.EmbeddedConfig{Dir: filepath.Join(dir, "nats")}, queue.Config{AckWait: 3 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { q.Close() })
	ix, err := index.OpenSQLite(ctx, filepath.Join(dir, "index.sqlite"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ix.Close() })
	return &env{store: blob.NewMem(), q: q, ix: ix}
}

// put stores a crash as the collector does and queues it.
func (e *env) put(t *testing.T, dump []byte, annotations map[string]any) crash.ID {
	t.Helper()
	ctx := context.Background()
	id := crash.New(time.Now(), crash.ThrottleAccept)
	raw := &crash.RawCrash{Annotations: annotations, SubmittedTimestamp: time.Now(), UUID: id, Version: crash.RawCrashVersion}
	b, err := json.Marshal(raw)
	if err != nil {
		t.Fatal(err)
	}
	names, _ := json.Marshal(crash.DumpNames{crash.MinidumpField})
	for k, v := range map[string][]byte{crash.RawCrashKey(id): b, crash.DumpNamesKey(id): names, crash.DumpKey(id, crash.MinidumpField): dump} {
		if err := e.store.Put(ctx, k, v); err != nil {
			t.Fatal(err)
		}
	}
	if err := e.ix.Received(ctx, index.Crash{ID: string(id), ReceivedAt: raw.SubmittedTimestamp, Product: "Test"}); err != nil {
		t.Fatal(err)
	}
	if err := e.q.Publish(ctx, queue.Normal, string(id)); err != nil {
		t.Fatal(err)
	}
	return id
}

// processed reads the processed crash of id from the store.
func (e *env) processed(t *testing.T, id crash.ID) crash.ProcessedCrash {
	t.Helper()
	b, err := e.store.Get(context.Background(), crash.ProcessedCrashKey(id))
	if err != nil {
		t.Fatal(err)
	}
	var pc crash.ProcessedCrash
	if err := json.Unmarshal(b, &pc); err != nil {
		t.Fatal(err)
	}
	return pc
}

func (e *env) wait(t *testing.T, id crash.ID, status index.Status) index.Crash {
	t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	for time.Now().Before(deadline) {
		c, err := e.ix.Get(context.Background(), string(id))
		if err == nil && c.Status == status {
			return c
		}
		time.Sleep(20 * time.Millisecond)
	}
	c, err := e.ix.Get(context.Background(), string(id))
	t.Fatalf("%s: not %s after 60s: %+v %v", id, status, c, err)
	return c
}

func TestProcessor(t *testing.T) {
	dumpPath := corpus.File(t, "breakpad/processor/linux_null_read_av.dmp")
	symPath := corpus.File(t, "breakpad/processor/symbols")
	dump, err := os.ReadFile(dumpPath)
	if err != nil {
		t.Fatal(err)
	}
	src, err := symsrc.Open(symsrc.Config{Paths: []string{symPath}})
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	fl := &flaky{src: src}
	e := newEnv(t)
	reg := prometheus.NewRegistry()
	p, err := New(Config{Workers: 2, Symbols: fl, Timeout: time.Second, MaxAttempts: 2, RetryDelay: 50 * time.Millisecond, Heartbeat: time.Second},
		e.store, e.q, e.ix, nil, reg)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error)
	go func() { done <- p.Run(ctx) }()
	defer func() {
		cancel()
		<-done
		waitWalks(p) // the stalled walk below outlives its timeout
	}()

	// A good crash.
	id := e.put(t, dump, map[string]any{"ProductName": "Test", "Version": "1.0"})
	c := e.wait(t, id, index.Processed)
	pc := e.processed(t, id)
	if !pc.Success || pc.Signature == "" || pc.Signature != c.Signature || pc.ProductName != "Test" || pc.Version != "1.0" ||
		pc.CrashReason == "" || pc.CrashingThread == nil || pc.Timings["total"] <= 0 {
		t.Errorf("processed crash: %+v", pc)
	}
	// json_dump is minidump_stackwalk --json's report.
	f, _ := minidump.NewFileBytes(dump)
	st, _ := stackwalk.Process(f, stackwalk.Options{Symbols: src, ImageSymbols: elfimage.Load})
	var want bytes.Buffer
	jsonout.Write(&want, st, false)
	if !bytes.Equal(bytes.TrimSpace(want.Bytes()), pc.JSONDump) {
		t.Errorf("json_dump differs from the library's --json report:\n%s\n%s", pc.JSONDump, want.Bytes())
	}

	// Not a minidump: processed, unsuccessfully, with a note.
	bad := e.put(t, []byte("not a dump"), map[string]any{"ProductName": "Test"})
	e.wait(t, bad, index.Processed)
	b, _ := e.store.Get(context.Background(), crash.ProcessedCrashKey(bad))
	pc = crash.ProcessedCrash{}
	json.Unmarshal(b, &pc)
	if pc.Success || len(pc.ProcessorNotes) == 0 {
		t.Errorf("bad dump: %+v", pc)
	}

	// A walk that panics every time: failed after 2 attempts, dead
	// letter, and the worker goes on.
	fl.panic.Store(true)
	pan := e.put(t, dump, map[string]any{"ProductName": "Test"})
	fc := e.wait(t, pan, index.Failed)
	if fc.Attempts != 2 || fc.Error == "" {
		t.Errorf("panicking crash: %+v", fc)
	}
	dl, err := e.q.Dead(context.Background(), 0)
	if err != nil || len(dl) != 1 || dl[0].ID != string(pan) {
		t.Errorf("dead letters %+v %v", dl, err)
	}
	fl.panic.Store(false)

	// A stalled walk times out.
	fl.stall.Store(true)
	slow := e.put(t, dump, nil)
	e.wait(t, slow, index.Failed)
	fl.stall.Store(false)

	// Reprocessed, both are processed; the dead letters are gone.
	if err := Reprocess(context.Background(), e.store, e.q, e.ix, pan, slow); err != nil {
		t.Fatal(err)
	}
	e.wait(t, pan, index.Processed)
	e.wait(t, slow, index.Processed)
	if dl, _ := e.q.Dead(context.Background(), 0); len(dl) != 0 {
		t.Errorf("dead letters after reprocessing: %+v", dl)
	}
	if n, _ := e.ix.Counts(context.Background()); n[index.Processed] != 4 {
		t.Errorf("counts %v", n)
	}
	if err := Reprocess(context.Background(), e.store, e.q, e.ix, crash.New(time.Now(), 0)); err == nil {
		t.Error("reprocessing an unknown crash succeeded")
	}
}

// TestLazyProcessed: processed crashes stored without waiting for the disk
// are made durable by the sync loop, which records the time; after a stop
// of the machine (simulated: the recorded time put back before two
// crashes were processed and one of their processed crashes left
// truncated), the next Run queues again the one whose processed crash is
// not JSON and leaves the other alone.
func TestLazyProcessed(t *testing.T) {
	dump, err := os.ReadFile(corpus.File(t, "breakpad/processor/linux_null_read_av.dmp"))
	if err != nil {
		t.Fatal(err)
	}
	e := newEnv(t)
	store, err := blob.OpenDir(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	e.store = store
	ctx := context.Background()
	run := func() func() {
		p, err := New(Config{Workers: 2, LazyProcessed: true, SyncInterval: 20 * time.Millisecond}, e.store, e.q, e.ix, nil, nil)
		if err != nil {
			t.Fatal(err)
		}
		rctx, cancel := context.WithCancel(ctx)
		done := make(chan error)
		go func() { done <- p.Run(rctx) }()
		return func() {
			cancel()
			if err := <-done; err != nil {
				t.Error(err)
			}
		}
	}
	before := time.Now().UTC()
	stop := run()
	a := e.put(t, dump, map[string]any{"ProductName": "Test"})
	b := e.put(t, dump, map[string]any{"ProductName": "Test"})
	e.wait(t, a, index.Processed)
	e.wait(t, b, index.Processed)
	stop()
	synced, err := store.Get(ctx, crash.ProcessedSyncedKey)
	if err != nil {
		t.Fatal(err)
	}
	if st, err := time.Parse(time.RFC3339Nano, string(synced)); err != nil || st.Before(before) {
		t.Fatalf("recorded sync %q %v: not after the start", synced, err)
	}
	pa, _ := store.Get(ctx, crash.ProcessedCrashKey(a))
	pb, _ := store.Get(ctx, crash.ProcessedCrashKey(b))
	if !json.Valid(pa) || !json.Valid(pb) {
		t.Fatal("processed crashes not stored")
	}

	// The machine stopped: the last sync was before both, a's processed
	// crash is cut short.
	store.Put(ctx, crash.ProcessedSyncedKey, []byte(before.Format(time.RFC3339Nano)))
	store.Put(ctx, crash.ProcessedCrashKey(a), pa[:len(pa)/2])
	stop = run()
	defer stop()
	deadline := time.Now().Add(60 * time.Second)
	for {
		got, err := store.Get(ctx, crash.ProcessedCrashKey(a))
		if err == nil && json.Valid(got) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the cut processed crash was not made again")
		}
		time.Sleep(20 * time.Millisecond)
	}
	e.wait(t, a, index.Processed)
	if got, _ := store.Get(ctx, crash.ProcessedCrashKey(b)); !bytes.Equal(got, pb) {
		t.Error("a whole processed crash was made again")
	}
}
