package server

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/gobreakpad/gobreakpad/crashd/blob"
)

// diskSpace checks that the data directory's file system keeps its free
// space (min_free_bytes, min_free_percent), answering from a reading at
// most a second old.
type diskSpace struct {
	path       string
	minBytes   uint64
	minPercent int
	log        *slog.Logger
	free       prometheus.Gauge

	mu  sync.Mutex
	at  time.Time
	err error
	low bool
}

func newDiskSpace(cfg Config, log *slog.Logger) *diskSpace {
	return &diskSpace{path: cfg.Data, minBytes: uint64(cfg.MinFreeBytes), minPercent: cfg.MinFreePercent, log: log,
		free: prometheus.NewGauge(prometheus.GaugeOpts{Name: "crashd_data_free_bytes", Help: "Bytes free on the data directory's file system."})}
}

// Check returns an error naming the free space and the threshold when the
// file system is below it.
func (d *diskSpace) Check(context.Context) error {
	if d.minBytes == 0 && d.minPercent == 0 {
		return nil
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	if !d.at.IsZero() && time.Since(d.at) < time.Second {
		return d.err
	}
	d.at = time.Now()
	free, total, err := blob.FreeSpace(d.path)
	switch {
	case errors.Is(err, errors.ErrUnsupported):
		d.err = nil // nothing to check with
		return nil
	case err != nil:
		d.err = err
		return err
	}
	d.free.Set(float64(free))
	need := max(d.minBytes, total/100*uint64(d.minPercent))
	d.err = nil
	if free < need {
		d.err = fmt.Errorf("data directory %s: %d bytes free of %d, below the %d kept free (min_free_bytes, min_free_percent): uploads refused, processing paused", d.path, free, total, need)
	}
	if low := d.err != nil; low != d.low {
		d.low = low
		if low {
			d.log.Error("disk nearly full: uploads refused (503), processing paused until space returns", "err", d.err)
		} else {
			d.log.Info("disk space back: uploads and processing resume", "free", free)
		}
	}
	return d.err
}

// retryAfter is the Retry-After of an upload refused for want of disk
// space, in seconds.
const retryAfter = "60"

// refuseWhenFull answers the uploads (POST) with 503 and Retry-After while
// the disk is below its free-space threshold: a crash that cannot be
// stored is never answered 200, nor with an empty 500.
func (s *Server) refuseWhenFull(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodPost {
			if err := s.disk.Check(r.Context()); err != nil {
				s.refused.Inc()
				w.Header().Set("Retry-After", retryAfter)
				w.Header().Set("Content-Type", "text/plain; charset=utf-8")
				w.Header().Set("Connection", "close") // the body is not read
				w.WriteHeader(http.StatusServiceUnavailable)
				io.WriteString(w, "crashd: storage full, crash not stored; retry later\n")
				return
			}
		}
		h.ServeHTTP(w, r)
	})
}

// failed records that a part of the process stopped with err (the
// heartbeat reports it until the process ends).
func (s *Server) failed(part string, err error) {
	s.partsMu.Lock()
	defer s.partsMu.Unlock()
	if s.partErr == nil {
		s.partErr = map[string]error{}
	}
	s.partErr[part] = err
}

// partCheck is the heartbeat's check of a part of the process.
func (s *Server) partCheck(part string) func(context.Context) error {
	return func(context.Context) error {
		s.partsMu.Lock()
		defer s.partsMu.Unlock()
		if err := s.partErr[part]; err != nil {
			return fmt.Errorf("stopped: %w", err)
		}
		return nil
	}
}

// removeTemp removes the temporary files of blobs a killed process left
// in the data directory (blob.Dir.RemoveTemp), in the background.
func (s *Server) removeTemp(ctx context.Context, before time.Time) {
	d, ok := s.store.(*blob.Dir)
	if !ok {
		return
	}
	t0 := time.Now()
	n, err := d.RemoveTemp(ctx, before)
	switch {
	case err != nil && ctx.Err() == nil:
		s.log.Warn("start-up: removing temporary files", "removed", n, "err", err)
	case n > 0:
		s.log.Info("start-up: temporary files of an earlier process removed", "removed", n, "seconds", time.Since(t0).Seconds())
	}
}
