package crashdtest

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/gobreakpad/gobreakpad/internal/testkit/cmdtest"
	"github.com/gobreakpad/gobreakpad/internal/testkit/corpus"
)

// CrashdPackage is the import path of the crash server's program.
const CrashdPackage = "github.com/gobreakpad/gobreakpad/cmd/crashd"

// Options says how to start a crashd.
type Options struct {
	// Bin is the crashd binary (for example cmdtest.Build(t,
	// crashdtest.CrashdPackage)).
	Bin string
	// Data is the data directory (--data); a new temporary one when empty.
	Data string
	// Symbols are --symbols paths.
	Symbols []string
	// Args are more arguments after "serve" and the ones above.
	Args []string
	// Env are more "NAME=value" entries of its environment (the test's,
	// less CRASHD_* variables, comes first).
	Env []string
	// StartTimeout bounds the wait for /__lbheartbeat__ (default 60s).
	StartTimeout time.Duration
}

// Crashd is a crashd serve process the test started on a loopback port.
type Crashd struct {
	// URL is its base URL, http://127.0.0.1:PORT.
	URL string
	// Addr is its --listen address.
	Addr string
	// Data is its data directory.
	Data string
	// Token reads crashes: the api_token Start gives the process
	// (CRASHD_API_TOKEN, a token with the reprocess scope, which implies
	// view_crashes: crashd shows no crash without a token), unless
	// Options.Env sets one. GetCrash and Get send it.
	Token string

	cmd  *exec.Cmd
	out  *syncBuffer
	done chan struct{}
	err  error
}

type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.b.Len() > 4<<20 { // keep the first 4 MiB of a chatty log
		return len(p), nil
	}
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// FreeAddr returns a loopback address with a port nobody listened on a
// moment ago.
func FreeAddr(tb testing.TB) string {
	tb.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		tb.Fatalf("finding a free port: %v", err)
	}
	addr := l.Addr().String()
	l.Close()
	return addr
}

// Start runs `crashd serve --listen 127.0.0.1:PORT --data DIR [--symbols
// PATH]... ARGS...` and waits until GET /__lbheartbeat__ answers 200. The
// process is stopped (SIGTERM to its pid, SIGKILL after 20 s) when the test
// ends; its output is in Log. The test fails when it does not come up.
func Start(tb testing.TB, opt Options) *Crashd {
	tb.Helper()
	c, err := start(tb, opt)
	if err != nil {
		tb.Fatal(err)
	}
	return c
}

func start(tb testing.TB, opt Options) (*Crashd, error) {
	if opt.Data == "" {
		opt.Data = tb.TempDir()
	}
	if opt.StartTimeout == 0 {
		opt.StartTimeout = 60 * time.Second
	}
	addr := FreeAddr(tb)
	args := []string{"serve", "--listen", addr, "--data", opt.Data}
	for _, s := range opt.Symbols {
		args = append(args, "--symbols", s)
	}
	args = append(args, opt.Args...)
	cmd := exec.Command(opt.Bin, args...)
	for _, e := range os.Environ() {
		if !strings.HasPrefix(e, "CRASHD_") {
			cmd.Env = append(cmd.Env, e)
		}
	}
	token := ""
	for _, e := range opt.Env {
		if v, ok := strings.CutPrefix(e, "CRASHD_API_TOKEN="); ok {
			token = v
		}
	}
	if token == "" {
		b := make([]byte, 16)
		if _, err := rand.Read(b); err != nil {
			return nil, err
		}
		token = hex.EncodeToString(b)
		cmd.Env = append(cmd.Env, "CRASHD_API_TOKEN="+token)
	}
	cmd.Env = append(cmd.Env, opt.Env...)
	c := &Crashd{URL: "http://" + addr, Addr: addr, Data: opt.Data, Token: token, cmd: cmd, out: &syncBuffer{}, done: make(chan struct{})}
	cmd.Stdout, cmd.Stderr = c.out, c.out
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("starting %s: %w", opt.Bin, err)
	}
	go func() {
		c.err = cmd.Wait()
		close(c.done)
	}()
	tb.Cleanup(func() {
		if err := c.Stop(); err != nil {
			tb.Errorf("stopping crashd: %v\n%s", err, tail(c.Log()))
		}
	})
	deadline := time.Now().Add(opt.StartTimeout)
	client := &http.Client{Timeout: 2 * time.Second}
	for {
		select {
		case <-c.done:
			return nil, fmt.Errorf("crashd %s exited before serving: %v\n%s", strings.Join(args, " "), c.err, tail(c.Log()))
		default:
		}
		resp, err := client.Get(c.URL + "/__lbheartbeat__")
		if err == nil {
			io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
			if resp.StatusCode == 200 {
				return c, nil
			}
		}
		if time.Now().After(deadline) {
			return nil, fmt.Errorf("crashd %s: /__lbheartbeat__ not answering 200 after %v (%v)\n%s", strings.Join(args, " "), opt.StartTimeout, err, tail(c.Log()))
		}
		time.Sleep(50 * time.Millisecond)
	}
}

func tail(s string) string {
	if len(s) > 8000 {
		return "...\n" + s[len(s)-8000:]
	}
	return s
}

