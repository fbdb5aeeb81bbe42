package symserver

import (
	"bufio"
	"bytes"
	"cmp"
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/gobreakpad/gobreakpad/symbols/formats"
	"github.com/gobreakpad/gobreakpad/symbols/symsrc"
	"github.com/gobreakpad/gobreakpad/symfile"
	"github.com/gobreakpad/gobreakpad/symstore"
)

// Want is what an upload says of its file: the debug file and identifier
// (either may be empty: the file's own MODULE line then decides) and,
// for a native debug file, the name to give the module.
type Want struct {
	DebugFile string
	DebugID   string
	CodeFile  string
}

// Stored is the outcome of storing an upload.
type Stored struct {
	// DebugFile and DebugID are the module's, from its MODULE line.
	DebugFile, DebugID string
	// Path is the .sym file in the store.
	Path string
	// Duplicate: the store held the same bytes already (nothing written).
	Duplicate bool
	// Converted names the native format converted from ("" for a .sym).
	Converted string
	// Size is the .sym's size in bytes.
	Size int64
}

// receive copies body into a new file under Incoming, at most MaxUpload
// bytes (more is a 413), its bytes charged to u's spool disk, and returns
// its path.
func (s *Server) receive(u *upload, body io.Reader) (string, error) {
	f, err := os.CreateTemp(s.cfg.Incoming, "up-*")
	if err != nil {
		return "", &uploadError{http.StatusInternalServerError, fmt.Errorf("incoming file: %w", err)}
	}
	n, err := io.Copy(u.writer(f), io.LimitReader(body, s.cfg.MaxUpload+1))
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil && n > s.cfg.MaxUpload {
		err = &uploadError{http.StatusRequestEntityTooLarge, fmt.Errorf("the file is over the limit of %d bytes", s.cfg.MaxUpload)}
	}
	if err != nil {
		os.Remove(f.Name())
		var ue *uploadError
		if !errors.As(err, &ue) {
			err = badUpload("reading the upload: %v", err)
		}
		return "", err
	}
	return f.Name(), nil
}

// moduleLine reads the MODULE record starting a .sym file.
func moduleLine(path string) (symfile.Module, error) {
	f, err := os.Open(path)
	if err != nil {
		return symfile.Module{}, err
	}
	defer f.Close()
	line, err := bufio.NewReaderSize(f, 4096).ReadSlice('\n')
	if err != nil && !(errors.Is(err, io.EOF) && len(line) > 0) {
		return symfile.Module{}, badUpload("symbol file: no MODULE line")
	}
	line = bytes.TrimRight(line, "\r\n")
	rec, err := symfile.ParseRecord(line)
	if err != nil {
		return symfile.Module{}, badUpload("symbol file: first line: %v", err)
	}
	m, ok := rec.(symfile.Module)
	if !ok {
		return symfile.Module{}, badUpload("symbol file: the first line is not a MODULE record")
	}
	return m, nil
}

// breakpadFormat is the .sym format of the table.
var breakpadFormat = func() *formats.Format {
	f, err := formats.ByName("breakpad")
	if err != nil {
		panic(err) // the table always has it
	}
	return f
}()

