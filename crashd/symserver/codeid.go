package symserver

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"

	"github.com/gobreakpad/gobreakpad/crashd/blob"
	"github.com/gobreakpad/gobreakpad/symfile"
	"github.com/gobreakpad/gobreakpad/symstore"
)

// header is what the first records of a .sym say of its module.
type header struct {
	DebugFile string `json:"debug_file"`
	DebugID   string `json:"debug_id"`
	CodeFile  string `json:"code_file"`
	CodeID    string `json:"code_id"`
	OS        string `json:"os"`
	CPU       string `json:"cpu"`
}

// readHeader reads the MODULE and INFO CODE_ID records at the start of a
// .sym file (readHeaderFrom).
func readHeader(path string) (header, error) {
	f, err := os.Open(path)
	if err != nil {
		return header{}, err
	}
	defer f.Close()
	return readHeaderFrom(f), nil
}

// readHeaderFrom reads the MODULE and INFO CODE_ID records at the start of
// a .sym (the INFO records follow MODULE; at most 16 lines are read).
func readHeaderFrom(r io.Reader) header {
	var h header
	br := bufio.NewReaderSize(r, 8192)
	for i := 0; i < 16; i++ {
		line, err := br.ReadSlice('\n')
		if len(line) > 0 {
			rec, perr := symfile.ParseRecord(bytes.TrimRight(line, "\r\n"))
			switch r := rec.(type) {
			case symfile.Module:
				h.DebugFile, h.DebugID, h.OS, h.CPU = symstore.BaseName(r.Name), r.ID, r.OS, r.Arch
			case symfile.CodeID:
				h.CodeID, h.CodeFile = r.ID, symstore.BaseName(r.File)
			default:
				if perr == nil && i > 0 {
					if _, ok := rec.(symfile.Info); !ok {
						return h
					}
				}
			}
		}
		if err != nil {
			break
		}
	}
	return h
}

// Catalog is the record of the stored symbol files that every process of
// a deployment reads, with the symbols on its shared blob store
// (Config.Symbols): crashd's index (crashd/index.SymbolFiles). The symbol
// server records each module it stores there, with its code file and id,
// so that any process answers downloads and syminfo by code id.
type Catalog interface {
	// Record records a module's .sym as stored (new, changed, or sent
	// again), replacing what the catalogue had of the module.
	Record(ctx context.Context, e CatalogEntry) error
	// ByCode returns the debug file and id of the module last stored
	// with the code file and id (names compared without case).
	ByCode(ctx context.Context, codeFile, codeID string) (debugFile, debugID string, ok bool, err error)
}

// CatalogEntry is a stored module's .sym as the Catalog records it.
type CatalogEntry struct {
	// DebugFile and DebugID are its MODULE line's; Name the .sym's name
	// (NAME.sym); CodeFile and CodeID its INFO CODE_ID record's ("" without).
	DebugFile, DebugID, Name, CodeFile, CodeID string
	// Size is the .sym's size in bytes.
	Size int64
}

// catalogued reports whether the code ids are recorded in Config.Catalog
// (set, with the symbols on the blob store) rather than in the directory
// beside Dir.
func (s *Server) catalogued() bool { return s.cfg.Catalog != nil && s.cfg.Symbols != nil }

// catalog records the .sym at symPath of the module debugFile/debugID
// in Config.Catalog (with the symbols on the blob store).
func (s *Server) catalog(ctx context.Context, symPath, debugFile, debugID string, size int64) error {
	if !s.catalogued() {
		return nil
	}
	h, err := readHeader(symPath)
	if err != nil {
		return err
	}
	codeFile := h.CodeFile
	if codeFile == "" {
		codeFile = h.DebugFile
	}
	e := CatalogEntry{DebugFile: debugFile, DebugID: debugID, Size: size}
	if h.CodeID != "" && symstore.CheckName(codeFile) == nil && symstore.CheckName(h.CodeID) == nil {
		e.CodeFile, e.CodeID = codeFile, strings.ToUpper(h.CodeID)
	}
	elems, err := symstore.BreakpadPath(debugFile, debugID, ".sym")
	if err != nil {
		return err
	}
	e.Name = elems[2]
	return s.cfg.Catalog.Record(ctx, e)
}

// codeDir is where the code-id index lives: CODE_FILE/CODE_ID files
// holding "DEBUG_FILE\nDEBUG_ID\n", beside the store.
func (s *Server) codeDir() string { return filepath.Clean(s.cfg.Dir) + ".codeid" }

