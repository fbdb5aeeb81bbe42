//go:build unix

package queue

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/gobreakpad/gobreakpad/crashd/scaletest"
	"github.com/gobreakpad/gobreakpad/internal/testkit/faults"
)

// openAll is what a crashd process opens on the queue's server when it
// starts: the queue (its two streams and three consumers), the records of
// unqueued crashes, the leases, the reprocess markers and the symbols
// stream with a consumer.
func openAll(ctx context.Context, url string, cfg Config) error {
	q, err := Connect(ctx, url, cfg)
	if err != nil {
		return err
	}
	defer q.Close()
	if _, err := q.Unqueued(ctx); err != nil {
		return err
	}
	if _, err := q.leases(ctx); err != nil {
		return err
	}
	if _, err := q.marks(ctx); err != nil {
		return err
	}
	stop, err := q.ConsumeSymbols(ctx, "processors", func(context.Context, Symbols) error { return nil })
	if err != nil {
		return err
	}
	stop()
	return nil
}

// startTogether runs n openAll at the same moment, rounds times (each
// round on streams and buckets of its own: a fresh prefix), and fails the
// test with every error.
func startTogether(t *testing.T, url string, n, rounds int, cfg Config) {
	t.Helper()
	for r := range rounds {
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		cfg.Prefix = fmt.Sprintf("together%d", r)
		var wg sync.WaitGroup
		errs := make([]error, n)
		gate := make(chan struct{})
		for i := range n {
			wg.Go(func() {
				<-gate
				errs[i] = openAll(ctx, url, cfg)
			})
		}
		close(gate)
		wg.Wait()
		cancel()
		for i, err := range errs {
			if err != nil {
				t.Errorf("round %d: process %d of %d starting together: %v", r+1, i+1, n, err)
			}
		}
	}
}

// TestStartTogether: crashd processes starting at the same moment on a
// fresh server (two processors of one deployment, started by the same
// unit file) all open the queue: the streams, consumers and buckets one
// of them creates while another creates them too are the same, not an
// error. Before create, Debian's nats-server 2.9 answered one of 32
// processes "subjects overlap with an existing stream" (10065) in 3 of 30
// rounds (the reprocess markers' bucket, the symbols stream). On the
// embedded server and Debian's nats-server alone: 16 processes, 3 rounds;
// with GOBREAKPAD_FAULT_TESTS=1 32 processes, 30 rounds, and a 3-node
// cluster too.
func TestStartTogether(t *testing.T) {
	n, rounds := 16, 3
	if faults.On() {
		n, rounds = 32, 30
	}
	cfg := Config{AckWait: 5 * time.Second}
	t.Run("embedded", func(t *testing.T) {
		if raceBuild {
			// nats-server v2.15.2 races with itself there: a stream
			// update (fileStore.UpdateConfig) beside a consumer create
			// (fileStore.ConsumerStore), both through its API goroutines.
			t.Skip("the embedded nats-server's own data race when streams are updated and consumers made at once: run without -race")
		}
		port, err := scaletest.FreePort()
		if err != nil {
			t.Fatal(err)
		}
		// The server alone, as crashd serve's embedded server with
		// another process connecting to it: every stream is made by the
		// processes racing.
		srv, err := startEmbeddedServer(EmbeddedConfig{Dir: filepath.Join(t.TempDir(), "nats"), Listen: fmt.Sprintf("127.0.0.1:%d", port)})
		if err != nil {
			t.Fatal(err)
		}
		defer srv.Shutdown()
		startTogether(t, fmt.Sprintf("nats://127.0.0.1:%d", port), n, rounds, cfg)
	})
	if scaletest.NATSServer() == "" {
		t.Skip("nats-server is not installed (apt-get install nats-server): cluster tests skipped")
	}
	for _, nodes := range []int{1, 3} {
		t.Run(fmt.Sprintf("nats-server-%d", nodes), func(t *testing.T) {
			if nodes > 1 {
				// R3 streams made by 32 processes: about 15 s a round here.
				faults.Long(t, "processes starting together on a 3-node cluster")
				rounds = 3
			}
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			cl, err := scaletest.StartNATS(ctx, t.TempDir(), nodes)
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(cl.Stop)
			startTogether(t, cl.URL(), n, rounds, cfg)
		})
	}
}

// TestCreateRaced: a create that lost the race (the server's 10065 or
// 10058 answer) is followed by the stream read back and the update, which
// succeeds; a stream of another name holding the subjects is an error
// naming it, at once, not a minute of retries.
func TestCreateRaced(t *testing.T) {
	q := openT(t, t.TempDir(), Config{})
	defer q.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	for _, code := range []jetstream.ErrorCode{errCodeSubjectsOverlap, errCodeNameInUse} {
		// What the loser of the race is answered: the other process's
		// stream (q.work, made by openT) is there.
		calls := 0
		err := q.create(ctx, q.work, "crashd.work.*", func(ctx context.Context) error {
			calls++
			if calls == 1 {
				return &jetstream.APIError{Code: 400, ErrorCode: code, Description: "lost the race"}
			}
			_, err := q.js.CreateOrUpdateStream(ctx, jetstream.StreamConfig{Name: q.work, Subjects: []string{"crashd.work.*"},
				Retention: jetstream.WorkQueuePolicy, Storage: jetstream.FileStorage, Duplicates: q.cfg.Duplicates})
			return err
		})
		if err != nil || calls != 2 {
			t.Errorf("err_code %d: %v after %d calls, want nil after 2", code, err, calls)
		}
	}
	// A real overlap: another stream holds the subjects of a queue with
	// the prefix "other".
	if _, err := q.js.CreateStream(ctx, jetstream.StreamConfig{Name: "SOMEONE_ELSE", Subjects: []string{"other.work.normal"}}); err != nil {
		t.Fatal(err)
	}
	t0 := time.Now()
	_, err := open(ctx, q.nc, Config{Prefix: "other"})
	if err == nil || !strings.Contains(err.Error(), "SOMEONE_ELSE") || !raced(err) {
		t.Fatalf("a stream of another name holding the subjects: %v", err)
	}
	if d := time.Since(t0); d > 20*time.Second {
		t.Errorf("the overlap was retried for %v", d)
	}
}
