package symserver

import (
	"bufio"
	"bytes"
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"strings"

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
// .sym (the INFO records follow MODULE; at most 16 lines are read).
func readHeader(path string) (header, error) {
	var h header
	f, err := os.Open(path)
	if err != nil {
		return h, err
	}
	defer f.Close()
	br := bufio.NewReaderSize(f, 8192)
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
						return h, nil
					}
				}
			}
		}
		if err != nil {
			break
		}
	}
	return h, nil
}

// codeDir is where the code-id index lives: CODE_FILE/CODE_ID files
// holding "DEBUG_FILE\nDEBUG_ID\n", beside the store.
func (s *Server) codeDir() string { return filepath.Clean(s.cfg.Dir) + ".codeid" }

// indexCode records the module's code file and id (from its INFO CODE_ID
// record) so that downloads and syminfo by code id find it.
func (s *Server) indexCode(symPath string) {
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
// file and code id, if an upload recorded it.
func (s *Server) byCode(codeFile, codeID string) (string, string, bool) {
	elems, err := symstore.MicrosoftPath(codeFile, strings.ToUpper(codeID), symstore.Plain)
	if err != nil {
		return "", "", false
	}
	b, err := os.ReadFile(filepath.Join(append([]string{s.codeDir()}, elems...)...))
	if err != nil {
		return "", "", false
	}
	f, id, ok := strings.Cut(strings.TrimSuffix(string(b), "\n"), "\n")
	if !ok || checkNames(f, id) != nil {
		return "", "", false
	}
	return f, id, true
}

// symPath returns the store's .sym of the module named by debug file and
// id, or by code file and id.
func (s *Server) symPath(file, id string) (string, header, bool) {
	try := func(f, i string) (string, bool) {
		p, err := symstore.BreakpadFile(s.cfg.Dir, f, i, ".sym")
		if err != nil {
			return "", false
		}
		st, err := os.Stat(p)
		return p, err == nil && st.Mode().IsRegular()
	}
	if p, ok := try(file, id); ok {
		return p, header{DebugFile: file, DebugID: id}, true
	}
	if p, ok := try(file, strings.ToUpper(id)); ok {
		return p, header{DebugFile: file, DebugID: strings.ToUpper(id)}, true
	}
	if df, did, ok := s.byCode(file, id); ok {
		if p, ok := try(df, did); ok {
			return p, header{DebugFile: df, DebugID: did}, true
		}
	}
	return "", header{}, false
}

// syminfo serves GET /api/syminfo/{file}/{id} as Tecken's: the debug and
// code names and identifiers of a module, looked up by either.
func (s *Server) syminfo(w http.ResponseWriter, r *http.Request) {
	file, id := r.PathValue("file"), r.PathValue("id")
	if checkNames(file, id) != nil {
		http.NotFound(w, r)
		return
	}
	p, _, ok := s.symPath(file, id)
	if !ok {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusNotFound)
		w.Write([]byte(`{"error":"symbol file not found"}` + "\n"))
		return
	}
	h, err := readHeader(p)
	if err != nil {
		http.Error(w, "reading the symbol file", http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	enc.Encode(h)
}
