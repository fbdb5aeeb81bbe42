package index

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/gobreakpad/gobreakpad/crashd/crash"
)

// This file is the index's table of missing symbols: per crash, the
// modules its walk found no symbols for (migration 2). Its SQL is portable
// as the rest of the package's: ? parameters, TEXT times, GROUP BY and
// COUNT(DISTINCT), no dialect functions.

// Module is crash.Module: a module by its symbol file and its code file,
// the table's key.
type Module = crash.Module

// MissingModule is a module walked without symbols, with the crashes that
// missed it.
type MissingModule struct {
	Module
	// Crashes counts the crashes that missed it.
	Crashes int `json:"crashes"`
	// LatestCrashID is the newest of them (received last).
	LatestCrashID string `json:"latest_crash_id"`
	// LatestReceivedAt is its receipt time.
	LatestReceivedAt time.Time `json:"latest_received_at"`
}

// MissingQuery selects the missing modules MissingSymbols lists.
type MissingQuery struct {
	// Since keeps the crashes received at or after it (zero: all).
	Since time.Time
	// Limit bounds the modules: 0 is DefaultLimit, at most MaxLimit.
	Limit int
}

// MissingSymbolsIndex is the part of [Index] that records the modules
// crashes were walked without symbols, so that a release engineer sees
// what to upload and the crashes that missed a module are found again when
// its symbols arrive.
type MissingSymbolsIndex interface {
	// SetMissingSymbols replaces the modules crash id (received at
	// receivedAt) was walked without symbols; an empty mods clears them.
	// Modules without a debug file or id are left out.
	SetMissingSymbols(ctx context.Context, id string, receivedAt time.Time, mods []Module) error
	// MissingSymbols lists the modules the crashes q selects were walked
	// without, most-missed first (then by debug file and id), and how many
	// such modules there are in all.
	MissingSymbols(ctx context.Context, q MissingQuery) (mods []MissingModule, total int, err error)
	// CrashesMissing returns the crashes walked without the module
	// debugFile/debugID (file names compared without case, ids in upper
	// case), newest first, at most limit of them.
	CrashesMissing(ctx context.Context, debugFile, debugID string, limit int) ([]string, error)
}

// moduleKey is the missing_symbols.module column: the module as looked up
// (debug file without case, debug id in upper case, as Breakpad stores
// name them).
func moduleKey(debugFile, debugID string) string {
	return strings.ToLower(debugFile) + "/" + strings.ToUpper(debugID)
}

// missingRows returns the INSERT arguments of a crash's missing modules,
// seven per row (the columns of missing_symbols): one row per module,
// those without names left out, repeats once.
func missingRows(id string, receivedAt time.Time, mods []Module) []any {
	var args []any
	seen := map[string]bool{}
	for _, m := range mods {
		if m.DebugFile == "" || m.DebugID == "" {
			continue
		}
		k := moduleKey(m.DebugFile, m.DebugID)
		if seen[k] {
			continue
		}
		seen[k] = true
		args = append(args, id, k, m.DebugFile, strings.ToUpper(m.DebugID), m.CodeFile, m.CodeID, formatTime(receivedAt))
	}
	return args
}

// SetMissingSymbols implements [MissingSymbolsIndex].
func (s *SQL) SetMissingSymbols(ctx context.Context, id string, receivedAt time.Time, mods []Module) error {
	args := missingRows(id, receivedAt, mods)
	defer s.lockWrites()()
	if len(args) == 0 {
		// A crash walked with every module's symbols: one statement.
		if _, err := s.db.ExecContext(ctx, s.rebind(`DELETE FROM missing_symbols WHERE crash_id = ?`), id); err != nil {
			return fmt.Errorf("index: missing symbols of %s: %w", id, err)
		}
		return nil
	}
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("index: missing symbols of %s: %w", id, err)
	}
	defer tx.Rollback()
	if _, err := tx.ExecContext(ctx, s.rebind(`DELETE FROM missing_symbols WHERE crash_id = ?`), id); err != nil {
		return fmt.Errorf("index: missing symbols of %s: %w", id, err)
	}
	// All rows in one INSERT (multi-row VALUES: SQLite and PostgreSQL).
	values := strings.TrimSuffix(strings.Repeat("(?, ?, ?, ?, ?, ?, ?),", len(args)/7), ",")
	if _, err := tx.ExecContext(ctx, s.rebind(`
INSERT INTO missing_symbols (crash_id, module, debug_file, debug_id, code_file, code_id, received_at)
VALUES `+values), args...); err != nil {
		return fmt.Errorf("index: missing symbols of %s: %w", id, err)
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("index: missing symbols of %s: %w", id, err)
	}
	return nil
}

