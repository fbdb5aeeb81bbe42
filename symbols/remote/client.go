// Package remote provides symbol sources that fetch from servers, keeping
// what they fetch in a shared on-disk cache (package symbols/cache):
//
//   - Breakpad: a Breakpad-layout HTTP store, GET URL/NAME/ID/NAME.sym, as
//     Mozilla's Tecken and Breakpad's HTTP symbol supplier serve;
//   - Debuginfod: a debuginfod server, GET URL/buildid/BUILDID/debuginfo and
//     /executable, turned into symbols with dumpsyms/elf;
//   - SymSrv: a Microsoft symbol server, GET URL/name.pdb/GUIDAGE/name.pdb,
//     its CAB-compressed form name.pd_, and file.ptr redirections; and the
//     PE, URL/name.exe/TIMESTAMPSIZE/name.exe. PDBs and PEs are turned into
//     symbols by SymSrv.Convert (symbols/symsrc converts them with dumpsyms/pe).
//
// All share a Client: one HTTP client with a timeout per request and a
// deadline for the whole walk, a limit on parallel downloads, retries with
// back-off on 5xx answers and connection errors (never on 404), a size limit
// per download, and progress lines for slow downloads. A server that fails
// is marked down for the rest of the client's life, so a walk waits for it
// at most once. Failures never fail a walk: Load returns an error wrapping
// symbols.ErrNotFound with the reason.
package remote

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/gobreakpad/gobreakpad/symbols"
	"github.com/gobreakpad/gobreakpad/symbols/cache"
	"github.com/gobreakpad/gobreakpad/symstore"
)

// Defaults of a Client's zero fields.
const (
	DefaultRequestTimeout = 30 * time.Second
	DefaultParallel       = 4
	DefaultRetries        = 2
	DefaultBackoff        = 250 * time.Millisecond
	DefaultMaxSize        = 4 << 30
	DefaultSlowAfter      = 2 * time.Second
)

// A Client fetches files from symbol servers into a cache. Its fields must
// not change once it is in use; it is safe for concurrent use.
type Client struct {
	// Cache is where downloads are kept; required.
	Cache *cache.Cache
	// HTTP is the HTTP client; nil means a client of its own. Go's
	// transport asks for gzip transfer encoding and decodes it.
	HTTP *http.Client
	// RequestTimeout bounds each request, body included.
	RequestTimeout time.Duration
	// Deadline, when set, is the end of the walk: no request runs past it.
	Deadline time.Time
	// Parallel is the most downloads running at once.
	Parallel int
	// Retries is how many times a 5xx answer or a connection error is
	// retried (negative: never), waiting Backoff, then twice as long, ...
	Retries int
	Backoff time.Duration
	// MaxSize is the largest file downloaded, in bytes (decoded).
	MaxSize int64
	// Progress, when set, receives a line when a download is slow (after
	// SlowAfter) and every SlowAfter until it ends, a line while a server
	// keeps a request waiting for its answer as long, and one warning line
	// per server when the client gives up on it (refused connections,
	// time-outs, 5xx answers): "warning: symbol server URL: REASON; ...".
	Progress  io.Writer
	SlowAfter time.Duration
	// UserAgent is sent with every request.
	UserAgent string

	requests atomic.Int64
	initOnce sync.Once
	sem      chan struct{}
	httpc    *http.Client

	mu       sync.Mutex
	down     map[string]error     // servers given up on, with why
	waitLine map[string]time.Time // the last "waiting for" line per server
	inflight map[string]*flight
}

// flight is one download in progress, shared by those wanting the same file.
type flight struct {
	done chan struct{}
	path string
	err  error
}

func (c *Client) init() {
	c.initOnce.Do(func() {
		n := c.Parallel
		if n <= 0 {
			n = DefaultParallel
		}
		c.sem = make(chan struct{}, n)
		c.httpc = c.HTTP
		if c.httpc == nil {
			c.httpc = &http.Client{}
		}
		c.down = map[string]error{}
		c.waitLine = map[string]time.Time{}
		c.inflight = map[string]*flight{}
	})
}

// Requests returns how many HTTP requests the client has sent.
func (c *Client) Requests() int64 { return c.requests.Load() }

// errMiss is a file the server does not have.
type errMiss struct{ msg string }

func (e *errMiss) Error() string { return e.msg }
func (e *errMiss) Unwrap() error { return symbols.ErrNotFound }

// Fetch returns the path of the file served at base/elems... (each element
// escaped), from the cache when it is there, else downloaded into the cache
// under elems. A file the server does not have, or cannot give, is an error
// wrapping symbols.ErrNotFound.
func (c *Client) Fetch(base string, elems ...string) (string, error) {
	return c.fetch(base, elems, elems)
}

