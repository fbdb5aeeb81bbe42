package pdb

import (
	"fmt"

	"github.com/gobreakpad/gobreakpad/moduleid"
)

// Fixed stream numbers.
const (
	StreamOldDirectory = 0
	StreamPDBInfo      = 1
	StreamTPI          = 2
	StreamDBI          = 3
	StreamIPI          = 4
)

// Info is the PDB information stream (stream 1).
type Info struct {
	Version   uint32 // 20000404 for VC70
	Signature uint32 // time stamp
	Age       uint32
	GUID      moduleid.GUID
	// NamedStreams maps names ("/names", "/LinkInfo", "/src/headerblock")
	// to stream numbers.
	NamedStreams map[string]uint32
}

// DebugID returns Breakpad's debug identifier from the GUID and the age.
// (Breakpad uses the DBI stream's age when there is one; see File.DebugID.)
func (in *Info) DebugID() string { return moduleid.DebugID(in.GUID, in.Age) }

func parseInfo(data []byte) (*Info, error) {
	b := &buf{b: data, ctx: "pdb info stream"}
	in := &Info{Version: b.u32(), Signature: b.u32(), Age: b.u32()}
	g := b.bytes(16)
	if b.err != nil {
		return nil, b.err
	}
	in.GUID = moduleid.GUIDFromBytes([16]byte(g))
	in.NamedStreams = map[string]uint32{}
	strLen := b.u32()
	strs := b.bytes(int(strLen))
	size := b.u32()
	capacity := b.u32()
	if b.err != nil {
		return in, nil // older files may stop early; the names are optional
	}
	present := readBitVector(b)
	_ = readBitVector(b) // deleted
	if b.err != nil {
		return nil, b.err
	}
	if size > capacity || uint64(size)*8 > uint64(b.left()) {
		return nil, fmt.Errorf("pdb info stream: named stream map of %d entries (capacity %d): %w", size, capacity, ErrFormat)
	}
	_ = present
	for range size {
		off, stream := b.u32(), b.u32()
		if int64(off) < int64(len(strs)) {
			in.NamedStreams[cString(strs[off:])] = stream
		}
	}
	return in, b.err
}

func readBitVector(b *buf) []uint32 {
	n := b.u32()
	if uint64(n)*4 > uint64(b.left()) {
		b.fail(int(min(n, 1<<30)) * 4)
		return nil
	}
	w := make([]uint32, n)
	for i := range w {
		w[i] = b.u32()
	}
	return w
}
