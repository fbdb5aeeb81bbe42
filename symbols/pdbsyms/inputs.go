package pdbsyms

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/gobreakpad/gobreakpad/cab"
	"github.com/gobreakpad/gobreakpad/dumpsyms"
	dspe "github.com/gobreakpad/gobreakpad/dumpsyms/pe"
	"github.com/gobreakpad/gobreakpad/pdb"
	"github.com/gobreakpad/gobreakpad/symstore"
)

// cabMagic starts every Microsoft Cabinet file.
const cabMagic = "MSCF"

// Inputs reads the Windows files a program is given as they are on disk
// (dump_syms' inputs): cabinets (.pd_, .ex_, .dl_) are extracted into a
// temporary directory, removed by Close, and a PDB is read with its PE
// found beside it, plain or as a cabinet. The zero value extracts at most
// 64 MiB of a cabinet's file.
type Inputs struct {
	// MaxRatio bounds a cabinet's file: at most this many times the
	// cabinet's size (and at least 64 MiB; InflateLimit).
	MaxRatio int64
	// Warn, when set, receives what was skipped and why.
	Warn func(format string, args ...any)
	// MakeTemp and RemoveTemp, when set, make and remove the temporary
	// directory instead of os.MkdirTemp and os.RemoveAll: a program passes
	// functions that also remove it when the program is stopped by a signal
	// (cmd/internal/tempdir), so that no extracted file outlives it.
	MakeTemp   func(pattern string) (string, error)
	RemoveTemp func(dir string) error

	tmp string
}

// Close removes the extracted files.
func (in *Inputs) Close() error {
	if in.tmp == "" {
		return nil
	}
	if in.RemoveTemp != nil {
		return in.RemoveTemp(in.tmp)
	}
	return os.RemoveAll(in.tmp)
}

func (in *Inputs) warn(format string, args ...any) {
	if in.Warn != nil {
		in.Warn(format, args...)
	}
}

// HasMagic reports whether the file at path starts with magic (false when
// it cannot be read).
func HasMagic(path, magic string) bool {
	f, err := os.Open(path)
	if err != nil {
		return false
	}
	defer f.Close()
	b := make([]byte, len(magic))
	n, _ := io.ReadFull(f, b)
	return string(b[:n]) == magic
}

// IsPDB reports whether the file at path is a PDB 7.0 file (by its magic).
func IsPDB(path string) bool { return HasMagic(path, pdb.Magic) }

// cabinetFile returns the file of cabinet r (at path) to extract: the one
// named want (in any case, directories of the stored name ignored), else
// the only one. With want empty, the cabinet must hold exactly one file.
func cabinetFile(r *cab.Reader, path, want string) (*cab.File, error) {
	if want == "" {
		if len(r.Files) != 1 {
			return nil, fmt.Errorf("%s: %d files in the cabinet, want 1", path, len(r.Files))
		}
		return r.Files[0], nil
	}
	for _, cf := range r.Files {
		if strings.EqualFold(symstore.BaseName(cf.Name), want) {
			return cf, nil
		}
	}
	if len(r.Files) == 1 {
		return r.Files[0], nil
	}
	return nil, fmt.Errorf("%s: a cabinet of %d files, none named %s", path, len(r.Files), want)
}

// Unpack returns path itself when it is not a cabinet, else the path of
// the file it holds, extracted into the temporary directory under its own
// name. A cabinet of several files gives the one named as path's unpacked
// name (symstore.UnpackedName), as Mozilla's dump_syms picks it; a stored
// name that is not a plain file name (symstore.CheckName) is replaced by
// that unpacked name.
func (in *Inputs) Unpack(path string) (string, error) {
	f, err := os.Open(path)
	if err != nil {
		return path, nil // not a cabinet, as HasMagic says of a file it cannot open
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
	file, err := cabinetFile(r, path, want)
	if err != nil {
		return "", err
	}
	if limit := InflateLimit(st.Size(), in.MaxRatio); int64(file.Size) > limit {
		return "", fmt.Errorf("%s: %s declares %d bytes, over %d times the cabinet's size (--max-inflate-ratio)", path, file.Name, file.Size, in.MaxRatio)
	}
	// The stored name may hold directories or anything else: only a
	// plain file name is used, else the cabinet's own unpacked name.
	name := symstore.BaseName(file.Name)
	if symstore.CheckName(name) != nil {
		name = want
	}
	if in.tmp == "" {
		mk := in.MakeTemp
		if mk == nil {
			mk = func(pattern string) (string, error) { return os.MkdirTemp("", pattern) }
		}
		if in.tmp, err = mk("dump_syms-cab-"); err != nil {
			return "", err
		}
	}
	dir, err := os.MkdirTemp(in.tmp, "f")
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

// PDBFile returns the PDB at path, extracted when it is a cabinet (as
// Mozilla's dump_syms keeps them in its caches), and fails when the file is
// neither.
func (in *Inputs) PDBFile(path string) (string, error) {
	p, err := in.Unpack(path)
	if err != nil {
		return "", err
	}
	if !IsPDB(p) {
		return "", fmt.Errorf("%s: not a PDB 7.0 file", path)
	}
	return p, nil
}

// CompanionPE returns the PE of a PDB that came from a cabinet or a
// store: beside the original file (in dir), NAME.exe or NAME.dll, else
// their cabinets NAME.ex_ and NAME.dl_ (extracted). It returns "" when
// there is none.
func (in *Inputs) CompanionPE(dir, stem string) string {
	for _, ext := range []string{".exe", ".dll", ".ex_", ".dl_"} {
		p := filepath.Join(dir, stem+ext)
		if !isFile(p) {
			continue
		}
		u, err := in.Unpack(p)
		if err != nil {
			in.warn("%v", err)
			continue
		}
		if HasMagic(u, "MZ") {
			return u
		}
	}
	return ""
}

// DumpPDB dumps the PDB at path (extracted, or fetched: not necessarily
// where the file named on the command line, orig, is) with its PE: the
// PE beside orig when the PDB is elsewhere; when it is orig itself, the PE
// beside it as pe.DumpWith finds it, or its cabinet (NAME.ex_, NAME.dl_).
func (in *Inputs) DumpPDB(orig, path string, opts dspe.Options) (*dumpsyms.Model, error) {
	dir := filepath.Dir(orig)
	stem := strings.TrimSuffix(filepath.Base(path), filepath.Ext(path))
	if path != orig {
		// A PDB away from its PE: the PE beside the file named.
		return dspe.DumpFiles(path, in.CompanionPE(dir, stem), opts)
	}
	if !isFile(filepath.Join(dir, stem+".exe")) && !isFile(filepath.Join(dir, stem+".dll")) {
		if p := in.CompanionPE(dir, stem); p != "" {
			return dspe.DumpFiles(path, p, opts) // NAME.ex_ or NAME.dl_ beside it
		}
	}
	return dspe.DumpWith(path, opts)
}