// indexCode records the module's code file and id (from its INFO CODE_ID
// record) in the directory beside Dir, so that downloads and syminfo by
// code id find it; with a Catalog (symbols on the blob store) the
// catalogue does instead (catalog).
func (s *Server) indexCode(symPath string) {
	if s.catalogued() {
		return
	}
	h, err := readHeader(symPath)
	if err != nil || h.CodeID == "" {
		return
	}
	codeFile := h.CodeFile
	if codeFile == "" {
		codeFile = h.DebugFile
	}
	if symstore.CheckName(codeFile) != nil || symstore.CheckName(h.CodeID) != nil {
		return
	}
	// The Microsoft layout's NAME/ID/NAME is the path; "NAME" at the end
	// holds the debug file and id.
	elems, err := symstore.MicrosoftPath(codeFile, strings.ToUpper(h.CodeID), symstore.Plain)
	if err != nil {
		return
	}
	tmp, err := os.CreateTemp(s.cfg.Incoming, "code-*")
	if err != nil {
		return
	}
	tmp.WriteString(h.DebugFile + "\n" + h.DebugID + "\n")
	tmp.Close()
	if err := commit(tmp.Name(), filepath.Join(append([]string{s.codeDir()}, elems...)...)); err != nil {
		os.Remove(tmp.Name())
		s.log.Warn("code id index", "code_file", codeFile, "code_id", h.CodeID, "err", err)
	}
}

// byCode returns the debug file and id of the module with the given code
// file and code id, if an upload recorded it: in the Catalog with the
// symbols on the blob store (an error when it does not answer), else in
// the directory beside Dir.
func (s *Server) byCode(ctx context.Context, codeFile, codeID string) (string, string, bool, error) {
	if s.catalogued() {
		f, id, ok, err := s.cfg.Catalog.ByCode(ctx, codeFile, codeID)
		if err != nil {
			return "", "", false, fmt.Errorf("symbols by code id %s/%s: %w", codeFile, codeID, err)
		}
		if !ok || checkNames(f, id) != nil {
			return "", "", false, nil
		}
		return f, id, true, nil
	}
	elems, err := symstore.MicrosoftPath(codeFile, strings.ToUpper(codeID), symstore.Plain)
	if err != nil {
		return "", "", false, nil
	}
	b, err := os.ReadFile(filepath.Join(append([]string{s.codeDir()}, elems...)...))
	if err != nil {
		return "", "", false, nil
	}
	f, id, ok := strings.Cut(strings.TrimSuffix(string(b), "\n"), "\n")
	if !ok || checkNames(f, id) != nil {
		return "", "", false, nil
	}
	return f, id, true, nil
}

// module is a module a request names: by its debug file and id, or by
// its code file and id (the module's debug file and id found by byCode).
type module struct {
	DebugFile, DebugID string
}

// debugModules returns the modules a request for file and id names by
// debug file and id: the id as given, then in upper case.
func debugModules(file, id string) []module {
	ms := []module{{file, id}}
	if u := strings.ToUpper(id); u != id {
		ms = append(ms, module{file, u})
	}
	return ms
}

// codeModule returns the module whose code file and id are file and id,
// if an upload recorded it.
func (s *Server) codeModule(ctx context.Context, file, id string) ([]module, error) {
	df, did, ok, err := s.byCode(ctx, file, id)
	if err != nil || !ok {
		return nil, err
	}
	return []module{{df, did}}, nil
}

// symPath returns Dir's .sym of the first of ms there.
func (s *Server) symPath(ms []module) (string, module, bool) {
	for _, m := range ms {
		p, err := symstore.BreakpadFile(s.cfg.Dir, m.DebugFile, m.DebugID, ".sym")
		if err != nil {
			continue
		}
		if st, err := os.Stat(p); err == nil && st.Mode().IsRegular() {
			return p, m, true
		}
	}
	return "", module{}, false
}

// syminfo serves GET /api/syminfo/{file}/{id} as Tecken's: the debug and
// code names and identifiers of a module, looked up by either, in Dir or
// (Config.Symbols) on the blob store.
func (s *Server) syminfo(w http.ResponseWriter, r *http.Request) {
	file, id := r.PathValue("file"), r.PathValue("id")
	if checkNames(file, id) != nil {
		http.NotFound(w, r)
		return
	}
	h, found, err := s.header(r.Context(), debugModules(file, id))
	if err == nil && !found {
		var ms []module
		if ms, err = s.codeModule(r.Context(), file, id); err == nil {
			h, found, err = s.header(r.Context(), ms)
		}
	}
	if err != nil {
		s.log.Warn("syminfo", "file", file, "id", id, "err", err)
		http.Error(w, "symbol store unavailable", http.StatusServiceUnavailable)
		return
	}
	if !found {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusNotFound)
		w.Write([]byte(`{"error":"symbol file not found"}` + "\n"))
		return
	}
	w.Header().Set("Content-Type", "application/json")
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	enc.Encode(h)
}

// header reads the MODULE and INFO records of the first of ms stored, in
// Dir or on the blob store.
func (s *Server) header(ctx context.Context, ms []module) (header, bool, error) {
	if p, _, ok := s.symPath(ms); ok {
		h, err := readHeader(p)
		return h, err == nil, err
	}
	if s.cfg.Symbols == nil {
		return header{}, false, nil
	}
	for _, m := range ms {
		rc, _, err := s.cfg.Symbols.Open(ctx, m.DebugFile, m.DebugID)
		if errors.Is(err, blob.ErrNotExist) {
			continue
		}
		if err != nil {
			return header{}, false, err
		}
		h := readHeaderFrom(rc)
		rc.Close()
		return h, true, nil
	}
	return header{}, false, nil
}
