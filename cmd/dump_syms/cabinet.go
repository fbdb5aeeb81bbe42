package main

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/gobreakpad/gobreakpad/cab"
	"github.com/gobreakpad/gobreakpad/symbols/pdbsyms"
	"github.com/gobreakpad/gobreakpad/symstore"
)

// cabMagic starts every Microsoft Cabinet file.
const cabMagic = "MSCF"

// magic returns the first bytes of the file at path.
func magic(path string, n int) string {
	f, err := os.Open(path)
	if err != nil {
		return ""
	}
	defer f.Close()
	b := make([]byte, n)
	m, _ := io.ReadFull(f, b)
	return string(b[:m])
}

// unpack returns path itself when it is not a cabinet, else the path of
// the file it holds, extracted into the temporary directory under its own
// name. A cabinet of several files gives the one named as path's
// unpacked name (unpackedName), as Mozilla's dump_syms picks it.
func (w *winFiles) unpack(path string) (string, error) {
	f, err := os.Open(path)
	if err != nil {
		return path, nil // not a cabinet, as magic says of a file it cannot open
	}
	defer f.Close()
	head := make([]byte, len(cabMagic))
	if n, _ := f.ReadAt(head, 0); string(head[:n]) != cabMagic {
		return path, nil
	}
	st, err := f.Stat()
	if err != nil {
		return "", err
	}
	r, err := cab.NewReader(f, st.Size())
	if err != nil {
		return "", fmt.Errorf("%s: %w", path, err)
	}
	want := symstore.UnpackedName(filepath.Base(path))
	var file *cab.File
	for _, cf := range r.Files {
		if strings.EqualFold(symstore.BaseName(cf.Name), want) {
			file = cf
			break
		}
	}
	if file == nil && len(r.Files) == 1 {
		file = r.Files[0]
	}
	if file == nil {
		return "", fmt.Errorf("%s: a cabinet of %d files, none named %s", path, len(r.Files), want)
	}
	limit := pdbsyms.InflateLimit(st.Size(), w.maxRatio)
	if int64(file.Size) > limit {
		return "", fmt.Errorf("%s: %s declares %d bytes, over %d times the cabinet's size (--max-inflate-ratio)", path, file.Name, file.Size, w.maxRatio)
	}
	// The stored name may hold directories or anything else: only a
	// plain file name is used, else the cabinet's own unpacked name.
	name := symstore.BaseName(file.Name)
	if symstore.CheckName(name) != nil {
		name = want
	}
	if w.tmp == "" {
		if w.tmp, err = os.MkdirTemp("", "dump_syms-cab-"); err != nil {
			return "", err
		}
	}
	dir, err := os.MkdirTemp(w.tmp, "f")
	if err != nil {
		return "", err
	}
	out := filepath.Join(dir, name)
	src, err := file.Open()
	if err != nil {
		return "", fmt.Errorf("%s: %s: %w", path, file.Name, err)
	}
	dst, err := os.Create(out)
	if err != nil {
		return "", err
	}
	_, err = io.Copy(dst, io.LimitReader(src, int64(file.Size)))
	if cerr := dst.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return "", fmt.Errorf("%s: extracting %s: %w", path, file.Name, err)
	}
	return out, nil
}

// companionPE returns the PE of a PDB that came from a cabinet or a
// store: beside the original file (dir), NAME.exe or NAME.dll, else
// their cabinets NAME.ex_ and NAME.dl_ (extracted). It returns "" when
// there is none.
func (w *winFiles) companionPE(dir, stem string) string {
	for _, ext := range []string{".exe", ".dll", ".ex_", ".dl_"} {
		p := filepath.Join(dir, stem+ext)
		if !isFile(p) {
			continue
		}
		u, err := w.unpack(p)
		if err != nil {
			w.warn("%v", err)
			continue
		}
		if magic(u, 2) == "MZ" {
			return u
		}
	}
	return ""
}