// Pid is the process id.
func (c *Crashd) Pid() int { return c.cmd.Process.Pid }

// Log is what the process wrote on stdout and stderr so far.
func (c *Crashd) Log() string { return c.out.String() }

// Exited reports whether the process has ended.
func (c *Crashd) Exited() bool {
	select {
	case <-c.done:
		return true
	default:
		return false
	}
}

// Stop sends SIGTERM to the process and waits for it (SIGKILL after 20
// s); it returns an error when the process did not exit cleanly on SIGTERM.
// Stopping a stopped process does nothing.
func (c *Crashd) Stop() error {
	if c.Exited() {
		return nil
	}
	c.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-c.done:
		var ee *exec.ExitError
		if errors.As(c.err, &ee) {
			return fmt.Errorf("crashd exited after SIGTERM: %v", c.err)
		}
		return nil
	case <-time.After(20 * time.Second):
		c.cmd.Process.Kill()
		<-c.done
		return fmt.Errorf("crashd still running 20s after SIGTERM: killed")
	}
}

// Kill kills the process with SIGKILL and waits for it.
func (c *Crashd) Kill() {
	if c.Exited() {
		return
	}
	c.cmd.Process.Kill()
	<-c.done
}

// Response is a server's answer.
type Response struct {
	Status int
	Body   string
}

// Do sends req as a client that follows no redirects and returns the
// answer.
func Do(req *http.Request) (Response, error) {
	client := &http.Client{
		Timeout:       60 * time.Second,
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
	}
	resp, err := client.Do(req)
	if err != nil {
		return Response{}, err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	return Response{resp.StatusCode, string(b)}, err
}

// CrashID returns the crash id of an Antenna answer "CrashID=bp-ID\n".
func CrashID(body string) (string, bool) {
	id, ok := strings.CutPrefix(strings.TrimSpace(body), "CrashID=bp-")
	return id, ok && id != ""
}

// Crash is GET /api/crashes/{id}'s answer, the fields tests look at; Raw
// holds the whole object.
type Crash struct {
	CrashID     string          `json:"crash_id"`
	Status      string          `json:"status"`
	Product     string          `json:"product"`
	Version     string          `json:"version"`
	Signature   string          `json:"signature"`
	CrashReason string          `json:"crash_reason"`
	JSONDump    json.RawMessage `json:"json_dump"`
	Raw         map[string]json.RawMessage
}

// Get fetches path (with its query) of the server with the test's token.
func (c *Crashd) Get(ctx context.Context, path string) (Response, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, c.URL+path, nil)
	if err != nil {
		return Response{}, err
	}
	req.Header.Set("Authorization", "Bearer "+c.Token)
	return Do(req)
}

// GetCrash fetches /api/crashes/{id} with the test's token; ok is false
// on 404.
func (c *Crashd) GetCrash(ctx context.Context, id string) (cr Crash, ok bool, err error) {
	resp, err := c.Get(ctx, "/api/crashes/"+id)
	if err != nil {
		return cr, false, err
	}
	if resp.Status == http.StatusNotFound {
		return cr, false, nil
	}
	if resp.Status != 200 {
		return cr, false, fmt.Errorf("GET /api/crashes/%s: %d %q", id, resp.Status, tail(resp.Body))
	}
	if err := json.Unmarshal([]byte(resp.Body), &cr); err != nil {
		return cr, false, fmt.Errorf("GET /api/crashes/%s: %w", id, err)
	}
	json.Unmarshal([]byte(resp.Body), &cr.Raw)
	return cr, true, nil
}

// WaitProcessed polls /api/crashes/{id} until its status is "processed"
// or "failed" and returns it; the test fails after timeout.
func (c *Crashd) WaitProcessed(tb testing.TB, id string, timeout time.Duration) Crash {
	tb.Helper()
	deadline := time.Now().Add(timeout)
	var last Crash
	var lastErr error
	for time.Now().Before(deadline) {
		cr, ok, err := c.GetCrash(tb.Context(), id)
		if ok && (cr.Status == "processed" || cr.Status == "failed") {
			return cr
		}
		last, lastErr = cr, err
		if c.Exited() {
			break
		}
		time.Sleep(100 * time.Millisecond)
	}
	tb.Fatalf("crash %s not processed after %v: last status %q, %v\n%s", id, timeout, last.Status, lastErr, tail(c.Log()))
	return Crash{}
}

// DataPath joins elem to the data directory.
func (c *Crashd) DataPath(elem ...string) string {
	return filepath.Join(append([]string{c.Data}, elem...)...)
}

// CrashdEnv names a crashd binary to test instead of building this tree's.
const CrashdEnv = "GOBREAKPAD_CRASHD"

// Build returns the crashd binary: $GOBREAKPAD_CRASHD when set, else
// cmd/crashd built once per test process (cmdtest.Build); the test is
// skipped when this tree has no cmd/crashd.
func Build(tb testing.TB) string {
	tb.Helper()
	if p := os.Getenv(CrashdEnv); p != "" {
		return p
	}
	root := corpus.Root()
	if _, err := os.Stat(filepath.Join(root, "cmd", "crashd")); err != nil {
		tb.Skipf("no cmd/crashd in %s: skipping", root)
	}
	return cmdtest.Build(tb, CrashdPackage)
}
