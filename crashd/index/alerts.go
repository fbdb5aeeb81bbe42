package index

import (
	"context"
	"crypto/sha256"
	"database/sql"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"time"
)

// migrationAlerts (schema version 10) keeps the alerts of crashd/alert
// (issue 38): the events (alert_events, one row per event id: the
// inserter alone delivers it, whichever process that is), their deliveries
// to each webhook (alert_deliveries: the retry state, claimed by one
// process at a time with a lease column) and every attempt
// (alert_attempts: the delivery log of the admin page).
const migrationAlerts = `
CREATE TABLE alert_events (
	id         TEXT PRIMARY KEY,
	kind       TEXT NOT NULL,
	product    TEXT NOT NULL DEFAULT '',
	signature  TEXT NOT NULL DEFAULT '',
	version    TEXT NOT NULL DEFAULT '',
	crash_id   TEXT NOT NULL DEFAULT '',
	count      INTEGER NOT NULL DEFAULT 0,
	created_at TEXT NOT NULL,
	fanned_out INTEGER NOT NULL DEFAULT 0
);
CREATE INDEX alert_events_fan ON alert_events (fanned_out, created_at);
CREATE INDEX alert_events_created ON alert_events (created_at);
CREATE TABLE alert_deliveries (
	event_id    TEXT NOT NULL,
	webhook     TEXT NOT NULL,
	state       TEXT NOT NULL,
	attempts    INTEGER NOT NULL DEFAULT 0,
	next_at     TEXT NOT NULL,
	lease_owner TEXT NOT NULL DEFAULT '',
	lease_until TEXT NOT NULL DEFAULT '',
	last_code   INTEGER NOT NULL DEFAULT 0,
	last_error  TEXT NOT NULL DEFAULT '',
	created_at  TEXT NOT NULL,
	updated_at  TEXT NOT NULL,
	PRIMARY KEY (event_id, webhook)
);
CREATE INDEX alert_deliveries_due ON alert_deliveries (state, next_at);
CREATE INDEX alert_deliveries_updated ON alert_deliveries (updated_at);
CREATE TABLE alert_attempts (
	event_id   TEXT NOT NULL,
	webhook    TEXT NOT NULL,
	attempt    INTEGER NOT NULL,
	at         TEXT NOT NULL,
	owner      TEXT NOT NULL DEFAULT '',
	code       INTEGER NOT NULL DEFAULT 0,
	error      TEXT NOT NULL DEFAULT '',
	PRIMARY KEY (event_id, webhook, attempt)
);
CREATE INDEX alert_attempts_at ON alert_attempts (at);
`

// The kinds of alert events.
const (
	// AlertNewSignature: a signature seen for the first time.
	AlertNewSignature = "new_signature"
	// AlertRegression: a signature seen again after it was marked fixed.
	AlertRegression = "regression"
	// AlertSpike: a signature's count in the last hour far above its
	// usual (crashd/alert's rule).
	AlertSpike = "spike"
)

// AlertKinds are the kinds of alert events.
var AlertKinds = []string{AlertNewSignature, AlertRegression, AlertSpike}

// AlertEvent is one alert: what happened to which signature, and the
// crash that made it happen. Its ID is derived from what it is about
// (AlertID), so that every process that sees the same happening makes the
// same event, and the index keeps one.
type AlertEvent struct {
	ID        string    `json:"id"`
	Kind      string    `json:"event"`
	Product   string    `json:"product"`
	Signature string    `json:"signature"`
	Version   string    `json:"version"`
	CrashID   string    `json:"crash_id"`
	Count     int       `json:"count"`
	CreatedAt time.Time `json:"created_at"`
}

// AlertID is the id of the event of kind about the given parts (for
// new_signature the signature; for a regression product, signature and
// version; for a spike the signature and the hour): the first 16 bytes of
// the SHA-256 of kind and parts, each after its length, in hex.
func AlertID(kind string, parts ...string) string {
	h := sha256.New()
	// Each string after its length: no two lists of parts hash the
	// same text (a signature holding a separator cannot pass for two).
	for _, p := range append([]string{kind}, parts...) {
		h.Write(binary.AppendUvarint(nil, uint64(len(p))))
		h.Write([]byte(p))
	}
	return hex.EncodeToString(h.Sum(nil)[:16])
}

