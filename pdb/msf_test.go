package pdb

import (
	"bytes"
	"encoding/binary"
	"errors"
	"testing"
)

// buildMSF lays streams out in an MSF 7.00 container with the given block
// size: superblock, one block map block, the directory, then the streams.
// A nil stream is written as absent (size 0xFFFFFFFF).
func buildMSF(bs int, streams [][]byte) []byte {
	le := binary.LittleEndian
	nblocks := func(n int) int { return (n + bs - 1) / bs }
	// Blocks: 0 superblock, 1 free block map, 2 (block map), then
	// directory blocks, then stream blocks.
	next := 3
	var dir []byte
	dir = le.AppendUint32(dir, uint32(len(streams)))
	for _, s := range streams {
		if s == nil {
			dir = le.AppendUint32(dir, 0xFFFFFFFF)
		} else {
			dir = le.AppendUint32(dir, uint32(len(s)))
		}
	}
	dirBlocks := nblocks(len(dir) + 4*(func() int {
		n := 0
		for _, s := range streams {
			n += nblocks(len(s))
		}
		return n
	}()))
	first := next + dirBlocks
	blk := first
	var body []byte
	for _, s := range streams {
		for i := 0; i < nblocks(len(s)); i++ {
			dir = le.AppendUint32(dir, uint32(blk))
			blk++
		}
		p := make([]byte, nblocks(len(s))*bs)
		copy(p, s)
		body = append(body, p...)
	}
	out := make([]byte, first*bs)
	copy(out, Magic)
	le.PutUint32(out[32:], uint32(bs))
	le.PutUint32(out[36:], 1)
	le.PutUint32(out[40:], uint32(blk))
	le.PutUint32(out[44:], uint32(len(dir)))
	le.PutUint32(out[52:], 2)
	for i := 0; i < nblocks(len(dir)); i++ {
		le.PutUint32(out[2*bs+4*i:], uint32(next+i))
	}
	copy(out[next*bs:], dir)
	return append(out, body...)
}

func TestMSFBlockSizes(t *testing.T) {
	for _, bs := range []int{512, 1024, 4096, 8192} {
		s1 := bytes.Repeat([]byte{1, 2, 3}, 1000)
		data := buildMSF(bs, [][]byte{nil, s1, {}, []byte("x")})
		m, err := NewMSF(bytes.NewReader(data), int64(len(data)))
		if err != nil {
			t.Fatalf("block size %d: %v", bs, err)
		}
		if m.NumStreams() != 4 || m.StreamSize(0) != -1 || m.StreamSize(1) != 3000 {
			t.Fatalf("block size %d: %d streams, sizes %d %d", bs, m.NumStreams(), m.StreamSize(0), m.StreamSize(1))
		}
		got, err := m.Stream(1)
		if err != nil || !bytes.Equal(got, s1) {
			t.Fatalf("block size %d: stream 1: %v", bs, err)
		}
	}
}

// TestMSFHostile: a stream claiming more bytes than the file, blocks past
// the end and absurd directories give errors.
func TestMSFHostile(t *testing.T) {
	data := buildMSF(512, [][]byte{bytes.Repeat([]byte{7}, 600)})
	le := binary.LittleEndian
	// The directory starts at block 3: stream count, then sizes.
	bad := bytes.Clone(data)
	le.PutUint32(bad[3*512+4:], 0x7fffffff)
	if _, err := NewMSF(bytes.NewReader(bad), int64(len(bad))); err == nil {
		t.Error("stream of 2 GiB in a small file: no error")
	}
	bad = bytes.Clone(data)
	le.PutUint32(bad[3*512+8:], 0xffffff) // first block of stream 0
	m, err := NewMSF(bytes.NewReader(bad), int64(len(bad)))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := m.Stream(0); !errors.Is(err, ErrFormat) {
		t.Errorf("block past the end: %v", err)
	}
	bad = bytes.Clone(data)
	le.PutUint32(bad[3*512:], 0xffffffff) // 2^32-1 streams
	if _, err := NewMSF(bytes.NewReader(bad), int64(len(bad))); err == nil {
		t.Error("2^32-1 streams: no error")
	}
	bad = bytes.Clone(data)
	le.PutUint32(bad[44:], 0xfffffff0) // directory size
	if _, err := NewMSF(bytes.NewReader(bad), int64(len(bad))); err == nil {
		t.Error("huge directory: no error")
	}
	if _, err := NewMSF(bytes.NewReader(data[:100]), 100); err == nil {
		t.Error("truncated file: no error")
	}
}

func FuzzMSF(f *testing.F) {
	f.Add(buildMSF(512, [][]byte{nil, []byte("abc"), bytes.Repeat([]byte{1}, 1500)}))
	f.Add(buildMSF(4096, [][]byte{{}, nil}))
	f.Fuzz(func(t *testing.T, data []byte) {
		pf, err := NewFile(bytes.NewReader(data), int64(len(data)))
		if err != nil {
			return
		}
		for i := 0; i < pf.MSF.NumStreams() && i < 64; i++ {
			if b, err := pf.MSF.Stream(i); err == nil && int64(len(b)) > int64(len(data)) {
				t.Fatalf("stream %d of %d bytes from a file of %d", i, len(b), len(data))
			}
		}
		exercise(pf)
		// The file in memory: streams as slices or pieces of it.
		defer func(n int) { minPieceSize = n }(minPieceSize)
		minPieceSize = 1
		inMem, err := NewFileBytes(data)
		if err != nil {
			t.Fatalf("NewFileBytes: %v (NewFile read it)", err)
		}
		for i := 0; i < inMem.MSF.NumStreams() && i < 64; i++ {
			if b, err := inMem.MSF.Stream(i); err == nil && int64(len(b)) > int64(len(data)) {
				t.Fatalf("stream %d of %d bytes from a file of %d", i, len(b), len(data))
			}
			inMem.MSF.Release(i)
		}
		exercise(inMem)
	})
}

// exercise reads everything the package reads of a file.
func exercise(pf *File) {
	pf.Info()
	pf.Names()
	pf.TPI()
	pf.IPI()
	d, err := pf.DBI()
	if err != nil {
		return
	}
	for i := range numDbg {
		pf.DebugStream(i)
	}
	if g, err := pf.GlobalSymbols(); err == nil {
		walkSymbols(NewSymbolIter(g, 0))
	}
	for i := range d.Modules {
		ms, err := pf.ModuleSymbols(&d.Modules[i])
		if err != nil || ms == nil {
			continue
		}
		walkSymbols(ms.Iter())
		exerciseC13(ms.C13)
	}
}

// TestMSFOverlappingStreams: streams sharing blocks cannot make reading
// cost more than ReadBudget times the file.
func TestMSFOverlappingStreams(t *testing.T) {
	const bs = 512
	data := buildMSF(bs, [][]byte{bytes.Repeat([]byte{1}, 4*bs)})
	m, err := NewMSF(bytes.NewReader(data), int64(len(data)))
	if err != nil {
		t.Fatal(err)
	}
	var failed bool
	for range (ReadBudget*len(data)+1<<20)/(4*bs) + 2 {
		if _, err := m.readStream(m.streams[0]); err != nil {
			failed = true
			break
		}
	}
	if !failed {
		t.Error("reading the same blocks far past the budget: no error")
	}
}
