package web

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/gobreakpad/gobreakpad/crashd/auth"
	"github.com/gobreakpad/gobreakpad/crashd/blob"
	"github.com/gobreakpad/gobreakpad/crashd/crash"
	"github.com/gobreakpad/gobreakpad/crashd/index"
)

// PeriodDays are the periods the top crashers rank over.
var PeriodDays = []int{1, 3, 7, 14, 28}

// filterFields are the query parameters every ranking page takes.
var filterFields = []string{"product", "version", "os", "cpu", "process_type"}

// parseDays reads days= (one of PeriodDays).
func parseDays(v url.Values, def int) (int, error) {
	s := v.Get("days")
	if s == "" {
		return def, nil
	}
	n, err := strconv.Atoi(s)
	if err != nil {
		return 0, httpErr(http.StatusBadRequest, "days=%q: one of 1, 3, 7, 14, 28", s)
	}
	for _, d := range PeriodDays {
		if d == n {
			return n, nil
		}
	}
	return 0, httpErr(http.StatusBadRequest, "days=%q: one of 1, 3, 7, 14, 28", s)
}

// parseWhen reads a time parameter: RFC 3339, or a UTC date.
func parseWhen(name, s string) (time.Time, error) {
	if t, err := time.Parse(time.RFC3339Nano, s); err == nil {
		return t, nil
	}
	t, err := time.Parse("2006-01-02", s)
	if err != nil {
		return t, httpErr(http.StatusBadRequest, "%s=%q: an RFC 3339 time or a date YYYY-MM-DD", name, s)
	}
	return t, nil
}

// parseFilter reads the filter parameters of a search: each text field
// (index.MatchFields) once, a bare value an exact match as it always was,
// a value with Super Search's operators (~ ^ $ ! = __null__,
// index.ParseMatch) a match.
func parseFilter(v url.Values) (index.Filter, error) {
	var f index.Filter
	exact := map[string]*string{"product": &f.Product, "version": &f.Version, "os": &f.OS, "cpu": &f.CPU,
		"process_type": &f.ProcessType, "signature": &f.Signature, "crash_reason": &f.CrashReason, "module": &f.Module}
	for _, field := range index.MatchFields {
		vs := v[field]
		if len(vs) == 0 || vs[0] == "" {
			continue
		}
		if len(vs) > 1 {
			return f, httpErr(http.StatusBadRequest, "%s: given %d times (once: one value per field)", field, len(vs))
		}
		m, err := index.ParseMatch(vs[0])
		if err != nil {
			return f, httpErr(http.StatusBadRequest, "%s=%v", field, err)
		}
		if m.Op == index.OpExact && !m.Not && m.Value != "" {
			*exact[field] = m.Value
			continue
		}
		f.Matches = append(f.Matches, index.FieldMatch{Field: field, Match: m})
	}
	var err error
	if s := v.Get("since"); s != "" {
		if f.Since, err = parseWhen("since", s); err != nil {
			return f, err
		}
	}
	if s := v.Get("until"); s != "" {
		if f.Until, err = parseWhen("until", s); err != nil {
			return f, err
		}
	}
	return f, nil
}

func (w *Web) triage() (index.Triage, error) {
	if w.tri == nil {
		return nil, httpErr(http.StatusServiceUnavailable, "the index cannot rank crashes")
	}
	return w.tri, nil
}

// HomeData is the top crashers page and GET /api/topcrashers.
type HomeData struct {
	// Period is the number of days ranked (days=).
	Period int               `json:"period_days"`
	Filter map[string]string `json:"filter"`
	Top    index.Top         `json:"top"`
	// Options are the values each filter can take in the period (the
	// page's menus).
	Options map[string][]index.Bucket `json:"-"`
}

func (w *Web) home(r *http.Request, _ *principal) (any, error) {
	tri, err := w.triage()
	if err != nil {
		return nil, err
	}
	v := r.URL.Query()
	days, err := parseDays(v, 7)
	if err != nil {
		return nil, err
	}
	limit := 50
	if s := v.Get("limit"); s != "" {
		if limit, err = strconv.Atoi(s); err != nil || limit < 1 || limit > index.MaxLimit {
			return nil, httpErr(http.StatusBadRequest, "limit=%q: a number from 1 to %d", s, index.MaxLimit)
		}
	}
	now := w.cfg.Now().UTC()
	f := index.Filter{Since: now.Add(-time.Duration(days) * 24 * time.Hour), Until: now.Add(time.Microsecond)}
	d := &HomeData{Period: days, Filter: map[string]string{}, Options: map[string][]index.Bucket{}}
	for _, k := range filterFields {
		if s := v.Get(k); s != "" {
			d.Filter[k] = s
		}
	}
	f.Product, f.Version, f.OS, f.CPU, f.ProcessType = v.Get("product"), v.Get("version"), v.Get("os"), v.Get("cpu"), v.Get("process_type")
	if f.State, err = parseState(v); err != nil {
		return nil, err
	}
	if f.State != "" {
		d.Filter["state"] = string(f.State)
	}
	if d.Top, err = tri.TopCrashers(r.Context(), f, limit); err != nil {
		return nil, err
	}
	if !wantsJSON(r) {
		if d.Options, err = w.options(r.Context(), tri, days, f); err != nil {
			return nil, err
		}
	}
	return d, nil
}

