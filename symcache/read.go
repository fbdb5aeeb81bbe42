package symcache

import (
	"encoding/binary"
	"errors"
	"fmt"
	"sort"
	"sync"
	"unicode/utf8"
)

// Reader is a parsed SymCache. Its methods read the underlying bytes on
// demand and are safe for concurrent use.
type Reader struct {
	Header
	data []byte
	// Section starts in data.
	files, functions, locations, ranges, strings int
	fileSize                                     int
	close                                        func() error
	// paths caches the full paths of the files lookups resolved: uint32
	// (file index) -> string. Joining and cleaning them is most of a
	// lookup's work otherwise.
	paths sync.Map
	// RawPaths, set before the first lookup, makes lookups return file
	// paths joined but not cleaned: the names a .sym file held, for caches
	// written from one (the fast path of docs/symcache.md), where symbolic
	// would clean them ("./a/../b" stays as written).
	RawPaths bool
}

// ErrFormat is wrapped by every error about malformed input.
var ErrFormat = errors.New("symcache: malformed file")

func formatErr(format string, args ...any) error {
	return fmt.Errorf("%w: %s", ErrFormat, fmt.Sprintf(format, args...))
}

var le = binary.LittleEndian

func align8(n int) int { return (n + 7) &^ 7 }

// Parse parses a SymCache held in data, which must stay unchanged while the
// Cache is used.
func Parse(data []byte) (*Reader, error) {
	if len(data) < preambleSize {
		return nil, formatErr("%d bytes: too short for the magic and version", len(data))
	}
	switch string(data[:4]) {
	case Magic:
	case "CMYS":
		return nil, formatErr("big-endian SymCache (byte-swapped magic)")
	default:
		return nil, formatErr("bad magic % x", data[:4])
	}
	c := &Reader{data: data}
	c.Version = le.Uint32(data[4:])
	switch c.Version {
	case Version7, Version8:
		c.fileSize = fileSizeV7
	case Version9:
		c.fileSize = fileSizeV9
	default:
		return nil, formatErr("version %d (this package reads 7, 8 and 9)", c.Version)
	}
	if len(data) < preambleSize+headerSize {
		return nil, formatErr("%d bytes: too short for the header", len(data))
	}
	h := data[preambleSize:]
	copy(c.DebugID.UUID[:], h[:16])
	c.DebugID.Appendix = le.Uint32(h[16:])
	copy(c.DebugID.Padding[:], h[20:31])
	c.DebugID.Type = h[31]
	c.Arch = Arch(le.Uint32(h[32:]))
	c.NumFiles = le.Uint32(h[36:])
	c.NumFunctions = le.Uint32(h[40:])
	c.NumSourceLocations = le.Uint32(h[44:])
	c.NumRanges = le.Uint32(h[48:])
	c.StringBytes = le.Uint32(h[52:])
	copy(c.Reserved[:], h[56:72])
	if c.NumRanges > c.NumSourceLocations {
		return nil, formatErr("%d ranges but only %d source locations", c.NumRanges, c.NumSourceLocations)
	}
	off := preambleSize + headerSize
	section := func(name string, count uint32, size int) (int, error) {
		start := align8(off)
		n := uint64(count) * uint64(size)
		if uint64(start) > uint64(len(data)) || n > uint64(len(data)-start) {
			return 0, formatErr("%s: %d records of %d bytes at offset %d run past the end (%d bytes)", name, count, size, start, len(data))
		}
		off = start + int(n)
		return start, nil
	}
	var err error
	if c.files, err = section("files", c.NumFiles, c.fileSize); err != nil {
		return nil, err
	}
	if c.functions, err = section("functions", c.NumFunctions, functionSize); err != nil {
		return nil, err
	}
	if c.locations, err = section("source locations", c.NumSourceLocations, sourceLocationSize); err != nil {
		return nil, err
	}
	if c.ranges, err = section("ranges", c.NumRanges, rangeSize); err != nil {
		return nil, err
	}
	if c.strings, err = section("string bytes", c.StringBytes, 1); err != nil {
		return nil, err
	}
	return c, nil
}