// NewAlertEvent returns the event of kind about a signature, made by the
// crash crashID at at, with its id: the one place where what makes two
// events the same is decided. A new signature is new once (its id: the
// signature); a regression once per product, signature, version in which
// it came back and the crash that regressed it (the index makes each
// transition to regressed once, in that crash's transaction: a signature
// resolved again and regressed again in the same version is a new event);
// a spike once per signature and UTC clock hour.
func NewAlertEvent(kind, product, signature, version, crashID string, count int, at time.Time) AlertEvent {
	var id string
	switch kind {
	case AlertNewSignature:
		id = AlertID(kind, signature)
	case AlertSpike:
		id = AlertID(kind, signature, at.UTC().Format("2006-01-02T15"))
	default:
		id = AlertID(kind, product, signature, version, crashID)
	}
	return AlertEvent{ID: id, Kind: kind, Product: product, Signature: signature, Version: version, CrashID: crashID, Count: count, CreatedAt: at}
}

// The states of a delivery.
const (
	DeliveryPending   = "pending"
	DeliveryDelivered = "delivered"
	DeliveryFailed    = "failed"
)

// AlertDelivery is an event's delivery to one webhook (by name) and its
// state.
type AlertDelivery struct {
	Event     AlertEvent `json:"event"`
	Webhook   string     `json:"webhook"`
	State     string     `json:"state"`
	Attempts  int        `json:"attempts"`
	NextAt    time.Time  `json:"next_at,omitzero"`
	LastCode  int        `json:"last_code,omitempty"`
	LastError string     `json:"last_error,omitempty"`
	UpdatedAt time.Time  `json:"updated_at"`
	// LeaseOwner is the process that claimed it (ClaimAlertDeliveries).
	LeaseOwner string `json:"-"`
}

// AlertAttempt is one try of a delivery: when, by which process, the HTTP
// status (0: none) and the error.
type AlertAttempt struct {
	EventID string    `json:"event_id"`
	Webhook string    `json:"webhook"`
	Attempt int       `json:"attempt"`
	At      time.Time `json:"at"`
	Owner   string    `json:"owner"`
	Code    int       `json:"code,omitempty"`
	Error   string    `json:"error,omitempty"`
}

// maxAlertError bounds the error text kept of an attempt.
const maxAlertError = 500

const insertAlertEvent = `
INSERT INTO alert_events (id, kind, product, signature, version, crash_id, count, created_at)
VALUES (?, ?, ?, ?, ?, ?, ?, ?)
ON CONFLICT (id) DO NOTHING`

// SetAlerts makes RecordProcessed and ProcessedDetails record the
// alert event of a new signature (AlertNewSignature) in the crash's
// transaction: set it when webhooks are configured (otherwise nothing
// would deliver the events). Set it before the first write.
func (s *SQL) SetAlerts(on bool) { s.alerts = on }

// newSignatureIn records in tx the new_signature event of c's signature
// when the index has no sighting of it yet (called before the sighting is
// written). Its id is the signature's alone: two processes indexing the
// first two crashes of a signature at once make one event.
func (s *SQL) newSignatureIn(ctx context.Context, tx *sql.Tx, c Crash) error {
	if !s.alerts || c.Signature == "" {
		return nil
	}
	var one int
	err := tx.QueryRowContext(ctx, s.rebind(`SELECT 1 FROM signatures WHERE signature = ?`), c.Signature).Scan(&one)
	if err == nil {
		return nil
	}
	if !errors.Is(err, sql.ErrNoRows) {
		return fmt.Errorf("new signature: %w", err)
	}
	_, err = s.addAlertEventIn(ctx, tx, NewAlertEvent(AlertNewSignature, c.Product, c.Signature, c.Version, c.ID, 1, s.now()))
	return err
}

// regressionAlertsIn records, with webhooks configured, the alert event
// of each regression among evs (the crash's signature events).
func (s *SQL) regressionAlertsIn(ctx context.Context, tx *sql.Tx, evs []SignatureEvent) error {
	if !s.alerts {
		return nil
	}
	for _, e := range evs {
		if e.Kind != EventRegression {
			continue
		}
		if _, err := s.addAlertEventIn(ctx, tx, NewAlertEvent(AlertRegression, e.Product, e.Signature, e.Version, e.CrashID, 1, s.now())); err != nil {
			return fmt.Errorf("regression alert: %w", err)
		}
	}
	return nil
}

