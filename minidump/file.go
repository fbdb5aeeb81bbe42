package minidump

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"os"
	"sync"

	"github.com/gobreakpad/gobreakpad/internal/mmap"
)

// ErrNoStream reports that the dump has no stream of the requested type.
// Stream accessors wrap it, so test with errors.Is.
var ErrNoStream = errors.New("stream not present")

// ErrNotMinidump is what the errors of a file that is no minidump at all
// (empty, shorter than a header, another signature than MDMP) wrap: their
// text starts "not a minidump: ".
var ErrNotMinidump = errors.New("not a minidump")

// ErrTruncated is what the errors of data that lie past the end of the file
// wrap (a truncated dump, or an offset beyond it): their text says
// "truncated at OFFSET" first.
var ErrTruncated = errors.New("truncated")

// File is an open minidump. Its methods, except Close, are safe for
// concurrent use.
type File struct {
	// Header is the file header.
	Header Header
	// Directory is the stream directory in file order.
	Directory []Directory

	r      io.ReaderAt
	size   uint64
	data   []byte // the whole file when it is memory-mapped or given as bytes
	closer func() error

	streams    map[StreamType]int // index into Directory
	duplicates []StreamType       // types that Breakpad accepts only once but appear again

	sysOnce sync.Once
	sys     *SystemInfo
	sysErr  error

	memOnce sync.Once
	mem     *Memory
	memErr  error
}

// openError names the file in an error of Open: "NAME: not a minidump: ..."
// when it is none, "minidump NAME: ..." otherwise.
func openError(name string, err error) error {
	if errors.Is(err, ErrNotMinidump) {
		return fmt.Errorf("%s: %w", name, err)
	}
	return fmt.Errorf("minidump %s: %w", name, err)
}

// smallFile is the size up to which Open reads a file instead of mapping it.
const smallFile = 1 << 20

// Open memory-maps the named file (falling back to reads where mapping is not
// available) and reads its header and stream directory. Stream data is only
// read when asked for, so large full-memory dumps cost address space, not RAM.
// Files of at most 1 MiB are simply read into memory, which is cheaper.
func Open(name string) (*File, error) {
	fh, err := os.Open(name)
	if err != nil {
		return nil, err
	}
	st, err := fh.Stat()
	if err != nil {
		fh.Close()
		return nil, err
	}
	size := st.Size()
	if size > 0 && size <= smallFile {
		// Mapping and unmapping cost more than reading a small file.
		data := make([]byte, size)
		_, err := io.ReadFull(fh, data)
		fh.Close()
		if err != nil {
			return nil, openError(name, err)
		}
		f, err := newFile(nil, uint64(size), data)
		if err != nil {
			return nil, openError(name, err)
		}
		return f, nil
	}
	var data []byte
	var unmap func() error
	if mmap.Supported {
		data, unmap, err = mmap.File(fh, size, mmap.Normal)
	}
	if err != nil || data == nil {
		// Not mappable (empty file, special file, platform): read through the descriptor.
		f, err := newFile(fh, uint64(size), nil)
		if err != nil {
			fh.Close()
			return nil, openError(name, err)
		}
		f.closer = fh.Close
		return f, nil
	}
	fh.Close() // the mapping stays valid after the descriptor is closed
	f, err := newFile(nil, uint64(len(data)), data)
	if err != nil {
		unmap()
		return nil, openError(name, err)
	}
	f.closer = unmap
	return f, nil
}

// NewFile reads a minidump of the given size from r. Data is read on demand.
func NewFile(r io.ReaderAt, size int64) (*File, error) {
	if size < 0 {
		return nil, fmt.Errorf("negative size %d", size)
	}
	return newFile(r, uint64(size), nil)
}

// NewFileBytes reads a minidump held in memory. Slices returned by the File
// (memory, stream data) alias b.
func NewFileBytes(b []byte) (*File, error) {
	return newFile(nil, uint64(len(b)), b)
}

