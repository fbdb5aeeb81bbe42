package collector

import (
	"bytes"
	"context"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/gobreakpad/gobreakpad/crashd/budget"
	"github.com/gobreakpad/gobreakpad/crashd/crash"
)

// Antenna's reasons for refusing a malformed upload ("Discarded=malformed_<reason>").
const (
	ReasonNoContentType           = "no_content_type"
	ReasonWrongContentType        = "wrong_content_type"
	ReasonNoBoundary              = "no_boundary"
	ReasonNoContentLength         = "no_content_length"
	ReasonBadGzip                 = "bad_gzip"
	ReasonInvalidPayloadStructure = "invalid_payload_structure"
	ReasonInvalidJSON             = "invalid_json"
	ReasonInvalidJSONValue        = "invalid_json_value"
	ReasonNoAnnotations           = "no_annotations"
	ReasonInvalidDumpName         = "invalid_dump_name"
	ReasonInvalidUUID             = "invalid_uuid"
)

// malformed is an upload refused as malformed; the string is Antenna's reason.
type malformed string

func (m malformed) Error() string { return "malformed crash report: " + string(m) }

// errTooLarge is an upload over a size limit.
var errTooLarge = errors.New("upload too large")

// errTimeout is a body whose client stopped sending.
var errTimeout = errors.New("request body: client stopped sending")

// maxTextPart is the largest text part kept as an annotation (Antenna sets
// Falcon's max_body_part_buffer_size to 20 MiB).
const maxTextPart = 20 << 20

// urlAnnotations maps the URL parameters merged into the annotations
// (Crashpad's and Breakpad's mac sender's product, version and guid) to the
// annotations they become when the form has none of that name: ProductName
// and Version as Antenna's clients name them ("version" itself is the raw
// crash's format version), guid as it is.
var urlAnnotations = [][2]string{{"product", "ProductName"}, {"version", "Version"}, {"guid", "guid"}}

// report is an upload's content, as Antenna's CrashReport.
type report struct {
	annotations map[string]any
	dumps       map[string][]byte // by sanitized dump name
	notes       []string
	payload     string // "multipart" or "json"
	compressed  bool
	size        int64 // body size as received
	// annotationBytes are the bytes of the annotation parts.
	annotationBytes int64
}

// checkContentType is Antenna's test of the request's Content-Type.
func checkContentType(ct string) error {
	if ct == "" {
		return malformed(ReasonNoContentType)
	}
	kind, rest, two := strings.Cut(ct, ";")
	kind, rest = strings.TrimSpace(kind), strings.TrimSpace(rest)
	if kind != "multipart/form-data" && kind != "multipart/mixed" {
		return malformed(ReasonWrongContentType)
	}
	if !two || !strings.HasPrefix(rest, "boundary=") {
		return malformed(ReasonNoBoundary)
	}
	return nil
}

// annotationBudget bounds the annotations of one crash: their parts'
// bytes together (the size of the request decides nothing) and, through
// grab, the memory their decoding takes from the collector's budget.
type annotationBudget struct {
	maxSize, size int64
	maxCount      int
	grab          func(int64) error // nil: no budget
}

// take accounts for a text or JSON part of n bytes before it is decoded.
func (ab *annotationBudget) take(n int) error {
	ab.size += int64(n)
	if ab.size > ab.maxSize {
		return fmt.Errorf("annotations: over %d bytes: %w", ab.maxSize, errTooLarge)
	}
	if ab.grab != nil {
		// The part's text and the values decoded from it.
		return ab.grab(2 * int64(n))
	}
	return nil
}

// nestedPerAnnotation is how many values, counted through JSON objects and
// arrays, the annotations may hold per allowed annotation (a Sentry event
// sent as JSON holds hundreds).
const nestedPerAnnotation = 25

// count checks the number of annotations, and of the values nested in them.
func (ab *annotationBudget) count(a map[string]any) error {
	if len(a) > ab.maxCount {
		return fmt.Errorf("annotations: %d, over %d: %w", len(a), ab.maxCount, errTooLarge)
	}
	limit := nestedPerAnnotation * ab.maxCount
	n := 0
	var walk func(v any) bool
	walk = func(v any) bool {
		n++
		if n > limit {
			return false
		}
		switch v := v.(type) {
		case map[string]any:
			for _, x := range v {
				if !walk(x) {
					return false
				}
			}
		case []any:
			for _, x := range v {
				if !walk(x) {
					return false
				}
			}
		}
		return true
	}
	if !walk(a) {
		return fmt.Errorf("annotations: over %d values nested in them: %w", limit, errTooLarge)
	}
	return nil
}