// MissingSymbols implements [MissingSymbolsIndex].
func (s *SQL) MissingSymbols(ctx context.Context, q MissingQuery) ([]MissingModule, int, error) {
	where, args := "", []any{}
	if !q.Since.IsZero() {
		where, args = ` WHERE received_at >= ?`, append(args, formatTime(q.Since))
	}
	var total int
	if err := s.db.QueryRowContext(ctx, s.rebind(`SELECT COUNT(DISTINCT module) FROM missing_symbols`+where), args...).Scan(&total); err != nil {
		return nil, 0, fmt.Errorf("index: missing symbols: %w", err)
	}
	limit := q.Limit
	if limit <= 0 {
		limit = DefaultLimit
	}
	limit = min(limit, MaxLimit)
	// The counts come from the index on (module, received_at, crash_id)
	// alone; the names and the newest crash, from one indexed row per
	// module listed.
	rows, err := s.db.QueryContext(ctx, s.rebind(`
SELECT module, COUNT(*) FROM missing_symbols`+where+`
GROUP BY module
ORDER BY COUNT(*) DESC, module
LIMIT `+strconv.Itoa(limit)), args...)
	if err != nil {
		return nil, 0, fmt.Errorf("index: missing symbols: %w", err)
	}
	type count struct {
		module string
		n      int
	}
	var counts []count
	for rows.Next() {
		var c count
		if err := rows.Scan(&c.module, &c.n); err != nil {
			rows.Close()
			return nil, 0, fmt.Errorf("index: missing symbols: %w", err)
		}
		counts = append(counts, c)
	}
	err = rows.Err()
	rows.Close()
	if err != nil {
		return nil, 0, fmt.Errorf("index: missing symbols: %w", err)
	}
	latest := s.rebind(`
SELECT crash_id, debug_file, debug_id, code_file, code_id, received_at FROM missing_symbols
WHERE module = ?` + strings.Replace(where, " WHERE ", " AND ", 1) + `
ORDER BY received_at DESC, crash_id DESC LIMIT 1`)
	out := make([]MissingModule, 0, len(counts))
	for _, c := range counts {
		m := MissingModule{Crashes: c.n}
		var recv string
		if err := s.db.QueryRowContext(ctx, latest, append([]any{c.module}, args...)...).Scan(&m.LatestCrashID, &m.DebugFile, &m.DebugID, &m.CodeFile, &m.CodeID, &recv); err != nil {
			if errors.Is(err, sql.ErrNoRows) {
				continue // its crash was processed again meanwhile
			}
			return nil, 0, fmt.Errorf("index: missing symbols: %w", err)
		}
		m.LatestReceivedAt = parseTime(recv)
		out = append(out, m)
	}
	return out, total, nil
}

// CrashesMissing implements [MissingSymbolsIndex].
func (s *SQL) CrashesMissing(ctx context.Context, debugFile, debugID string, limit int) ([]string, error) {
	if limit <= 0 {
		return nil, nil
	}
	rows, err := s.db.QueryContext(ctx, s.rebind(`
SELECT crash_id FROM missing_symbols WHERE module = ?
ORDER BY received_at DESC, crash_id DESC
LIMIT `+strconv.Itoa(limit)), moduleKey(debugFile, debugID))
	if err != nil {
		return nil, fmt.Errorf("index: crashes missing %s/%s: %w", debugFile, debugID, err)
	}
	defer rows.Close()
	var ids []string
	for rows.Next() {
		var id string
		if err := rows.Scan(&id); err != nil {
			return nil, fmt.Errorf("index: crashes missing %s/%s: %w", debugFile, debugID, err)
		}
		ids = append(ids, id)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("index: crashes missing %s/%s: %w", debugFile, debugID, err)
	}
	return ids, nil
}
