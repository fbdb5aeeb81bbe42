// Package cab reads Microsoft Cabinet files (MS-CAB), the container
// Microsoft symbol servers use for their compressed files (name.pd_,
// name.ex_, name.dl_): one file in one folder, compressed with MSZIP.
//
// Folders stored uncompressed or with MSZIP (deflate blocks of up to 32 KiB
// sharing one history) are read; Quantum and LZX folders are reported as
// unsupported. Cabinets spanning several files are not supported. A block's
// checksum, when it has one (not 0), is verified before the block is used:
// a damaged block is refused with an error wrapping ErrChecksum, so that
// reading the file fails rather than yielding wrong bytes (a block without
// a checksum that fails to inflate or yields the wrong length is reported
// too).
//
// Bad input never panics, and reading allocates no more than one block (32
// KiB of output plus its compressed form) at a time.
package cab

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
)

// Compression methods of a folder (the low four bits of typeCompress).
const (
	CompressNone    = 0
	CompressMSZIP   = 1
	CompressQuantum = 2
	CompressLZX     = 3
)

// Header flags.
const (
	flagPrevCabinet    = 0x1
	flagNextCabinet    = 0x2
	flagReservePresent = 0x4
)

// ErrFormat is wrapped by errors about malformed cabinets.
var ErrFormat = errors.New("cab: malformed cabinet")

// ErrChecksum is wrapped by errors about a data block whose checksum does
// not match its bytes (it also wraps ErrFormat).
var ErrChecksum = fmt.Errorf("%w: block checksum mismatch", ErrFormat)

// ErrUnsupported is wrapped by errors about cabinets using features this
// package does not read (Quantum, LZX, multi-cabinet sets).
var ErrUnsupported = errors.New("cab: unsupported")

// A Reader gives access to the files of a cabinet.
type Reader struct {
	// Files are the cabinet's files in directory order.
	Files []*File

	r       io.ReaderAt
	size    int64
	folders []folder
	dataRes int // per-CFDATA reserved bytes
}

// A File is one file of a cabinet.
type File struct {
	// Name is the file's name as stored (it may hold directory parts, with
	// either separator: check it before using it as a path).
	Name string
	// Size is its uncompressed size.
	Size uint32
	// Folder is the index of the folder holding it and Offset its offset in
	// the folder's uncompressed data.
	Folder int
	Offset uint32
	// Attribs are its MS-DOS attributes.
	Attribs uint16

	cab *Reader
}

type folder struct {
	dataOff  uint32 // offset of the first CFDATA block
	blocks   uint16
	compress uint16
}