// annotationBudget returns the bounds of one upload's annotations, its
// memory taken from h (nil: not counted).
func (c *Collector) annotationBudget(h *budget.Hold) *annotationBudget {
	ab := &annotationBudget{maxSize: c.cfg.MaxAnnotationsSize, maxCount: c.cfg.MaxAnnotations}
	if h != nil {
		ab.grab = h.Grab
	}
	return ab
}

// parsePayload reads a (decompressed) multipart body into a report as
// Antenna's extract_payload does; ct is the request's Content-Type, ab
// bounds the annotations. The report's compressed and size are left to
// the caller.
func parsePayload(ct string, body []byte, ab *annotationBudget) (*report, error) {
	if err := checkContentType(ct); err != nil {
		return nil, err
	}
	_, params := parseHeader(ct)
	boundary := strings.TrimRight(params["boundary"], " \t\r\n\v\f")
	if boundary == "" {
		return nil, malformed(ReasonNoBoundary)
	}
	rep := &report{annotations: map[string]any{}, dumps: map[string][]byte{}}
	hasJSON, hasKV := false, false
	fr := newFormReader(body, boundary)
	for {
		p, err := fr.next()
		if err != nil {
			return nil, malformed(ReasonInvalidPayloadStructure)
		}
		if p == nil {
			break
		}
		if !p.hasName || p.name == "" {
			continue // a part without a name is junk
		}
		switch {
		case strings.HasPrefix(p.contentType, "application/json"):
			hasJSON = true
			if err := ab.take(len(p.data)); err != nil {
				return nil, err
			}
			m, err := decodeAnnotations(p.data)
			if err != nil {
				return nil, err
			}
			rep.annotations = m
		case strings.HasPrefix(p.contentType, "text/plain") && p.filename == "":
			hasKV = true
			if err := ab.take(len(p.data)); err != nil {
				return nil, err
			}
			v, err := partText(p)
			if err != nil {
				rep.notes = append(rep.notes, "extract payload text part exception: "+err.Error())
				continue
			}
			rep.annotations[p.name] = v
		default:
			if p.contentType != "application/octet-stream" {
				rep.notes = append(rep.notes, fmt.Sprintf("unknown content type: %s %s", p.name, p.contentType))
			}
			name, ok := crash.DumpName(p.name)
			if !ok {
				return nil, malformed(ReasonInvalidDumpName)
			}
			rep.dumps[name] = p.data
		}
	}
	if len(rep.annotations) == 0 {
		return nil, malformed(ReasonNoAnnotations)
	}
	if err := ab.count(rep.annotations); err != nil {
		return nil, err
	}
	// Two dumps stored under the same key (upload_file_minidump and "dump",
	// or a name of no letters) would overwrite each other: refused.
	files := map[string]bool{}
	for name := range rep.dumps {
		f := crash.DumpFileName(name)
		if files[f] {
			return nil, malformed(ReasonInvalidDumpName)
		}
		files[f] = true
	}
	if hasJSON && hasKV {
		rep.notes = append(rep.notes, "includes annotations in both json-encoded extra and formdata parts")
	}
	rep.annotationBytes = ab.size
	rep.payload = "multipart"
	if hasJSON {
		rep.payload = "json"
	}
	return rep, nil
}

// partText returns a text part's value as Falcon's get_text: nil when the
// media type is not exactly text/plain, else the content decoded with its
// charset (default UTF-8).
func partText(p *formPart) (any, error) {
	kind, params := parseHeader(p.contentType)
	if kind != "text/plain" {
		return nil, nil
	}
	if len(p.data) > maxTextPart {
		return nil, errors.New("body part is too large")
	}
	charset, ok := params["charset"]
	if !ok {
		charset = "utf-8"
	}
	s, err := decodeCharset(p.data, charset)
	if err != nil {
		return nil, fmt.Errorf("invalid text or charset: %s", charset)
	}
	return s, nil
}

// decodeAnnotations decodes a JSON extra part: UTF-8 (a byte order mark
// allowed), one object; numbers kept as written.
func decodeAnnotations(b []byte) (map[string]any, error) {
	b = bytes.TrimPrefix(b, []byte("\xef\xbb\xbf"))
	if !isUTF8(b) {
		return nil, malformed(ReasonInvalidJSON)
	}
	// One pass: the value decoded, then nothing but white space after it
	// (what json.Valid would have checked in a pass of its own).
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, malformed(ReasonInvalidJSON)
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, malformed(ReasonInvalidJSON)
	}
	m, ok := v.(map[string]any)
	if !ok {
		return nil, malformed(ReasonInvalidJSONValue)
	}
	return m, nil
}