// optionsTTL is how long the menus of the top crashers page are reused.
const optionsTTL = time.Minute

type cachedOptions struct {
	at   time.Time
	opts map[string][]index.Bucket
}

// options returns the values each filter takes in a period of days (the
// home page's menus), computed at most once a minute per period.
func (w *Web) options(ctx context.Context, tri index.Triage, days int, f index.Filter) (map[string][]index.Bucket, error) {
	now := w.cfg.Now()
	w.mu.Lock()
	c, ok := w.optCache[days]
	w.mu.Unlock()
	if ok && now.Sub(c.at) < optionsTTL && now.Sub(c.at) >= 0 {
		return c.opts, nil
	}
	opts := map[string][]index.Bucket{}
	period := index.Filter{Since: f.Since, Until: f.Until}
	for _, k := range filterFields {
		b, err := tri.Facet(ctx, period, k, 50)
		if err != nil {
			return nil, err
		}
		opts[k] = b
	}
	w.mu.Lock()
	w.optCache[days] = cachedOptions{now, opts}
	w.mu.Unlock()
	return opts, nil
}

func wantsJSON(r *http.Request) bool { return strings.HasPrefix(r.URL.Path, "/api/") }

// SignatureData is a signature's page and GET /api/signature.
type SignatureData struct {
	Signature string    `json:"signature"`
	Period    int       `json:"period_days"`
	Since     time.Time `json:"since"`
	Until     time.Time `json:"until"`
	// Count is the crashes in the period; Total all processed crashes
	// with the signature.
	Count int `json:"count"`
	// FirstSeen and LastSeen bound the signature's crashes in the index;
	// FirstSighting is its first on record (kept when crashes expire).
	FirstSeen     time.Time `json:"first_seen"`
	LastSeen      time.Time `json:"last_seen"`
	FirstSighting time.Time `json:"first_sighting,omitzero"`
	// Histograms over the period, by field (day, version, os, cpu,
	// crash_reason, process_type).
	Histograms []Facet `json:"histograms"`
	// Trend is the period's crashes per day and version (the top
	// versions, then the others as one; GET /api/signature/trend for up
	// to 90 days).
	Trend *index.Trend `json:"trend"`
	// Stack is the most common crashing-thread stack of the newest
	// crashes.
	Stack   *Stack      `json:"common_stack"`
	Reports []index.Row `json:"reports"`
	Offset  int         `json:"offset"`
	Limit   int         `json:"limit"`
	// Triage is the signature's triage in the product asked for (or in
	// its only product); Products its state in each product; FileBug the
	// configured trackers' prefilled new-issue links (triage.go).
	Triage    *index.SignatureTriage `json:"triage,omitempty"`
	Products  []index.ProductTriage  `json:"triage_by_product"`
	FileBug   []FileBugLink          `json:"file_bug,omitempty"`
	CanTriage bool                   `json:"-"`
	States    []index.State          `json:"-"`
	// Correlations are the values over-represented in the signature's
	// crashes (correlations.go); CorrelationsError why they are missing.
	Correlations      *CorrelationsData `json:"correlations,omitempty"`
	CorrelationsError string            `json:"correlations_error,omitempty"`
}

// Facet is the counts of one field's values.
type Facet struct {
	Field   string         `json:"field"`
	Buckets []index.Bucket `json:"buckets"`
}

// Stack is a stack shared by several crashes: its top frames.
type Stack struct {
	Frames []string `json:"frames"`
	// Sources are the frames' files and lines, one per frame, as the
	// newest crash with the stack has them, linked as the report page's
	// frames (File, FileShown, Line, SourceLink).
	Sources []Frame `json:"sources"`
	// Crashes of Sampled have it.
	Crashes int `json:"crashes"`
	Sampled int `json:"sampled"`
}

// stackSample is how many of a signature's newest crashes are read for
// its common stack; stackDepth how many frames make a stack.
const (
	stackSample = 50
	stackDepth  = 10
	pageSize    = 50
)

