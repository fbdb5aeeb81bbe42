package crash

import (
	"bytes"
	"encoding/json"
	"fmt"
	"maps"
	"time"
)

// RawCrashVersion is the version of the raw crash format Antenna writes
// ("version": 2).
const RawCrashVersion = 2

// RawCrash is the raw crash as stored at RawCrashKey: one flat JSON object
// holding the annotations the client sent (names as sent; values mostly
// strings, any JSON value when they came in a JSON "extra" part) and the
// collector's own fields, as Antenna writes it:
//
//	{"ProductName": "...", "Version": "...", ...,
//	 "metadata": {...}, "submitted_timestamp": "2026-11-26T10:00:00.123456+00:00",
//	 "uuid": "<id>", "version": 2}
//
// An annotation named like one of the collector's fields is overwritten by
// it, as in Antenna.
type RawCrash struct {
	// Annotations are the crash annotations (Antenna: the raw crash without
	// the collector's fields). Values are strings for form fields; JSON
	// values (string, json.Number, bool, nil, []any, map[string]any) from a
	// JSON "extra" part or Sentry's "sentry" field.
	Annotations map[string]any
	// Metadata is what the collector knows about the submission.
	Metadata Metadata
	// SubmittedTimestamp is when the collector received the crash
	// (submitted_timestamp, ISO 8601 with a UTC offset, as Python's isoformat).
	SubmittedTimestamp time.Time
	// UUID is the crash id (uuid).
	UUID ID
	// Version is the raw crash format version (RawCrashVersion).
	Version int
}

// Metadata is the raw crash's "metadata" object: Antenna's fields and
// crashd's additions (omitted when empty).
type Metadata struct {
	// Payload is how the annotations came: "multipart" (form fields) or
	// "json" (a JSON extra part); crashd adds "sentry" for Sentry's endpoint.
	Payload string `json:"payload"`
	// PayloadCompressed is "1" if the body was gzip-compressed, else "0".
	PayloadCompressed string `json:"payload_compressed"`
	// PayloadSize is the size of the body as received, in bytes (the
	// Content-Length, or the bytes read of a chunked body).
	PayloadSize int64 `json:"payload_size"`
	// CollectorNotes are the collector's remarks on the submission (parts
	// of unknown type, annotations that were not text, removed fields, ...).
	CollectorNotes []string `json:"collector_notes"`
	// DumpChecksums maps each dump name to the SHA-256 of its bytes, hexadecimal.
	DumpChecksums map[string]string `json:"dump_checksums"`
	// UserAgent is the client's User-Agent header ("None" without one, as Antenna).
	UserAgent string `json:"user_agent"`
	// ThrottleRule is the name of the throttle rule that decided the crash's fate.
	ThrottleRule string `json:"throttle_rule"`

	// Restricted lists the annotations kept only for readers with the
	// permission to see personal data (crashd): readers without it must not
	// be shown them.
	Restricted []string `json:"restricted_annotations,omitempty"`
	// Endpoint is the collector endpoint that received the crash (crashd):
	// "submit" (Antenna's) or "sentry".
	Endpoint string `json:"endpoint,omitempty"`
	// SentryProject is the Sentry project id of a crash sent to Sentry's
	// minidump endpoint (crashd).
	SentryProject string `json:"sentry_project,omitempty"`
	// SentryEventID is the event id answered to a Sentry client, hyphenated (crashd).
	SentryEventID string `json:"sentry_event_id,omitempty"`
}

// Fields of the raw crash object that are the collector's, not annotations.
const (
	fieldMetadata  = "metadata"
	fieldSubmitted = "submitted_timestamp"
	fieldUUID      = "uuid"
	fieldVersion   = "version"
)

// TimestampFormat is the layout of submitted_timestamp: Python's
// datetime.isoformat() of an aware UTC time with microseconds.
const TimestampFormat = "2006-01-02T15:04:05.000000-07:00"

// MarshalJSON writes the raw crash as one JSON object with keys sorted at
// every level (as Antenna's json_ordered_dumps), the collector's fields over
// annotations of the same names. Strings are not HTML-escaped (call it
// directly: json.Marshal of a RawCrash escapes <, > and & again).
func (r *RawCrash) MarshalJSON() ([]byte, error) {
	m := make(map[string]any, len(r.Annotations)+4)
	maps.Copy(m, r.Annotations)
	md := r.Metadata
	if md.CollectorNotes == nil {
		md.CollectorNotes = []string{}
	}
	if md.DumpChecksums == nil {
		md.DumpChecksums = map[string]string{}
	}
	// Keys sorted at every level, as Python's json.dumps(sort_keys=True).
	var mbuf bytes.Buffer
	menc := json.NewEncoder(&mbuf)
	menc.SetEscapeHTML(false)
	err := menc.Encode(md)
	mb := mbuf.Bytes()
	if err != nil {
		return nil, fmt.Errorf("raw crash %s: metadata: %w", r.UUID, err)
	}
	var sorted map[string]json.RawMessage
	if err := json.Unmarshal(mb, &sorted); err != nil {
		return nil, fmt.Errorf("raw crash %s: metadata: %w", r.UUID, err)
	}
	m[fieldMetadata] = sorted
	m[fieldSubmitted] = r.SubmittedTimestamp.UTC().Format(TimestampFormat)
	m[fieldUUID] = string(r.UUID)
	m[fieldVersion] = r.Version
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(m); err != nil {
		return nil, fmt.Errorf("raw crash %s: %w", r.UUID, err)
	}
	return bytes.TrimSuffix(buf.Bytes(), []byte("\n")), nil
}

