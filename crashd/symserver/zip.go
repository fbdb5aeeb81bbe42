package symserver

import (
	"archive/zip"
	"errors"
	"fmt"
	"io"
	"mime"
	"mime/multipart"
	"net/http"
	"os"
	"strings"
	"time"

	"github.com/gobreakpad/gobreakpad/crashd/auth"
	"github.com/gobreakpad/gobreakpad/symstore"
)

// ZipMember is a member of a Tecken-style symbols zip: MODULE/ID/FILE.
type ZipMember struct {
	DebugFile, DebugID, Name string
	Size                     uint64
	file                     *zip.File
}

// maxZipMembers bounds the members of one zip.
const maxZipMembers = 100000

// Inflation bounds of zip members (Tecken zips and native-file bundles):
// past its first MiB, a member may declare at most maxInflateRatio times
// its compressed size. Symbol files and debug files compress 3-10 times; a
// member of zeros 1,000 times: 413, nothing extracted. (A member inflating
// past what it declares is refused as it is extracted.)
const (
	maxInflateRatio = 100
	inflateFloor    = 1 << 20
)

// checkInflation refuses a zip member declaring more than the inflation bound allows.
func checkInflation(what string, f *zip.File) error {
	if f.UncompressedSize64 > inflateFloor && f.UncompressedSize64/maxInflateRatio > f.CompressedSize64 {
		return &uploadError{http.StatusRequestEntityTooLarge, fmt.Errorf("%s %q: %d bytes declared from %d compressed, over %d times",
			what, f.Name, f.UncompressedSize64, f.CompressedSize64, maxInflateRatio)}
	}
	return nil
}

// ZipMembers checks a symbols zip's directory as Tecken's upload does
// before anything is extracted: every file member named
// <module>/<ID>/<file>, each element passing symstore.CheckName, the file
// the module's .sym in the Breakpad layout; no member declaring more than
// maxMember bytes, nor all of them more than maxTotal. Directories are
// skipped.
func ZipMembers(zr *zip.Reader, maxMember, maxTotal uint64) ([]ZipMember, error) {
	if len(zr.File) > maxZipMembers {
		return nil, fmt.Errorf("zip: over %d members", maxZipMembers)
	}
	var out []ZipMember
	var total uint64
	for _, f := range zr.File {
		if strings.HasSuffix(f.Name, "/") && f.UncompressedSize64 == 0 {
			continue
		}
		el := strings.Split(f.Name, "/")
		if len(el) != 3 {
			return nil, fmt.Errorf("zip member %q: not MODULE/ID/FILE", f.Name)
		}
		for _, e := range el {
			if err := symstore.CheckName(e); err != nil {
				return nil, fmt.Errorf("zip member %q: %w", f.Name, err)
			}
		}
		want, err := symstore.BreakpadPath(el[0], el[1], ".sym")
		if err != nil || want[2] != el[2] {
			return nil, fmt.Errorf("zip member %q: not the module's .sym (%s/%s/%s)", f.Name, el[0], el[1], strings.Join(want[2:], ""))
		}
		if f.UncompressedSize64 > maxMember {
			return nil, &uploadError{http.StatusRequestEntityTooLarge, fmt.Errorf("zip member %q: %d bytes declared, over the limit of %d", f.Name, f.UncompressedSize64, maxMember)}
		}
		if err := checkInflation("zip member", f); err != nil {
			return nil, err
		}
		if total += f.UncompressedSize64; total > maxTotal {
			return nil, &uploadError{http.StatusRequestEntityTooLarge, fmt.Errorf("zip: over %d bytes declared in all", maxTotal)}
		}
		out = append(out, ZipMember{DebugFile: el[0], DebugID: el[1], Name: el[2], Size: f.UncompressedSize64, file: f})
	}
	if len(out) == 0 {
		return nil, errors.New("zip: no symbol files")
	}
	return out, nil
}

// zipUpload is Tecken's answer to an upload (the fields crashd fills).
type zipUpload struct {
	Filename    string       `json:"filename"`
	Size        int64        `json:"size"`
	SkippedKeys []string     `json:"skipped_keys"`
	FileUploads []fileUpload `json:"file_uploads"`
	CompletedAt time.Time    `json:"completed_at"`
}

type fileUpload struct {
	Key    string `json:"key"`
	Size   int64  `json:"size"`
	Update bool   `json:"update"`
}

