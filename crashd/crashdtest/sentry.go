package crashdtest

import (
	"bytes"
	"context"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
)

// SentryClient is the sentry_client sentry-native names itself with
// (SENTRY_SDK_USER_AGENT in include/sentry.h: SENTRY_SDK_NAME "/"
// SENTRY_SDK_VERSION).
const SentryClient = "sentry.native/0.16.3"

// SentryDSN is what a sentry-native DSN names: the server, the project and
// its public key (http://KEY@HOST:PORT/PROJECT).
type SentryDSN struct {
	// Base is the server's URL, scheme, host and port, without a slash at
	// the end ("http://127.0.0.1:8080").
	Base string
	// Project is the project id.
	Project string
	// PublicKey is the DSN's public key (sentry_key).
	PublicKey string
}

// MinidumpURL is the URL sentry-native hands crashpad_handler
// (src/sentry_utils.c sentry__dsn_get_minidump_url):
// BASE/api/PROJECT/minidump/?sentry_client=...&sentry_key=KEY.
func (d SentryDSN) MinidumpURL() string {
	return d.Base + "/api/" + d.Project + "/minidump/?sentry_client=" + SentryClient + "&sentry_key=" + d.PublicKey
}

// EnvelopeURL is the URL of sentry-native's envelope transport
// (sentry__dsn_get_envelope_url): BASE/api/PROJECT/envelope/.
func (d SentryDSN) EnvelopeURL() string {
	return d.Base + "/api/" + d.Project + "/envelope/"
}

// AuthHeader is the X-Sentry-Auth value sentry-native sends
// (sentry__dsn_get_auth_header).
func (d SentryDSN) AuthHeader() string {
	return "Sentry sentry_key=" + d.PublicKey + ", sentry_version=7, sentry_client=" + SentryClient
}

// SentryCrashpad returns the upload sentry-native's crashpad backend makes
// crashpad_handler send (src/backends/sentry_backend_crashpad.cpp): a
// Crashpad upload to the DSN's minidump URL with no annotations of
// sentry-native's own (only Crashpad's guid, the database's client id, so
// the URL gets &guid=...), and the run's files as attachments:
// "__sentry-event" (the event, MessagePack-encoded as
// sentry__value_to_msgpack writes it), "__sentry-breadcrumb1" and
// "__sentry-breadcrumb2" (empty until breadcrumbs are added). event holds
// the event's string fields (event_id, release, ...); a missing event_id
// is set to the report's.
func SentryCrashpad(dsn SentryDSN, minidump []byte, clientID string, event map[string]string) *Crashpad {
	c := &Crashpad{
		URL:         dsn.MinidumpURL(),
		Annotations: map[string]string{"guid": clientID},
		Minidump:    minidump,
		ReportID:    NewUUID(),
	}
	ev := map[string]string{"event_id": c.ReportID, "level": "fatal", "platform": "native"}
	for k, v := range event {
		ev[k] = v
	}
	c.Attachments = map[string][]byte{
		"__sentry-event":       msgpackStringMap(ev),
		"__sentry-breadcrumb1": {},
		"__sentry-breadcrumb2": {},
	}
	return c
}

// msgpackStringMap encodes m as a MessagePack map of strings, keys sorted.
func msgpackStringMap(m map[string]string) []byte {
	var b bytes.Buffer
	keys := sortedKeys(m)
	if len(keys) < 16 {
		b.WriteByte(0x80 | byte(len(keys)))
	} else {
		b.WriteByte(0xde)
		binary.Write(&b, binary.BigEndian, uint16(len(keys)))
	}
	str := func(s string) {
		switch {
		case len(s) < 32:
			b.WriteByte(0xa0 | byte(len(s)))
		case len(s) < 256:
			b.WriteByte(0xd9)
			b.WriteByte(byte(len(s)))
		default:
			b.WriteByte(0xdb)
			binary.Write(&b, binary.BigEndian, uint32(len(s)))
		}
		b.WriteString(s)
	}
	for _, k := range keys {
		str(k)
		str(m[k])
	}
	return b.Bytes()
}

// SentryEnvelope is a crash as sentry-native's breakpad and inproc
// backends send it: an envelope (src/sentry_envelope.c) posted by the HTTP
// transport (src/transports/sentry_http_transport.c) to the DSN's envelope
// URL with X-Sentry-Auth, Content-Type application/x-sentry-envelope and
// Content-Length; the envelope's header line, then for each item "\n", the
// item's header line, "\n" and its payload: the event
// ({"type":"event","length":N}) and the minidump as an attachment of type
// "event.minidump" (src/backends/sentry_backend_breakpad.cpp), named as
// the dump file, "<uuid>.dmp".
type SentryEnvelope struct {
	DSN SentryDSN
	// EventID is the event's id, a hyphenated UUID as sentry-native
	// writes it; random when empty.
	EventID string
	// Event is the event's JSON object; event_id is set when missing.
	Event map[string]any
	// Minidump is the dump.
	Minidump []byte
	// Filename is the dump's name; "<EventID>.dmp" when empty.
	Filename string
	// Gzip compresses the body (a sentry-native built with
	// SENTRY_TRANSPORT_COMPRESSION).
	Gzip bool
}

// Body returns the envelope.
func (e *SentryEnvelope) Body() []byte {
	if e.EventID == "" {
		e.EventID = NewUUID()
	}
	if e.Filename == "" {
		e.Filename = e.EventID + ".dmp"
	}
	ev := map[string]any{"event_id": e.EventID, "level": "fatal", "platform": "native"}
	for k, v := range e.Event {
		ev[k] = v
	}
	evJSON, _ := json.Marshal(ev)
	var b bytes.Buffer
	fmt.Fprintf(&b, `{"event_id":%q,"dsn":%q}`, e.EventID, strings.Replace(e.DSN.Base, "://", "://"+e.DSN.PublicKey+"@", 1)+"/"+e.DSN.Project)
	fmt.Fprintf(&b, "\n{\"type\":\"event\",\"length\":%d}\n", len(evJSON))
	b.Write(evJSON)
	fmt.Fprintf(&b, "\n{\"type\":\"attachment\",\"length\":%d,\"attachment_type\":\"event.minidump\",\"filename\":%q}\n", len(e.Minidump), e.Filename)
	b.Write(e.Minidump)
	return b.Bytes()
}

// Request returns the envelope upload.
func (e *SentryEnvelope) Request(ctx context.Context) (*http.Request, error) {
	body := e.Body()
	if e.Gzip {
		body = Gzip(body)
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, e.DSN.EnvelopeURL(), bytes.NewReader(body))
	if err != nil {
		return nil, fmt.Errorf("sentry envelope: %w", err)
	}
	req.Header.Set("User-Agent", SentryClient)
	req.Header.Set("X-Sentry-Auth", e.DSN.AuthHeader())
	req.Header.Set("Content-Type", "application/x-sentry-envelope")
	if e.Gzip {
		req.Header.Set("Content-Encoding", "gzip")
	}
	return req, nil
}