// UnmarshalJSON reads a raw crash written by MarshalJSON or by Antenna.
// Unknown collector fields stay in Annotations.
func (r *RawCrash) UnmarshalJSON(data []byte) error {
	var m map[string]json.RawMessage
	if err := json.Unmarshal(data, &m); err != nil {
		return fmt.Errorf("raw crash: %w", err)
	}
	*r = RawCrash{Annotations: make(map[string]any, len(m))}
	for k, v := range m {
		var err error
		switch k {
		case fieldMetadata:
			err = json.Unmarshal(v, &r.Metadata)
		case fieldSubmitted:
			var s string
			if err = json.Unmarshal(v, &s); err == nil {
				r.SubmittedTimestamp, err = parseTimestamp(s)
			}
		case fieldUUID:
			var s string
			err = json.Unmarshal(v, &s)
			r.UUID = ID(s)
		case fieldVersion:
			err = json.Unmarshal(v, &r.Version)
		default:
			var a any
			dec := json.NewDecoder(bytes.NewReader(v))
			dec.UseNumber() // numbers kept as written (json.Number)
			err = dec.Decode(&a)
			r.Annotations[k] = a
		}
		if err != nil {
			return fmt.Errorf("raw crash: field %q: %w", k, err)
		}
	}
	return nil
}

// parseTimestamp reads an ISO 8601 time as Python's isoformat writes it
// (with or without fractional seconds).
func parseTimestamp(s string) (time.Time, error) {
	for _, layout := range []string{time.RFC3339Nano, "2006-01-02T15:04:05.999999999", "2006-01-02T15:04:05"} {
		if t, err := time.Parse(layout, s); err == nil {
			return t, nil
		}
	}
	return time.Time{}, fmt.Errorf("timestamp %q: not ISO 8601", s)
}

// Annotation returns the annotation name as a string: the string itself,
// or the JSON text of any other value; "" when absent.
func (r *RawCrash) Annotation(name string) string {
	v, ok := r.Annotations[name]
	if !ok {
		return ""
	}
	return AnnotationString(v)
}

// AnnotationString returns an annotation value as a string: the string
// itself, or the JSON text of any other value (Antenna's throttler compares
// Python's str() of values; JSON text is crashd's rendering of non-strings).
func AnnotationString(v any) string {
	switch v := v.(type) {
	case string:
		return v
	case nil:
		return "null"
	}
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Sprint(v)
	}
	return string(b)
}

// IsRestricted reports whether annotation name is one kept only for readers
// with the permission to see personal data: those the collector marked
// (Metadata.Restricted), and the user's comments (CommentsAnnotation)
// always, whatever the collector's configuration.
func (r *RawCrash) IsRestricted(name string) bool {
	if name == CommentsAnnotation {
		return true
	}
	for _, n := range r.Metadata.Restricted {
		if n == name {
			return true
		}
	}
	return false
}

// Public returns a copy of the raw crash without the restricted annotations,
// for readers without the permission to see personal data.
func (r *RawCrash) Public() *RawCrash {
	c := *r
	c.Annotations = make(map[string]any, len(r.Annotations))
	for k, v := range r.Annotations {
		if !r.IsRestricted(k) {
			c.Annotations[k] = v
		}
	}
	return &c
}

// DumpNames is the JSON list stored at DumpNamesKey: the names of the
// crash's dumps (as sent, sanitized: "upload_file_minidump", ...), sorted.
type DumpNames []string

// ProductName returns the crash's product: the ProductName annotation (as
// Antenna's clients and the URL parameter "product" set it), else
// Electron's _productName (its prod is "Electron"), else Crashpad's and
// Chromium's prod; "" if none.
func (r *RawCrash) ProductName() string {
	return r.first("ProductName", "_productName", "prod")
}

// ProductVersion returns the crash's product version: the Version
// annotation, else Electron's _version (its ver is Electron's), else
// Crashpad's and Chromium's ver.
func (r *RawCrash) ProductVersion() string {
	return r.first("Version", "_version", "ver")
}

func (r *RawCrash) first(names ...string) string {
	for _, n := range names {
		if s := r.Annotation(n); s != "" {
			return s
		}
	}
	return ""
}