// addAlertEventIn inserts e in tx unless its id is there already, and
// says whether it did: new signatures (newSignatureIn) and regressions
// (recordIn) are written in the transaction of the crash that made them,
// and crashd/alert delivers them.
func (s *SQL) addAlertEventIn(ctx context.Context, tx *sql.Tx, e AlertEvent) (bool, error) {
	if e.ID == "" || e.Kind == "" {
		return false, errors.New("alert event without id or kind")
	}
	if e.CreatedAt.IsZero() {
		e.CreatedAt = s.now()
	}
	r, err := tx.ExecContext(ctx, s.rebind(insertAlertEvent), e.ID, e.Kind, e.Product, e.Signature, e.Version, e.CrashID, e.Count, formatTime(e.CreatedAt))
	if err != nil {
		return false, fmt.Errorf("alert event %s: %w", e.ID, err)
	}
	n, err := r.RowsAffected()
	return n == 1, err
}

// AddAlertEvent records an alert event unless one with its id is there
// already, and says whether it did: only the process that inserted it
// delivers it.
func (s *SQL) AddAlertEvent(ctx context.Context, e AlertEvent) (bool, error) {
	var ok bool
	err := s.inTx(ctx, func(tx *sql.Tx) (err error) {
		ok, err = s.addAlertEventIn(ctx, tx, e)
		return err
	})
	if err != nil {
		return false, fmt.Errorf("index: %w", err)
	}
	return ok, nil
}

const alertEventCols = `id, kind, product, signature, version, crash_id, count, created_at`

// alertEventColsE are alertEventCols of the events joined as e.
const alertEventColsE = `e.id, e.kind, e.product, e.signature, e.version, e.crash_id, e.count, e.created_at`

func scanAlertEvent(sc interface{ Scan(...any) error }, e *AlertEvent, more ...any) error {
	var created string
	if err := sc.Scan(append([]any{&e.ID, &e.Kind, &e.Product, &e.Signature, &e.Version, &e.CrashID, &e.Count, &created}, more...)...); err != nil {
		return err
	}
	e.CreatedAt = parseTime(created)
	return nil
}

// AlertEventsToFanOut returns up to limit events whose deliveries are not
// made yet (FanOutAlert), oldest first.
func (s *SQL) AlertEventsToFanOut(ctx context.Context, limit int) ([]AlertEvent, error) {
	rows, err := s.db.QueryContext(ctx, s.rebind(`SELECT `+alertEventCols+` FROM alert_events WHERE fanned_out = 0 ORDER BY created_at LIMIT ?`), limit)
	if err != nil {
		return nil, fmt.Errorf("index: alert events: %w", err)
	}
	defer rows.Close()
	var out []AlertEvent
	for rows.Next() {
		var e AlertEvent
		if err := scanAlertEvent(rows, &e); err != nil {
			return nil, fmt.Errorf("index: alert events: %w", err)
		}
		out = append(out, e)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("index: alert events: %w", err)
	}
	return out, nil
}

// FanOutAlert makes the event's deliveries, one per webhook named (those
// there already are kept), due at once, and marks the event fanned out,
// in one transaction. Processes doing it at once make each delivery once.
func (s *SQL) FanOutAlert(ctx context.Context, eventID string, webhooks []string) error {
	err := s.inTx(ctx, func(tx *sql.Tx) error {
		now := formatTime(s.now())
		for _, w := range webhooks {
			if _, err := tx.ExecContext(ctx, s.rebind(`
INSERT INTO alert_deliveries (event_id, webhook, state, next_at, created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?)
ON CONFLICT (event_id, webhook) DO NOTHING`), eventID, w, DeliveryPending, now, now, now); err != nil {
				return err
			}
		}
		_, err := tx.ExecContext(ctx, s.rebind(`UPDATE alert_events SET fanned_out = 1 WHERE id = ?`), eventID)
		return err
	})
	if err != nil {
		return fmt.Errorf("index: alert fan-out %s: %w", eventID, err)
	}
	return nil
}

const alertDeliveryCols = `d.webhook, d.state, d.attempts, d.next_at, d.last_code, d.last_error, d.updated_at, d.lease_owner`

func scanAlertDelivery(sc interface{ Scan(...any) error }) (AlertDelivery, error) {
	var d AlertDelivery
	var next, updated string
	e := &d.Event
	err := scanAlertEvent(sc, e, &d.Webhook, &d.State, &d.Attempts, &next, &d.LastCode, &d.LastError, &updated, &d.LeaseOwner)
	d.NextAt, d.UpdatedAt = parseTime(next), parseTime(updated)
	return d, err
}

