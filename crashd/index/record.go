package index

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"
)

// Outcome is everything the processor records of one processed crash:
// the crash's row ([Index.Processed]), its details for the web pages
// ([Triage.ProcessedDetails]) and the modules its walk had no symbols for
// ([MissingSymbolsIndex.SetMissingSymbols]).
type Outcome struct {
	Crash   Crash
	Details Details
	Missing []Module
}

// recordUpsert is Processed's upsert with the details' columns: the row
// Processed and then ProcessedDetails leave, in one statement.
const recordUpsert = `
INSERT INTO crashes (crash_id, crash_day, status, received_at, processed_at, product, version, os, cpu, signature, crash_reason, attempts, error, updated_at,
	process_type, os_version, crash_address, modules, cpu_info, module_versions)
VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, '', ?, ?, ?, ?, ?, ?, ?)
ON CONFLICT (crash_id, crash_day) DO UPDATE SET
	status = excluded.status, received_at = excluded.received_at, processed_at = excluded.processed_at,
	product = excluded.product, version = excluded.version, os = excluded.os, cpu = excluded.cpu,
	signature = excluded.signature, crash_reason = excluded.crash_reason, attempts = excluded.attempts, error = '',
	updated_at = excluded.updated_at,
	process_type = excluded.process_type, os_version = excluded.os_version, crash_address = excluded.crash_address,
	modules = excluded.modules, cpu_info = excluded.cpu_info, module_versions = excluded.module_versions`

// recordSignature records the first sighting of a signature (the
// earliest receipt and its version); ProcessedDetails and RecordProcessed
// both write it.
const recordSignature = `
INSERT INTO signatures (signature, first_seen, first_version) VALUES (?, ?, ?)
ON CONFLICT (signature) DO UPDATE SET
	first_seen = CASE WHEN excluded.first_seen < signatures.first_seen THEN excluded.first_seen ELSE signatures.first_seen END,
	first_version = CASE WHEN excluded.first_seen < signatures.first_seen THEN excluded.first_version ELSE signatures.first_version END`

// recordDeleteMissing drops a crash's missing modules before they are
// written again.
const recordDeleteMissing = `DELETE FROM missing_symbols WHERE crash_id = ?`

// maxInsertRows is the most rows of one prepared INSERT of missing
// modules (a power of two).
const maxInsertRows = 32

// insertMissing are the INSERTs of 2^i rows of missing_symbols.
var insertMissing = func() map[int]string {
	m := map[int]string{}
	for n := 1; n <= maxInsertRows; n *= 2 {
		m[n] = `
INSERT INTO missing_symbols (crash_id, module, debug_file, debug_id, code_file, code_id, received_at)
VALUES ` + strings.TrimSuffix(strings.Repeat("(?, ?, ?, ?, ?, ?, ?),", n), ",")
	}
	return m
}()

// RecordProcessed implements [Index]: in one transaction, the rows that
// Processed, SetMissingSymbols and ProcessedDetails write one after
// another, so that a processed crash costs the index one commit instead
// of three. Idempotent as they are: a crash recorded twice is one crashes
// row, its missing modules once, the earliest sighting of its signature.
//
// Concurrent calls share transactions (a group commit): while one
// transaction commits, the outcomes that arrive wait, and the next caller
// to lead writes them all in one; an outcome whose batch fails is written
// again alone, so that it fails (or not) on its own. The leader writes the
// others' outcomes with its own ctx; the processor's is never cancelled.
// With a group wait (SetGroupWait) a leader first waits that long, or until
// a group is full, for more outcomes to share its transaction.
//
// The events are what recording the crash taught of its signature (its
// first crash in the product; a regression), once the transaction that
// wrote them committed.
func (s *SQL) RecordProcessed(ctx context.Context, o Outcome) ([]SignatureEvent, error) {
	r := &pendingRecord{o: o, done: make(chan error, 1)}
	s.gmu.Lock()
	s.pending = append(s.pending, r)
	lead := !s.leading
	s.leading = true
	if s.groupFull != nil && len(s.pending) >= maxGroup {
		close(s.groupFull) // the waiting leader's group is full
		s.groupFull = nil
	}
	s.gmu.Unlock()
	for {
		if lead {
			s.waitGroup()
			s.lead(ctx)
		}
		err := <-r.done
		if err != errLead {
			if err != nil {
				return nil, err
			}
			return r.events, nil
		}
		lead = true
	}
}

// pendingRecord is an outcome waiting for a group commit.
type pendingRecord struct {
	o    Outcome
	done chan error // its result, or errLead
	// events are the outcome's signature events, set before done is
	// sent when its transaction committed.
	events []SignatureEvent
}

// errLead tells a waiting RecordProcessed to lead the next group commit.
var errLead = errors.New("index: lead the next group commit")

// maxGroup bounds the outcomes of one group commit.
const maxGroup = 64

// SetGroupWait sets how long the leader of a group commit waits for more
// outcomes before it writes (or until a group is full): fewer, larger
// transactions for callers that do not wait on one another (the
// processor indexes a crash while its workers walk the next ones). Each
// outcome then takes up to d longer to be recorded. 0, the default:
// write at once. Set it before the first RecordProcessed.
func (s *SQL) SetGroupWait(d time.Duration) { s.groupWait = d }

// GroupCommits returns how many group commits RecordProcessed made and
// how many outcomes they wrote (failed batches written again one by one
// count once).
func (s *SQL) GroupCommits() (commits, outcomes int64) {
	return s.groupCommits.Load(), s.groupOutcomes.Load()
}