func isUTF8(b []byte) bool {
	_, err := decodeCharset(b, "utf-8")
	return err == nil
}

// Submit handles Antenna's POST /submit.
func (c *Collector) Submit(w http.ResponseWriter, r *http.Request) {
	const endpoint = "submit"
	start := c.now()
	defer func() { c.m.seconds.WithLabelValues(endpoint).Observe(time.Since(start).Seconds()) }()
	c.m.received.WithLabelValues(endpoint).Inc()

	fail := func(err error) {
		status, reason := c.refusal(err)
		if rl, ok := errors.AsType[*errRateLimited](err); ok {
			w.Header().Set("Retry-After", budget.RetryAfter(rl.retryAfter))
		} else if errors.Is(err, errBusy) {
			w.Header().Set("Retry-After", budget.RetryAfter(time.Duration(c.cfg.BudgetWait)))
		}
		if status == http.StatusServiceUnavailable && reason == "store_error" {
			c.storeFailed(w, endpoint, "", err)
			return
		}
		c.refuse(w, endpoint, status, reason)
		c.log.Info("upload refused", "endpoint", endpoint, "error", err, "remote", r.RemoteAddr)
	}
	h, err := c.admit(r)
	if err != nil {
		fail(err)
		return
	}
	defer h.Done()
	rep, body, err := c.extract(w, r, h, start)
	defer body.close() // after the crash is stored: its dumps are slices of the spool file's mapping
	if err == nil {
		err = c.checkRate(r, productOf(rep.annotations), true)
	}
	if err != nil {
		fail(err)
		return
	}
	q := r.URL.Query()
	for _, m := range urlAnnotations {
		if _, ok := rep.annotations[m[1]]; !ok && q.Has(m[0]) {
			rep.annotations[m[1]] = q.Get(m[0])
		}
	}
	raw := c.rawCrash(start, rep, r.UserAgent())
	raw.Metadata.Endpoint = endpoint

	result, rule := c.throttle.throttle(raw.Annotations)

	// Only a submitter with the configured token may choose the crash id.
	var id crash.ID
	if v, ok := raw.Annotations["uuid"]; ok {
		if !c.fromSubmitter(r) {
			c.refuse(w, endpoint, http.StatusUnauthorized, "unauthorized_uuid")
			return
		}
		s, _ := v.(string)
		if !crash.Valid(s) {
			c.refuse(w, endpoint, http.StatusBadRequest, "malformed_"+ReasonInvalidUUID)
			return
		}
		id = crash.ID(s)
		delete(raw.Annotations, "uuid")
	} else {
		id = crash.New(start, throttleDigit(result))
	}
	raw.UUID = id
	raw.Metadata.ThrottleRule = rule
	c.m.throttled.WithLabelValues(rule, result).Inc()
	c.log.Info("throttled", "crash_id", id, "rule", rule, "result", result)

	switch result {
	case ResultReject:
		c.refuse(w, endpoint, http.StatusOK, "rule_"+rule)
		return
	case ResultFakeAccept:
		c.m.rejected.WithLabelValues(endpoint, "fakeaccept_"+rule).Inc()
	default:
		c.cleanup(raw)
		rev, err := c.save(r.Context(), raw, rep.dumps)
		if err != nil {
			c.storeFailed(w, endpoint, id, err)
			return
		}
		c.m.accepted.WithLabelValues(endpoint).Inc()
		compressed := "none"
		if rep.compressed {
			compressed = "gzip"
		}
		c.m.size.WithLabelValues(compressed).Observe(float64(rep.size))
		c.queue(r.Context(), id, rev)
	}
	w.Header().Set("Content-Type", "text/plain")
	if c.cfg.Products[productOf(raw.Annotations)].Response == ResponseHex16 {
		io.WriteString(w, hex16(id))
		return
	}
	io.WriteString(w, "CrashID="+crash.IDPrefix+string(id)+"\n")
}

// extract checks the request and reads its payload (Antenna's
// extract_payload) within h's budget. The body's spool file must be closed
// once the report's dumps are no longer needed.
func (c *Collector) extract(w http.ResponseWriter, r *http.Request, h *budget.Hold, start time.Time) (*report, *spooled, error) {
	ct := r.Header.Get("Content-Type")
	if err := checkContentType(ct); err != nil {
		return nil, nil, err
	}
	if r.ContentLength == 0 {
		return nil, nil, malformed(ReasonNoContentLength)
	}
	gz := r.Header.Get("Content-Encoding") == "gzip"
	if gz {
		if err := h.Grab(gzipCost); err != nil {
			return nil, nil, err
		}
	}
	body, size, err := c.readBody(w, r, gz, start, h)
	if err != nil {
		return nil, nil, err
	}
	rep, err := parsePayload(ct, body.data, c.annotationBudget(h))
	if err == nil {
		err = c.checkCrashSize(rep)
	}
	if err != nil {
		body.close()
		return nil, nil, err
	}
	rep.compressed, rep.size = gz, size
	return rep, body, nil
}

