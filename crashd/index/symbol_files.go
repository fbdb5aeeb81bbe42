package index

import (
	"context"
	"fmt"
	"strings"
	"time"
)

// This file is the index's catalogue of the symbol files crashd's symbol
// server stored on a blob store every process shares (blobs nats or s3,
// docs/scale.md "Symbols on the blob store"; migration 13): one row per
// module, written when its upload is stored, so that any process answers a
// download by code id and lists the recent uploads on the symbols page,
// not only the process that received them. With blobs in the data
// directory the symbol server's own directory is the catalogue and this
// table stays empty.

// migrationSymbolFiles is migration 13. module is moduleKey's (debug file
// without case, debug id in upper case); code the same of the code file
// and id ("" without a code id).
const migrationSymbolFiles = `
CREATE TABLE symbol_files (
	module     TEXT PRIMARY KEY,
	debug_file TEXT NOT NULL,
	debug_id   TEXT NOT NULL,
	name       TEXT NOT NULL,
	code       TEXT NOT NULL,
	code_file  TEXT NOT NULL,
	code_id    TEXT NOT NULL,
	size       BIGINT NOT NULL,
	stored_at  TEXT NOT NULL
);
CREATE INDEX symbol_files_code ON symbol_files (code);
CREATE INDEX symbol_files_stored ON symbol_files (stored_at);
`

// SymbolFile is a stored module's symbol file.
type SymbolFile struct {
	// DebugFile and DebugID name the module (its MODULE line).
	DebugFile string `json:"debug_file"`
	DebugID   string `json:"debug_id"`
	// Name is the .sym's name in the Breakpad layout (NAME.sym).
	Name string `json:"name"`
	// CodeFile and CodeID are its INFO CODE_ID record's ("" without).
	CodeFile string `json:"code_file,omitempty"`
	CodeID   string `json:"code_id,omitempty"`
	// Size is the .sym's size in bytes.
	Size int64 `json:"size"`
	// StoredAt is when it was last stored.
	StoredAt time.Time `json:"stored_at"`
}

// SymbolFiles is the catalogue of stored symbol files (implemented by
// *SQL).
type SymbolFiles interface {
	// RecordSymbolFile records a module's symbol file as stored at
	// f.StoredAt, replacing the module's row.
	RecordSymbolFile(ctx context.Context, f SymbolFile) error
	// SymbolFileByCode returns the module last stored with the code file
	// and id (file names compared without case, ids in upper case).
	SymbolFileByCode(ctx context.Context, codeFile, codeID string) (SymbolFile, bool, error)
	// RecentSymbolFiles lists the last stored modules, newest first, at
	// most limit (1 to MaxLimit) of them.
	RecentSymbolFiles(ctx context.Context, limit int) ([]SymbolFile, error)
}

var _ SymbolFiles = (*SQL)(nil)

// codeKey is the code column of a code file and id.
func codeKey(codeFile, codeID string) string {
	if codeFile == "" || codeID == "" {
		return ""
	}
	return moduleKey(codeFile, codeID)
}

// RecordSymbolFile implements [SymbolFiles].
func (s *SQL) RecordSymbolFile(ctx context.Context, f SymbolFile) error {
	if f.DebugFile == "" || f.DebugID == "" {
		return fmt.Errorf("index: symbol file without a debug file or id")
	}
	defer s.lockWrites()()
	if _, err := s.db.ExecContext(ctx, s.rebind(`
INSERT INTO symbol_files (module, debug_file, debug_id, name, code, code_file, code_id, size, stored_at)
VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)
ON CONFLICT (module) DO UPDATE SET debug_file = excluded.debug_file, debug_id = excluded.debug_id,
	name = excluded.name, code = excluded.code, code_file = excluded.code_file, code_id = excluded.code_id,
	size = excluded.size, stored_at = excluded.stored_at`),
		moduleKey(f.DebugFile, f.DebugID), textValue(f.DebugFile, 1024), strings.ToUpper(textValue(f.DebugID, 1024)), textValue(f.Name, 1024),
		codeKey(f.CodeFile, f.CodeID), textValue(f.CodeFile, 1024), strings.ToUpper(textValue(f.CodeID, 1024)), f.Size, formatTime(f.StoredAt)); err != nil {
		return fmt.Errorf("index: symbol file %s/%s: %w", f.DebugFile, f.DebugID, err)
	}
	return nil
}

const symbolFileColumns = `debug_file, debug_id, name, code_file, code_id, size, stored_at`

// scanSymbolFile reads a row of symbolFileColumns.
func scanSymbolFile(scan func(...any) error) (SymbolFile, error) {
	var f SymbolFile
	var at string
	err := scan(&f.DebugFile, &f.DebugID, &f.Name, &f.CodeFile, &f.CodeID, &f.Size, &at)
	f.StoredAt = parseTime(at)
	return f, err
}

// SymbolFileByCode implements [SymbolFiles].
func (s *SQL) SymbolFileByCode(ctx context.Context, codeFile, codeID string) (SymbolFile, bool, error) {
	k := codeKey(codeFile, codeID)
	if k == "" {
		return SymbolFile{}, false, nil
	}
	rows, err := s.db.QueryContext(ctx, s.rebind(`SELECT `+symbolFileColumns+` FROM symbol_files WHERE code = ? ORDER BY stored_at DESC, module LIMIT 1`), k)
	if err != nil {
		return SymbolFile{}, false, fmt.Errorf("index: symbol file by code id %s/%s: %w", codeFile, codeID, err)
	}
	defer rows.Close()
	if !rows.Next() {
		return SymbolFile{}, false, rows.Err()
	}
	f, err := scanSymbolFile(rows.Scan)
	if err != nil {
		return SymbolFile{}, false, fmt.Errorf("index: symbol file by code id %s/%s: %w", codeFile, codeID, err)
	}
	return f, true, nil
}

// RecentSymbolFiles implements [SymbolFiles].
func (s *SQL) RecentSymbolFiles(ctx context.Context, limit int) ([]SymbolFile, error) {
	if limit <= 0 || limit > MaxLimit {
		limit = MaxLimit
	}
	rows, err := s.db.QueryContext(ctx, s.rebind(`SELECT `+symbolFileColumns+` FROM symbol_files ORDER BY stored_at DESC, module LIMIT ?`), limit)
	if err != nil {
		return nil, fmt.Errorf("index: recent symbol files: %w", err)
	}
	defer rows.Close()
	out := []SymbolFile{}
	for rows.Next() {
		f, err := scanSymbolFile(rows.Scan)
		if err != nil {
			return nil, fmt.Errorf("index: recent symbol files: %w", err)
		}
		out = append(out, f)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("index: recent symbol files: %w", err)
	}
	return out, nil
}
