package symcache

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"io"
)

// Raw is a SymCache's sections as values: what [Cache.Raw] decodes and
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
func (c *Cache) Raw() *Raw {
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
	h := r.Header
	switch h.Version {
	case Version7, Version8, Version9:
	default:
		return 0, fmt.Errorf("symcache: cannot write version %d", h.Version)
	}
	if len(r.Ranges) > len(r.SourceLocations) {
		return 0, fmt.Errorf("symcache: %d ranges but %d source locations", len(r.Ranges), len(r.SourceLocations))
	}
	for _, n := range []int{len(r.Files), len(r.Functions), len(r.SourceLocations), len(r.Strings)} {
		if uint64(n) >= uint64(None) {
			return 0, fmt.Errorf("symcache: a section of %d entries does not fit 32-bit counts", n)
		}
	}
	var b bytes.Buffer
	u32 := func(v uint32) { b.Write(binary.LittleEndian.AppendUint32(nil, v)) }
	pad := func() {
		for b.Len()%8 != 0 {
			b.WriteByte(0)
		}
	}
	b.WriteString(Magic)
	u32(h.Version)
	b.Write(h.DebugID.UUID[:])
	u32(h.DebugID.Appendix)
	b.Write(h.DebugID.Padding[:])
	b.WriteByte(h.DebugID.Type)
	u32(uint32(h.Arch))
	u32(uint32(len(r.Files)))
	u32(uint32(len(r.Functions)))
	u32(uint32(len(r.SourceLocations)))
	u32(uint32(len(r.Ranges)))
	u32(uint32(len(r.Strings)))
	b.Write(h.Reserved[:])
	pad()
	for _, f := range r.Files {
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
	for _, f := range r.Functions {
		u32(f.Name)
		u32(f.CompDir)
		u32(f.EntryPC)
		u32(uint32(f.Lang))
	}
	pad()
	for _, s := range r.SourceLocations {
		u32(s.File)
		u32(s.Line)
		u32(s.Function)
		u32(s.InlinedInto)
	}
	pad()
	for _, a := range r.Ranges {
		u32(a)
	}
	pad()
	b.Write(r.Strings)
	return b.WriteTo(w)
}

// StringTable builds string bytes, each distinct string stored once, with
// the length prefix of a version.
type StringTable struct {
	version uint32
	bytes   []byte
	offsets map[string]uint32
}

// NewStringTable returns an empty table writing prefixes of version.
func NewStringTable(version uint32) *StringTable {
	return &StringTable{version: version, offsets: map[string]uint32{}}
}

// Insert returns the offset of s, adding it when new.
func (t *StringTable) Insert(s string) uint32 {
	if off, ok := t.offsets[s]; ok {
		return off
	}
	off := uint32(len(t.bytes))
	if t.version == Version7 {
		t.bytes = binary.LittleEndian.AppendUint32(t.bytes, uint32(len(s)))
	} else {
		t.bytes = binary.AppendUvarint(t.bytes, uint64(len(s)))
	}
	t.bytes = append(t.bytes, s...)
	t.offsets[s] = off
	return off
}

// Bytes returns the string bytes.
func (t *StringTable) Bytes() []byte { return t.bytes }
