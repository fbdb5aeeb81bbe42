package index

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"net/url"
	"slices"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/gobreakpad/gobreakpad/crashd/version"
)

// migrationSignatureTriage (schema version 9, issue 38) adds the triage of
// each (product, signature): its state (signature_triage, one row per
// pair a processed crash had, made when the first is recorded), its bug
// links (signature_bugs) and every change of either (signature_history:
// who, when, from what to what). The existing pairs are filled in as
// untriaged. Portable SQL only.
const migrationSignatureTriage = `
CREATE TABLE signature_triage (
	product    TEXT NOT NULL,
	signature  TEXT NOT NULL,
	state      TEXT NOT NULL DEFAULT 'untriaged',
	fixed_in   TEXT NOT NULL DEFAULT '',
	updated_at TEXT NOT NULL DEFAULT '',
	updated_by TEXT NOT NULL DEFAULT '',
	PRIMARY KEY (product, signature)
);
CREATE INDEX signature_triage_state ON signature_triage (state, product, signature);
CREATE INDEX signature_triage_signature ON signature_triage (signature, product);
CREATE TABLE signature_bugs (
	product   TEXT NOT NULL,
	signature TEXT NOT NULL,
	url       TEXT NOT NULL,
	added_at  TEXT NOT NULL,
	added_by  TEXT NOT NULL DEFAULT '',
	PRIMARY KEY (product, signature, url)
);
CREATE TABLE signature_history (
	product       TEXT NOT NULL,
	signature     TEXT NOT NULL,
	changed_at    TEXT NOT NULL,
	who           TEXT NOT NULL DEFAULT '',
	from_state    TEXT NOT NULL DEFAULT '',
	from_fixed_in TEXT NOT NULL DEFAULT '',
	to_state      TEXT NOT NULL DEFAULT '',
	to_fixed_in   TEXT NOT NULL DEFAULT '',
	bug_added     TEXT NOT NULL DEFAULT '',
	bug_removed   TEXT NOT NULL DEFAULT '',
	crash_id      TEXT NOT NULL DEFAULT '',
	version       TEXT NOT NULL DEFAULT ''
);
CREATE INDEX signature_history_key ON signature_history (product, signature, changed_at);
INSERT INTO signature_triage (product, signature)
SELECT DISTINCT product, signature FROM crashes WHERE status = 'processed' AND signature <> '';
`

// State is the triage state of a signature in a product. ("status" is a
// crash's processing status, and "new" marks the signatures first seen in
// a period of the top crashers.)
type State string

// The triage states.
const (
	// StateUntriaged: nobody looked at it yet (every signature starts so).
	StateUntriaged State = "untriaged"
	// StateOpen: acknowledged, not fixed.
	StateOpen State = "open"
	// StateResolved: fixed in the version SignatureTriage.FixedIn.
	StateResolved State = "resolved"
	// StateRegressed: resolved, then a crash came from a version at or after
	// FixedIn (set by crashd when it records the crash).
	StateRegressed State = "regressed"
	// StateIgnored: not to be worked on.
	StateIgnored State = "ignored"
)

// States are the triage states.
var States = []State{StateUntriaged, StateOpen, StateResolved, StateRegressed, StateIgnored}

// ParseState reads a state's name.
func ParseState(s string) (State, error) {
	if slices.Contains(States, State(s)) {
		return State(s), nil
	}
	return "", fmt.Errorf("state %q: one of untriaged, open, resolved, regressed, ignored", s)
}

// The bounds of what a triage change takes: what a client sends is
// checked against them (ErrBadTriage) before anything is written.
const (
	MaxFixedIn    = 64
	MaxBugURL     = 2048
	MaxBugs       = 20
	MaxHistory    = 200
	MaxTriageWho  = 200
	maxTriageTry  = 8
	triageProcess = "crashd"
)

// ErrBadTriage wraps the refusals of a triage change the caller can fix
// (an unknown state, a resolved without fixed_in, a bug URL that is not
// http or https ...).
var ErrBadTriage = errors.New("index: bad triage change")

