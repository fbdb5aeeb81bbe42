package pdb

import (
	"fmt"
	"io"
	"os"
	"sync"

	"github.com/gobreakpad/gobreakpad/internal/mmap"
)

// File is an open PDB file. Streams are read when first asked for.
type File struct {
	MSF *MSF

	closer io.Closer

	infoOnce sync.Once
	info     *Info
	infoErr  error

	dbiOnce sync.Once
	dbi     *DBI
	dbiErr  error

	namesOnce sync.Once
	names     *StringTable
	namesErr  error
}

// Open opens the PDB file at path. Where the platform allows, the file is
// mapped into memory: streams whose blocks are consecutive in the file
// are then read without copying (see MSF.Stream), the others are copied
// from the mapping. The bytes of streams and of the records read from them
// must not be used after Close.
func Open(path string) (*File, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	st, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, err
	}
	// Where files cannot be mapped, streams are read through the
	// descriptor rather than reading the whole file.
	if mmap.Supported && st.Mode().IsRegular() && st.Size() > 0 && int64(int(st.Size())) == st.Size() {
		if data, unmap, err := mmap.File(f, st.Size(), mmap.Normal); err == nil && data != nil {
			f.Close() // the mapping stays valid after the descriptor is closed
			pf, err := NewFileBytes(data)
			if err != nil {
				unmap()
				return nil, fmt.Errorf("%s: %w", path, err)
			}
			pf.MSF.mapped = true
			pf.closer = closerFunc(unmap)
			return pf, nil
		}
	}
	pf, err := NewFile(f, st.Size())
	if err != nil {
		f.Close()
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	pf.closer = f
	return pf, nil
}

type closerFunc func() error

func (c closerFunc) Close() error { return c() }

// NewFileBytes reads the PDB held in data (a file read whole, or a mapping
// of it); streams on consecutive blocks are slices of data (see
// NewMSFBytes).
func NewFileBytes(data []byte) (*File, error) {
	m, err := NewMSFBytes(data)
	if err != nil {
		return nil, err
	}
	return &File{MSF: m}, nil
}

// NewFile reads the PDB in r, size bytes long.
func NewFile(r io.ReaderAt, size int64) (*File, error) {
	m, err := NewMSF(r, size)
	if err != nil {
		return nil, err
	}
	return &File{MSF: m}, nil
}

// Close closes the file opened by Open (and unmaps it). A second Close
// does nothing.
func (f *File) Close() error {
	if c := f.closer; c != nil {
		f.closer = nil
		return c.Close()
	}
	return nil
}

// Info returns the PDB information stream.
func (f *File) Info() (*Info, error) {
	f.infoOnce.Do(func() {
		var b []byte
		if b, f.infoErr = f.MSF.Stream(StreamPDBInfo); f.infoErr == nil {
			f.info, f.infoErr = parseInfo(b)
		}
	})
	return f.info, f.infoErr
}

// DBI returns the debug information stream.
func (f *File) DBI() (*DBI, error) {
	f.dbiOnce.Do(func() {
		var b []byte
		if b, f.dbiErr = f.MSF.Stream(StreamDBI); f.dbiErr == nil {
			if b == nil {
				f.dbiErr = fmt.Errorf("no DBI stream: %w", ErrFormat)
				return
			}
			f.dbi, f.dbiErr = parseDBI(b)
		}
	})
	return f.dbi, f.dbiErr
}

// Names returns the /names string table.
func (f *File) Names() (*StringTable, error) {
	f.namesOnce.Do(func() {
		info, err := f.Info()
		if err != nil {
			f.namesErr = err
			return
		}
		s, ok := info.NamedStreams["/names"]
		if !ok {
			f.namesErr = fmt.Errorf("no /names stream: %w", ErrFormat)
			return
		}
		var b []byte
		if b, f.namesErr = f.MSF.Stream(int(s)); f.namesErr == nil {
			f.names, f.namesErr = parseStringTable(b)
		}
	})
	return f.names, f.namesErr
}