// waitGroup waits up to the group wait for a full group.
func (s *SQL) waitGroup() {
	if s.groupWait <= 0 {
		return
	}
	s.gmu.Lock()
	if len(s.pending) >= maxGroup {
		s.gmu.Unlock()
		return
	}
	full := make(chan struct{})
	s.groupFull = full
	s.gmu.Unlock()
	t := time.NewTimer(s.groupWait)
	defer t.Stop()
	select {
	case <-t.C:
		s.gmu.Lock()
		if s.groupFull == full {
			s.groupFull = nil
		}
		s.gmu.Unlock()
	case <-full:
	}
}

// lead writes the waiting outcomes (at most maxGroup) in one transaction,
// then hands the lead to the first of those that arrived meanwhile, if
// any: every leader commits once, so that no caller waits on others'
// writes for long.
func (s *SQL) lead(ctx context.Context) {
	s.gmu.Lock()
	n := min(len(s.pending), maxGroup)
	batch := slices.Clone(s.pending[:n])
	s.pending = slices.Delete(s.pending, 0, n)
	s.gmu.Unlock()
	s.groupCommits.Add(1)
	s.groupOutcomes.Add(int64(n))
	if err := s.commitOutcomes(ctx, batch); err != nil && len(batch) > 1 {
		for _, r := range batch {
			r.done <- s.commitOutcomes(ctx, []*pendingRecord{r})
		}
	} else {
		for _, r := range batch {
			r.done <- err
		}
	}
	s.gmu.Lock()
	if len(s.pending) > 0 {
		s.pending[0].done <- errLead
	} else {
		s.leading = false
	}
	s.gmu.Unlock()
}

// commitOutcomes writes the outcomes in one transaction.
func (s *SQL) commitOutcomes(ctx context.Context, batch []*pendingRecord) error {
	defer s.lockWrites()()
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("index: record processed: %w", err)
	}
	defer tx.Rollback()
	events := make([][]SignatureEvent, len(batch))
	for i, r := range batch {
		if events[i], err = s.recordIn(ctx, tx, r.o); err != nil {
			return err
		}
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("index: record processed: %w", err)
	}
	for i, r := range batch {
		r.events = events[i]
	}
	return nil
}

// recordIn writes in tx the rows that Processed, SetMissingSymbols and
// ProcessedDetails write one after another (the same rows, column for
// column, the indexed annotations included, the signature's triage
// tracked), and returns the signature's events.
func (s *SQL) recordIn(ctx context.Context, tx *sql.Tx, o Outcome) ([]SignatureEvent, error) {
	c, d := o.Crash, o.Details
	if c.ProcessedAt.IsZero() {
		c.ProcessedAt = s.now()
	}
	fail := func(err error) error { return fmt.Errorf("index: record processed %s: %w", c.ID, err) }
	args := missingRows(c.ID, c.ReceivedAt, o.Missing)
	upsert, err := s.stmt(ctx, recordUpsert)
	if err != nil {
		return nil, fail(err)
	}
	del, err := s.stmt(ctx, recordDeleteMissing)
	if err != nil {
		return nil, fail(err)
	}
	now := formatTime(s.now())
	if _, err := tx.StmtContext(ctx, upsert).ExecContext(ctx,
		c.ID, crashDay(c.ID), string(Processed), formatTime(c.ReceivedAt), formatTime(c.ProcessedAt), c.Product, c.Version, c.OS, c.CPU,
		c.Signature, c.CrashReason, c.Attempts, now,
		d.ProcessType, d.OSVersion, d.CrashAddress, moduleList(d.Modules), cpuInfo(d.CPUInfo), moduleVersionList(d.ModuleVersions)); err != nil {
		return nil, fail(err)
	}
	if _, err := tx.StmtContext(ctx, del).ExecContext(ctx, c.ID); err != nil {
		return nil, fail(err)
	}
	// The rows in prepared multi-row INSERTs of 32, 16, ..., 1 rows
	// (multi-row VALUES: SQLite and PostgreSQL): at most six statements
	// ever compiled, where one INSERT of exactly the crash's rows was
	// compiled for every crash.
	for len(args) > 0 {
		k := min(len(args)/7, maxInsertRows)
		for k&(k-1) != 0 {
			k &= k - 1 // the largest power of two in it
		}
		st, err := s.stmt(ctx, insertMissing[k])
		if err != nil {
			return nil, fail(err)
		}
		if _, err := tx.StmtContext(ctx, st).ExecContext(ctx, args[:7*k]...); err != nil {
			return nil, fail(err)
		}
		args = args[7*k:]
	}
	if err := s.writeAnnotations(ctx, tx, c, d.Annotations); err != nil {
		return nil, fail(err)
	}
	ev, err := s.signatureIn(ctx, tx, c)
	if err != nil {
		return nil, fail(err)
	}
	if err := s.regressionAlertsIn(ctx, tx, ev); err != nil {
		return nil, fail(err)
	}
	return ev, nil
}

// signatureIn records in tx what the processed crash c tells of its
// signature, as recordIn and ProcessedDetails both do: its new_signature
// alert event (newSignatureIn, before the sighting), its first sighting
// (recordSignature) and its triage (trackSignature), whose events it
// returns.
func (s *SQL) signatureIn(ctx context.Context, tx *sql.Tx, c Crash) ([]SignatureEvent, error) {
	if err := s.newSignatureIn(ctx, tx, c); err != nil {
		return nil, err
	}
	if c.Signature != "" {
		sig, err := s.stmt(ctx, recordSignature)
		if err != nil {
			return nil, err
		}
		if _, err := tx.StmtContext(ctx, sig).ExecContext(ctx, c.Signature, formatTime(c.ReceivedAt), c.Version); err != nil {
			return nil, err
		}
	}
	return s.trackSignature(ctx, tx, c)
}
