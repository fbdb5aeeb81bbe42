package symserver

import (
	"archive/zip"
	"bytes"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/gobreakpad/gobreakpad/dumpsyms"
	"github.com/gobreakpad/gobreakpad/symbols/formats"
	"github.com/gobreakpad/gobreakpad/symstore"
)

// A bundle is an upload of native debug files that belong together, as a
// build system has them: a zip whose members are a module's files with
// their companions beside them, converted together by our dump_syms code:
//
//   - an ELF binary and its separate debug file (under the name its
//     .gnu_debuglink gives, or BUILDID.debug / .build-id/NN/REST.debug);
//   - a PE and its PDB (the PDB under the name the PE's CodeView record
//     gives);
//   - a Mach-O binary and its dSYM bundle (BINARY.dSYM/Contents/...).
//
// The main file is the top-level member named as the upload's code file,
// else its debug file, else the only top-level file.

// zipMagic starts a zip file (a local file header).
var zipMagic = []byte("PK\x03\x04")

// Bounds of a bundle.
const (
	maxBundleMembers = 1000
	maxBundleDepth   = 16
)

// BundleMembers checks a bundle's directory before anything is extracted:
// at most maxBundleMembers members, every path element passing
// symstore.CheckName (no "..", no separators but '/', no absolute names),
// at most maxBundleDepth elements, no member declaring more than maxMember
// bytes nor all of them more than maxTotal. It returns the file members
// (directories skipped).
func BundleMembers(zr *zip.Reader, maxMember, maxTotal uint64) ([]*zip.File, error) {
	if len(zr.File) > maxBundleMembers {
		return nil, fmt.Errorf("bundle: over %d members", maxBundleMembers)
	}
	var out []*zip.File
	var total uint64
	seen := map[string]bool{}
	for _, f := range zr.File {
		name := f.Name
		dir := strings.HasSuffix(name, "/")
		el := strings.Split(strings.TrimSuffix(name, "/"), "/")
		if len(el) > maxBundleDepth {
			return nil, fmt.Errorf("bundle member %q: over %d path elements", name, maxBundleDepth)
		}
		for _, e := range el {
			if err := symstore.CheckName(e); err != nil {
				return nil, fmt.Errorf("bundle member %q: %w", name, err)
			}
		}
		if dir {
			continue
		}
		if !f.Mode().IsRegular() {
			return nil, fmt.Errorf("bundle member %q: not a regular file (%v)", name, f.Mode().Type())
		}
		k := strings.ToLower(name)
		if seen[k] {
			return nil, fmt.Errorf("bundle member %q: twice", name)
		}
		seen[k] = true
		if f.UncompressedSize64 > maxMember {
			return nil, &uploadError{http.StatusRequestEntityTooLarge, fmt.Errorf("bundle member %q: %d bytes declared, over the limit of %d", name, f.UncompressedSize64, maxMember)}
		}
		if err := checkInflation("bundle member", f); err != nil {
			return nil, err
		}
		if total += f.UncompressedSize64; total > maxTotal {
			return nil, &uploadError{http.StatusRequestEntityTooLarge, fmt.Errorf("bundle: over %d bytes declared in all", maxTotal)}
		}
		out = append(out, f)
	}
	if len(out) == 0 {
		return nil, errors.New("bundle: no files")
	}
	return out, nil
}

// mainMember picks the bundle's main file: the top-level member named as
// one of names (in order, without case), else the only top-level file.
func mainMember(mems []*zip.File, names ...string) (string, error) {
	var top []string
	for _, f := range mems {
		if !strings.Contains(f.Name, "/") {
			top = append(top, f.Name)
		}
	}
	for _, n := range names {
		if n == "" {
			continue
		}
		if i := slices.IndexFunc(top, func(t string) bool { return strings.EqualFold(t, n) }); i >= 0 {
			return top[i], nil
		}
	}
	if len(top) == 1 {
		return top[0], nil
	}
	return "", badUpload("bundle: %d top-level files (%s) and none named as the upload's code or debug file (%s)", len(top), strings.Join(top, ", "), strings.Join(slices.DeleteFunc(slices.Clone(names), func(s string) bool { return s == "" }), ", "))
}