// ClaimAlertDeliveries claims up to limit pending deliveries that are due
// and not claimed by a live lease, for owner until now+lease, and returns
// them. A delivery is claimed by one process at a time (a conditional
// UPDATE per row); a process that dies holding one leaves it to be
// claimed again when its lease ends: at least once.
func (s *SQL) ClaimAlertDeliveries(ctx context.Context, owner string, lease time.Duration, limit int) ([]AlertDelivery, error) {
	now := s.now()
	nows := formatTime(now)
	rows, err := s.db.QueryContext(ctx, s.rebind(`
SELECT d.event_id, d.webhook FROM alert_deliveries d
WHERE d.state = ? AND d.next_at <= ? AND d.lease_until <= ?
ORDER BY d.next_at LIMIT ?`), DeliveryPending, nows, nows, limit)
	if err != nil {
		return nil, fmt.Errorf("index: alert deliveries due: %w", err)
	}
	type key struct{ event, webhook string }
	var due []key
	for rows.Next() {
		var k key
		if err := rows.Scan(&k.event, &k.webhook); err != nil {
			rows.Close()
			return nil, fmt.Errorf("index: alert deliveries due: %w", err)
		}
		due = append(due, k)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("index: alert deliveries due: %w", err)
	}
	var out []AlertDelivery
	until := formatTime(now.Add(lease))
	for _, k := range due {
		var n int64
		err := func() error {
			defer s.lockWrites()()
			r, err := s.db.ExecContext(ctx, s.rebind(`
UPDATE alert_deliveries SET lease_owner = ?, lease_until = ?
WHERE event_id = ? AND webhook = ? AND state = ? AND next_at <= ? AND lease_until <= ?`),
				owner, until, k.event, k.webhook, DeliveryPending, nows, nows)
			if err != nil {
				return err
			}
			n, err = r.RowsAffected()
			return err
		}()
		if err != nil {
			return out, fmt.Errorf("index: claim alert delivery %s: %w", k.event, err)
		}
		if n != 1 {
			continue // another process's
		}
		d, err := scanAlertDelivery(s.db.QueryRowContext(ctx, s.rebind(`
SELECT `+alertEventColsE+`, `+alertDeliveryCols+`
FROM alert_deliveries d JOIN alert_events e ON e.id = d.event_id
WHERE d.event_id = ? AND d.webhook = ?`), k.event, k.webhook))
		if err != nil {
			return out, fmt.Errorf("index: claim alert delivery %s: %w", k.event, err)
		}
		out = append(out, d)
	}
	return out, nil
}

// FinishAlertAttempt records an attempt of a delivery claimed by a.Owner
// and the delivery's new state (DeliveryDelivered, DeliveryFailed, or
// DeliveryPending again at next), releasing the claim. It returns false
// (recording nothing) when a.Owner's claim was lost: another process
// claimed the delivery after the lease ended.
func (s *SQL) FinishAlertAttempt(ctx context.Context, a AlertAttempt, state string, next time.Time) (bool, error) {
	a.Error = textValue(a.Error, maxAlertError)
	if a.At.IsZero() {
		a.At = s.now()
	}
	var done bool
	err := s.inTx(ctx, func(tx *sql.Tx) error {
		r, err := tx.ExecContext(ctx, s.rebind(`
UPDATE alert_deliveries SET state = ?, attempts = ?, next_at = ?, last_code = ?, last_error = ?, updated_at = ?, lease_owner = '', lease_until = ''
WHERE event_id = ? AND webhook = ? AND lease_owner = ? AND state = ?`),
			state, a.Attempt, formatTime(next), a.Code, a.Error, formatTime(a.At), a.EventID, a.Webhook, a.Owner, DeliveryPending)
		if err != nil {
			return err
		}
		if n, err := r.RowsAffected(); err != nil || n != 1 {
			return err // the claim was lost: nothing written
		}
		if _, err := tx.ExecContext(ctx, s.rebind(`
INSERT INTO alert_attempts (event_id, webhook, attempt, at, owner, code, error) VALUES (?, ?, ?, ?, ?, ?, ?)
ON CONFLICT (event_id, webhook, attempt) DO NOTHING`), a.EventID, a.Webhook, a.Attempt, formatTime(a.At), a.Owner, a.Code, a.Error); err != nil {
			return err
		}
		done = true
		return nil
	})
	if err != nil {
		return false, fmt.Errorf("index: alert attempt %s: %w", a.EventID, err)
	}
	return done, nil
}

