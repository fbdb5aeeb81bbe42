package server

import (
	"bytes"
	"context"
	"net"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"log/slog"

	"github.com/gobreakpad/gobreakpad/crashd/crash"
)

// syncBuffer is a log destination tests read while the server writes.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// TestProcessorStartFailure: the processor's start-up check fails (its
// record of the last sync unreadable: a directory); Serve logs it and
// returns the error instead of serving on without a processor.
func TestProcessorStartFailure(t *testing.T) {
	cfg := testConfig(t, nil)
	if err := os.MkdirAll(filepath.Join(cfg.Data, filepath.FromSlash(crash.ProcessedSyncedKey)), 0o700); err != nil {
		t.Fatal(err)
	}
	var logs syncBuffer
	log := slog.New(slog.NewTextHandler(&logs, nil))
	s, err := New(context.Background(), cfg, log)
	if err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		s.Close()
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- s.Serve(context.Background(), ln) }()
	select {
	case err = <-done:
	case <-time.After(time.Minute):
		t.Fatal("Serve went on after the processor failed to start")
	}
	if err == nil || !strings.HasPrefix(err.Error(), "processor: ") {
		t.Errorf("Serve: %v", err)
	}
	if l := logs.String(); !strings.Contains(l, "crashd: processor failed; stopping") {
		t.Errorf("not logged:\n%s", l)
	}
}

// TestTempFilesRemoved: the temporary files of blobs a killed process
// left (older than the start) are removed after the start.
func TestTempFilesRemoved(t *testing.T) {
	cfg := testConfig(t, nil)
	old := time.Now().Add(-time.Hour)
	var left []string
	for _, p := range []string{"v1/raw_crash/20260101/.tmp-0123456789abcdef", "v1/dump/.tmp-fedcba9876543210"} {
		full := filepath.Join(cfg.Data, filepath.FromSlash(p))
		if err := os.MkdirAll(filepath.Dir(full), 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(full, []byte("partial"), 0o600); err != nil {
			t.Fatal(err)
		}
		os.Chtimes(full, old, old)
		left = append(left, full)
	}
	ts := startServer(t, cfg)
	defer ts.stop()
	deadline := time.Now().Add(30 * time.Second)
	for _, p := range left {
		for {
			if _, err := os.Stat(p); os.IsNotExist(err) {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("%s left after the start", p)
			}
			time.Sleep(20 * time.Millisecond)
		}
	}
}
