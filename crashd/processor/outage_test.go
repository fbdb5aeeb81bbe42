package processor

import (
	"context"
	"errors"
	"os"
	"sync/atomic"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"

	"github.com/gobreakpad/gobreakpad/crashd/index"
	"github.com/gobreakpad/gobreakpad/internal/testkit/corpus"
	"github.com/gobreakpad/gobreakpad/symbols/symsrc"
)

// run starts p and returns the function that stops it (and checks Run's
// error).
func run(t *testing.T, p *Processor) func() {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- p.Run(ctx) }()
	return func() {
		cancel()
		if err := <-done; err != nil {
			t.Error(err)
		}
	}
}

// waitFor polls cond for up to 60 s.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("not after 60s: %s", what)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// TestPausedWhileNotReady: while Config.Ready fails (the server's disk
// check), no worker takes a crash (crashd_processor_paused is 1); when it
// passes again, the crash is processed at its first attempt.
func TestPausedWhileNotReady(t *testing.T) {
	dump, err := os.ReadFile(corpus.File(t, "breakpad/processor/linux_null_read_av.dmp"))
	if err != nil {
		t.Fatal(err)
	}
	e := newEnv(t)
	var full atomic.Bool
	full.Store(true)
	ready := func(context.Context) error {
		if full.Load() {
			return errors.New("free space below the threshold")
		}
		return nil
	}
	p, err := New(Config{Workers: 2, MaxAttempts: 1, Ready: ready, OutagePoll: 50 * time.Millisecond, Heartbeat: time.Second},
		e.store, e.q, e.ix, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer run(t, p)()
	id := e.put(t, dump, map[string]any{"ProductName": "Test"})
	waitFor(t, "paused", func() bool { return value(p.m.paused) == 1 })
	// Longer than the queue's ack wait (3 s): nothing was taken.
	time.Sleep(4 * time.Second)
	if c, err := e.ix.Get(context.Background(), string(id)); err != nil || c.Status != index.Received {
		t.Fatalf("while not ready: %+v %v", c, err)
	}
	full.Store(false)
	c := e.wait(t, id, index.Processed)
	if c.Attempts != 1 {
		t.Errorf("attempts %d, want 1", c.Attempts)
	}
	if value(p.m.paused) != 0 {
		t.Error("still paused")
	}
}

// value is a gauge's or counter's value.
func value(m prometheus.Metric) float64 {
	var d dto.Metric
	if err := m.Write(&d); err != nil {
		return -1
	}
	if d.Gauge != nil {
		return d.Gauge.GetValue()
	}
	return d.Counter.GetValue()
}

// TestAbort: at a shutdown's deadline, Abort hands back the crash a
// worker holds (a walk stalled well within its timeout) and Run returns
// at once; the crash is neither failed nor acknowledged, and is delivered
// again.
func TestAbort(t *testing.T) {
	dump, err := os.ReadFile(corpus.File(t, "breakpad/processor/linux_null_read_av.dmp"))
	if err != nil {
		t.Fatal(err)
	}
	src, err := symsrc.Open(symsrc.Config{Paths: []string{corpus.File(t, "breakpad/processor/symbols")}})
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	fl := &flaky{src: src}
	fl.stall.Store(true)
	e := newEnv(t)
	p, err := New(Config{Workers: 1, Symbols: fl, Timeout: time.Minute, MaxAttempts: 1, Heartbeat: time.Second}, e.store, e.q, e.ix, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer waitWalks(p) // before src.Close: the aborted walk runs on
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- p.Run(ctx) }()
	id := e.put(t, dump, map[string]any{"ProductName": "Test"})
	waitFor(t, "a worker on the crash", func() bool { return value(p.m.busy) == 1 })
	cancel()
	select {
	case <-done:
		t.Fatal("Run returned while its worker was on a crash")
	case <-time.After(500 * time.Millisecond):
	}
	t0 := time.Now()
	p.Abort()
	select {
	case err := <-done:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("Run did not return after Abort")
	}
	t.Logf("Run returned %v after Abort; walks still running: %d", time.Since(t0), p.Walking())
	if c, err := e.ix.Get(context.Background(), string(id)); err != nil || c.Status != index.Received {
		t.Errorf("after Abort: %+v %v", c, err)
	}
	// Delivered again, to the next processor.
	fl.stall.Store(false)
	p2, err := New(Config{Workers: 1, Symbols: fl, MaxAttempts: 3}, e.store, e.q, e.ix, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer run(t, p2)()
	e.wait(t, id, index.Processed)
}