// AlertDeliveries returns the limit most recently updated deliveries,
// newest first, with their events.
func (s *SQL) AlertDeliveries(ctx context.Context, limit int) ([]AlertDelivery, error) {
	if limit <= 0 || limit > MaxLimit {
		limit = DefaultLimit
	}
	rows, err := s.db.QueryContext(ctx, s.rebind(`
SELECT `+alertEventColsE+`, `+alertDeliveryCols+`
FROM alert_deliveries d JOIN alert_events e ON e.id = d.event_id
ORDER BY d.updated_at DESC, d.event_id, d.webhook LIMIT ?`), limit)
	if err != nil {
		return nil, fmt.Errorf("index: alert deliveries: %w", err)
	}
	defer rows.Close()
	var out []AlertDelivery
	for rows.Next() {
		d, err := scanAlertDelivery(rows)
		if err != nil {
			return nil, fmt.Errorf("index: alert deliveries: %w", err)
		}
		out = append(out, d)
	}
	return out, rows.Err()
}

// AlertAttempts returns the attempts of an event's deliveries, in order.
func (s *SQL) AlertAttempts(ctx context.Context, eventID string) ([]AlertAttempt, error) {
	rows, err := s.db.QueryContext(ctx, s.rebind(`
SELECT event_id, webhook, attempt, at, owner, code, error FROM alert_attempts WHERE event_id = ? ORDER BY webhook, attempt`), eventID)
	if err != nil {
		return nil, fmt.Errorf("index: alert attempts: %w", err)
	}
	defer rows.Close()
	var out []AlertAttempt
	for rows.Next() {
		var a AlertAttempt
		var at string
		if err := rows.Scan(&a.EventID, &a.Webhook, &a.Attempt, &at, &a.Owner, &a.Code, &a.Error); err != nil {
			return nil, fmt.Errorf("index: alert attempts: %w", err)
		}
		a.At = parseTime(at)
		out = append(out, a)
	}
	return out, rows.Err()
}

// SignatureRate returns what the spike rule of crashd/alert weighs for a
// signature at now: the processed crashes received in the hour before
// now, per product (most first), and those received in the seven UTC
// days before now's day (the daily rollup, crash_daily_os), counted only
// when the hour has at least minHour crashes (else 0: the rule needs no
// more).
func (s *SQL) SignatureRate(ctx context.Context, signature string, now time.Time, minHour int) (hour []Bucket, week int, err error) {
	rows, err := s.db.QueryContext(ctx, s.rebind(`
SELECT product, COUNT(*) FROM crashes WHERE status = ? AND signature = ? AND received_at >= ? AND received_at <= ?
GROUP BY product ORDER BY COUNT(*) DESC, product`), string(Processed), signature, formatTime(now.Add(-time.Hour)), formatTime(now))
	if err != nil {
		return nil, 0, fmt.Errorf("index: signature rate: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		var b Bucket
		if err := rows.Scan(&b.Value, &b.Count); err != nil {
			return nil, 0, fmt.Errorf("index: signature rate: %w", err)
		}
		hour = append(hour, b)
	}
	if err := rows.Err(); err != nil {
		return nil, 0, fmt.Errorf("index: signature rate: %w", err)
	}
	total := 0
	for _, b := range hour {
		total += b.Count
	}
	if total < minHour {
		return hour, 0, nil
	}
	day := now.UTC().Truncate(24 * time.Hour)
	if err := s.db.QueryRowContext(ctx, s.rebind(`
SELECT COALESCE(SUM(n), 0) FROM crash_daily_os WHERE day >= ? AND day < ? AND signature = ?`),
		day.AddDate(0, 0, -7).Format(dayFormat), day.Format(dayFormat), signature).Scan(&week); err != nil {
		return nil, 0, fmt.Errorf("index: signature rate: %w", err)
	}
	return hour, week, nil
}

// PruneAlerts removes the events created before cutoff whose deliveries
// are all finished, with their deliveries and attempts.
func (s *SQL) PruneAlerts(ctx context.Context, cutoff time.Time) error {
	c := formatTime(cutoff)
	old := `SELECT id FROM alert_events WHERE created_at < ? AND fanned_out = 1 AND NOT EXISTS
	(SELECT 1 FROM alert_deliveries d WHERE d.event_id = alert_events.id AND d.state = '` + DeliveryPending + `')`
	err := s.inTx(ctx, func(tx *sql.Tx) error {
		for _, q := range []string{
			`DELETE FROM alert_attempts WHERE event_id IN (` + old + `)`,
			`DELETE FROM alert_deliveries WHERE event_id IN (` + old + `)`,
			`DELETE FROM alert_events WHERE id IN (` + old + `)`,
		} {
			if _, err := tx.ExecContext(ctx, s.rebind(q), c); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("index: prune alerts: %w", err)
	}
	return nil
}