// TPI reads the type stream.
func (f *File) TPI() (*TypeStream, error) { return f.typeStream(StreamTPI, "TPI") }

// IPI reads the item stream; nil without error when the PDB has none.
func (f *File) IPI() (*TypeStream, error) { return f.typeStream(StreamIPI, "IPI") }

func (f *File) typeStream(i int, name string) (*TypeStream, error) {
	if f.MSF.StreamSize(i) <= 0 {
		return nil, nil
	}
	// The type streams are the largest: read in place when the file is
	// in memory, though their blocks are not all consecutive.
	ps, ok, err := f.MSF.streamPieces(i)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	if ok {
		t, err := parseTypeStream(ps)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", name, err)
		}
		return t, nil
	}
	b, err := f.MSF.Stream(i)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	t, err := ParseTypeStream(b)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	return t, nil
}

// GlobalSymbols returns the symbol record stream that the publics and
// globals hash streams index (S_PUB32, S_PROCREF, S_GDATA32...). Walk it
// with NewSymbolIter(b, 0).
func (f *File) GlobalSymbols() ([]byte, error) {
	d, err := f.DBI()
	if err != nil {
		return nil, err
	}
	if d.Header.SymRecordStream == 0xFFFF {
		return nil, nil
	}
	return f.MSF.Stream(int(d.Header.SymRecordStream))
}

// DebugStream returns the content of the optional debug header's stream
// in slot which (DbgFPO, DbgNewFPO, DbgOmapFromSrc...), nil when absent.
func (f *File) DebugStream(which int) ([]byte, error) {
	d, err := f.DBI()
	if err != nil {
		return nil, err
	}
	if which < 0 || which >= numDbg {
		return nil, fmt.Errorf("debug stream slot %d: %w", which, ErrFormat)
	}
	s := d.DebugStreams[which]
	if s == 0xFFFF || f.MSF.StreamSize(int(s)) < 0 {
		return nil, nil
	}
	return f.MSF.Stream(int(s))
}

// ModuleStream is a module's symbol stream split into its parts.
type ModuleStream struct {
	Signature uint32 // 4: C13
	Symbols   []byte // the records; the first lies at stream offset 4
	C11       []byte
	C13       []byte
}

// Iter returns an iterator over the module's symbol records.
func (m *ModuleStream) Iter() *SymbolIter { return NewSymbolIter(m.Symbols, 4) }

// ModuleSymbols reads the symbol stream of module m; nil without error
// when the module has none.
func (f *File) ModuleSymbols(m *Module) (*ModuleStream, error) {
	if m.SymStream == 0xFFFF || f.MSF.StreamSize(int(m.SymStream)) < 0 {
		return nil, nil
	}
	b, err := f.MSF.Stream(int(m.SymStream))
	if err != nil {
		return nil, fmt.Errorf("module %s: %w", m.Name, err)
	}
	total := uint64(m.SymByteSize) + uint64(m.C11ByteSize) + uint64(m.C13ByteSize)
	if total > uint64(len(b)) || m.SymByteSize < 4 && m.SymByteSize != 0 {
		return nil, fmt.Errorf("module %s: %d+%d+%d bytes of symbols and lines in a stream of %d: %w",
			m.Name, m.SymByteSize, m.C11ByteSize, m.C13ByteSize, len(b), ErrFormat)
	}
	ms := &ModuleStream{}
	if m.SymByteSize >= 4 {
		ms.Signature = uint32(b[0]) | uint32(b[1])<<8 | uint32(b[2])<<16 | uint32(b[3])<<24
		ms.Symbols = b[4:m.SymByteSize]
	}
	ms.C11 = b[m.SymByteSize : m.SymByteSize+m.C11ByteSize]
	ms.C13 = b[m.SymByteSize+m.C11ByteSize : uint64(m.SymByteSize)+uint64(m.C11ByteSize)+uint64(m.C13ByteSize)]
	return ms, nil
}
