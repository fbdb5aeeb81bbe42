package symserver

import (
	"errors"
	"fmt"
	"io"
	"mime"
	"mime/multipart"
	"net/http"
	"os"

	"github.com/gobreakpad/gobreakpad/crashd/auth"
)

// V1Form is a sym-upload-v1 form's fields, as Breakpad's clients send them
// (src/common/linux/symbol_upload.cc SymUploadV1Start, and Windows'
// symupload): the symbol file is the part named symbol_file.
type V1Form struct {
	DebugFile, DebugIdentifier, CodeFile, OS, CPU, Version, Product string
}

// Bounds of a v1 form besides its file.
const (
	maxV1Fields     = 64
	maxV1FieldBytes = 64 << 10
)

// ParseV1 reads a sym-upload-v1 multipart body (boundary from its
// Content-Type), handing the symbol_file part's bytes to file (called at
// most once) and returning the other fields. It reads the whole body.
func ParseV1(contentType string, body io.Reader, file func(io.Reader) error) (V1Form, error) {
	var f V1Form
	mt, params, err := mime.ParseMediaType(contentType)
	if err != nil || (mt != "multipart/form-data" && mt != "multipart/mixed") || params["boundary"] == "" {
		return f, fmt.Errorf("not a multipart/form-data body (Content-Type %q)", contentType)
	}
	mr := multipart.NewReader(body, params["boundary"])
	seen, fields := false, 0
	for {
		p, err := mr.NextPart()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return f, fmt.Errorf("multipart body: %w", err)
		}
		name := p.FormName()
		if name == "symbol_file" {
			if seen {
				return f, errors.New("two symbol_file parts")
			}
			seen = true
			if err := file(p); err != nil {
				return f, err
			}
			continue
		}
		if fields++; fields > maxV1Fields {
			return f, fmt.Errorf("over %d form fields", maxV1Fields)
		}
		b, err := io.ReadAll(io.LimitReader(p, maxV1FieldBytes+1))
		if err != nil {
			return f, fmt.Errorf("multipart body: field %q: %w", name, err)
		}
		if len(b) > maxV1FieldBytes {
			return f, fmt.Errorf("field %q: over %d bytes", name, maxV1FieldBytes)
		}
		v := string(b)
		switch name {
		case "debug_file":
			f.DebugFile = v
		case "debug_identifier":
			f.DebugIdentifier = v
		case "code_file":
			f.CodeFile = v
		case "os":
			f.OS = v
		case "cpu":
			f.CPU = v
		case "version":
			f.Version = v
		case "product":
			f.Product = v
		}
	}
	if !seen {
		return f, errors.New("no symbol_file part")
	}
	return f, nil
}

// uploadV1 serves POST /symbols/upload: 200 and "OK ..." when stored or
// already there, as Breakpad's Windows client needs exactly 200.
func (s *Server) uploadV1(w http.ResponseWriter, r *http.Request) {
	if _, err := s.authorize(r, auth.ScopeUpload, s.cfg.OpenV1); err != nil {
		s.fail(w, r, err, false)
		return
	}
	u, err := s.begin(r.Context())
	if err != nil {
		s.fail(w, r, err, false)
		return
	}
	defer u.done()
	r.Body = http.MaxBytesReader(w, r.Body, s.cfg.MaxUpload+1<<20)
	var tmp string
	form, err := ParseV1(r.Header.Get("Content-Type"), r.Body, func(p io.Reader) error {
		var err error
		tmp, err = s.receive(u, p)
		return err
	})
	if err != nil {
		if tmp != "" {
			os.Remove(tmp)
		}
		var ue *uploadError
		var me *http.MaxBytesError
		switch {
		case errors.As(err, &me):
			err = &uploadError{http.StatusRequestEntityTooLarge, errors.New("the upload is over the size limit")}
		case !errors.As(err, &ue):
			err = badUpload("sym-upload-v1 form: %v", err)
		}
		s.fail(w, r, err, false)
		return
	}
	st, err := s.ingest(r.Context(), u, tmp, Want{DebugFile: form.DebugFile, DebugID: form.DebugIdentifier, CodeFile: form.CodeFile})
	if err != nil {
		s.fail(w, r, err, false)
		return
	}
	s.stored(r, st)
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	w.WriteHeader(http.StatusOK)
	if st.Duplicate {
		fmt.Fprintf(w, "OK %s/%s (unchanged)\n", st.DebugFile, st.DebugID)
		return
	}
	fmt.Fprintf(w, "OK %s/%s\n", st.DebugFile, st.DebugID)
}
