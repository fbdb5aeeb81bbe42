package collector

import (
	"context"
	"errors"
	"fmt"
	"math"
	"net"
	"net/http"
	"net/netip"
	"strings"
	"sync"
	"time"

	"github.com/gobreakpad/gobreakpad/crashd/budget"
)

// errBusy is an upload refused because the uploads' budget (memory or
// slots, shared with the symbol server's uploads: crashd/budget) stayed
// exhausted for the whole wait: answered 503 with Retry-After.
var errBusy = budget.ErrBusy

// admit lets an upload in: its client's rate (rate_limits keyed by address
// or proxy header), then its place in the uploads' budget (begin).
func (c *Collector) admit(r *http.Request) (*budget.Hold, error) {
	if err := c.checkRate(r, "", false); err != nil {
		return nil, err
	}
	return c.begin(r.Context())
}

// begin takes an upload slot and the copy buffer's bytes.
func (c *Collector) begin(ctx context.Context) (*budget.Hold, error) {
	return c.budget.Begin(ctx, copyBufSize)
}

// RateLimit is a token bucket per client: PerSecond uploads a second, up
// to Burst at once. Past it, an upload is answered 429 with Retry-After.
//
// In a configuration file (JSON):
//
//	{"by": "address", "per_second": 1, "burst": 20}
//	{"by": "header", "header": "X-Forwarded-For", "per_second": 1, "burst": 20}
//	{"by": "product", "per_second": 100, "burst": 1000}
type RateLimit struct {
	// By is what a client is: "address" (the connection's address; IPv6
	// addresses by their /64), "header" (the last address of Header, the
	// one a trusted proxy in front of crashd added; the connection's
	// address without it), or "product" (the crash's ProductName, checked
	// once the body is read).
	By string `json:"by"`
	// Header is the header a trusted proxy sets (By "header").
	Header string `json:"header,omitempty"`
	// PerSecond is the sustained rate of uploads per client.
	PerSecond float64 `json:"per_second"`
	// Burst is the uploads a client may send at once (at least 1).
	Burst int `json:"burst"`
}

// Kinds of RateLimit.By.
const (
	RateByAddress = "address"
	RateByHeader  = "header"
	RateByProduct = "product"
)

// maxBuckets bounds the clients a limiter remembers; past it, full
// buckets are forgotten, and while it stays full the newcomers share one.
const maxBuckets = 100000

// limiter is a RateLimit's buckets.
type limiter struct {
	RateLimit
	mu      sync.Mutex
	buckets map[string]*bucket
	now     func() time.Time
}

type bucket struct {
	tokens float64
	last   time.Time
}

func newLimiter(rl RateLimit, now func() time.Time) (*limiter, error) {
	switch rl.By {
	case RateByAddress, RateByProduct:
	case RateByHeader:
		if rl.Header == "" {
			return nil, errors.New("rate limit by header: no header named")
		}
	default:
		return nil, fmt.Errorf("rate limit: by %q: want %q, %q or %q", rl.By, RateByAddress, RateByHeader, RateByProduct)
	}
	if !(rl.PerSecond > 0) || math.IsInf(rl.PerSecond, 0) {
		return nil, fmt.Errorf("rate limit by %s: per_second must be above 0", rl.By)
	}
	if rl.Burst < 1 {
		rl.Burst = 1
	}
	return &limiter{RateLimit: rl, buckets: map[string]*bucket{}, now: now}, nil
}

// key returns the client of a request (for address and header limits).
func (l *limiter) key(r *http.Request) string {
	if l.By == RateByHeader {
		if v := r.Header.Values(l.Header); len(v) > 0 {
			last := v[len(v)-1]
			if i := strings.LastIndexByte(last, ','); i >= 0 {
				last = last[i+1:]
			}
			if k := addrKey(strings.TrimSpace(last)); k != "" {
				return k
			}
		}
	}
	host, _, err := net.SplitHostPort(r.RemoteAddr)
	if err != nil {
		host = r.RemoteAddr
	}
	if k := addrKey(host); k != "" {
		return k
	}
	return host
}

// addrKey is an address as a client key: IPv4 whole, IPv6 by its /64 (one
// machine has a whole /64 to choose from); "" if s is not an address.
func addrKey(s string) string {
	a, err := netip.ParseAddr(strings.Trim(s, "[]"))
	if err != nil {
		return ""
	}
	a = a.Unmap()
	if a.Is6() {
		p, _ := a.Prefix(64)
		return p.String()
	}
	return a.String()
}

// allow takes a token of key's bucket; when there is none it returns
// false and how long until there is.
func (l *limiter) allow(key string) (bool, time.Duration) {
	l.mu.Lock()
	defer l.mu.Unlock()
	now := l.now()
	b := l.buckets[key]
	if b == nil {
		if len(l.buckets) >= maxBuckets {
			l.sweep(now)
		}
		if len(l.buckets) >= maxBuckets {
			key = "" // the overflow's shared bucket
			b = l.buckets[key]
		}
		if b == nil {
			b = &bucket{tokens: float64(l.Burst), last: now}
			l.buckets[key] = b
		}
	}
	b.tokens = min(float64(l.Burst), b.tokens+now.Sub(b.last).Seconds()*l.PerSecond)
	b.last = now
	if b.tokens >= 1 {
		b.tokens--
		return true, 0
	}
	return false, time.Duration((1 - b.tokens) / l.PerSecond * float64(time.Second))
}

// sweep forgets the buckets that have refilled (they would start full anyway).
func (l *limiter) sweep(now time.Time) {
	for k, b := range l.buckets {
		if b.tokens+now.Sub(b.last).Seconds()*l.PerSecond >= float64(l.Burst) {
			delete(l.buckets, k)
		}
	}
}

// errRateLimited is an upload over a rate limit; retryAfter says when to try again.
type errRateLimited struct{ retryAfter time.Duration }

func (e *errRateLimited) Error() string {
	return fmt.Sprintf("rate limited: retry after %s", e.retryAfter)
}

// checkRate applies the limits keyed by the request (before its body is
// read, when product is ""), or those keyed by product.
func (c *Collector) checkRate(r *http.Request, product string, byProduct bool) error {
	for _, l := range c.limits {
		var key string
		switch {
		case byProduct && l.By == RateByProduct:
			key = product
		case !byProduct && l.By != RateByProduct:
			key = l.key(r)
		default:
			continue
		}
		if ok, wait := l.allow(key); !ok {
			return &errRateLimited{retryAfter: wait}
		}
	}
	return nil
}