// uploadZip serves Tecken's POST /upload/: the first file of a multipart
// form is a zip of MODULE/ID/FILE.sym members; 201 and the upload's JSON,
// unchanged files listed as skipped.
func (s *Server) uploadZip(w http.ResponseWriter, r *http.Request) {
	fail := func(err error) { s.fail(w, r, err, true) }
	if _, err := s.authorize(r, auth.ScopeUpload, false); err != nil {
		fail(err)
		return
	}
	u, err := s.begin(r.Context())
	if err != nil {
		fail(err)
		return
	}
	defer u.done()
	r.Body = http.MaxBytesReader(w, r.Body, s.cfg.MaxUpload+1<<20)
	mt, params, err := mime.ParseMediaType(r.Header.Get("Content-Type"))
	if err != nil || mt != "multipart/form-data" || params["boundary"] == "" {
		fail(badUpload("not a multipart/form-data body"))
		return
	}
	mr := multipart.NewReader(r.Body, params["boundary"])
	var tmp, filename string
	for {
		p, err := mr.NextPart()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			var me *http.MaxBytesError
			if errors.As(err, &me) {
				err = &uploadError{http.StatusRequestEntityTooLarge, errors.New("the upload is over the size limit")}
			} else {
				err = badUpload("multipart body: %v", err)
			}
			fail(err)
			return
		}
		if p.FileName() == "" || tmp != "" {
			io.Copy(io.Discard, io.LimitReader(p, 1<<20))
			continue
		}
		filename = p.FileName()
		if tmp, err = s.receive(u, p); err != nil {
			fail(err)
			return
		}
		defer os.Remove(tmp)
	}
	if tmp == "" {
		fail(badUpload("no file in the form"))
		return
	}
	zf, err := zip.OpenReader(tmp)
	if err != nil {
		fail(badUpload("%s: not a zip file: %v", filename, err))
		return
	}
	defer zf.Close()
	// Its directory, read whole by OpenReader (at most maxZipMembers
	// members: ZipMembers below).
	release, err := u.phase(int64(min(len(zf.File), maxZipMembers+1)) * zipEntryCost)
	if err != nil {
		fail(err)
		return
	}
	defer release()
	st, _ := os.Stat(tmp)
	mems, err := ZipMembers(&zf.Reader, uint64(s.cfg.MaxUpload), 4*uint64(s.cfg.MaxUpload))
	if err != nil {
		var ue *uploadError
		if !errors.As(err, &ue) {
			err = badUpload("%v", err)
		}
		fail(err)
		return
	}
	up := zipUpload{Filename: filename, Size: st.Size(), SkippedKeys: []string{}, FileUploads: []fileUpload{}}
	for _, m := range mems {
		part, err := s.extract(u, m)
		if err != nil {
			fail(err)
			return
		}
		stored, err := s.ingest(r.Context(), u, part, Want{DebugFile: m.DebugFile, DebugID: m.DebugID})
		u.unspool(int64(m.Size)) // the member's file is gone
		if err != nil {
			fail(fmt.Errorf("%s/%s/%s: %w", m.DebugFile, m.DebugID, m.Name, err))
			return
		}
		s.stored(r, stored)
		key := m.DebugFile + "/" + m.DebugID + "/" + m.Name
		if stored.Duplicate {
			up.SkippedKeys = append(up.SkippedKeys, key)
			continue
		}
		up.FileUploads = append(up.FileUploads, fileUpload{Key: key, Size: stored.Size, Update: true})
	}
	up.CompletedAt = time.Now().UTC()
	writeJSON(w, http.StatusCreated, map[string]any{"upload": up})
}

// extract writes a zip member into Incoming, at most its declared size (a
// member inflating past it is refused).
func (s *Server) extract(u *upload, m ZipMember) (string, error) {
	// At most its declared size is written; given back when the upload is
	// done (its members are removed by then).
	if err := u.spool(int64(m.Size)); err != nil {
		return "", err
	}
	rc, err := m.file.Open()
	if err != nil {
		return "", badUpload("zip member %s: %v", m.file.Name, err)
	}
	defer rc.Close()
	f, err := os.CreateTemp(s.cfg.Incoming, "zip-*")
	if err != nil {
		return "", &uploadError{http.StatusInternalServerError, err}
	}
	n, err := io.Copy(f, io.LimitReader(rc, int64(m.Size)+1))
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil && uint64(n) != m.Size {
		err = fmt.Errorf("%d bytes, %d declared", n, m.Size)
	}
	if err != nil {
		os.Remove(f.Name())
		return "", badUpload("zip member %s: %v", m.file.Name, err)
	}
	return f.Name(), nil
}