// Close releases the file or mapping opened by Open. It does nothing for a
// File made by NewFile or NewFileBytes. Slices obtained from the File must not
// be used after Close.
func (f *File) Close() error {
	if f.closer == nil {
		return nil
	}
	c := f.closer
	f.closer = nil
	return c()
}

// Size returns the size of the file in bytes.
func (f *File) Size() int64 { return int64(f.size) }

func newFile(r io.ReaderAt, size uint64, data []byte) (*File, error) {
	f := &File{r: r, size: size, data: data}
	switch {
	case size == 0:
		return nil, fmt.Errorf("%w: empty file", ErrNotMinidump)
	case size < headerSize:
		return nil, fmt.Errorf("%w: too short (%d bytes; a minidump's header alone is %d)", ErrNotMinidump, size, headerSize)
	}
	hb, err := f.bytes(0, headerSize)
	if err != nil {
		return nil, fmt.Errorf("header: %w", err)
	}
	h := &f.Header
	h.Signature = le32(hb[0:])
	h.Version = le32(hb[4:])
	h.StreamCount = le32(hb[8:])
	h.StreamDirectoryRva = le32(hb[12:])
	h.CheckSum = le32(hb[16:])
	h.TimeDateStamp = le32(hb[20:])
	h.Flags = le64(hb[24:])
	if h.Signature != HeaderSignature {
		if h.Signature == binary.BigEndian.Uint32([]byte("MDMP")) {
			return nil, errors.New("header: big-endian minidumps are not supported")
		}
		return nil, fmt.Errorf("%w: starts with %q (signature %#x), not MDMP", ErrNotMinidump, hb[:4], h.Signature)
	}
	if h.Version&0xffff != HeaderVersion {
		return nil, fmt.Errorf("header: version %#x is not %#x", h.Version&0xffff, HeaderVersion)
	}
	db, err := f.bytes(uint64(h.StreamDirectoryRva), uint64(h.StreamCount)*directorySize)
	if err != nil {
		return nil, fmt.Errorf("stream directory: %d entries at %#x: %w", h.StreamCount, h.StreamDirectoryRva, err)
	}
	f.Directory = make([]Directory, h.StreamCount)
	f.streams = make(map[StreamType]int, h.StreamCount)
	for i := range f.Directory {
		e := db[i*directorySize:]
		d := Directory{StreamType(le32(e)), LocationDescriptor{le32(e[4:]), le32(e[8:])}}
		f.Directory[i] = d
		if _, seen := f.streams[d.StreamType]; seen && onlyOnce(d.StreamType) {
			f.duplicates = append(f.duplicates, d.StreamType)
			continue // the first one is used
		}
		if d.StreamType == UnusedStream {
			continue
		}
		f.streams[d.StreamType] = i
	}
	return f, nil
}

// onlyOnce reports whether Breakpad refuses a dump with two streams of type t.
func onlyOnce(t StreamType) bool {
	switch t {
	case ThreadListStream, ThreadNamesStream, ModuleListStream, MemoryListStream,
		ExceptionStream, SystemInfoStream, MiscInfoStream, BreakpadInfoStream, CrashpadInfoStream:
		return true
	}
	return false
}

// DuplicateStreams returns the stream types that should appear at most once
// but appear several times (the reader uses the first; Breakpad rejects such
// a dump).
func (f *File) DuplicateStreams() []StreamType { return f.duplicates }

// StreamIndex returns the directory index of the stream of type t, or -1.
// For types that may repeat, it is the last one.
func (f *File) StreamIndex(t StreamType) int {
	if i, ok := f.streams[t]; ok {
		return i
	}
	return -1
}

// Stream returns the raw bytes of the stream of type t. The slice may alias
// the mapped file and must not be modified.
func (f *File) Stream(t StreamType) ([]byte, error) {
	b, err := f.stream(t)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", t, err)
	}
	return b, nil
}