// NewReader reads the directory of a cabinet of the given size.
func NewReader(r io.ReaderAt, size int64) (*Reader, error) {
	var hdr [36]byte
	if _, err := r.ReadAt(hdr[:], 0); err != nil {
		return nil, fmt.Errorf("%w: header: %v", ErrFormat, err)
	}
	if string(hdr[:4]) != "MSCF" {
		return nil, fmt.Errorf("%w: no MSCF signature", ErrFormat)
	}
	le := binary.LittleEndian
	filesOff := le.Uint32(hdr[16:])
	nFolders := int(le.Uint16(hdr[26:]))
	nFiles := int(le.Uint16(hdr[28:]))
	flags := le.Uint16(hdr[30:])
	if flags&(flagPrevCabinet|flagNextCabinet) != 0 {
		return nil, fmt.Errorf("%w: cabinet set spanning several files", ErrUnsupported)
	}
	c := &Reader{r: r, size: size}
	off := int64(36)
	folderRes := 0
	if flags&flagReservePresent != 0 {
		var res [4]byte
		if _, err := r.ReadAt(res[:], off); err != nil {
			return nil, fmt.Errorf("%w: reserve sizes: %v", ErrFormat, err)
		}
		off += 4 + int64(le.Uint16(res[:]))
		folderRes = int(res[2])
		c.dataRes = int(res[3])
	}
	// Each folder entry is at least 8 bytes, each file entry at least 17:
	// counts beyond what the file can hold are damage.
	if int64(nFolders)*8 > size || int64(nFiles)*17 > size {
		return nil, fmt.Errorf("%w: %d folders and %d files in %d bytes", ErrFormat, nFolders, nFiles, size)
	}
	for i := range nFolders {
		var b [8]byte
		if _, err := r.ReadAt(b[:], off); err != nil {
			return nil, fmt.Errorf("%w: folder %d: %v", ErrFormat, i, err)
		}
		off += 8 + int64(folderRes)
		f := folder{dataOff: le.Uint32(b[0:]), blocks: le.Uint16(b[4:]), compress: le.Uint16(b[6:])}
		if int64(f.blocks)*8 > size {
			return nil, fmt.Errorf("%w: folder %d: %d blocks in %d bytes", ErrFormat, i, f.blocks, size)
		}
		c.folders = append(c.folders, f)
	}
	off = int64(filesOff)
	for i := range nFiles {
		var b [16]byte
		if _, err := r.ReadAt(b[:], off); err != nil {
			return nil, fmt.Errorf("%w: file %d: %v", ErrFormat, i, err)
		}
		name, n, err := readCString(r, off+16, 256)
		if err != nil {
			return nil, fmt.Errorf("%w: file %d: name: %v", ErrFormat, i, err)
		}
		off += 16 + int64(n)
		f := &File{Name: name, Size: le.Uint32(b[0:]), Offset: le.Uint32(b[4:]), Folder: int(le.Uint16(b[8:])),
			Attribs: le.Uint16(b[14:]), cab: c}
		if f.Folder >= len(c.folders) {
			return nil, fmt.Errorf("%w: file %d (%q): folder %d of %d (continued folders are not supported)",
				ErrFormat, i, name, f.Folder, len(c.folders))
		}
		c.Files = append(c.Files, f)
	}
	return c, nil
}

// readCString reads a NUL-terminated string of at most max bytes at off and
// returns it and the bytes it took (with the NUL).
func readCString(r io.ReaderAt, off int64, max int) (string, int, error) {
	buf := make([]byte, max+1)
	n, err := r.ReadAt(buf, off)
	for i := range n {
		if buf[i] == 0 {
			return string(buf[:i]), i + 1, nil
		}
	}
	if err != nil {
		return "", 0, err
	}
	return "", 0, fmt.Errorf("longer than %d bytes", max)
}

// Open returns a reader of the file's uncompressed contents. It decompresses
// the file's folder from its start.
func (f *File) Open() (io.Reader, error) {
	fo := f.cab.folders[f.Folder]
	switch fo.compress & 0xf {
	case CompressNone, CompressMSZIP:
	case CompressQuantum:
		return nil, fmt.Errorf("%w: Quantum compression", ErrUnsupported)
	case CompressLZX:
		return nil, fmt.Errorf("%w: LZX compression", ErrUnsupported)
	default:
		return nil, fmt.Errorf("%w: compression type %d", ErrFormat, fo.compress&0xf)
	}
	fr := &folderReader{c: f.cab, f: fo, off: int64(fo.dataOff)}
	if _, err := io.CopyN(io.Discard, fr, int64(f.Offset)); err != nil {
		return nil, fmt.Errorf("%s: skipping to offset %d: %w", f.Name, f.Offset, noEOF(err))
	}
	return &exactReader{r: fr, left: int64(f.Size), name: f.Name}, nil
}

// noEOF turns an early end of data into an error that says so.
func noEOF(err error) error {
	if err == io.EOF {
		return fmt.Errorf("%w: data ends early", ErrFormat)
	}
	return err
}

// exactReader reads exactly left bytes, reporting a short folder as damage.
type exactReader struct {
	r    io.Reader
	left int64
	name string
}

func (e *exactReader) Read(p []byte) (int, error) {
	if e.left == 0 {
		return 0, io.EOF
	}
	if int64(len(p)) > e.left {
		p = p[:e.left]
	}
	n, err := e.r.Read(p)
	e.left -= int64(n)
	if err == io.EOF && e.left > 0 {
		return n, fmt.Errorf("%s: %d bytes missing: %w", e.name, e.left, noEOF(err))
	}
	if err == io.EOF {
		err = nil
	}
	return n, err
}
