package web

import (
	"context"
	"net/http"
	"time"

	"github.com/gobreakpad/gobreakpad/crashd/auth"
	"github.com/gobreakpad/gobreakpad/crashd/index"
)

// CorrelationsData is GET /api/signature/correlations and the signature
// page's correlations section: the values over-represented in a
// signature's crashes against all crashes of its product in the period
// (docs/crashd.md, "Correlations").
type CorrelationsData struct {
	// Period is the number of days compared (days=, default 7).
	Period int `json:"period_days"`
	index.Correlations
	// ComputedAt is when the answer was computed (answers are reused
	// for CorrelationsTTL).
	ComputedAt time.Time `json:"computed_at"`
}

// CorrelationsTTL is how long a computed answer is reused, per product,
// signature, period and whether personal values were counted.
const CorrelationsTTL = 5 * time.Minute

// Bounds of the correlations' work: answers kept, computations at once,
// the time one may take.
const (
	maxCorrelationAnswers = 256
	correlationSlots      = 2
	correlationTimeout    = 20 * time.Second
)

// corrKey names a cached answer.
type corrKey struct {
	product, signature string
	days               int
	personal           bool
}

type cachedCorrelations struct {
	at time.Time
	d  *CorrelationsData
}

// correlationsAPI serves GET /api/signature/correlations?signature=S
// [&product=P][&days=N].
func (w *Web) correlationsAPI(r *http.Request, p *principal) (any, error) {
	v := r.URL.Query()
	sig := v.Get("signature")
	if sig == "" {
		return nil, httpErr(http.StatusBadRequest, "signature= is required")
	}
	days, err := parseDays(v, 7)
	if err != nil {
		return nil, err
	}
	d, err := w.correlations(r.Context(), sig, v.Get("product"), days, p.Can(auth.ScopeViewPII))
	if err != nil {
		return nil, err
	}
	if d.SignatureCrashes == 0 {
		return nil, httpErr(http.StatusNotFound, "no processed crash of %q has the signature %q in the last %d days", d.Product, sig, days)
	}
	return d, nil
}

// correlations returns the correlations of a signature over the last
// days (product "": the signature's most frequent product in the period),
// counting personal annotation values when personal: from the cache when
// computed less than CorrelationsTTL ago, else computed (at most
// correlationSlots at once, each within correlationTimeout).
func (w *Web) correlations(ctx context.Context, sig, product string, days int, personal bool) (*CorrelationsData, error) {
	cor, ok := w.ix.(index.Correlator)
	if !ok {
		return nil, httpErr(http.StatusServiceUnavailable, "the index cannot compute correlations")
	}
	now := w.cfg.Now().UTC()
	since, until := now.Add(-time.Duration(days)*24*time.Hour), now.Add(time.Microsecond)
	if product == "" {
		tri, err := w.triage()
		if err != nil {
			return nil, err
		}
		b, err := tri.Facet(ctx, index.Filter{Signature: sig, Since: since, Until: until}, "product", 1)
		if err != nil {
			return nil, err
		}
		if len(b) == 0 {
			return &CorrelationsData{Period: days, Correlations: index.Correlations{Signature: sig, Since: since, Until: until, Items: []index.Correlation{}}, ComputedAt: now}, nil
		}
		product = b[0].Value
	}
	k := corrKey{product, sig, days, personal}
	w.mu.Lock()
	c, ok := w.corrCache[k]
	w.mu.Unlock()
	if ok && now.Sub(c.at) < CorrelationsTTL && now.Sub(c.at) >= 0 {
		return c.d, nil
	}
	select {
	case w.corrSlots <- struct{}{}:
		defer func() { <-w.corrSlots }()
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	ctx, cancel := context.WithTimeout(ctx, correlationTimeout)
	defer cancel()
	res, err := cor.Correlations(ctx, index.CorrelationQuery{Product: product, Signature: sig, Since: since, Until: until, Personal: personal})
	if err != nil {
		return nil, err
	}
	d := &CorrelationsData{Period: days, Correlations: res, ComputedAt: now}
	w.mu.Lock()
	if len(w.corrCache) >= maxCorrelationAnswers {
		// Expired answers go first; then any, down to the bound.
		for ck, cc := range w.corrCache {
			if now.Sub(cc.at) >= CorrelationsTTL || now.Sub(cc.at) < 0 {
				delete(w.corrCache, ck)
			}
		}
		for ck := range w.corrCache {
			if len(w.corrCache) < maxCorrelationAnswers {
				break
			}
			delete(w.corrCache, ck)
		}
	}
	w.corrCache[k] = cachedCorrelations{now, d}
	w.mu.Unlock()
	return d, nil
}

// signatureCorrelations is the signature page's section: its period,
// its product filter, the principal's view of personal values; an error
// is shown in the section, not failing the page.
func (w *Web) signatureCorrelations(r *http.Request, p *principal, sig string, days int) (*CorrelationsData, string) {
	d, err := w.correlations(r.Context(), sig, r.URL.Query().Get("product"), days, p.Can(auth.ScopeViewPII))
	if err != nil {
		w.log.Warn("web: correlations", "signature", sig, "err", err)
		return nil, "the correlations could not be computed: " + err.Error()
	}
	return d, ""
}