func parseOffset(v url.Values) (int, error) {
	s := v.Get("offset")
	if s == "" {
		return 0, nil
	}
	n, err := strconv.Atoi(s)
	if err != nil || n < 0 || n > 1_000_000 {
		return 0, httpErr(http.StatusBadRequest, "offset=%q: a number from 0 to 1000000", s)
	}
	return n, nil
}

// signatureFilter selects the crashes of signature sig in the last days
// and the signature page's filters of v (product, version, os, cpu,
// process_type): the signature page's and its trend's.
func (w *Web) signatureFilter(v url.Values, sig string, days int) index.Filter {
	now := w.cfg.Now().UTC()
	f := index.Filter{Signature: sig, Since: now.Add(-time.Duration(days) * 24 * time.Hour), Until: now.Add(time.Microsecond)}
	f.Product, f.Version, f.OS, f.CPU, f.ProcessType = v.Get("product"), v.Get("version"), v.Get("os"), v.Get("cpu"), v.Get("process_type")
	return f
}

// pageCorrelationDays bounds the period of the signature page's
// correlations (docs/crashd.md "Correlations").
const pageCorrelationDays = 7

func (w *Web) signature(r *http.Request, p *principal) (any, error) {
	tri, err := w.triage()
	if err != nil {
		return nil, err
	}
	v := r.URL.Query()
	sig := v.Get("signature")
	if sig == "" {
		return nil, httpErr(http.StatusBadRequest, "signature= is required")
	}
	days, err := parseDays(v, 28)
	if err != nil {
		return nil, err
	}
	offset, err := parseOffset(v)
	if err != nil {
		return nil, err
	}
	f := w.signatureFilter(v, sig, days)
	d := &SignatureData{Signature: sig, Period: days, Since: f.Since, Until: f.Until, Offset: offset, Limit: pageSize}
	ctx := r.Context()
	if d.FirstSeen, d.LastSeen, d.FirstSighting, err = tri.SignatureSpan(ctx, sig); err != nil {
		return nil, err
	}
	if d.Reports, d.Count, err = tri.Find(ctx, index.FindQuery{Filter: f, Offset: offset, Limit: pageSize}); err != nil {
		return nil, err
	}
	if d.Count == 0 && d.LastSeen.IsZero() {
		return nil, httpErr(http.StatusNotFound, "no processed crash has the signature %q", sig)
	}
	for _, field := range []string{"day", "version", "os", "cpu", "crash_reason", "process_type"} {
		b, err := tri.Facet(ctx, f, field, 30)
		if err != nil {
			return nil, err
		}
		d.Histograms = append(d.Histograms, Facet{field, b})
	}
	tr, err := tri.SignatureTrend(ctx, f, trendVersions)
	if err != nil {
		return nil, err
	}
	d.Trend = &tr
	d.Stack = w.commonStack(ctx, tri, f)
	if err := w.signatureTriage(ctx, d, f.Product, p); err != nil {
		return nil, err
	}
	// Correlations over at most the last 7 days (pageCorrelationDays): a
	// month's cost twice a week's on the first, uncached view; the API
	// takes up to 28.
	d.Correlations, d.CorrelationsError = w.signatureCorrelations(r, p, sig, min(days, pageCorrelationDays))
	return d, nil
}

// commonStack reads the newest crashes of f's signature and returns their
// most common crashing-thread stack.
func (w *Web) commonStack(ctx context.Context, tri index.Triage, f index.Filter) *Stack {
	rows, _, err := tri.Find(ctx, index.FindQuery{Filter: f, Limit: stackSample})
	if err != nil || w.store == nil {
		return nil
	}
	// stacks are the sampled stacks by their frames' names: how many
	// crashes have each, and the first one's files and lines, linked
	// only for the stack shown.
	type seen struct {
		n                int
		frames           []string
		sources          []Frame
		product, version string
	}
	stacks := map[string]*seen{}
	sampled := 0
	for _, row := range rows {
		b, err := w.store.Get(ctx, crash.ProcessedCrashKey(crash.ID(row.ID)))
		if err != nil {
			continue
		}
		var pc struct {
			JSONDump *dumpJSON `json:"json_dump"`
		}
		if json.Unmarshal(b, &pc) != nil || pc.JSONDump == nil || pc.JSONDump.CrashingThread == nil {
			continue
		}
		sampled++
		var fs []string
		var src []Frame
		for _, fr := range pc.JSONDump.CrashingThread.Frames {
			if len(fs) == stackDepth {
				break
			}
			fs = append(fs, frameName(fr))
			s := Frame{N: fr.Frame, File: str(fr.File)}
			if fr.Line != nil {
				s.Line = *fr.Line
			}
			src = append(src, s)
		}
		k := strings.Join(fs, "\n")
		st := stacks[k]
		if st == nil {
			st = &seen{sources: src, product: row.Product, version: row.Version} // the first sampled crash's
			stacks[k] = st
		}
		st.n++
		st.frames = fs
	}
	if sampled == 0 {
		return nil
	}
	best := ""
	for k, st := range stacks {
		if b := stacks[best]; b == nil || st.n > b.n || (st.n == b.n && k < best) {
			best = k
		}
	}
	st := stacks[best]
	for i := range st.sources {
		st.sources[i].linkTo(w.cfg.SourceLinks, st.product, st.version)
	}
	return &Stack{Frames: st.frames, Sources: st.sources, Crashes: st.n, Sampled: sampled}
}