// checkCrashSize bounds what a crash stores: its dumps and annotation
// parts together.
func (c *Collector) checkCrashSize(rep *report) error {
	var n int64
	for _, d := range rep.dumps {
		n += int64(len(d))
	}
	n += rep.annotationBytes
	if n > c.cfg.MaxCrashSize {
		return fmt.Errorf("crash of %d bytes, over %d: %w", n, c.cfg.MaxCrashSize, errTooLarge)
	}
	return nil
}

// refusal is the status and Antenna reason of an upload refused with err.
func (c *Collector) refusal(err error) (int, string) {
	var m malformed
	switch {
	case errors.As(err, &m):
		return http.StatusBadRequest, "malformed_" + string(m)
	case errors.Is(err, errTooLarge):
		return http.StatusRequestEntityTooLarge, "too_large"
	case errors.Is(err, errTimeout):
		return http.StatusRequestTimeout, "timeout"
	case errors.Is(err, errBusy):
		return http.StatusServiceUnavailable, "busy"
	case errors.Is(err, errSpool):
		return http.StatusServiceUnavailable, "store_error"
	}
	if _, ok := errors.AsType[*errRateLimited](err); ok {
		return http.StatusTooManyRequests, "rate_limited"
	}
	return http.StatusBadRequest, "malformed_" + ReasonInvalidPayloadStructure
}

// storeFailed answers an upload whose crash could not be stored (the blob
// store's Put, or the spool file the body is read into): the one place
// where a storage error becomes a response, never a 200. The client keeps
// the crash and sends it again.
func (c *Collector) storeFailed(w http.ResponseWriter, endpoint string, id crash.ID, err error) {
	c.log.Error("crash not stored", "endpoint", endpoint, "crash_id", id, "error", err)
	c.m.rejected.WithLabelValues(endpoint, "store_error").Inc()
	// Antenna answers an empty 500; crashd says why and when to come
	// back (the clients retry either way).
	w.Header().Set("Retry-After", "60")
	if endpoint == "sentry" {
		sentryError(w, http.StatusServiceUnavailable, "failed to queue envelope")
		return
	}
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	w.WriteHeader(http.StatusServiceUnavailable)
	io.WriteString(w, "crashd: crash not stored (storage error); retry later\n")
}

// refuse answers a refused upload "Discarded=<reason>" and counts it.
func (c *Collector) refuse(w http.ResponseWriter, endpoint string, status int, reason string) {
	c.m.rejected.WithLabelValues(endpoint, reason).Inc()
	w.Header().Set("Content-Type", "text/plain")
	w.WriteHeader(status)
	io.WriteString(w, "Discarded="+reason)
}

// fromSubmitter reports whether the request carries the configured
// submitter token (Authorization: Bearer TOKEN).
func (c *Collector) fromSubmitter(r *http.Request) bool {
	if c.cfg.SubmitterToken == "" {
		return false
	}
	tok, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
	return ok && subtle.ConstantTimeCompare([]byte(tok), []byte(c.cfg.SubmitterToken)) == 1
}

func throttleDigit(result string) int {
	switch result {
	case ResultFakeAccept:
		return crash.ThrottleFakeAccept
	case ResultReject:
		return 2 // Antenna's REJECT; such ids are never stored nor answered
	}
	return crash.ThrottleAccept
}

// rawCrash builds the raw crash of a report received at now (Antenna's on_post).
func (c *Collector) rawCrash(now time.Time, rep *report, userAgent string) *crash.RawCrash {
	sums := make(map[string]string, len(rep.dumps))
	for name, d := range rep.dumps {
		h := sha256.Sum256(d)
		sums[name] = hex.EncodeToString(h[:])
	}
	if userAgent == "" {
		userAgent = "None"
	}
	compressed := "0"
	if rep.compressed {
		compressed = "1"
	}
	notes := rep.notes
	if notes == nil {
		notes = []string{}
	}
	return &crash.RawCrash{
		Annotations: rep.annotations,
		Metadata: crash.Metadata{
			Payload:           rep.payload,
			PayloadCompressed: compressed,
			PayloadSize:       rep.size,
			CollectorNotes:    notes,
			DumpChecksums:     sums,
			UserAgent:         userAgent,
		},
		SubmittedTimestamp: now.UTC(),
		Version:            crash.RawCrashVersion,
	}
}

