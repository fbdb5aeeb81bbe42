package pdb

import (
	"fmt"
)

// Machine is the DBI header's machine type (IMAGE_FILE_MACHINE_*).
type Machine uint16

// Machine types met in PDBs.
const (
	MachineI386  Machine = 0x14c
	MachineAMD64 Machine = 0x8664
	MachineARM   Machine = 0x1c0
	MachineARMNT Machine = 0x1c4
	MachineARM64 Machine = 0xaa64
	MachineIA64  Machine = 0x200
)

// DBIHeader is the fixed header of the DBI stream.
type DBIHeader struct {
	VersionSignature   int32
	VersionHeader      uint32
	Age                uint32
	GlobalStream       uint16
	BuildNumber        uint16
	PublicStream       uint16
	PdbDllVersion      uint16
	SymRecordStream    uint16
	PdbDllRbld         uint16
	ModInfoSize        int32
	SectionContribSize int32
	SectionMapSize     int32
	SourceInfoSize     int32
	TypeServerMapSize  int32
	MFCTypeServerIndex uint32
	OptionalDbgHdrSize int32
	ECSubstreamSize    int32
	Flags              uint16
	Machine            Machine
	Padding            uint32
}

// Debug header stream slots, in the optional debug header's order.
const (
	DbgFPO = iota
	DbgException
	DbgFixup
	DbgOmapToSrc
	DbgOmapFromSrc
	DbgSectionHdr
	DbgTokenRidMap
	DbgXdata
	DbgPdata
	DbgNewFPO
	DbgSectionHdrOrig
	numDbg
)

// SectionContrib is a section contribution: a piece of a section that one
// module (object file) brought.
type SectionContrib struct {
	Section         uint16
	Offset          int32
	Size            int32
	Characteristics uint32
	Module          uint16
	DataCRC         uint32
	RelocCRC        uint32
}

// Module is one entry of the DBI module list (a compiland).
type Module struct {
	Contrib       SectionContrib
	Flags         uint16
	SymStream     uint16 // 0xFFFF when the module has no symbol stream
	SymByteSize   uint32
	C11ByteSize   uint32
	C13ByteSize   uint32
	SourceFileCnt uint16
	Name          string
	ObjFileName   string
}

// DBI is the debug information stream (stream 3).
type DBI struct {
	Header   DBIHeader
	Modules  []Module
	Contribs []SectionContrib
	// DebugStreams are the optional debug header's stream numbers, indexed
	// by the Dbg* constants; 0xFFFF for none.
	DebugStreams [numDbg]uint16
}

func parseDBI(data []byte) (*DBI, error) {
	b := &buf{b: data, ctx: "dbi"}
	h := DBIHeader{
		VersionSignature: int32(b.u32()), VersionHeader: b.u32(), Age: b.u32(),
		GlobalStream: b.u16(), BuildNumber: b.u16(), PublicStream: b.u16(), PdbDllVersion: b.u16(),
		SymRecordStream: b.u16(), PdbDllRbld: b.u16(),
		ModInfoSize: int32(b.u32()), SectionContribSize: int32(b.u32()), SectionMapSize: int32(b.u32()),
		SourceInfoSize: int32(b.u32()), TypeServerMapSize: int32(b.u32()), MFCTypeServerIndex: b.u32(),
		OptionalDbgHdrSize: int32(b.u32()), ECSubstreamSize: int32(b.u32()), Flags: b.u16(), Machine: Machine(b.u16()),
		Padding: b.u32(),
	}
	if b.err != nil {
		return nil, b.err
	}
	if h.VersionSignature != -1 {
		return nil, fmt.Errorf("dbi: version signature %d (an old DBI format): %w", h.VersionSignature, ErrFormat)
	}
	d := &DBI{Header: h}
	for i := range d.DebugStreams {
		d.DebugStreams[i] = 0xFFFF
	}
	sub := func(name string, n int32) []byte {
		p := b.bytes(int(n))
		if b.err != nil && name != "" {
			b.err = fmt.Errorf("dbi: %s substream of %d bytes: %w", name, n, b.err)
		}
		return p
	}
	mods := sub("module info", h.ModInfoSize)
	contribs := sub("section contribution", h.SectionContribSize)
	sub("section map", h.SectionMapSize)
	sub("file info", h.SourceInfoSize)
	sub("type server map", h.TypeServerMapSize)
	sub("EC", h.ECSubstreamSize)
	dbg := sub("optional debug header", h.OptionalDbgHdrSize)
	if b.err != nil {
		return nil, b.err
	}
	var err error
	if d.Modules, err = parseModules(mods); err != nil {
		return nil, err
	}
	if d.Contribs, err = parseContribs(contribs); err != nil {
		return nil, err
	}
	for i := 0; i < numDbg && 2*i+2 <= len(dbg); i++ {
		d.DebugStreams[i] = uint16(dbg[2*i]) | uint16(dbg[2*i+1])<<8
	}
	return d, nil
}

func readContrib(b *buf) SectionContrib {
	c := SectionContrib{Section: b.u16()}
	b.u16()
	c.Offset = int32(b.u32())
	c.Size = int32(b.u32())
	c.Characteristics = b.u32()
	c.Module = b.u16()
	b.u16()
	c.DataCRC = b.u32()
	c.RelocCRC = b.u32()
	return c
}

func parseModules(data []byte) ([]Module, error) {
	b := &buf{b: data, ctx: "dbi module info"}
	var mods []Module
	for b.left() > 0 {
		b.u32()
		m := Module{Contrib: readContrib(b)}
		m.Flags = b.u16()
		m.SymStream = b.u16()
		m.SymByteSize = b.u32()
		m.C11ByteSize = b.u32()
		m.C13ByteSize = b.u32()
		m.SourceFileCnt = b.u16()
		b.u16()
		b.u32()
		b.u32() // source file name index
		b.u32() // pdb file path name index
		m.Name = b.cstr()
		m.ObjFileName = b.cstr()
		b.align(4)
		if b.err != nil {
			return nil, fmt.Errorf("dbi module %d: %w", len(mods), b.err)
		}
		mods = append(mods, m)
	}
	return mods, nil
}

// Section contribution substream versions.
const (
	contribVer60 = 0xeffe0000 + 19970605
	contribV2    = 0xeffe0000 + 20140516
)

func parseContribs(data []byte) ([]SectionContrib, error) {
	if len(data) == 0 {
		return nil, nil
	}
	b := &buf{b: data, ctx: "dbi section contributions"}
	ver := b.u32()
	size := 28
	switch ver {
	case contribVer60:
	case contribV2:
		size = 32
	default:
		return nil, fmt.Errorf("dbi section contributions: version %#x: %w", ver, ErrFormat)
	}
	out := make([]SectionContrib, 0, b.left()/size)
	for b.left() >= size {
		start := b.off
		out = append(out, readContrib(b))
		b.off = start + size
	}
	return out, nil
}