// fetch downloads base/remote... into the cache as local.
func (c *Client) fetch(base string, remote, local []string) (string, error) {
	c.init()
	if p, ok := c.Cache.Lookup(local...); ok {
		return p, nil
	}
	for _, e := range remote {
		if err := symstore.CheckName(e); err != nil {
			return "", &errMiss{fmt.Sprintf("%v", err)}
		}
	}
	u := strings.TrimRight(base, "/")
	for _, e := range remote {
		u += "/" + url.PathEscape(e)
	}
	if c.Cache.Missed(base, remote...) {
		return "", &errMiss{u + ": not found (remembered)"}
	}
	key := base + "\x00" + strings.Join(local, "/")
	c.mu.Lock()
	if err := c.down[base]; err != nil {
		c.mu.Unlock()
		return "", &errMiss{fmt.Sprintf("%s: skipped (the server failed earlier)", u)}
	}
	if f := c.inflight[key]; f != nil {
		c.mu.Unlock()
		<-f.done
		return f.path, f.err
	}
	f := &flight{done: make(chan struct{})}
	c.inflight[key] = f
	c.mu.Unlock()

	f.path, f.err = c.download(base, u, remote, local)
	c.mu.Lock()
	delete(c.inflight, key)
	c.mu.Unlock()
	close(f.done)
	return f.path, f.err
}

// retryable reports whether a failed request may succeed when tried again.
func retryable(err error) bool {
	var ne net.Error
	if errors.As(err, &ne) && ne.Timeout() {
		return false // a hanging server: waiting again only doubles the delay
	}
	return errors.Is(err, syscall.ECONNREFUSED) || errors.Is(err, syscall.ECONNRESET) ||
		errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, syscall.EPIPE)
}

// statusError is an HTTP answer other than 200 or a miss.
type statusError struct{ code int }

func (e *statusError) Error() string {
	return fmt.Sprintf("HTTP %d %s", e.code, http.StatusText(e.code))
}

func (c *Client) download(base, u string, remote, local []string) (string, error) {
	c.sem <- struct{}{}
	defer func() { <-c.sem }()
	// Another process may have stored it while this one waited, or
	// another download of it (whose flight ended between this one's miss
	// check and its flight lookup) found the server without it.
	if p, ok := c.Cache.Lookup(local...); ok {
		return p, nil
	}
	if c.Cache.Missed(base, remote...) {
		return "", &errMiss{u + ": not found (remembered)"}
	}
	retries := c.Retries
	if retries == 0 {
		retries = DefaultRetries
	}
	backoff := c.Backoff
	if backoff <= 0 {
		backoff = DefaultBackoff
	}
	var err error
	for attempt := 0; ; attempt++ {
		var p string
		p, err = c.get(u, local)
		if err == nil {
			return p, nil
		}
		var miss *errMiss
		if errors.As(err, &miss) {
			c.Cache.RememberMiss(base, remote...)
			return "", err
		}
		var se *statusError
		again := errors.As(err, &se) && se.code >= 500 || retryable(err)
		if !again || attempt >= retries {
			break
		}
		wait := backoff << attempt
		if !c.Deadline.IsZero() && time.Until(c.Deadline) < wait {
			break
		}
		time.Sleep(wait)
	}
	var se *statusError
	var ne net.Error
	if errors.As(err, &se) && se.code >= 500 || errors.As(err, &ne) || retryable(err) || errors.Is(err, context.DeadlineExceeded) {
		c.mu.Lock()
		first := c.down[base] == nil
		if first {
			c.down[base] = err
		}
		c.mu.Unlock()
		if first && c.Progress != nil {
			fmt.Fprintf(c.Progress, "warning: symbol server %s: %s; going on without it\n", base, Reason(err))
		}
	}
	return "", fmt.Errorf("%w: %s: %v", symbols.ErrNotFound, u, err)
}

// Reason says in a few words why a request to a server failed: "connection
// refused", "no answer within the time-out", "HTTP 503 Service
// Unavailable", ...
func Reason(err error) string {
	var se *statusError
	var ne net.Error
	var dnsErr *net.DNSError
	switch {
	case errors.As(err, &se):
		return se.Error()
	case errors.Is(err, syscall.ECONNREFUSED):
		return "connection refused"
	case errors.Is(err, syscall.ECONNRESET), errors.Is(err, io.ErrUnexpectedEOF), errors.Is(err, syscall.EPIPE):
		return "connection dropped"
	case errors.As(err, &dnsErr):
		return "unknown host " + dnsErr.Name
	case errors.Is(err, context.DeadlineExceeded) && strings.Contains(err.Error(), "walk deadline"):
		return "the walk's time limit passed"
	case errors.Is(err, context.DeadlineExceeded), errors.As(err, &ne) && ne.Timeout():
		return "no answer within the time-out"
	}
	return err.Error()
}

