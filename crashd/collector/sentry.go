package collector

import (
	"bytes"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/gobreakpad/gobreakpad/crashd/budget"
	"github.com/gobreakpad/gobreakpad/crashd/crash"
)

// This file serves Sentry's minidump endpoint as Sentry's Relay does
// (relay-server/src/endpoints/minidump.rs): the body is the minidump
// (Content-Type application/octet-stream or application/x-dmp) or a
// multipart form with the minidump in upload_file_minidump, perhaps
// compressed (gzip, bzip2, zstd: recognized by their magic bytes; Relay's
// fourth, xz, is refused: see decodeMinidump) or
// itself wrapped in a multipart body (old Electron on Linux); the event id
// comes from the "sentry" JSON field or the sentry[event_id] field, else it
// is new; the answer is the event id as a hyphenated UUID. Errors are
// Relay's JSON {"detail": "..."}.

// minidump magic bytes, little- and big-endian.
var (
	mdmpLE = []byte("MDMP")
	mdmpBE = []byte("PMDM")
)

// sentryRawTypes are the content types of a bare minidump body.
var sentryRawTypes = []string{"application/octet-stream", "application/x-dmp"}

// sentryError answers an error as Relay does.
func sentryError(w http.ResponseWriter, status int, detail string) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	b, _ := json.Marshal(map[string]string{"detail": detail})
	w.Write(b)
}

// sentryKey returns the public key of a request: the sentry_key URL
// parameter, else the sentry_key of an X-Sentry-Auth (or Authorization:
// Sentry ...) header.
func sentryKey(r *http.Request) string {
	if k := r.URL.Query().Get("sentry_key"); k != "" {
		return k
	}
	for _, h := range []string{r.Header.Get("X-Sentry-Auth"), r.Header.Get("Authorization")} {
		rest, ok := strings.CutPrefix(strings.TrimSpace(h), "Sentry ")
		if !ok {
			continue
		}
		for kv := range strings.SplitSeq(rest, ",") {
			k, v, _ := strings.Cut(strings.TrimSpace(kv), "=")
			if strings.TrimSpace(k) == "sentry_key" {
				return strings.TrimSpace(v)
			}
		}
	}
	return ""
}

// SentryMinidump handles Sentry's POST /api/{project}/minidump/.
func (c *Collector) SentryMinidump(w http.ResponseWriter, r *http.Request) {
	const endpoint = "sentry"
	start := c.now()
	defer func() { c.m.seconds.WithLabelValues(endpoint).Observe(time.Since(start).Seconds()) }()
	c.m.received.WithLabelValues(endpoint).Inc()
	reject := func(status int, reason, detail string) {
		c.m.rejected.WithLabelValues(endpoint, reason).Inc()
		c.log.Info("upload refused", "endpoint", endpoint, "reason", reason, "remote", r.RemoteAddr)
		sentryError(w, status, detail)
	}

	key := sentryKey(r)
	if key == "" {
		reject(http.StatusUnauthorized, "unauthorized", "missing authorization information")
		return
	}
	proj := c.sentry[r.PathValue("project")]
	if proj == nil || !slices.Contains(proj.Keys, key) {
		reject(http.StatusForbidden, "unauthorized", "invalid project or key")
		return
	}
	fail := func(err error) {
		switch status, reason := c.refusal(err); {
		case errors.Is(err, errSpool):
			c.storeFailed(w, endpoint, "", err)
		case status == http.StatusTooManyRequests:
			rl, _ := errors.AsType[*errRateLimited](err)
			w.Header().Set("Retry-After", budget.RetryAfter(rl.retryAfter))
			reject(status, reason, "event submission rejected with_reason: TooManyRequests")
		case status == http.StatusServiceUnavailable:
			w.Header().Set("Retry-After", budget.RetryAfter(time.Duration(c.cfg.BudgetWait)))
			reject(status, reason, "server busy")
		case status == http.StatusRequestEntityTooLarge:
			reject(status, reason, "request too large")
		case status == http.StatusRequestTimeout:
			reject(status, reason, "request body timed out")
		default:
			reject(http.StatusBadRequest, "malformed_body", "invalid request body")
		}
	}
	h, err := c.admit(r)
	if err != nil {
		fail(err)
		return
	}
	defer h.Done()
	gz := r.Header.Get("Content-Encoding") == "gzip"
	if gz {
		if err := h.Grab(gzipCost); err != nil {
			fail(err)
			return
		}
	}
	body, size, err := c.readBody(w, r, gz, start, h)
	if err != nil {
		fail(err)
		return
	}
	defer body.close()
	rep, md, eventID, reason, detail := c.parseSentry(r.Header.Get("Content-Type"), body.data, h)
	defer md.close()
	if reason == "" {
		if err := c.checkCrashSize(rep); err != nil {
			reason, detail = "too_large", "envelope exceeded size limits"
		}
	}
	switch reason {
	case "":
	case "store_error":
		c.storeFailed(w, endpoint, "", errSpool)
		return
	case "busy":
		fail(errBusy)
		return
	default:
		status := http.StatusBadRequest
		if reason == "too_large" {
			status = http.StatusRequestEntityTooLarge
		}
		reject(status, reason, detail)
		return
	}
	if err := c.checkRate(r, productOf(rep.annotations), true); err != nil {
		fail(err)
		return
	}
	rep.compressed, rep.size = gz, size
	if productOf(rep.annotations) == "" {
		rep.annotations["ProductName"] = proj.Product
	}
	if _, ok := rep.annotations["Version"]; !ok {
		if v := sentryVersion(rep.annotations); v != "" {
			rep.annotations["Version"] = v
		}
	}
	raw := c.rawCrash(start, rep, r.UserAgent())
	raw.Metadata.Endpoint = endpoint
	raw.Metadata.SentryProject = proj.ID
	raw.Metadata.SentryEventID = eventID

	result, rule := c.throttle.throttle(raw.Annotations)
	id := crash.New(start, throttleDigit(result))
	raw.UUID = id
	raw.Metadata.ThrottleRule = rule
	c.m.throttled.WithLabelValues(rule, result).Inc()
	c.log.Info("throttled", "crash_id", id, "event_id", eventID, "rule", rule, "result", result)
	switch result {
	case ResultReject, ResultFakeAccept:
		// Relay answers filtered events with their id too: clients retry refusals.
		c.m.rejected.WithLabelValues(endpoint, result+"_"+rule).Inc()
	default:
		c.cleanup(raw)
		rev, err := c.save(r.Context(), raw, rep.dumps)
		if err != nil {
			c.storeFailed(w, endpoint, id, err)
			return
		}
		c.m.accepted.WithLabelValues(endpoint).Inc()
		c.queue(r.Context(), id, rev)
	}
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	io.WriteString(w, eventID)
}