// ingest turns the received file tmp into a .sym in the store: a .sym is
// checked against want; a native debug file the formats' table reads is
// converted first. tmp is consumed (moved or removed). The memory of the
// conversion and of storing is taken from u's budget first.
func (s *Server) ingest(ctx context.Context, u *upload, tmp string, want Want) (Stored, error) {
	defer os.Remove(tmp)
	for _, n := range []struct{ field, name string }{{"debug_file", want.DebugFile}, {"code_file", want.CodeFile}} {
		if err := checkUploadName(n.name); err != nil {
			return Stored{}, badUpload("%s: %v", n.field, err)
		}
	}
	head := make([]byte, formats.SniffLen)
	f, err := os.Open(tmp)
	if err != nil {
		return Stored{}, &uploadError{http.StatusInternalServerError, err}
	}
	n, _ := io.ReadFull(f, head)
	var size int64
	if fi, err := f.Stat(); err == nil {
		size = fi.Size()
	}
	f.Close()
	head = head[:n]
	native := isZip(head) || isMachO(head) || !bytes.HasPrefix(head, []byte("MODULE "))
	if native {
		release, err := u.phase(convertCost(size))
		if err != nil {
			return Stored{}, err
		}
		defer release()
	}
	var st Stored
	sym := tmp
	switch ff := formats.SniffHead(head); {
	case isZip(head):
		// Native files that belong together (bundle.go).
		if sym, err = s.convertBundle(u, tmp, want); err != nil {
			return Stored{}, err
		}
		defer os.Remove(sym)
		st.Converted = "bundle"
	case ff != nil && ff != breakpadFormat:
		if !ff.CanRead() {
			return Stored{}, badUpload("a %s file cannot be turned into symbols here", ff.Name)
		}
		if sym, err = s.convert(u, tmp, ff, want); err != nil {
			return Stored{}, err
		}
		defer os.Remove(sym)
		st.Converted = ff.Name
	case ff == nil && isMachO(head):
		if sym, err = s.convert(u, tmp, nil, want); err != nil {
			return Stored{}, err
		}
		defer os.Remove(sym)
		st.Converted = "macho"
	case !bytes.HasPrefix(head, []byte("MODULE ")):
		return Stored{}, badUpload("not a Breakpad symbol file (no MODULE line) nor a debug file of a known format")
	}
	m, err := moduleLine(sym)
	if err != nil {
		return Stored{}, err
	}
	name := symstore.BaseName(m.Name)
	if err := symstore.CheckName(name); err != nil {
		return Stored{}, badUpload("symbol file: MODULE name: %v", err)
	}
	if err := symstore.CheckName(m.ID); err != nil {
		return Stored{}, badUpload("symbol file: MODULE identifier: %v", err)
	}
	if want.DebugFile != "" && !strings.EqualFold(symstore.BaseName(want.DebugFile), name) ||
		want.DebugID != "" && normID(want.DebugID) != normID(m.ID) {
		return Stored{}, badUpload("the symbol file's MODULE line names %s %s, the upload %s %s", name, m.ID, want.DebugFile, want.DebugID)
	}
	path, err := symstore.BreakpadFile(s.cfg.Dir, name, m.ID, ".sym")
	if err != nil {
		return Stored{}, badUpload("symbol file: %v", err)
	}
	st.DebugFile, st.DebugID, st.Path = name, m.ID, path
	sum, size, err := hashFile(sym)
	if err != nil {
		return Stored{}, &uploadError{http.StatusInternalServerError, err}
	}
	st.Size = size
	// The fast forms and the blob store's put.
	release, err := u.phase(storeCost(size))
	if err != nil {
		return Stored{}, err
	}
	defer release()
	mu := s.lock(path)
	mu.Lock()
	defer mu.Unlock()
	if s.cfg.Symbols != nil {
		// On the blob store: the stored file is read back only when its
		// size says it may be the same.
		same, err := s.cfg.Symbols.Same(ctx, name, m.ID, sum, size)
		if err != nil {
			return Stored{}, &uploadError{http.StatusInternalServerError, fmt.Errorf("symbols on the blob store: %s/%s: %w", name, m.ID, err)}
		}
		if same {
			st.Duplicate = true
			// Recorded again: an upload whose catalogue entry failed
			// is sent again by its client.
			if err := s.catalog(ctx, sym, name, m.ID, size); err != nil {
				return Stored{}, &uploadError{http.StatusInternalServerError, fmt.Errorf("symbols catalogue: %s/%s: %w", name, m.ID, err)}
			}
			return st, nil
		}
	} else if fi, err := os.Stat(path); err == nil && fi.Mode().IsRegular() && fi.Size() == size {
		// The stored file is read only when its size says it may be the same.
		if old, osize, err := hashFile(path); err == nil && osize == size && old == sum {
			st.Duplicate = true
			return st, nil
		}
	}
	if err := commit(sym, path); err != nil {
		return Stored{}, &uploadError{http.StatusInternalServerError, fmt.Errorf("storing %s/%s: %w", name, m.ID, err)}
	}
	s.indexCode(path)
	if s.cfg.FastCache != "" {
		t0 := time.Now()
		if err := symsrc.WriteFast(s.cfg.FastCache, path, name, m.ID); err != nil {
			// The .sym serves all the same, only slower.
			s.log.Warn("symbols stored: fast forms", "debug_file", name, "debug_id", m.ID, "err", err)
		} else {
			s.log.Info("symbols stored: fast forms written", "debug_file", name, "debug_id", m.ID, "seconds", time.Since(t0).Seconds())
		}
	}
	if s.cfg.Symbols != nil {
		// Answered only once on the store every process reads.
		if err := s.cfg.Symbols.Put(ctx, name, m.ID, path, s.cfg.FastCache); err != nil {
			return Stored{}, &uploadError{http.StatusInternalServerError, fmt.Errorf("symbols on the blob store: %s/%s: %w", name, m.ID, err)}
		}
		// Its code id, for downloads by code id in any process.
		if err := s.catalog(ctx, path, name, m.ID, size); err != nil {
			return Stored{}, &uploadError{http.StatusInternalServerError, fmt.Errorf("symbols catalogue: %s/%s: %w", name, m.ID, err)}
		}
	}
	s.log.Info("symbols stored", "debug_file", name, "debug_id", m.ID, "bytes", size, "converted_from", st.Converted)
	if s.cfg.OnSymbols != nil {
		s.cfg.OnSymbols(context.WithoutCancel(ctx), name, m.ID)
	}
	return st, nil
}