// cleanup drops and marks the personal-data annotations (Antenna's
// cleanup_crash_report, with crashd's restricted list).
func (c *Collector) cleanup(raw *crash.RawCrash) {
	var drop []string
	for name := range raw.Annotations {
		if c.drop[name] {
			drop = append(drop, name)
		} else if c.restrict[name] {
			raw.Metadata.Restricted = append(raw.Metadata.Restricted, name)
		}
	}
	slices.Sort(drop)
	slices.Sort(raw.Metadata.Restricted)
	for _, name := range drop {
		delete(raw.Annotations, name)
		raw.Metadata.CollectorNotes = append(raw.Metadata.CollectorNotes, "Removed "+name+" from raw crash.")
	}
}

// save stores a crash: each dump, the dump names, then the raw crash (its
// presence means the crash is complete), every Put durable. A client that
// goes away meanwhile does not stop it. With an Unqueued record the id is
// added to it first (its revision returned), so that a crash stored and
// answered is found by RecoverUnqueued whatever happens next; a record
// without a raw crash (the process killed while storing, or a failed Put)
// is tolerated there and removed after a while.
func (c *Collector) save(ctx context.Context, raw *crash.RawCrash, dumps map[string][]byte) (uint64, error) {
	ctx = context.WithoutCancel(ctx)
	id := raw.UUID
	var rev uint64
	if c.unqueued != nil {
		var err error
		if rev, err = c.unqueued.Add(ctx, string(id)); err != nil {
			return 0, err
		}
	}
	if err := c.storeBlobs(ctx, raw, dumps); err != nil {
		if c.unqueued != nil {
			if rerr := c.unqueued.Remove(ctx, string(id), rev); rerr != nil {
				c.log.Warn("crash not stored; its unqueued record stays until the sweep removes it", "crash_id", id, "error", rerr)
			}
		}
		return 0, err
	}
	return rev, nil
}

// storeBlobs is save's blob Puts.
func (c *Collector) storeBlobs(ctx context.Context, raw *crash.RawCrash, dumps map[string][]byte) error {
	id := raw.UUID
	names := make(crash.DumpNames, 0, len(dumps))
	for name := range dumps {
		names = append(names, name)
	}
	slices.Sort(names)
	for _, name := range names {
		if err := c.store.Put(ctx, crash.DumpKey(id, name), dumps[name]); err != nil {
			return err
		}
	}
	nb, err := json.Marshal(names)
	if err != nil {
		return fmt.Errorf("dump names: %w", err)
	}
	if err := c.store.Put(ctx, crash.DumpNamesKey(id), nb); err != nil {
		return err
	}
	rb, err := raw.MarshalJSON() // not json.Marshal, which would escape <, > and &
	if err != nil {
		return err
	}
	return c.store.Put(ctx, crash.RawCrashKey(id), rb)
}

// queue publishes a stored crash, writes its queued marker and removes its
// Unqueued record (rev: save's); failures are logged and counted, the
// crash stays stored (and recorded) for Recover.
func (c *Collector) queue(ctx context.Context, id crash.ID, rev uint64) {
	ctx = context.WithoutCancel(ctx)
	if err := c.publish(ctx, id); err != nil {
		c.m.errors.WithLabelValues("publish").Inc()
		c.log.Error("crash stored but not queued; recovery will queue it", "crash_id", id, "error", err)
		return
	}
	if err := c.store.Put(ctx, crash.QueuedKey(id), []byte(c.now().UTC().Format(time.RFC3339Nano))); err != nil {
		c.m.errors.WithLabelValues("queued_marker").Inc()
		c.log.Warn("crash queued but its marker not written; recovery may queue it again", "crash_id", id, "error", err)
	}
	if c.unqueued != nil {
		if err := c.unqueued.Remove(ctx, string(id), rev); err != nil {
			c.m.errors.WithLabelValues("unqueued_remove").Inc()
			c.log.Warn("crash queued but its unqueued record not removed; the sweep will", "crash_id", id, "error", err)
		}
	}
}

// productOf returns the product name of a crash's annotations, as
// crash.RawCrash.ProductName finds it.
func productOf(a map[string]any) string {
	r := crash.RawCrash{Annotations: a}
	return r.ProductName()
}

// hex16 is the answer for Chromium's Linux uploader: the first 16
// hexadecimal digits of the crash id.
func hex16(id crash.ID) string {
	return strings.ReplaceAll(string(id), "-", "")[:16]
}