// parseSentry reads a Sentry minidump upload, its annotations' memory
// taken from h (nil: not counted). A compressed minidump is inflated into
// the spool file md (to be closed when the report's dumps are no longer
// needed). On failure it returns the metrics reason and Relay's detail.
func (c *Collector) parseSentry(ct string, body []byte, h *budget.Hold) (rep *report, md *spooled, eventID, reason, detail string) {
	fail := func(reason, detail string) (*report, *spooled, string, string, string) {
		md.close()
		return nil, nil, "", reason, detail
	}
	ab := c.annotationBudget(h)
	rep = &report{annotations: map[string]any{}, dumps: map[string][]byte{}, payload: "sentry"}
	kind, params := parseHeader(ct)
	kind = strings.ToLower(kind)
	var minidump []byte
	found := false
	switch {
	case slices.Contains(sentryRawTypes, kind):
		minidump, found = body, true
	case strings.HasPrefix(kind, "multipart/"):
		boundary := strings.TrimRight(params["boundary"], " \t\r\n")
		if boundary == "" {
			return fail("malformed_multipart", "invalid multipart data")
		}
		fr := newFormReader(body, boundary)
		var sentry map[string]any
		for {
			p, err := fr.next()
			if err != nil {
				return fail("malformed_multipart", "invalid multipart data")
			}
			if p == nil {
				break
			}
			if !p.hasName || p.name == "" {
				continue
			}
			switch {
			case p.name == crash.MinidumpField:
				if !found {
					minidump, found = p.data, true
				}
			case p.name == "sentry" && p.filename == "":
				if err := ab.take(len(p.data)); err != nil {
					return fail("too_large", "annotations too large")
				}
				if ev, err := decodeAnnotations(p.data); err == nil {
					sentry = mergeMaps(sentry, ev)
				} else {
					rep.notes = append(rep.notes, "sentry field: not a JSON object, kept as text")
					rep.annotations["sentry"] = validText(p.data)
				}
			case strings.HasPrefix(p.name, "sentry[") && p.filename == "":
				if err := ab.take(len(p.data)); err != nil {
					return fail("too_large", "annotations too large")
				}
				sentry = setBracket(sentry, p.name[len("sentry"):], validText(p.data))
			case p.filename == "" && strings.HasPrefix(p.contentType, "text/plain"):
				if err := ab.take(len(p.data)); err != nil {
					return fail("too_large", "annotations too large")
				}
				v, err := partText(p)
				if err != nil {
					rep.notes = append(rep.notes, "extract payload text part exception: "+err.Error())
					continue
				}
				rep.annotations[p.name] = v
			default:
				name, ok := crash.DumpName(p.name)
				if !ok || crash.DumpFileName(name) == crash.MinidumpFile {
					rep.notes = append(rep.notes, "attachment "+p.name+": reserved name, not stored")
					continue
				}
				rep.dumps[name] = p.data
			}
		}
		if sentry != nil {
			rep.annotations["sentry"] = sentry
			if s, ok := sentry["event_id"].(string); ok {
				eventID = parseEventID(s)
			}
		}
	default:
		return fail("malformed_multipart", "invalid multipart data")
	}
	if !found {
		return fail("missing_minidump", "missing minidump")
	}
	if err := ab.count(rep.annotations); err != nil {
		return fail("too_large", "too many annotations")
	}
	rep.annotationBytes = ab.size
	if inner, ok := embeddedMinidump(minidump); ok {
		minidump = inner
	}
	md, err := c.decodeMinidump(minidump, h)
	switch {
	case errors.Is(err, errTooLarge):
		return fail("too_large", "envelope exceeded size limits for type 'attachment'")
	case errors.Is(err, errBusy):
		return fail("busy", "server busy")
	case errors.Is(err, errSpool):
		return fail("store_error", "failed to queue envelope")
	case err != nil:
		return fail("invalid_compression", "invalid compression container")
	}
	if md != nil {
		minidump = md.data
	}
	if !bytes.HasPrefix(minidump, mdmpLE) && !bytes.HasPrefix(minidump, mdmpBE) {
		return fail("invalid_minidump", "invalid minidump")
	}
	rep.dumps[crash.MinidumpField] = minidump
	if eventID == "" {
		eventID = newEventID()
	}
	return rep, md, eventID, "", ""
}

