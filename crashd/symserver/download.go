package symserver

import (
	"compress/gzip"
	"io"
	"net/http"
	"os"
	"strings"

	"github.com/gobreakpad/gobreakpad/symstore"
)

// download serves GET and HEAD /symbols/{debug_file}/{debug_id}/{name}:
// the module's .sym when name is the last element of its Breakpad store
// path (NAME.sym, NAME without ".pdb"), else 404; also
// /symbols/{code_file}/{code_id}/{name} for a module whose .sym has an
// INFO CODE_ID record. A client sending
// Accept-Encoding: gzip (and no Range) gets it gzipped.
func (s *Server) download(w http.ResponseWriter, r *http.Request) {
	parts := strings.Split(strings.TrimPrefix(r.URL.Path, "/symbols/"), "/")
	if len(parts) != 3 {
		http.NotFound(w, r)
		return
	}
	file, id, name := parts[0], parts[1], parts[2]
	if checkNames(file, id) != nil || symstore.CheckName(name) != nil {
		http.NotFound(w, r)
		return
	}
	path, h, ok := s.symPath(file, id)
	if !ok {
		s.m.downloads.WithLabelValues("not_found").Inc()
		http.NotFound(w, r)
		return
	}
	// The name asked for is the module's .sym, under the debug file's
	// name or (found by code id) the code file's.
	okName := false
	for _, n := range []string{h.DebugFile, file} {
		if elems, err := symstore.BreakpadPath(n, h.DebugID, ".sym"); err == nil && elems[2] == name {
			okName = true
		}
	}
	if !okName {
		http.NotFound(w, r)
		return
	}
	f, err := os.Open(path)
	if err != nil {
		http.NotFound(w, r)
		return
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil || !st.Mode().IsRegular() {
		http.NotFound(w, r)
		return
	}
	s.m.downloads.WithLabelValues("found").Inc()
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	w.Header().Add("Vary", "Accept-Encoding")
	if r.Method == http.MethodGet && r.Header.Get("Range") == "" && acceptsGzip(r) {
		w.Header().Set("Content-Encoding", "gzip")
		w.Header().Set("Last-Modified", st.ModTime().UTC().Format(http.TimeFormat))
		w.WriteHeader(http.StatusOK)
		zw, _ := gzip.NewWriterLevel(w, gzip.BestSpeed)
		if _, err := io.Copy(zw, f); err == nil {
			zw.Close()
		}
		return
	}
	http.ServeContent(w, r, name, st.ModTime(), f)
}

// acceptsGzip reports whether the request's Accept-Encoding names gzip
// (without q=0).
func acceptsGzip(r *http.Request) bool {
	for _, v := range r.Header.Values("Accept-Encoding") {
		for e := range strings.SplitSeq(v, ",") {
			e = strings.TrimSpace(e)
			name, params, _ := strings.Cut(e, ";")
			if strings.EqualFold(strings.TrimSpace(name), "gzip") && strings.ReplaceAll(params, " ", "") != "q=0" {
				return true
			}
		}
	}
	return false
}