// SignatureTriage is the triage of a signature in a product.
type SignatureTriage struct {
	Product   string `json:"product"`
	Signature string `json:"signature"`
	State     State  `json:"state"`
	// FixedIn is the version that fixes it (resolved and regressed).
	FixedIn   string    `json:"fixed_in,omitempty"`
	UpdatedAt time.Time `json:"updated_at,omitzero"`
	UpdatedBy string    `json:"updated_by,omitempty"`
	Bugs      []Bug     `json:"bugs"`
	// History is every change, oldest first (the last MaxHistory).
	History []TriageChange `json:"history"`
}

// Bug is a link to a bug report about a signature.
type Bug struct {
	URL     string    `json:"url"`
	AddedAt time.Time `json:"added_at"`
	AddedBy string    `json:"added_by,omitempty"`
}

// TriageChange is one change of a signature's triage: a state (From* to
// To*), a bug link added or removed; CrashID and Version are the crash
// that regressed it (Who is "crashd").
type TriageChange struct {
	At          time.Time `json:"at"`
	Who         string    `json:"who"`
	FromState   State     `json:"from_state,omitempty"`
	FromFixedIn string    `json:"from_fixed_in,omitempty"`
	ToState     State     `json:"to_state,omitempty"`
	ToFixedIn   string    `json:"to_fixed_in,omitempty"`
	BugAdded    string    `json:"bug_added,omitempty"`
	BugRemoved  string    `json:"bug_removed,omitempty"`
	CrashID     string    `json:"crash_id,omitempty"`
	Version     string    `json:"version,omitempty"`
}

// TriageUpdate is a change asked of a signature's triage: a state (with
// FixedIn for resolved), a bug link to add, one to remove; any of them.
type TriageUpdate struct {
	Product, Signature string
	// State is the new state ("": unchanged).
	State State
	// FixedIn is the fixing version of State resolved (required there;
	// regressed keeps the current one when empty).
	FixedIn string
	// AddBug and RemoveBug are bug URLs (http or https).
	AddBug, RemoveBug string
	// Who made the change (the token's or session's name).
	Who string
}

// ProductTriage is a signature's state in one product, as the top
// crashers show it.
type ProductTriage struct {
	Product string   `json:"product"`
	State   State    `json:"state"`
	FixedIn string   `json:"fixed_in,omitempty"`
	Bugs    []string `json:"bugs,omitempty"`
}

// EventKind is what a SignatureEvent tells.
type EventKind string

// The kinds of SignatureEvent.
const (
	// EventNewSignature: the first crash of a (product, signature) the
	// index recorded.
	EventNewSignature EventKind = "new_signature"
	// EventRegression: a crash of a resolved signature from a version at
	// or after its fixed_in; the signature is now regressed.
	EventRegression EventKind = "regression"
)

// SignatureEvent is a fact about a signature learnt as a processed crash
// was recorded (RecordProcessed returns them once its transaction is
// committed; a crash recorded again does not repeat them).
type SignatureEvent struct {
	Kind      EventKind `json:"kind"`
	Product   string    `json:"product"`
	Signature string    `json:"signature"`
	// Version is the crash's; FixedIn the signature's (regressions).
	Version string `json:"version"`
	FixedIn string `json:"fixed_in,omitempty"`
	CrashID string `json:"crash_id"`
}

// SignatureTriager is the triage of signatures: [SQL] implements it.
type SignatureTriager interface {
	// SignatureTriage returns a signature's triage in a product, or
	// ErrNotFound when no processed crash of the product has it.
	SignatureTriage(ctx context.Context, product, signature string) (SignatureTriage, error)
	// UpdateTriage applies a change and returns the triage after it;
	// ErrNotFound as SignatureTriage, ErrBadTriage for a change refused.
	UpdateTriage(ctx context.Context, u TriageUpdate) (SignatureTriage, error)
	// TriageOf returns the states of signatures per product (only
	// product's when not empty), products in order.
	TriageOf(ctx context.Context, product string, signatures []string) (map[string][]ProductTriage, error)
}

// SetVersionOrder sets how a product's versions compare (the regressions'
// version >= fixed_in): order(product), nil for Mozilla's everywhere. Set
// it before the first crash is recorded.
func (s *SQL) SetVersionOrder(order func(product string) version.Order) { s.versionOrder = order }

func (s *SQL) compareVersions(product, a, b string) int {
	o := version.Mozilla
	if s.versionOrder != nil {
		o = s.versionOrder(product)
	}
	return o.Compare(a, b)
}