// mergeMaps merges b into a (b wins), allocating a when nil.
func mergeMaps(a, b map[string]any) map[string]any {
	if a == nil {
		a = map[string]any{}
	}
	for k, v := range b {
		a[k] = v
	}
	return a
}

// setBracket sets path "[a][b]..." (a sentry[...] field) to v in m.
func setBracket(m map[string]any, path string, v string) map[string]any {
	if m == nil {
		m = map[string]any{}
	}
	var keys []string
	for strings.HasPrefix(path, "[") {
		end := strings.IndexByte(path, ']')
		if end < 0 {
			break
		}
		keys = append(keys, path[1:end])
		path = path[end+1:]
	}
	if len(keys) == 0 {
		return m
	}
	cur := m
	for _, k := range keys[:len(keys)-1] {
		next, ok := cur[k].(map[string]any)
		if !ok {
			next = map[string]any{}
			cur[k] = next
		}
		cur = next
	}
	cur[keys[len(keys)-1]] = v
	return m
}

// sentryVersion returns the version of a Sentry event's release
// ("name@version" → "version"), or "".
func sentryVersion(a map[string]any) string {
	for _, k := range []string{"_version", "ver"} {
		if v, ok := a[k].(string); ok && v != "" {
			return v
		}
	}
	ev, _ := a["sentry"].(map[string]any)
	rel, _ := ev["release"].(string)
	if i := strings.LastIndexByte(rel, '@'); i >= 0 {
		return rel[i+1:]
	}
	return rel
}

// parseEventID returns a Sentry event id (32 hexadecimal digits, hyphens
// allowed) hyphenated and lower-case, or "" if s is not one.
func parseEventID(s string) string {
	h := strings.ToLower(strings.ReplaceAll(s, "-", ""))
	if len(h) != 32 {
		return ""
	}
	if _, err := hex.DecodeString(h); err != nil {
		return ""
	}
	return h[0:8] + "-" + h[8:12] + "-" + h[12:16] + "-" + h[16:20] + "-" + h[20:32]
}

// newEventID returns a random event id, hyphenated (Relay's EventId::new, a version 4 UUID).
func newEventID() string {
	var u [16]byte
	_, _ = rand.Read(u[:])
	u[6] = u[6]&0x0f | 0x40
	u[8] = u[8]&0x3f | 0x80
	return parseEventID(hex.EncodeToString(u[:]))
}

// embeddedMinidump extracts upload_file_minidump from a field that is
// itself a multipart body (old Electron SDKs on Linux): the boundary is the
// first line after "--".
func embeddedMinidump(b []byte) ([]byte, bool) {
	if !bytes.HasPrefix(b, []byte("--")) {
		return nil, false
	}
	line := b[2:]
	if i := bytes.IndexAny(line, "\r\n"); i >= 0 {
		line = line[:i]
	}
	if len(line) == 0 {
		return nil, false
	}
	fr := newFormReader(b, string(line))
	for {
		p, err := fr.next()
		if err != nil || p == nil {
			return nil, false
		}
		if p.name == crash.MinidumpField {
			return p.data, true
		}
	}
}

// decodeMinidump undoes a compression container recognized by its magic
// bytes (gzip, bzip2, zstd) into a spool file, within MaxDecompressedSize
// and MaxInflateRatio (errTooLarge beyond), the decompressor's memory taken
// from h; nil when b is not compressed. xz is an error.
func (c *Collector) decodeMinidump(b []byte, h *budget.Hold) (*spooled, error) {
	in := &countReader{r: bytes.NewReader(b)}
	rd, cost, closeDec, err := decoderFor(in, b)
	if err != nil || rd == nil {
		return nil, err
	}
	defer closeDec()
	if h != nil {
		if err := h.Grab(cost); err != nil {
			return nil, err
		}
	}
	return c.spool(rd, c.cfg.MaxDecompressedSize, func() int64 { return in.n }, h)
}
