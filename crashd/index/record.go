package index

import (
	"context"
	"fmt"
	"strings"
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
	process_type, os_version, crash_address, modules)
VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, '', ?, ?, ?, ?, ?)
ON CONFLICT (crash_id, crash_day) DO UPDATE SET
	status = excluded.status, received_at = excluded.received_at, processed_at = excluded.processed_at,
	product = excluded.product, version = excluded.version, os = excluded.os, cpu = excluded.cpu,
	signature = excluded.signature, crash_reason = excluded.crash_reason, attempts = excluded.attempts, error = '',
	updated_at = excluded.updated_at,
	process_type = excluded.process_type, os_version = excluded.os_version, crash_address = excluded.crash_address,
	modules = excluded.modules`

// recordSignature is ProcessedDetails's first sighting of a signature.
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
// another (the same rows, column for column), so that a processed crash
// costs the index one commit instead of three. Idempotent as they are: a
// crash recorded twice is one crashes row, its missing modules once, the
// earliest sighting of its signature.
func (s *SQL) RecordProcessed(ctx context.Context, o Outcome) error {
	c, d := o.Crash, o.Details
	if c.ProcessedAt.IsZero() {
		c.ProcessedAt = s.now()
	}
	fail := func(err error) error { return fmt.Errorf("index: record processed %s: %w", c.ID, err) }
	// One row per module: those without names left out, repeats once
	// (as SetMissingSymbols).
	var args []any
	seen := map[string]bool{}
	for _, m := range o.Missing {
		if m.DebugFile == "" || m.DebugID == "" {
			continue
		}
		k := moduleKey(m.DebugFile, m.DebugID)
		if seen[k] {
			continue
		}
		seen[k] = true
		args = append(args, c.ID, k, m.DebugFile, strings.ToUpper(m.DebugID), m.CodeFile, m.CodeID, formatTime(c.ReceivedAt))
	}
	// Prepared before the write lock: preparing is no write.
	upsert, err := s.stmt(ctx, recordUpsert)
	if err != nil {
		return fail(err)
	}
	del, err := s.stmt(ctx, recordDeleteMissing)
	if err != nil {
		return fail(err)
	}
	sig, err := s.stmt(ctx, recordSignature)
	if err != nil {
		return fail(err)
	}
	now := formatTime(s.now())
	defer s.lockWrites()()
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return fail(err)
	}
	defer tx.Rollback()
	if _, err := tx.StmtContext(ctx, upsert).ExecContext(ctx,
		c.ID, crashDay(c.ID), string(Processed), formatTime(c.ReceivedAt), formatTime(c.ProcessedAt), c.Product, c.Version, c.OS, c.CPU,
		c.Signature, c.CrashReason, c.Attempts, now,
		d.ProcessType, d.OSVersion, d.CrashAddress, moduleList(d.Modules)); err != nil {
		return fail(err)
	}
	if _, err := tx.StmtContext(ctx, del).ExecContext(ctx, c.ID); err != nil {
		return fail(err)
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
			return fail(err)
		}
		if _, err := tx.StmtContext(ctx, st).ExecContext(ctx, args[:7*k]...); err != nil {
			return fail(err)
		}
		args = args[7*k:]
	}
	if c.Signature != "" {
		if _, err := tx.StmtContext(ctx, sig).ExecContext(ctx, c.Signature, formatTime(c.ReceivedAt), c.Version); err != nil {
			return fail(err)
		}
	}
	if err := tx.Commit(); err != nil {
		return fail(err)
	}
	return nil
}