// CheckBugURL checks a bug link: an absolute http or https URL with a
// host, at most MaxBugURL bytes, valid UTF-8 without control characters.
func CheckBugURL(s string) error {
	if len(s) > MaxBugURL {
		return fmt.Errorf("%w: bug URL over %d bytes", ErrBadTriage, MaxBugURL)
	}
	if !utf8.ValidString(s) || strings.ContainsFunc(s, func(r rune) bool { return r < 0x20 || r == 0x7f || r == ' ' }) {
		return fmt.Errorf("%w: bug URL %q: control characters or spaces", ErrBadTriage, s)
	}
	u, err := url.Parse(s)
	if err != nil {
		return fmt.Errorf("%w: bug URL: %v", ErrBadTriage, err)
	}
	if (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || u.User != nil {
		return fmt.Errorf("%w: bug URL %q: an http or https URL with a host (and no user)", ErrBadTriage, s)
	}
	return nil
}

// check refuses what a change must not write.
func (u *TriageUpdate) check() error {
	if u.State == "" && u.AddBug == "" && u.RemoveBug == "" {
		return fmt.Errorf("%w: nothing to change (state, bug or remove_bug)", ErrBadTriage)
	}
	if u.State != "" {
		if _, err := ParseState(string(u.State)); err != nil {
			return fmt.Errorf("%w: %v", ErrBadTriage, err)
		}
	}
	if len(u.FixedIn) > MaxFixedIn || !utf8.ValidString(u.FixedIn) || strings.ContainsFunc(u.FixedIn, func(r rune) bool { return r < 0x20 || r == 0x7f }) {
		return fmt.Errorf("%w: fixed_in: at most %d bytes of text", ErrBadTriage, MaxFixedIn)
	}
	switch {
	case u.State == StateResolved && strings.TrimSpace(u.FixedIn) == "":
		return fmt.Errorf("%w: resolved needs fixed_in, the version that fixes it", ErrBadTriage)
	case u.FixedIn != "" && u.State != StateResolved && u.State != StateRegressed:
		return fmt.Errorf("%w: fixed_in goes with state resolved (or regressed)", ErrBadTriage)
	}
	if u.AddBug != "" {
		if err := CheckBugURL(u.AddBug); err != nil {
			return err
		}
	}
	if len(u.RemoveBug) > MaxBugURL {
		return fmt.Errorf("%w: remove_bug over %d bytes", ErrBadTriage, MaxBugURL)
	}
	u.Who = textValue(u.Who, MaxTriageWho) // cut on a character: PostgreSQL refuses a broken one
	return nil
}

const insertHistory = `INSERT INTO signature_history (product, signature, changed_at, who, from_state, from_fixed_in, to_state, to_fixed_in, bug_added, bug_removed, crash_id, version)
VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`

func (s *SQL) history(ctx context.Context, tx *sql.Tx, product, signature string, c TriageChange) error {
	_, err := tx.ExecContext(ctx, s.rebind(insertHistory), product, signature, formatTime(c.At), c.Who,
		string(c.FromState), c.FromFixedIn, string(c.ToState), c.ToFixedIn, c.BugAdded, c.BugRemoved, c.CrashID, c.Version)
	return err
}

// UpdateTriage implements [SignatureTriager]. A state changes by a
// conditional UPDATE (on the state and fixed_in read), retried when a
// concurrent change (another user, a processor's regression) came first,
// so that no transition is lost and each is in the history from what it
// really changed.
func (s *SQL) UpdateTriage(ctx context.Context, u TriageUpdate) (SignatureTriage, error) {
	if err := u.check(); err != nil {
		return SignatureTriage{}, err
	}
	fail := func(err error) (SignatureTriage, error) {
		return SignatureTriage{}, fmt.Errorf("index: triage %q %q: %w", u.Product, u.Signature, err)
	}
	for try := 0; ; try++ {
		done, err := s.tryUpdateTriage(ctx, u)
		if err != nil {
			if errors.Is(err, ErrNotFound) || errors.Is(err, ErrBadTriage) {
				return SignatureTriage{}, err
			}
			return fail(err)
		}
		if done {
			break
		}
		if try == maxTriageTry {
			return fail(errors.New("changed concurrently too often; try again"))
		}
	}
	return s.SignatureTriage(ctx, u.Product, u.Signature)
}

// tryUpdateTriage applies u in one transaction (committed; empty when
// the state changed since it was read, and then false).
func (s *SQL) tryUpdateTriage(ctx context.Context, u TriageUpdate) (done bool, err error) {
	err = s.inTx(ctx, func(tx *sql.Tx) error {
		done, err = s.updateTriageIn(ctx, tx, u)
		return err
	})
	return done, err
}

// updateTriageIn applies u in tx; false when the state changed since it
// was read (nothing written).
func (s *SQL) updateTriageIn(ctx context.Context, tx *sql.Tx, u TriageUpdate) (bool, error) {
	var state, fixed string
	err := tx.QueryRowContext(ctx, s.rebind(`SELECT state, fixed_in FROM signature_triage WHERE product = ? AND signature = ?`), u.Product, u.Signature).Scan(&state, &fixed)
	if errors.Is(err, sql.ErrNoRows) {
		return false, fmt.Errorf("%w: no processed crash of product %q has the signature %q", ErrNotFound, u.Product, u.Signature)
	}
	if err != nil {
		return false, err
	}
	now := s.now()
	if u.State != "" {
		to, toFixed := u.State, u.FixedIn
		switch to {
		case StateRegressed:
			if toFixed == "" {
				toFixed = fixed
			}
		case StateResolved:
		default:
			toFixed = ""
		}
		if to != State(state) || toFixed != fixed {
			res, err := tx.ExecContext(ctx, s.rebind(`UPDATE signature_triage SET state = ?, fixed_in = ?, updated_at = ?, updated_by = ?
WHERE product = ? AND signature = ? AND state = ? AND fixed_in = ?`),
				string(to), toFixed, formatTime(now), u.Who, u.Product, u.Signature, state, fixed)
			if err != nil {
				return false, err
			}
			if n, err := res.RowsAffected(); err != nil || n != 1 {
				return false, err // changed meanwhile: read again
			}
			if err := s.history(ctx, tx, u.Product, u.Signature, TriageChange{At: now, Who: u.Who,
				FromState: State(state), FromFixedIn: fixed, ToState: to, ToFixedIn: toFixed}); err != nil {
				return false, err
			}
		}
	}
	if u.AddBug != "" {
		var n int
		if err := tx.QueryRowContext(ctx, s.rebind(`SELECT COUNT(*) FROM signature_bugs WHERE product = ? AND signature = ?`), u.Product, u.Signature).Scan(&n); err != nil {
			return false, err
		}
		if n >= MaxBugs {
			return false, fmt.Errorf("%w: %d bug links already (at most %d): remove one first", ErrBadTriage, n, MaxBugs)
		}
		res, err := tx.ExecContext(ctx, s.rebind(`INSERT INTO signature_bugs (product, signature, url, added_at, added_by) VALUES (?, ?, ?, ?, ?)
ON CONFLICT (product, signature, url) DO NOTHING`), u.Product, u.Signature, u.AddBug, formatTime(now), u.Who)
		if err != nil {
			return false, err
		}
		if n, err := res.RowsAffected(); err != nil {
			return false, err
		} else if n == 1 {
			if err := s.history(ctx, tx, u.Product, u.Signature, TriageChange{At: now, Who: u.Who, BugAdded: u.AddBug}); err != nil {
				return false, err
			}
		}
	}
	if u.RemoveBug != "" {
		res, err := tx.ExecContext(ctx, s.rebind(`DELETE FROM signature_bugs WHERE product = ? AND signature = ? AND url = ?`), u.Product, u.Signature, u.RemoveBug)
		if err != nil {
			return false, err
		}
		if n, err := res.RowsAffected(); err != nil {
			return false, err
		} else if n == 1 {
			if err := s.history(ctx, tx, u.Product, u.Signature, TriageChange{At: now, Who: u.Who, BugRemoved: u.RemoveBug}); err != nil {
				return false, err
			}
		}
	}
	return true, nil
}

// SignatureTriage implements [SignatureTriager].
func (s *SQL) SignatureTriage(ctx context.Context, product, signature string) (SignatureTriage, error) {
	t := SignatureTriage{Product: product, Signature: signature, Bugs: []Bug{}, History: []TriageChange{}}
	var state, at string
	err := s.db.QueryRowContext(ctx, s.rebind(`SELECT state, fixed_in, updated_at, updated_by FROM signature_triage WHERE product = ? AND signature = ?`),
		product, signature).Scan(&state, &t.FixedIn, &at, &t.UpdatedBy)
	if errors.Is(err, sql.ErrNoRows) {
		return t, fmt.Errorf("%w: no processed crash of product %q has the signature %q", ErrNotFound, product, signature)
	}
	if err != nil {
		return t, fmt.Errorf("index: triage: %w", err)
	}
	t.State, t.UpdatedAt = State(state), parseTime(at)
	rows, err := s.db.QueryContext(ctx, s.rebind(`SELECT url, added_at, added_by FROM signature_bugs WHERE product = ? AND signature = ? ORDER BY added_at, url`), product, signature)
	if err != nil {
		return t, fmt.Errorf("index: triage: %w", err)
	}
	for rows.Next() {
		var b Bug
		if err := rows.Scan(&b.URL, &at, &b.AddedBy); err != nil {
			rows.Close()
			return t, fmt.Errorf("index: triage: %w", err)
		}
		b.AddedAt = parseTime(at)
		t.Bugs = append(t.Bugs, b)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return t, fmt.Errorf("index: triage: %w", err)
	}
	// The newest MaxHistory changes, shown oldest first.
	rows, err = s.db.QueryContext(ctx, s.rebind(`SELECT changed_at, who, from_state, from_fixed_in, to_state, to_fixed_in, bug_added, bug_removed, crash_id, version
FROM signature_history WHERE product = ? AND signature = ? ORDER BY changed_at DESC LIMIT `+fmt.Sprint(MaxHistory)), product, signature)
	if err != nil {
		return t, fmt.Errorf("index: triage: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		var c TriageChange
		var from, to string
		if err := rows.Scan(&at, &c.Who, &from, &c.FromFixedIn, &to, &c.ToFixedIn, &c.BugAdded, &c.BugRemoved, &c.CrashID, &c.Version); err != nil {
			return t, fmt.Errorf("index: triage: %w", err)
		}
		c.At, c.FromState, c.ToState = parseTime(at), State(from), State(to)
		t.History = append(t.History, c)
	}
	if err := rows.Err(); err != nil {
		return t, fmt.Errorf("index: triage: %w", err)
	}
	slices.Reverse(t.History)
	return t, nil
}

// TriageOf implements [SignatureTriager].
func (s *SQL) TriageOf(ctx context.Context, product string, signatures []string) (map[string][]ProductTriage, error) {
	out := map[string][]ProductTriage{}
	for chunk := range slices.Chunk(signatures, maxIn) {
		if err := s.triageOf(ctx, product, chunk, out); err != nil {
			return nil, fmt.Errorf("index: triage of signatures: %w", err)
		}
	}
	return out, nil
}

func (s *SQL) triageOf(ctx context.Context, product string, sigs []string, out map[string][]ProductTriage) error {
	args := make([]any, 0, len(sigs)+1)
	for _, sig := range sigs {
		args = append(args, sig)
	}
	cond := ""
	if product != "" {
		cond = " AND product = ?"
		args = append(args, product)
	}
	rows, err := s.db.QueryContext(ctx, s.rebind(`SELECT signature, product, state, fixed_in FROM signature_triage WHERE signature IN (`+marks(len(sigs))+`)`+cond+
		` ORDER BY signature, product`), args...)
	if err != nil {
		return err
	}
	idx := map[[2]string]int{}
	for rows.Next() {
		var sig string
		var p ProductTriage
		var state string
		if err := rows.Scan(&sig, &p.Product, &state, &p.FixedIn); err != nil {
			rows.Close()
			return err
		}
		p.State = State(state)
		idx[[2]string{sig, p.Product}] = len(out[sig])
		out[sig] = append(out[sig], p)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return err
	}
	rows, err = s.db.QueryContext(ctx, s.rebind(`SELECT signature, product, url FROM signature_bugs WHERE signature IN (`+marks(len(sigs))+`)`+cond+
		` ORDER BY signature, product, added_at, url`), args...)
	if err != nil {
		return err
	}
	defer rows.Close()
	for rows.Next() {
		var sig, prod, u string
		if err := rows.Scan(&sig, &prod, &u); err != nil {
			return err
		}
		if i, ok := idx[[2]string{sig, prod}]; ok {
			out[sig][i].Bugs = append(out[sig][i].Bugs, u)
		}
	}
	return rows.Err()
}

// trackSignature records in tx that a processed crash of c's (product,
// signature) was seen: the pair's triage row made on its first crash (an
// EventNewSignature), and a resolved signature flipped to regressed when
// c's version is at or after its fixed_in (an EventRegression and a
// history row by "crashd"). The flip is a conditional UPDATE on the
// state and fixed_in read: of processors recording crashes at once,
// exactly one makes it.
func (s *SQL) trackSignature(ctx context.Context, tx *sql.Tx, c Crash) ([]SignatureEvent, error) {
	if c.Signature == "" {
		return nil, nil
	}
	now := s.now()
	ins, err := s.stmt(ctx, `INSERT INTO signature_triage (product, signature) VALUES (?, ?) ON CONFLICT (product, signature) DO NOTHING`)
	if err != nil {
		return nil, err
	}
	res, err := tx.StmtContext(ctx, ins).ExecContext(ctx, c.Product, c.Signature)
	if err != nil {
		return nil, err
	}
	if n, err := res.RowsAffected(); err != nil {
		return nil, err
	} else if n == 1 {
		return []SignatureEvent{{Kind: EventNewSignature, Product: c.Product, Signature: c.Signature, Version: c.Version, CrashID: c.ID}}, nil
	}
	sel, err := s.stmt(ctx, `SELECT state, fixed_in FROM signature_triage WHERE product = ? AND signature = ?`)
	if err != nil {
		return nil, err
	}
	var state, fixed string
	if err := tx.StmtContext(ctx, sel).QueryRowContext(ctx, c.Product, c.Signature).Scan(&state, &fixed); err != nil {
		return nil, err
	}
	if State(state) != StateResolved || s.compareVersions(c.Product, c.Version, fixed) < 0 {
		return nil, nil
	}
	res, err = tx.ExecContext(ctx, s.rebind(`UPDATE signature_triage SET state = ?, updated_at = ?, updated_by = ?
WHERE product = ? AND signature = ? AND state = ? AND fixed_in = ?`),
		string(StateRegressed), formatTime(now), triageProcess, c.Product, c.Signature, string(StateResolved), fixed)
	if err != nil {
		return nil, err
	}
	if n, err := res.RowsAffected(); err != nil || n != 1 {
		// Changed meanwhile (regressed by another crash, or by a user):
		// that change stands.
		return nil, err
	}
	if err := s.history(ctx, tx, c.Product, c.Signature, TriageChange{At: now, Who: triageProcess, FromState: StateResolved, FromFixedIn: fixed,
		ToState: StateRegressed, ToFixedIn: fixed, CrashID: c.ID, Version: c.Version}); err != nil {
		return nil, err
	}
	return []SignatureEvent{{Kind: EventRegression, Product: c.Product, Signature: c.Signature, Version: c.Version, FixedIn: fixed, CrashID: c.ID}}, nil
}

// stateCond is the condition of Filter.State on a table with a signature
// column: the signature has the state in f.Product, or in some product
// when f has none.
func (f Filter) stateCond() (string, []any) {
	if f.State == "" {
		return "", nil
	}
	if f.Product != "" {
		return "signature IN (SELECT signature FROM signature_triage WHERE state = ? AND product = ?)", []any{string(f.State), f.Product}
	}
	return "signature IN (SELECT signature FROM signature_triage WHERE state = ?)", []any{string(f.State)}
}

// topTriage fills the top crashers' triage states.
func (s *SQL) topTriage(ctx context.Context, f Filter, rows []TopRow) error {
	sigs := make([]string, len(rows))
	for i, r := range rows {
		sigs[i] = r.Signature
	}
	m, err := s.TriageOf(ctx, f.Product, sigs)
	if err != nil {
		return err
	}
	for i := range rows {
		r := &rows[i]
		r.Triage = m[r.Signature]
		if r.Triage == nil {
			r.Triage = []ProductTriage{}
		}
		for _, p := range r.Triage {
			r.Regressed = r.Regressed || p.State == StateRegressed
		}
	}
	return nil
}