// SearchData is the search page and GET /api/search.
type SearchData struct {
	// Query is the search's parameters as given.
	Query  map[string]string `json:"query"`
	Sort   string            `json:"sort"`
	Asc    bool              `json:"ascending"`
	Total  int               `json:"total"`
	Offset int               `json:"offset"`
	Limit  int               `json:"limit"`
	Rows   []index.Row       `json:"crashes"`
	Facets []Facet           `json:"facets"`
	// Annotations are the search's annotation parameters
	// (annotation.NAME, one per indexed annotation), for the form.
	Annotations []string `json:"-"`
	// Permalink is the page of this search; JSON its API twin.
	Permalink string `json:"permalink"`
	JSON      string `json:"json"`
	// Next and Prev are the API's next and previous pages ("" at the
	// ends); NextPage and PrevPage the page's. They page by offset over
	// the period pinned (since= and until= of the first page), so that
	// crashes arriving meanwhile do not shift the pages.
	Next     string `json:"next,omitempty"`
	Prev     string `json:"previous,omitempty"`
	NextPage string `json:"-"`
	PrevPage string `json:"-"`
}

// DefaultSearchPeriod is what a search without since= or until= looks at.
const DefaultSearchPeriod = 7 * 24 * time.Hour

// searchFields are the parameters of a search.
var searchFields = []string{"product", "version", "os", "cpu", "process_type", "signature", "crash_reason", "module", "since", "until"}

// AnnotationParam prefixes the search parameters and facets of indexed
// annotations: annotation.NAME=VALUE.
const AnnotationParam = "annotation."

// parseAnnotations reads the annotation.NAME parameters of v: each NAME
// must be an indexed annotation, given once.
func (w *Web) parseAnnotations(v url.Values) ([]index.AnnotationMatch, error) {
	var out []index.AnnotationMatch
	for k, vs := range v {
		name, ok := strings.CutPrefix(k, AnnotationParam)
		if !ok {
			continue
		}
		if !contains(w.cfg.IndexedAnnotations, name) {
			return nil, httpErr(http.StatusBadRequest, "%s: not an indexed annotation (the configuration's indexed_annotations: %s)", k, strings.Join(w.cfg.IndexedAnnotations, ", "))
		}
		if len(vs) != 1 {
			return nil, httpErr(http.StatusBadRequest, "%s: given %d times", k, len(vs))
		}
		if vs[0] == "" {
			continue
		}
		m, err := index.ParseMatch(vs[0])
		if err != nil {
			return nil, httpErr(http.StatusBadRequest, "%s=%v", k, err)
		}
		out = append(out, index.AnnotationMatch{Name: name, Value: m.Value, Op: m.Op, Not: m.Not})
	}
	slices.SortFunc(out, func(a, b index.AnnotationMatch) int { return strings.Compare(a.Name, b.Name) })
	return out, nil
}

// searchFacets are the facets the search shows beside its results.
var searchFacets = []string{"product", "version", "os", "cpu", "process_type", "signature", "crash_reason"}

