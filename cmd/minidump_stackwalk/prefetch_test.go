package main

import (
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/gobreakpad/gobreakpad/internal/testkit/cmdtest"
)

// concurrentServer serves the files of roots, counting the requests being
// answered at once. With gate set, the first request is held until a
// second one arrives (or 10 s pass), so that a client sending requests at
// once is seen doing so however slow the machine.
type concurrentServer struct {
	*httptest.Server
	gate       bool
	cur, peak  atomic.Int32
	n          atomic.Int32
	opened     chan struct{}
	openedOnce sync.Once
}

func serveConcurrent(t *testing.T, gate bool, roots ...string) *concurrentServer {
	s := &concurrentServer{gate: gate, opened: make(chan struct{})}
	s.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s.n.Add(1)
		c := s.cur.Add(1)
		defer s.cur.Add(-1)
		for p := s.peak.Load(); c > p && !s.peak.CompareAndSwap(p, c); p = s.peak.Load() {
		}
		if s.gate {
			if c >= 2 {
				s.openedOnce.Do(func() { close(s.opened) })
			}
			select {
			case <-s.opened:
			case <-time.After(10 * time.Second):
			}
		}
		for _, root := range roots {
			p := filepath.Join(root, filepath.FromSlash(r.URL.Path))
			if st, err := os.Stat(p); err == nil && st.Mode().IsRegular() {
				http.ServeFile(w, r, p)
				return
			}
		}
		http.NotFound(w, r)
	}))
	t.Cleanup(s.Close)
	return s
}

// TestPrefetch walks corpus cases through a Breakpad-layout HTTP store with
// and without --prefetch: the outputs (human, -m, --json, -s) are the local
// walk's either way; without it the server sees one request at a time (one
// thread walked at once), with --prefetch 4 several at once, and never more
// than the 4 prefetching plus the walk's own.
func TestPrefetch(t *testing.T) {
	prog := cmdtest.Build(t, ".")
	for _, c := range readCases(t, []string{"bp-linux_inline", "bp-ascii_read_av"}) {
		t.Run(c.name, func(t *testing.T) {
			for _, mode := range [][]string{{"-m"}, {}, {"--json"}, {"-s"}} {
				local := cmdtest.RunClean(t, prog, nil, append(append(mode, c.dump), c.paths...)...)
				if local.Code != 0 {
					t.Fatalf("%v local walk: %d %s", mode, local.Code, local.Stderr)
				}
				for _, prefetch := range []string{"0", "4"} {
					srv := serveConcurrent(t, prefetch != "0", c.paths...)
					args := append(append([]string{"-j", "1", "--prefetch", prefetch, "--symbols-cache", t.TempDir(), "--symbols-url", srv.URL}, mode...), c.dump)
					r := cmdtest.RunClean(t, prog, nil, args...)
					if r.Code != 0 || r.Stdout != local.Stdout {
						t.Fatalf("%v --prefetch %s: exit %d, output differs from the local walk:\n%s\nstderr: %s", mode, prefetch, r.Code, r.Stdout, r.Stderr)
					}
					peak := srv.peak.Load()
					switch {
					case prefetch == "0" && peak != 1:
						t.Errorf("%v --prefetch 0: %d requests at once, want 1", mode, peak)
					case prefetch == "4" && (peak < 2 || peak > 5):
						t.Errorf("%v --prefetch 4: %d requests at once, want 2 to 5", mode, peak)
					}
					t.Logf("%v --prefetch %s: %d requests, %d at once", mode, prefetch, srv.n.Load(), peak)
				}
			}
		})
	}
}