// convertBundle extracts the bundle tmp into a directory of Incoming and
// converts its main file, with its companions beside it, into a .sym
// beside Incoming's other files (its path returned).
func (s *Server) convertBundle(u *upload, tmp string, want Want) (string, error) {
	zf, err := zip.OpenReader(tmp)
	if err != nil {
		return "", badUpload("bundle: not a zip file: %v", err)
	}
	defer zf.Close()
	mems, err := BundleMembers(&zf.Reader, uint64(s.cfg.MaxUpload), 4*uint64(s.cfg.MaxUpload))
	if err != nil {
		var ue *uploadError
		if !errors.As(err, &ue) {
			err = badUpload("%v", err)
		}
		return "", err
	}
	main, err := mainMember(mems, symstore.BaseName(want.CodeFile), symstore.BaseName(want.DebugFile))
	if err != nil {
		return "", err
	}
	dir, err := os.MkdirTemp(s.cfg.Incoming, "bundle-*")
	if err != nil {
		return "", &uploadError{http.StatusInternalServerError, err}
	}
	var extracted int64
	defer func() { u.unspool(extracted) }() // after the removal below
	defer os.RemoveAll(dir)
	root, err := os.OpenRoot(dir)
	if err != nil {
		return "", &uploadError{http.StatusInternalServerError, err}
	}
	defer root.Close()
	dirs := []string{dir}
	for _, f := range mems {
		// At most its declared size is written.
		if err := u.spool(int64(f.UncompressedSize64)); err != nil {
			return "", err
		}
		extracted += int64(f.UncompressedSize64)
		if err := extractTo(root, f); err != nil {
			return "", err
		}
		if d := filepath.Dir(filepath.Join(dir, filepath.FromSlash(f.Name))); !slices.Contains(dirs, d) {
			dirs = append(dirs, d)
		}
	}
	mainPath := filepath.Join(dir, main)
	opts := dumpsyms.Options{Inlines: true, DebugDirs: dirs}
	// The companions' directories are searched for ELF debug files (by
	// build id or .gnu_debuglink); a PE finds its PDB and a Mach-O its
	// dSYM beside it.
	var o formats.DumpOptions
	o.PE.Options = opts
	o.MachO.Options = opts
	model, err := formats.DumpNative(mainPath, o)
	if err != nil {
		return "", badUpload("converting the bundle's %s into symbols: %v", main, err)
	}
	sym, err := s.writeIncoming(u, func(w io.Writer) error {
		return breakpadFormat.Write(w, model, formats.WriteOptions{})
	})
	if ue := (*uploadError)(nil); errors.As(err, &ue) {
		return "", ue
	} else if err != nil {
		return "", badUpload("writing the symbols of the bundle's %s: %v", main, err)
	}
	return sym, nil
}

// extractTo writes a bundle member under root, at most its declared size
// (a member inflating past it is refused).
func extractTo(root *os.Root, f *zip.File) error {
	name := filepath.FromSlash(f.Name)
	if d := filepath.Dir(name); d != "." {
		if err := root.MkdirAll(d, 0o755); err != nil {
			return badUpload("bundle member %s: %v", f.Name, err)
		}
	}
	rc, err := f.Open()
	if err != nil {
		return badUpload("bundle member %s: %v", f.Name, err)
	}
	defer rc.Close()
	w, err := root.OpenFile(name, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
	if err != nil {
		return badUpload("bundle member %s: %v", f.Name, err)
	}
	n, err := io.Copy(w, io.LimitReader(rc, int64(f.UncompressedSize64)+1))
	if cerr := w.Close(); err == nil {
		err = cerr
	}
	if err == nil && uint64(n) != f.UncompressedSize64 {
		err = fmt.Errorf("%d bytes, %d declared", n, f.UncompressedSize64)
	}
	if err != nil {
		return badUpload("bundle member %s: %v", f.Name, err)
	}
	return nil
}

// isZip reports whether a file's first bytes are a zip's.
func isZip(head []byte) bool { return bytes.HasPrefix(head, zipMagic) }
