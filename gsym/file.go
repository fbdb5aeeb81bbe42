package gsym

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/gobreakpad/gobreakpad/internal/mmap"
)

// ErrNotFound is returned (wrapped) by lookups of an address no function
// covers.
var ErrNotFound = errors.New("gsym: address not found")

// FileEntry is one entry of the file table: string table offsets of the
// directory and the base name. Entry 0 is {0, 0}, no file.
type FileEntry struct {
	Dir, Base uint32
}

// File is an open GSYM file. Its methods are safe for concurrent use.
type File struct {
	Header Header
	// Order is the file's byte order.
	Order binary.ByteOrder

	data  []byte      // the whole file, when mapped or given as bytes
	r     io.ReaderAt // otherwise
	size  uint64
	unmap func() error

	addrOff  uint64 // address table
	infoOff  uint64 // address info offsets
	numFiles uint32
	filesOff uint64 // first file entry
}

// Open maps the named file and reads its header.
func Open(name string) (*File, error) {
	// Lookups touch a few scattered pages: no read-ahead.
	b, unmap, err := mmap.Open(name, mmap.Random)
	if err != nil {
		return nil, err
	}
	f, err := NewFileBytes(b)
	if err != nil {
		unmap()
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	f.unmap = unmap
	return f, nil
}

// NewFileBytes reads a GSYM file held in b, which must not change while the
// File is used.
func NewFileBytes(b []byte) (*File, error) {
	f := &File{data: b, size: uint64(len(b))}
	return f, f.init()
}

// NewFile reads a GSYM file of size bytes from r, on demand: each lookup
// makes a few small reads.
func NewFile(r io.ReaderAt, size int64) (*File, error) {
	if size < 0 {
		return nil, fmt.Errorf("gsym: negative size %d", size)
	}
	f := &File{r: r, size: uint64(size)}
	return f, f.init()
}

// Close releases the file's mapping, if Open made one.
func (f *File) Close() error {
	if f.unmap == nil {
		return nil
	}
	err := f.unmap()
	f.unmap, f.data = nil, nil
	return err
}

func align(off, n uint64) uint64 { return (off + n - 1) / n * n }

func (f *File) init() error {
	hb, err := f.at(0, min(HeaderSize, f.size))
	if err != nil {
		return err
	}
	h, order, err := parseHeader(hb)
	if err != nil {
		return err
	}
	f.Header, f.Order = h, order
	n := uint64(h.NumAddresses)
	f.addrOff = align(HeaderSize, uint64(h.AddrOffSize))
	f.infoOff = align(f.addrOff+n*uint64(h.AddrOffSize), 4)
	ft := f.infoOff + 4*n
	if ft+4 > f.size {
		return fmt.Errorf("gsym: %d addresses: tables end at %d, past the end of the file (%d bytes)", n, ft+4, f.size)
	}
	nb, err := f.at(ft, 4)
	if err != nil {
		return err
	}
	f.numFiles = order.Uint32(nb)
	f.filesOff = ft + 4
	if end := f.filesOff + 8*uint64(f.numFiles); end > f.size {
		return fmt.Errorf("gsym: file table of %d entries ends at %d, past the end of the file (%d bytes)", f.numFiles, end, f.size)
	}
	if end := uint64(h.StrtabOffset) + uint64(h.StrtabSize); end > f.size {
		return fmt.Errorf("gsym: string table [%#x, %#x) past the end of the file (%d bytes)", h.StrtabOffset, end, f.size)
	}
	return f.checkInfos()
}

// checkInfos checks, at open, that every function's information starts
// inside the file and that the last of them (the one at the highest
// offset) ends inside it: a truncated file (the function information is
// the end of a GSYM file) is refused clearly instead of answering lookups
// with nothing. LLVM's GsymReader checks the tables at open and each
// function's information when it is looked up; lookups here (through
// symbols.Lookuper) cannot report an error, so the check is done once.
func (f *File) checkInfos() error {
	n := uint64(f.Header.NumAddresses)
	if n == 0 {
		return nil
	}
	tab, err := f.at(f.infoOff, 4*n)
	if err != nil {
		return err
	}
	var last uint64
	lastIdx := uint64(0)
	for i := range n {
		off := uint64(f.Order.Uint32(tab[4*i:]))
		if off+8 > f.size {
			return fmt.Errorf("gsym: function %d: information at %#x past the end of the file (%d bytes): the file is truncated or damaged", i, off, f.size)
		}
		if off >= last {
			last, lastIdx = off, i
		}
	}
	if _, err := f.funcEnd(last); err != nil {
		return fmt.Errorf("gsym: function %d (the last in the file): %w: the file is truncated or damaged", lastIdx, err)
	}
	return nil
}

// at returns n bytes at off: a slice of the data, or read from the
// ReaderAt.
func (f *File) at(off, n uint64) ([]byte, error) {
	if off > f.size || n > f.size-off {
		return nil, fmt.Errorf("gsym: %d bytes at %#x: past the end of the file (%d bytes)", n, off, f.size)
	}
	if f.r == nil {
		if f.data == nil && n > 0 {
			return nil, errors.New("gsym: file closed")
		}
		return f.data[off : off+n : off+n], nil
	}
	b := make([]byte, n)
	if _, err := f.r.ReadAt(b, int64(off)); err != nil && !(err == io.EOF && n > 0) {
		return nil, fmt.Errorf("gsym: reading %d bytes at %#x: %w", n, off, err)
	}
	return b, nil
}

// NumFunctions returns the number of entries of the address table.
func (f *File) NumFunctions() int { return int(f.Header.NumAddresses) }

// Address returns the start address of function entry i.
func (f *File) Address(i int) (uint64, error) {
	if i < 0 || i >= f.NumFunctions() {
		return 0, fmt.Errorf("gsym: address index %d out of range [0, %d)", i, f.NumFunctions())
	}
	off, err := f.addrOffset(uint64(i))
	return f.Header.BaseAddress + off, err
}

// addrOffset reads address table entry i (i < NumAddresses).
func (f *File) addrOffset(i uint64) (uint64, error) {
	sz := uint64(f.Header.AddrOffSize)
	b, err := f.at(f.addrOff+i*sz, sz)
	if err != nil {
		return 0, err
	}
	switch sz {
	case 1:
		return uint64(b[0]), nil
	case 2:
		return uint64(f.Order.Uint16(b)), nil
	case 4:
		return uint64(f.Order.Uint32(b)), nil
	}
	return f.Order.Uint64(b), nil
}

// infoOffset reads address info table entry i.
func (f *File) infoOffset(i uint64) (uint64, error) {
	b, err := f.at(f.infoOff+4*i, 4)
	if err != nil {
		return 0, err
	}
	return uint64(f.Order.Uint32(b)), nil
}

// NumFiles returns the number of entries of the file table.
func (f *File) NumFiles() int { return int(f.numFiles) }

// FileEntry returns file table entry i.
func (f *File) FileEntry(i uint32) (FileEntry, error) {
	if i >= f.numFiles {
		return FileEntry{}, fmt.Errorf("gsym: file index %d out of range [0, %d)", i, f.numFiles)
	}
	b, err := f.at(f.filesOff+8*uint64(i), 8)
	if err != nil {
		return FileEntry{}, err
	}
	return FileEntry{Dir: f.Order.Uint32(b), Base: f.Order.Uint32(b[4:])}, nil
}

// String returns the string at offset off of the string table. A string
// not terminated within the table ends with it, as in LLVM.
func (f *File) String(off uint32) (string, error) {
	if off >= f.Header.StrtabSize {
		if off == 0 {
			return "", nil
		}
		return "", fmt.Errorf("gsym: string offset %#x past the string table (%d bytes)", off, f.Header.StrtabSize)
	}
	start := uint64(f.Header.StrtabOffset) + uint64(off)
	end := uint64(f.Header.StrtabOffset) + uint64(f.Header.StrtabSize)
	if f.r == nil {
		b, err := f.at(start, end-start)
		if err != nil {
			return "", err
		}
		if i := bytes.IndexByte(b, 0); i >= 0 {
			b = b[:i]
		}
		return string(b), nil
	}
	var sb strings.Builder
	for start < end {
		b, err := f.at(start, min(end-start, 256))
		if err != nil {
			return "", err
		}
		if i := bytes.IndexByte(b, 0); i >= 0 {
			sb.Write(b[:i])
			break
		}
		sb.Write(b)
		start += uint64(len(b))
	}
	return sb.String(), nil
}

// Path returns the path of file table entry i as LLVM prints it: the
// directory, a separator ('\' for directories with backslashes and no
// slash, else '/') and the base name; "" for entry 0.
func (f *File) Path(i uint32) (string, error) {
	fe, err := f.FileEntry(i)
	if err != nil {
		return "", err
	}
	dir, err := f.String(fe.Dir)
	if err != nil {
		return "", err
	}
	base, err := f.String(fe.Base)
	if err != nil {
		return "", err
	}
	return JoinPath(dir, base), nil
}

// JoinPath joins a directory and a base name as LLVM's lookups print them.
func JoinPath(dir, base string) string {
	switch {
	case dir == "":
		return base
	case base == "":
		return dir
	case strings.Contains(dir, `\`) && !strings.Contains(dir, "/"):
		return dir + `\` + base
	}
	return dir + "/" + base
}

// SplitPath splits a path into the directory and base name JoinPath joins
// back into it.
func SplitPath(p string) (dir, base string) {
	i := strings.LastIndexAny(p, `/\`)
	if i <= 0 || i == len(p)-1 {
		return "", p
	}
	dir, base = p[:i], p[i+1:]
	if JoinPath(dir, base) != p {
		return "", p
	}
	return dir, base
}

// funcIndex returns the index of the first address table entry of the
// group starting at the highest address at or below addr, as LLVM's
// GsymReader finds it.
func (f *File) funcIndex(addr uint64) (uint64, error) {
	n := uint64(f.Header.NumAddresses)
	if addr < f.Header.BaseAddress || n == 0 {
		return 0, fmt.Errorf("%w: %#x", ErrNotFound, addr)
	}
	rel := addr - f.Header.BaseAddress
	// The number of entries at or below rel.
	lo, hi := uint64(0), n
	for lo < hi {
		mid := lo + (hi-lo)/2
		v, err := f.addrOffset(mid)
		if err != nil {
			return 0, err
		}
		if v <= rel {
			lo = mid + 1
		} else {
			hi = mid
		}
	}
	if lo == 0 {
		return 0, fmt.Errorf("%w: %#x", ErrNotFound, addr)
	}
	i := lo - 1
	v, err := f.addrOffset(i)
	if err != nil {
		return 0, err
	}
	// Back up to the first of the entries at this address: LLVM sorts
	// those with the most information first. Usually there is one.
	if i == 0 {
		return 0, nil
	}
	if w, err := f.addrOffset(i - 1); err != nil || w != v {
		return i, err
	}
	lo, hi = 0, i
	for lo < hi {
		mid := lo + (hi-lo)/2
		w, err := f.addrOffset(mid)
		if err != nil {
			return 0, err
		}
		if w < v {
			lo = mid + 1
		} else {
			hi = mid
		}
	}
	return lo, nil
}