// waiting prints a line to Progress every SlowAfter while a request to u
// waits for its answer (at most one line per server per SlowAfter), until
// the returned function is called.
func (c *Client) waiting(u string, timeout time.Duration) (stop func()) {
	if c.Progress == nil {
		return func() {}
	}
	every := c.SlowAfter
	if every <= 0 {
		every = DefaultSlowAfter
	}
	host := u
	if pu, err := url.Parse(u); err == nil {
		host = pu.Scheme + "://" + pu.Host
	}
	done := make(chan struct{})
	start := time.Now()
	go func() {
		t := time.NewTicker(every)
		defer t.Stop()
		for {
			select {
			case <-done:
				return
			case now := <-t.C:
				c.mu.Lock()
				quiet := now.Sub(c.waitLine[host]) < every-every/10
				if !quiet {
					c.waitLine[host] = now
				}
				c.mu.Unlock()
				if !quiet {
					fmt.Fprintf(c.Progress, "waiting for symbol server %s: no answer for %.0fs (giving up after %v)\n", host, now.Sub(start).Seconds(), timeout)
				}
			}
		}
	}()
	return func() { close(done) }
}

// get sends one request and stores the body.
func (c *Client) get(u string, local []string) (string, error) {
	timeout := c.RequestTimeout
	if timeout <= 0 {
		timeout = DefaultRequestTimeout
	}
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	if !c.Deadline.IsZero() {
		if time.Until(c.Deadline) <= 0 {
			return "", fmt.Errorf("walk deadline passed: %w", context.DeadlineExceeded)
		}
		var cancel2 context.CancelFunc
		ctx, cancel2 = context.WithDeadline(ctx, c.Deadline)
		defer cancel2()
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return "", &errMiss{err.Error()}
	}
	if c.UserAgent != "" {
		req.Header.Set("User-Agent", c.UserAgent)
	}
	c.requests.Add(1)
	stop := c.waiting(u, timeout)
	resp, err := c.httpc.Do(req)
	stop()
	if err != nil {
		return "", err
	}
	defer resp.Body.Close()
	switch {
	case resp.StatusCode == http.StatusOK:
	case resp.StatusCode >= 500:
		return "", &statusError{resp.StatusCode}
	default:
		// 404 and the other client errors (S3 answers 403 for missing
		// keys): the server does not have it.
		return "", &errMiss{fmt.Sprintf("%s: HTTP %d %s", u, resp.StatusCode, http.StatusText(resp.StatusCode))}
	}
	limit := c.MaxSize
	if limit <= 0 {
		limit = DefaultMaxSize
	}
	if resp.ContentLength > limit {
		return "", &errMiss{fmt.Sprintf("%s: %d bytes, over the limit of %d", u, resp.ContentLength, limit)}
	}
	body := io.Reader(resp.Body)
	if c.Progress != nil {
		pr := &progress{r: body, url: u, total: resp.ContentLength, w: c.Progress, start: time.Now(), every: c.SlowAfter}
		if pr.every <= 0 {
			pr.every = DefaultSlowAfter
		}
		pr.next = pr.every
		body = pr
		defer pr.finish()
	}
	p, err := c.Cache.Write(body, limit, local...)
	if errors.Is(err, cache.ErrTooLarge) {
		return "", &errMiss{fmt.Sprintf("%s: %v", u, err)}
	}
	if err != nil && ctx.Err() != nil {
		return "", fmt.Errorf("%v: %w", err, ctx.Err())
	}
	return p, err
}

// progress reports a slow download.
type progress struct {
	r           io.Reader
	url         string
	total, n    int64
	w           io.Writer
	start       time.Time
	every, next time.Duration
	said        bool
}

func (p *progress) Read(b []byte) (int, error) {
	n, err := p.r.Read(b)
	p.n += int64(n)
	if el := time.Since(p.start); el >= p.next {
		p.next = el + p.every
		p.said = true
		if p.total > 0 {
			fmt.Fprintf(p.w, "downloading %s: %.1f of %.1f MB (%.0fs)\n", p.url, mb(p.n), mb(p.total), el.Seconds())
		} else {
			fmt.Fprintf(p.w, "downloading %s: %.1f MB (%.0fs)\n", p.url, mb(p.n), el.Seconds())
		}
	}
	return n, err
}

func (p *progress) finish() {
	if p.said {
		fmt.Fprintf(p.w, "downloaded %s: %.1f MB in %.1fs\n", p.url, mb(p.n), time.Since(p.start).Seconds())
	}
}

func mb(n int64) float64 { return float64(n) / (1 << 20) }

// DebuginfodURLs returns the servers named by $DEBUGINFOD_URLS as elfutils
// reads it: URLs separated by spaces; entries that are not http or https
// URLs (such as elfutils' "ima:" options) are skipped.
func DebuginfodURLs() []string {
	var out []string
	for _, f := range strings.Fields(os.Getenv("DEBUGINFOD_URLS")) {
		if strings.HasPrefix(f, "http://") || strings.HasPrefix(f, "https://") {
			out = append(out, strings.TrimRight(f, "/"))
		}
	}
	return out
}