// checkUploadName checks a file name an upload gives (debug_file,
// code_file): empty, or a path whose last element passes
// symstore.CheckName and none of whose elements is "..". The directories of
// a full path (Windows clients send them) are dropped where it is used.
func checkUploadName(name string) error {
	if name == "" {
		return nil
	}
	for _, e := range strings.FieldsFunc(name, func(r rune) bool { return r == '/' || r == '\\' }) {
		if e == ".." {
			return fmt.Errorf("unusable file name: %q", name)
		}
	}
	if err := symstore.CheckName(symstore.BaseName(name)); err != nil {
		return fmt.Errorf("%q: %w", name, err)
	}
	return nil
}

// formatName is ff's name; nil is a Mach-O file.
func formatName(ff *formats.Format) string {
	if ff == nil {
		return "Mach-O"
	}
	return ff.Name
}

// isMachO reports whether a file's first bytes are a Mach-O file's (thin
// or universal, either byte order).
func isMachO(head []byte) bool {
	if len(head) < 4 {
		return false
	}
	switch string(head[:4]) {
	case "\xfe\xed\xfa\xce", "\xce\xfa\xed\xfe", "\xfe\xed\xfa\xcf", "\xcf\xfa\xed\xfe", "\xca\xfe\xba\xbe", "\xbe\xba\xfe\xca":
		return true
	}
	return false
}

// convert writes the .sym of the native debug file tmp (format ff; nil
// for a Mach-O file) beside it: the file is first given the module's name (dump_syms names modules
// after their file), so want must name it.
func (s *Server) convert(u *upload, tmp string, ff *formats.Format, want Want) (string, error) {
	// A PDB is named as the debug file, the files holding code (ELF, PE,
	// Mach-O) as the code file; either when the other is not given.
	name := want.CodeFile
	if name == "" || ff != nil && ff.Name == "pdb" {
		name = cmp.Or(want.DebugFile, want.CodeFile)
	}
	name = symstore.BaseName(name)
	if err := symstore.CheckName(name); err != nil {
		return "", badUpload("a %s file needs the module's name (debug_file or code_file): %v", formatName(ff), err)
	}
	dir, err := os.MkdirTemp(s.cfg.Incoming, "conv-*")
	if err != nil {
		return "", &uploadError{http.StatusInternalServerError, err}
	}
	defer os.RemoveAll(dir)
	named := filepath.Join(dir, name)
	if err := os.Rename(tmp, named); err != nil {
		return "", &uploadError{http.StatusInternalServerError, err}
	}
	sym, err := s.writeIncoming(u, func(w io.Writer) error {
		if ff != nil {
			return formats.Convert(w, named, breakpadFormat, nil)
		}
		// A Mach-O file (not in the formats' table): dump_syms's reader.
		var o formats.DumpOptions
		o.MachO.Inlines = true
		model, err := formats.DumpNative(named, o)
		if err != nil {
			return err
		}
		return breakpadFormat.Write(w, model, formats.WriteOptions{})
	})
	if ue := (*uploadError)(nil); errors.As(err, &ue) {
		return "", ue
	} else if err != nil {
		return "", badUpload("converting the %s file %s into symbols: %v", formatName(ff), name, err)
	}
	return sym, nil
}

// writeIncoming writes a .sym into a new file of the incoming directory
// with write (its bytes charged to u's spool disk) and returns its name;
// on an error nothing is left. A file that cannot be made and a refusal
// for want of spool disk are *uploadErrors (500, 503); any other is
// write's or the file's, for the caller to word.
func (s *Server) writeIncoming(u *upload, write func(io.Writer) error) (string, error) {
	out, err := os.CreateTemp(s.cfg.Incoming, "sym-*")
	if err != nil {
		return "", &uploadError{http.StatusInternalServerError, err}
	}
	sw := u.writer(out)
	w := bufio.NewWriterSize(sw, 1<<20)
	err = write(w)
	if err == nil {
		err = w.Flush()
	}
	if cerr := out.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		os.Remove(out.Name())
		if sw.err != nil {
			return "", sw.err
		}
		return "", err
	}
	return out.Name(), nil
}

// hashFile returns the SHA-256 and size of a file.
func hashFile(path string) ([sha256.Size]byte, int64, error) {
	var sum [sha256.Size]byte
	f, err := os.Open(path)
	if err != nil {
		return sum, 0, err
	}
	defer f.Close()
	h := sha256.New()
	n, err := io.Copy(h, f)
	if err != nil {
		return sum, 0, err
	}
	copy(sum[:], h.Sum(nil))
	return sum, n, nil
}

// commit moves the file src (synced first) to dst durably: dst's
// directories created, the rename, the directory synced. A reader sees the
// old file or the new one, never a part.
func commit(src, dst string) error {
	f, err := os.OpenFile(src, os.O_RDWR, 0)
	if err != nil {
		return err
	}
	err = f.Sync()
	f.Close()
	if err != nil {
		return err
	}
	if err := os.Chmod(src, 0o644); err != nil {
		return err
	}
	dir := filepath.Dir(dst)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	if err := os.Rename(src, dst); err != nil {
		return err
	}
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer d.Close()
	return d.Sync()
}