// Close releases the file mapped by Open; a no-op for Parse's caches.
func (c *Reader) Close() error {
	if c.close == nil {
		return nil
	}
	f := c.close
	c.close = nil
	return f()
}

// Data returns the bytes the cache was parsed from.
func (c *Reader) Data() []byte { return c.data }

// File returns file record i.
func (c *Reader) File(i uint32) (File, bool) {
	if i >= c.NumFiles {
		return File{}, false
	}
	b := c.data[c.files+int(i)*c.fileSize:]
	f := File{CompDir: le.Uint32(b), Directory: le.Uint32(b[4:]), Name: le.Uint32(b[8:]), SrcSrvName: None, SrcSrvDir: None, SrcSrvRevision: None}
	if c.fileSize == fileSizeV9 {
		f.SrcSrvName, f.SrcSrvDir, f.SrcSrvRevision = le.Uint32(b[12:]), le.Uint32(b[16:]), le.Uint32(b[20:])
	}
	return f, true
}

// Function returns function record i.
func (c *Reader) Function(i uint32) (Function, bool) {
	if i >= c.NumFunctions {
		return Function{}, false
	}
	b := c.data[c.functions+int(i)*functionSize:]
	return Function{Name: le.Uint32(b), CompDir: le.Uint32(b[4:]), EntryPC: le.Uint32(b[8:]), Lang: Language(le.Uint32(b[12:]))}, true
}

// SourceLocation returns source location i.
func (c *Reader) SourceLocation(i uint32) (SourceLocation, bool) {
	if i >= c.NumSourceLocations {
		return SourceLocation{}, false
	}
	b := c.data[c.locations+int(i)*sourceLocationSize:]
	return SourceLocation{File: le.Uint32(b), Line: le.Uint32(b[4:]), Function: le.Uint32(b[8:]), InlinedInto: le.Uint32(b[12:])}, true
}

// RangeStart returns the start address of range i.
func (c *Reader) RangeStart(i uint32) (uint32, bool) {
	if i >= c.NumRanges {
		return 0, false
	}
	return le.Uint32(c.data[c.ranges+int(i)*rangeSize:]), true
}

// RangeLocation returns the index of the source location of range i.
func (c *Reader) RangeLocation(i uint32) uint32 { return c.NumSourceLocations - c.NumRanges + i }

// String returns the string at offset off in the string bytes; false for
// None, an offset or length out of bounds, or bytes that are not UTF-8.
func (c *Reader) String(off uint32) (string, bool) {
	b, ok := c.stringBytes(off)
	if !ok || !utf8.Valid(b) {
		return "", false
	}
	return string(b), true
}

func (c *Reader) stringBytes(off uint32) ([]byte, bool) {
	if off == None || off >= c.StringBytes {
		return nil, false
	}
	s := c.data[c.strings+int(off) : c.strings+int(c.StringBytes)]
	var n uint64
	if c.Version == Version7 {
		if len(s) < 4 {
			return nil, false
		}
		n, s = uint64(le.Uint32(s)), s[4:]
	} else {
		v, k := binary.Uvarint(s)
		if k <= 0 {
			return nil, false
		}
		n, s = v, s[k:]
	}
	if n > uint64(len(s)) {
		return nil, false
	}
	return s[:n], true
}

// FindRange returns the index of the range holding addr: the one whose start
// is the greatest at or below it. False below the first range and above 4 GiB.
func (c *Reader) FindRange(addr uint64) (uint32, bool) {
	if addr > uint64(None) {
		return 0, false
	}
	a := uint32(addr)
	n := int(c.NumRanges)
	base := c.data[c.ranges:]
	i := sort.Search(n, func(i int) bool { return le.Uint32(base[i*rangeSize:]) > a })
	if i == 0 {
		return 0, false
	}
	return uint32(i - 1), true
}
