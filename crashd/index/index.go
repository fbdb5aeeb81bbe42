// Package index is crashd's index of crashes: one row per crash (status,
// dates, product, version, OS, CPU, signature, crash reason, attempts) for
// the API's queries, and per crash the modules its walk had no symbols for
// (MissingSymbolsIndex: what to upload, and which crashes to walk again
// when the symbols arrive). The blob store holds the crashes themselves;
// the index can be rebuilt from it.
//
// [Index] is the interface; [SQLite] implements it on an embedded SQLite
// database (modernc.org/sqlite, no cgo). Its SQL is kept portable
// (TEXT timestamps in one fixed-width UTC form that sorts as time does,
// INSERT ... ON CONFLICT, RETURNING, positional ? parameters rewritten per
// dialect) so that a PostgreSQL implementation (issue 26) shares it.
// Writes are idempotent: a crash processed twice is one row.
package index

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"
)

// Status is where a crash is in its life.
type Status string

// The statuses of a crash.
const (
	// Received: stored and queued, not processed yet (or queued again
	// after failing).
	Received Status = "received"
	// Processed: the processed crash is stored.
	Processed Status = "processed"
	// Failed: processing failed too often; the crash is a dead letter.
	Failed Status = "failed"
)

// ErrNotFound is returned for a crash the index does not hold.
var ErrNotFound = errors.New("index: crash not found")

// Crash is one row of the index.
type Crash struct {
	ID          string    `json:"crash_id"`
	Status      Status    `json:"status"`
	ReceivedAt  time.Time `json:"received_at"`
	ProcessedAt time.Time `json:"processed_at,omitzero"`
	Product     string    `json:"product"`
	Version     string    `json:"version"`
	OS          string    `json:"os,omitempty"`
	CPU         string    `json:"cpu,omitempty"`
	Signature   string    `json:"signature,omitempty"`
	CrashReason string    `json:"crash_reason,omitempty"`
	// Attempts counts the processing attempts of the last outcome (the
	// queue's deliveries), or those Attempt counted.
	Attempts int `json:"attempts"`
	// Error is the last processing error (failed crashes).
	Error string `json:"error,omitempty"`
}

// Query selects crashes; empty fields match everything. Results come
// newest first (received_at, then id, descending).
type Query struct {
	Signature string
	Product   string
	Version   string
	Status    Status
	// Since keeps crashes received at or after it.
	Since time.Time
	// Before keeps crashes received before it (the older paging; crashes
	// sharing the last page's time are skipped by it: use After).
	Before time.Time
	// After, when set, keeps the crashes after it in the result order
	// (received_at, then crash id, descending): the next page after the
	// row that ended the previous one, exactly, whatever times crashes
	// share.
	After Cursor
	// Limit bounds the rows: 0 is DefaultLimit, at most MaxLimit.
	Limit int
}

// Cursor is a place in the newest-first order of crashes: a crash's
// received_at and id. Its text form (String, ParseCursor) is the time in
// RFC 3339 with microseconds, a comma, and the id.
type Cursor struct {
	ReceivedAt time.Time
	ID         string
}

// CursorOf is the cursor of crash c (the next page starts after it).
func CursorOf(c Crash) Cursor { return Cursor{c.ReceivedAt, c.ID} }

// IsZero reports whether the cursor is unset.
func (c Cursor) IsZero() bool { return c.ReceivedAt.IsZero() && c.ID == "" }

// String is the cursor's text form.
func (c Cursor) String() string {
	return c.ReceivedAt.UTC().Format("2006-01-02T15:04:05.000000Z07:00") + "," + c.ID
}

// ParseCursor reads a cursor's text form.
func ParseCursor(s string) (Cursor, error) {
	ts, id, ok := strings.Cut(s, ",")
	if !ok || id == "" || len(id) > 100 {
		return Cursor{}, fmt.Errorf("cursor %q: a time and a crash id, comma-separated", s)
	}
	t, err := time.Parse(time.RFC3339Nano, ts)
	if err != nil {
		return Cursor{}, fmt.Errorf("cursor %q: %w", s, err)
	}
	return Cursor{t.UTC(), id}, nil
}

// The bounds of Query.Limit.
const (
	DefaultLimit = 100
	MaxLimit     = 1000
)

// Index is what crashd needs of an index.
type Index interface {
	// Received records a crash stored and queued; a crash the index
	// holds already is left as it is.
	Received(ctx context.Context, c Crash) error
	// Attempt counts one more processing attempt of the crash (recording
	// it as received if the index did not hold it) and returns the
	// attempts since it was last queued.
	Attempt(ctx context.Context, id string, receivedAt time.Time) (int, error)
	// Processed records the outcome of processing (status Processed):
	// every field is replaced.
	Processed(ctx context.Context, c Crash) error
	// RecordProcessed records everything the processor records of a
	// processed crash in one transaction: the row as Processed writes
	// it, its details as Triage's ProcessedDetails and its missing
	// modules as SetMissingSymbols (record.go), and the signature's
	// triage (signature_triage.go): the events returned are its first
	// crash in the product, or its regression.
	RecordProcessed(ctx context.Context, o Outcome) ([]SignatureEvent, error)
	// Failed records that processing failed for good after attempts
	// attempts.
	Failed(ctx context.Context, id string, receivedAt time.Time, attempts int, reason string) error
	// Requeued records that the crash was queued again: attempts start
	// over, a failed crash is received again.
	Requeued(ctx context.Context, id string) error
	// Get returns a crash, or ErrNotFound.
	Get(ctx context.Context, id string) (Crash, error)
	// Search returns the crashes q selects.
	Search(ctx context.Context, q Query) ([]Crash, error)
	// Known returns which of ids the index holds.
	Known(ctx context.Context, ids []string) (map[string]bool, error)
	// ProcessedSince returns the ids of the crashes whose processed
	// outcome was recorded (Processed) at or after since: those whose
	// processed crash may not have reached the disk when the machine
	// stopped, if it was stored without waiting for it.
	ProcessedSince(ctx context.Context, since time.Time) ([]string, error)
	// Counts returns the number of crashes per status.
	Counts(ctx context.Context) (map[Status]int64, error)
	// MissingSymbolsIndex records the modules crashes were walked
	// without symbols (missing.go).
	MissingSymbolsIndex
	// Ping checks that the index answers.
	Ping(ctx context.Context) error
	// Close releases the index.
	Close() error
}

// timeFormat is how times are stored: fixed width, UTC, so that text
// order is time order in any SQL database.
const timeFormat = "2006-01-02T15:04:05.000000Z"

func formatTime(t time.Time) string {
	if t.IsZero() {
		return ""
	}
	return t.UTC().Format(timeFormat)
}

func parseTime(s string) time.Time {
	if s == "" {
		return time.Time{}
	}
	t, err := time.Parse(timeFormat, s)
	if err != nil {
		return time.Time{}
	}
	return t
}
