package symserver

import (
	"compress/gzip"
	"errors"
	"io"
	"net/http"
	"os"
	"slices"
	"strconv"
	"strings"

	"github.com/gobreakpad/gobreakpad/crashd/blob"
	"github.com/gobreakpad/gobreakpad/symstore"
)

// download serves GET and HEAD /symbols/{debug_file}/{debug_id}/{name}:
// the module's .sym when name is the last element of its Breakpad store
// path (NAME.sym, NAME without ".pdb"), else 404; also
// /symbols/{code_file}/{code_id}/{name} for a module whose .sym has an
// INFO CODE_ID record (recorded at upload: byCode). With Config.Symbols the
// file comes from Dir when this process has a copy, else from the blob
// store. A client sending Accept-Encoding: gzip (and no Range) gets it
// gzipped.
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
	if s.serve(w, r, debugModules(file, id), file, name) {
		return
	}
	ms, err := s.codeModule(r.Context(), file, id)
	if err != nil {
		s.log.Warn("symbols download", "file", file, "id", id, "err", err)
		http.Error(w, "symbol store unavailable", http.StatusServiceUnavailable)
		return
	}
	if s.serve(w, r, ms, file, name) {
		return
	}
	s.m.downloads.WithLabelValues("not_found").Inc()
	http.NotFound(w, r)
}

// nameOf reports whether name is the .sym of m asked for under file: the
// last element of its Breakpad store path under its debug file's name or
// (found by code id) under file.
func nameOf(m module, file, name string) bool {
	for _, n := range []string{m.DebugFile, file} {
		if elems, err := symstore.BreakpadPath(n, m.DebugID, ".sym"); err == nil && elems[2] == name {
			return true
		}
	}
	return false
}

// serve answers the download of the first of ms stored whose .sym name
// is asked for: from Dir (a copy of this process's), or from the blob
// store (Config.Symbols: another process's upload, or always with
// Config.Redirect). It reports false, having answered nothing, when none
// is stored.
func (s *Server) serve(w http.ResponseWriter, r *http.Request, ms []module, file, name string) bool {
	ms = slices.DeleteFunc(slices.Clone(ms), func(m module) bool { return !nameOf(m, file, name) })
	path, _, ok := s.symPath(ms)
	if s.cfg.Symbols != nil && (!ok || s.cfg.Redirect > 0) {
		for _, m := range ms {
			if s.downloadBlob(w, r, m.DebugFile, m.DebugID) {
				return true
			}
		}
	}
	if !ok {
		return false
	}
	f, err := os.Open(path)
	if err != nil {
		return false
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil || !st.Mode().IsRegular() {
		return false
	}
	s.found(w)
	if r.Method == http.MethodGet && r.Header.Get("Range") == "" && acceptsGzip(r) {
		w.Header().Set("Last-Modified", st.ModTime().UTC().Format(http.TimeFormat))
		writeGzip(w, f)
		return true
	}
	http.ServeContent(w, r, name, st.ModTime(), f)
	return true
}

// found counts a download answered with a .sym and sets the headers of
// every such answer.
func (s *Server) found(w http.ResponseWriter) {
	s.m.downloads.WithLabelValues("found").Inc()
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	w.Header().Add("Vary", "Accept-Encoding")
}

// writeGzip answers 200 with the bytes of r gzipped.
func writeGzip(w http.ResponseWriter, r io.Reader) {
	w.Header().Set("Content-Encoding", "gzip")
	w.WriteHeader(http.StatusOK)
	zw, _ := gzip.NewWriterLevel(w, gzip.BestSpeed)
	if _, err := io.Copy(zw, r); err == nil {
		zw.Close()
	}
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

// downloadBlob answers a download of the module's .sym from the blob
// store (Config.Symbols): a 302 to a presigned URL when Config.Redirect
// allows and the store offers them, else the file relayed as it is read.
// It reports false when the blob store has no such module (the caller
// answers then).
func (s *Server) downloadBlob(w http.ResponseWriter, r *http.Request, file, id string) bool {
	if s.cfg.Redirect > 0 {
		ok, err := s.cfg.Symbols.Exists(r.Context(), file, id)
		if err != nil {
			s.log.Warn("symbols download from the blob store", "debug_file", file, "debug_id", id, "err", err)
			http.Error(w, "symbol store unavailable", http.StatusServiceUnavailable)
			return true
		}
		if !ok {
			return false
		}
		if u, ok, err := s.cfg.Symbols.URL(r.Context(), file, id, s.cfg.Redirect); ok && err == nil {
			s.m.downloads.WithLabelValues("found").Inc()
			w.Header().Set("Cache-Control", "private, no-store")
			http.Redirect(w, r, u.String(), http.StatusFound)
			return true
		}
	}
	rc, size, err := s.cfg.Symbols.Open(r.Context(), file, id)
	if errors.Is(err, blob.ErrNotExist) {
		return false
	}
	if err != nil {
		s.log.Warn("symbols download from the blob store", "debug_file", file, "debug_id", id, "err", err)
		http.Error(w, "symbol store unavailable", http.StatusServiceUnavailable)
		return true
	}
	defer rc.Close()
	s.found(w)
	if r.Method == http.MethodGet && acceptsGzip(r) {
		writeGzip(w, rc)
		return true
	}
	w.Header().Set("Content-Length", strconv.FormatInt(size, 10))
	w.WriteHeader(http.StatusOK)
	if r.Method == http.MethodGet {
		_, _ = io.Copy(w, rc)
	}
	return true
}