// stream is Stream for the accessors, which name the stream in their own
// errors.
func (f *File) stream(t StreamType) ([]byte, error) {
	i, ok := f.streams[t]
	if !ok {
		return nil, ErrNoStream
	}
	d := f.Directory[i]
	return f.bytes(uint64(d.Location.Rva), uint64(d.Location.DataSize))
}

// Location returns the bytes a location descriptor points at (a CodeView
// record, a memory descriptor's memory, ...). The slice may alias the mapped
// file and must not be modified.
func (f *File) Location(l LocationDescriptor) ([]byte, error) {
	return f.location(l)
}

// bytes returns n bytes at off, failing (before allocating anything) when the
// range is not inside the file.
func (f *File) bytes(off, n uint64) ([]byte, error) {
	if off > f.size || n > f.size-off {
		return nil, fmt.Errorf("%w at %#x (the file's size): %d bytes at offset %#x run past end of file", ErrTruncated, f.size, n, off)
	}
	if f.data != nil {
		return f.data[off : off+n : off+n], nil
	}
	b := make([]byte, n)
	if n == 0 {
		return b, nil
	}
	// ReadAt may report io.EOF along with a full read of the file's last bytes.
	if got, err := f.r.ReadAt(b, int64(off)); uint64(got) != n {
		if err == nil {
			err = io.ErrUnexpectedEOF
		}
		return nil, fmt.Errorf("%d bytes at offset %#x: %w", n, off, err)
	}
	return b, nil
}

// location returns the bytes a location descriptor points at.
func (f *File) location(l LocationDescriptor) ([]byte, error) {
	return f.bytes(uint64(l.Rva), uint64(l.DataSize))
}

func le16(b []byte) uint16 { return binary.LittleEndian.Uint16(b) }
func le32(b []byte) uint32 { return binary.LittleEndian.Uint32(b) }
func le64(b []byte) uint64 { return binary.LittleEndian.Uint64(b) }

// countedList reads a list stream of a 32-bit count and entries of size
// entry (checked by listCount), and returns the entries' bytes and count.
func (f *File) countedList(t StreamType, name string, entry int) ([]byte, uint32, error) {
	b, err := f.stream(t)
	if err != nil {
		return nil, 0, fmt.Errorf("%s: %w", name, err)
	}
	if len(b) < 4 {
		return nil, 0, fmt.Errorf("%s: %d bytes, too short for the count", name, len(b))
	}
	n := le32(b)
	off, err := listCount(name, b, 4, uint64(n), entry)
	if err != nil {
		return nil, 0, err
	}
	return b[off:], n, nil
}

// listCount checks a list stream of count entries of size entry after a
// header of hdr bytes. Like Breakpad it accepts 4 bytes of padding after the
// header (written by some 64-bit producers).
func listCount(name string, b []byte, hdr int, count uint64, entry int) (start int, err error) {
	if len(b) < hdr {
		return 0, fmt.Errorf("%s: %d bytes, shorter than its %d-byte header", name, len(b), hdr)
	}
	avail := uint64(len(b) - hdr)
	need := count * uint64(entry)
	if count > avail/uint64(entry) {
		return 0, fmt.Errorf("%s: count %d needs %d bytes, stream has %d", name, count, count*uint64(entry), avail)
	}
	switch avail {
	case need:
		return hdr, nil
	case need + 4:
		return hdr + 4, nil
	}
	return 0, fmt.Errorf("%s: count %d needs %d bytes, stream has %d", name, count, need, avail)
}

// budget bounds what one list decodes from data its entries may share (names,
// contexts, records): entries pointing at the same bytes could otherwise make
// a small file decode into much more memory than it holds. The budget is the
// file's size, which a real dump, storing each entry's data separately, never
// exceeds.
type budget struct{ left uint64 }

func (f *File) newBudget() *budget { return &budget{left: f.size} }

// take charges n bytes; it fails once the list has decoded more than the file.
func (b *budget) take(n int) error {
	if uint64(n) > b.left {
		return errBudget
	}
	b.left -= uint64(n)
	return nil
}

var errBudget = errors.New("decoded data exceeds the file's size (entries share their data)")