func (w *Web) search(r *http.Request, p *principal) (any, error) {
	tri, err := w.triage()
	if err != nil {
		return nil, err
	}
	v := r.URL.Query()
	f, err := parseFilter(v)
	if err != nil {
		return nil, err
	}
	if f.Annotations, err = w.parseAnnotations(v); err != nil {
		return nil, err
	}
	// Personal annotation values match and count only for view_pii.
	f.Personal = p.Can(auth.ScopeViewPII)
	if f.Since.IsZero() && f.Until.IsZero() {
		// Super Search's default: the last week.
		f.Since = w.cfg.Now().UTC().Add(-DefaultSearchPeriod)
	}
	q := index.FindQuery{Filter: f, Sort: v.Get("sort"), Asc: v.Get("order") == "asc", Limit: pageSize}
	if q.Sort == "" {
		q.Sort = "received_at"
	}
	if !contains(index.SortFields, q.Sort) {
		return nil, httpErr(http.StatusBadRequest, "sort=%q: one of %s", q.Sort, strings.Join(index.SortFields, ", "))
	}
	if o := v.Get("order"); o != "" && o != "asc" && o != "desc" {
		return nil, httpErr(http.StatusBadRequest, "order=%q: asc or desc", o)
	}
	if s := v.Get("limit"); s != "" {
		if q.Limit, err = strconv.Atoi(s); err != nil || q.Limit < 1 || q.Limit > index.MaxLimit {
			return nil, httpErr(http.StatusBadRequest, "limit=%q: a number from 1 to %d", s, index.MaxLimit)
		}
	}
	if q.Offset, err = parseOffset(v); err != nil {
		return nil, err
	}
	d := &SearchData{Query: map[string]string{}, Sort: q.Sort, Asc: q.Asc, Offset: q.Offset, Limit: q.Limit}
	keep := url.Values{}
	var params []string
	for _, name := range w.cfg.IndexedAnnotations {
		d.Annotations = append(d.Annotations, AnnotationParam+name)
	}
	params = append(append(params, searchFields...), d.Annotations...)
	for _, k := range append(params, "sort", "order", "limit", "offset") {
		if s := v.Get(k); s != "" {
			keep.Set(k, s)
			if contains(params, k) {
				d.Query[k] = s
			}
		}
	}
	d.Permalink, d.JSON = "/search?"+keep.Encode(), "/api/search?"+keep.Encode()
	ctx := r.Context()
	if d.Rows, d.Total, err = tri.Find(ctx, q); err != nil {
		return nil, err
	}
	// The other pages: the same search over the same period, pinned.
	pinned := url.Values{}
	for k, vs := range keep {
		pinned[k] = vs
	}
	pinned.Set("since", f.Since.UTC().Format(time.RFC3339Nano))
	if f.Until.IsZero() {
		pinned.Set("until", w.cfg.Now().UTC().Add(time.Microsecond).Format(time.RFC3339Nano))
	}
	page := func(offset int) (string, string) {
		pinned.Set("offset", strconv.Itoa(offset))
		return "/search?" + pinned.Encode(), "/api/search?" + pinned.Encode()
	}
	if q.Offset+q.Limit < d.Total {
		d.NextPage, d.Next = page(q.Offset + q.Limit)
	}
	if q.Offset > 0 {
		d.PrevPage, d.Prev = page(max(q.Offset-q.Limit, 0))
	}
	for _, field := range searchFacets {
		b, err := tri.Facet(ctx, f, field, 10)
		if err != nil {
			return nil, err
		}
		d.Facets = append(d.Facets, Facet{field, b})
	}
	for _, name := range w.cfg.IndexedAnnotations {
		b, err := tri.FacetAnnotation(ctx, f, name, 10)
		if err != nil {
			return nil, err
		}
		d.Facets = append(d.Facets, Facet{AnnotationParam + name, b})
	}
	return d, nil
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// SymbolsData is the symbols page and GET /api/symbols.
type SymbolsData struct {
	Missing []MissingModule `json:"missing_symbols"`
	Uploads []Upload        `json:"recent_uploads"`
}

func (w *Web) symbols(r *http.Request, _ *principal) (any, error) {
	d := &SymbolsData{Missing: []MissingModule{}, Uploads: []Upload{}}
	var err error
	if w.cfg.MissingSymbols != nil {
		if d.Missing, err = w.cfg.MissingSymbols(r.Context(), 100); err != nil {
			return nil, err
		}
	}
	if w.cfg.RecentUploads != nil {
		if d.Uploads, err = w.cfg.RecentUploads(r.Context(), 50); err != nil {
			return nil, err
		}
	}
	return d, nil
}

// crashID reads the {id} of a path.
func crashID(r *http.Request) (crash.ID, error) {
	id, err := crash.Parse(r.PathValue("id"))
	if err != nil {
		return "", httpErr(http.StatusBadRequest, "%v", err)
	}
	return id, nil
}

// getBlob reads a blob, mapping its absence to 404.
func (w *Web) getBlob(ctx context.Context, key, what string) ([]byte, error) {
	if w.store == nil {
		return nil, httpErr(http.StatusServiceUnavailable, "no blob store in this process")
	}
	b, err := w.store.Get(ctx, key)
	if errors.Is(err, blob.ErrNotExist) {
		return nil, httpErr(http.StatusNotFound, "%s: not found", what)
	}
	return b, err
}
