package symcache

import (
	"bufio"
	"encoding/binary"
	"fmt"
	"io"

	"github.com/gobreakpad/gobreakpad/internal/strindex"
)

// Raw is a SymCache's sections as values: what [Reader.Raw] decodes and
// [Raw.WriteTo] encodes. Counts in Header are recomputed on writing.
type Raw struct {
	Header          Header
	Files           []File
	Functions       []Function
	SourceLocations []SourceLocation
	Ranges          []uint32
	// Strings are the string bytes, length-prefixed as Header.Version says.
	Strings []byte
}

// Raw decodes every section of c.
func (c *Reader) Raw() *Raw {
	r := &Raw{Header: c.Header}
	r.Files = make([]File, c.NumFiles)
	for i := range r.Files {
		r.Files[i], _ = c.File(uint32(i))
	}
	r.Functions = make([]Function, c.NumFunctions)
	for i := range r.Functions {
		r.Functions[i], _ = c.Function(uint32(i))
	}
	r.SourceLocations = make([]SourceLocation, c.NumSourceLocations)
	for i := range r.SourceLocations {
		r.SourceLocations[i], _ = c.SourceLocation(uint32(i))
	}
	r.Ranges = make([]uint32, c.NumRanges)
	for i := range r.Ranges {
		r.Ranges[i], _ = c.RangeStart(uint32(i))
	}
	r.Strings = append([]byte(nil), c.data[c.strings:c.strings+int(c.StringBytes)]...)
	return r
}

// WriteTo encodes r: the preamble, the header and the sections, each padded
// with zeros to an 8-byte boundary. Files are written in the record size of
// r.Header.Version (the source-server fields only in version 9).
func (r *Raw) WriteTo(w io.Writer) (int64, error) {
	if len(r.Ranges) > len(r.SourceLocations) {
		return 0, fmt.Errorf("symcache: %d ranges but %d source locations", len(r.Ranges), len(r.SourceLocations))
	}
	locs := func(f func(SourceLocation)) {
		for _, l := range r.SourceLocations {
			f(l)
		}
	}
	starts := func(f func(uint32)) {
		for _, a := range r.Ranges {
			f(a)
		}
	}
	return writeSections(w, &r.Header, r.Files, r.Functions, len(r.SourceLocations), locs, len(r.Ranges), starts, r.Strings)
}

// writeSections encodes a SymCache as Raw.WriteTo does, taking the source
// locations and range starts one at a time (locs and starts call f for
// each, nLocs and nRanges of them) and writing through a buffer of its own, so that a writer
// need not hold the file's encoding.
func writeSections(w io.Writer, h *Header, files []File, funcs []Function, nLocs int, locs func(f func(SourceLocation)), nRanges int, starts func(f func(uint32)), strs []byte) (int64, error) {
	switch h.Version {
	case Version7, Version8, Version9:
	default:
		return 0, fmt.Errorf("symcache: cannot write version %d", h.Version)
	}
	for _, n := range []int{len(files), len(funcs), nLocs, len(strs)} {
		if uint64(n) >= uint64(None) {
			return 0, fmt.Errorf("symcache: a section of %d entries does not fit 32-bit counts", n)
		}
	}
	cw := &countWriter{w: w}
	b := bufio.NewWriterSize(cw, 1<<16)
	n := 0 // bytes written, for padding
	var tmp [4]byte
	u32 := func(v uint32) {
		binary.LittleEndian.PutUint32(tmp[:], v)
		b.Write(tmp[:])
		n += 4
	}
	write := func(p []byte) {
		b.Write(p)
		n += len(p)
	}
	pad := func() {
		for n%8 != 0 {
			b.WriteByte(0)
			n++
		}
	}
	write([]byte(Magic))
	u32(h.Version)
	write(h.DebugID.UUID[:])
	u32(h.DebugID.Appendix)
	write(h.DebugID.Padding[:])
	write([]byte{h.DebugID.Type})
	u32(uint32(h.Arch))
	u32(uint32(len(files)))
	u32(uint32(len(funcs)))
	u32(uint32(nLocs))
	u32(uint32(nRanges))
	u32(uint32(len(strs)))
	write(h.Reserved[:])
	pad()
	for _, f := range files {
		u32(f.CompDir)
		u32(f.Directory)
		u32(f.Name)
		if h.Version == Version9 {
			u32(f.SrcSrvName)
			u32(f.SrcSrvDir)
			u32(f.SrcSrvRevision)
		}
	}
	pad()
	for _, f := range funcs {
		u32(f.Name)
		u32(f.CompDir)
		u32(f.EntryPC)
		u32(uint32(f.Lang))
	}
	pad()
	locs(func(s SourceLocation) {
		u32(s.File)
		u32(s.Line)
		u32(s.Function)
		u32(s.InlinedInto)
	})
	pad()
	starts(u32)
	pad()
	write(strs)
	err := b.Flush()
	return cw.n, err
}

// countWriter counts the bytes written through it.
type countWriter struct {
	w io.Writer
	n int64
}

func (c *countWriter) Write(p []byte) (int, error) {
	n, err := c.w.Write(p)
	c.n += int64(n)
	return n, err
}

// StringTable builds string bytes, each distinct string stored once, with
// the length prefix of a version.
type StringTable struct {
	version uint32
	bytes   []byte
	offsets strindex.Index
}

// NewStringTable returns an empty table writing prefixes of version.
func NewStringTable(version uint32) *StringTable {
	return &StringTable{version: version}
}

// Insert returns the offset of s, adding it when new.
func (t *StringTable) Insert(s string) uint32 {
	h := t.offsets.Hash(s)
	if off, ok := t.offsets.Find(h, s, t.at); ok {
		return off
	}
	off := uint32(len(t.bytes))
	if t.version == Version7 {
		t.bytes = binary.LittleEndian.AppendUint32(t.bytes, uint32(len(s)))
	} else {
		t.bytes = binary.AppendUvarint(t.bytes, uint64(len(s)))
	}
	t.bytes = append(t.bytes, s...)
	t.offsets.Add(h, s, off)
	return off
}

// at reports whether the table holds s, length-prefixed, at off.
func (t *StringTable) at(off uint32, s string) bool {
	b := t.bytes[off:]
	var n uint64
	if t.version == Version7 {
		if len(b) < 4 {
			return false
		}
		n, b = uint64(binary.LittleEndian.Uint32(b)), b[4:]
	} else {
		var k int
		if n, k = binary.Uvarint(b); k <= 0 {
			return false
		}
		b = b[k:]
	}
	return n == uint64(len(s)) && uint64(len(b)) >= n && string(b[:n]) == s
}

// Bytes returns the string bytes.
func (t *StringTable) Bytes() []byte { return t.bytes }
