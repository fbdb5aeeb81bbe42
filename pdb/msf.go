package pdb

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"sync/atomic"

	"github.com/gobreakpad/gobreakpad/internal/mmap"
)

// Magic is the signature a PDB 7.0 file (an MSF 7.00 container) starts with.
const Magic = "Microsoft C/C++ MSF 7.00\r\n\x1aDS\x00\x00\x00"

// ErrFormat reports a file that is not an MSF 7.00 container or is damaged.
var ErrFormat = errors.New("pdb: bad format")

// SuperBlock is the MSF header at the start of the file.
type SuperBlock struct {
	BlockSize         uint32 // page size: 512, 1024, 2048, 4096 (8192 and up for files past 4 GiB)
	FreeBlockMapBlock uint32
	NumBlocks         uint32
	NumDirectoryBytes uint32
	Unknown           uint32
	// BlockMapAddrs are the blocks listing the stream directory's blocks:
	// one for directories up to BlockSize²/4 bytes, more in the large
	// directory form.
	BlockMapAddrs []uint32
}

// MSF is an opened multi-stream file: the container of a PDB's streams.
type MSF struct {
	r       io.ReaderAt
	data    []byte // the whole file when it is in memory or mapped; else nil
	mapped  bool   // data is a read-only shared mapping of the file, made by Open
	size    int64
	read    atomic.Int64 // bytes of streams read so far
	Super   SuperBlock
	streams []streamDesc
}

type streamDesc struct {
	size   uint32 // nilStream for none
	blocks []uint32
}

const nilStream = 0xFFFFFFFF

// ReadBudget bounds the bytes of streams an MSF reads, over its life, to
// this many times the file's size (plus 1 MiB): a reader of the whole PDB
// reads each stream about once.
const ReadBudget = 16

// NewMSF reads the superblock and the stream directory of the MSF container
// in r, size bytes long. Streams are copied out of r when read.
func NewMSF(r io.ReaderAt, size int64) (*MSF, error) {
	return newMSF(r, nil, size)
}

// NewMSFBytes reads the MSF container held in data (a file read whole, or
// a mapping of it). A stream whose blocks follow each other in the file is
// returned as a slice of data, without copying; the others are copied.
func NewMSFBytes(data []byte) (*MSF, error) {
	return newMSF(bytes.NewReader(data), data, int64(len(data)))
}

func newMSF(r io.ReaderAt, data []byte, size int64) (*MSF, error) {
	var hdr [56]byte
	if _, err := r.ReadAt(hdr[:], 0); err != nil {
		return nil, fmt.Errorf("msf: superblock: %w", err)
	}
	if !bytes.Equal(hdr[:32], []byte(Magic)) {
		if bytes.HasPrefix(hdr[:], []byte("Microsoft C/C++ program database 2.00")) {
			return nil, fmt.Errorf("msf: a PDB 2.00 file, which is not read: %w", ErrFormat)
		}
		return nil, fmt.Errorf("msf: no MSF 7.00 signature: %w", ErrFormat)
	}
	le := binary.LittleEndian
	m := &MSF{r: r, data: data, size: size}
	sb := &m.Super
	sb.BlockSize = le.Uint32(hdr[32:])
	sb.FreeBlockMapBlock = le.Uint32(hdr[36:])
	sb.NumBlocks = le.Uint32(hdr[40:])
	sb.NumDirectoryBytes = le.Uint32(hdr[44:])
	sb.Unknown = le.Uint32(hdr[48:])
	switch sb.BlockSize {
	case 512, 1024, 2048, 4096, 8192, 16384, 32768:
	default:
		return nil, fmt.Errorf("msf: block size %d: %w", sb.BlockSize, ErrFormat)
	}
	bs := int64(sb.BlockSize)
	// Blocks past the end of the file cannot be read; bound the count by
	// the file (a last partial block is tolerated).
	if maxBlocks := (size + bs - 1) / bs; int64(sb.NumBlocks) > maxBlocks {
		sb.NumBlocks = uint32(maxBlocks)
	}
	if int64(sb.NumDirectoryBytes) > size {
		return nil, fmt.Errorf("msf: directory of %d bytes in a file of %d: %w", sb.NumDirectoryBytes, size, ErrFormat)
	}
	dirBlocks := (int64(sb.NumDirectoryBytes) + bs - 1) / bs
	mapBlocks := (dirBlocks*4 + bs - 1) / bs
	if mapBlocks > (bs-52)/4 {
		return nil, fmt.Errorf("msf: directory of %d blocks: %w", dirBlocks, ErrFormat)
	}
	mapAddrs := make([]byte, mapBlocks*4)
	if _, err := r.ReadAt(mapAddrs, 52); err != nil {
		return nil, fmt.Errorf("msf: block map addresses: %w", err)
	}
	for i := range mapBlocks {
		sb.BlockMapAddrs = append(sb.BlockMapAddrs, le.Uint32(mapAddrs[i*4:]))
	}
	// The block map: the directory's block numbers.
	blockMap := streamDesc{size: uint32(dirBlocks * 4), blocks: sb.BlockMapAddrs}
	bm, err := m.readStream(blockMap)
	if err != nil {
		return nil, fmt.Errorf("msf: directory block map: %w", err)
	}
	dir := streamDesc{size: sb.NumDirectoryBytes}
	for i := range dirBlocks {
		dir.blocks = append(dir.blocks, le.Uint32(bm[i*4:]))
	}
	d, err := m.readStream(dir)
	if err != nil {
		return nil, fmt.Errorf("msf: stream directory: %w", err)
	}
	if len(d) < 4 {
		return nil, fmt.Errorf("msf: stream directory of %d bytes: %w", len(d), ErrFormat)
	}
	n := le.Uint32(d)
	if uint64(n)*4 > uint64(len(d)-4) {
		return nil, fmt.Errorf("msf: %d streams in a directory of %d bytes: %w", n, len(d), ErrFormat)
	}
	sizes := d[4 : 4+n*4]
	rest := d[4+n*4:]
	m.streams = make([]streamDesc, n)
	for i := range m.streams {
		sz := le.Uint32(sizes[i*4:])
		s := streamDesc{size: sz}
		if sz != nilStream {
			nb := (int64(sz) + bs - 1) / bs
			if nb*4 > int64(len(rest)) {
				return nil, fmt.Errorf("msf: stream %d: %d bytes need %d blocks past the directory's end: %w", i, sz, nb, ErrFormat)
			}
			s.blocks = make([]uint32, nb)
			for j := range s.blocks {
				s.blocks[j] = le.Uint32(rest[j*4:])
			}
			rest = rest[nb*4:]
		}
		m.streams[i] = s
	}
	return m, nil
}

// NumStreams returns the number of streams in the directory.
func (m *MSF) NumStreams() int { return len(m.streams) }

// StreamSize returns the size of stream i in bytes, or -1 when the stream
// is absent (a nil stream or an index past the directory).
func (m *MSF) StreamSize(i int) int64 {
	if i < 0 || i >= len(m.streams) || m.streams[i].size == nilStream {
		return -1
	}
	return int64(m.streams[i].size)
}

// Stream returns the whole content of stream i. It reads the stream's
// blocks on each call. For an MSF made by NewMSFBytes (and a File opened by
// Open, which maps the file where it can), a stream whose blocks are
// consecutive is a slice of the file's bytes: read-only (a mapping faults
// on writes), valid until the File is closed.
func (m *MSF) Stream(i int) ([]byte, error) {
	if i < 0 || i >= len(m.streams) {
		return nil, fmt.Errorf("msf: stream %d of %d: %w", i, len(m.streams), ErrFormat)
	}
	if m.streams[i].size == nilStream {
		return nil, nil
	}
	b, err := m.readStream(m.streams[i])
	if err != nil {
		return nil, fmt.Errorf("msf: stream %d: %w", i, err)
	}
	return b, nil
}

func (m *MSF) readStream(s streamDesc) ([]byte, error) {
	if s.size == nilStream || s.size == 0 {
		return nil, nil
	}
	bs := int64(m.Super.BlockSize)
	if int64(len(s.blocks))*bs < int64(s.size) {
		return nil, fmt.Errorf("%d bytes in %d blocks: %w", s.size, len(s.blocks), ErrFormat)
	}
	if int64(s.size) > m.size {
		return nil, fmt.Errorf("%d bytes in a file of %d: %w", s.size, m.size, ErrFormat)
	}
	// Streams may share blocks: a hostile directory could make every one
	// of thousands of streams the whole file. Reading more than
	// ReadBudget times the file is refused.
	if n := m.read.Add(int64(s.size)); n > ReadBudget*m.size+1<<20 {
		return nil, fmt.Errorf("%d bytes of streams read from a file of %d (overlapping streams?): %w", n, m.size, ErrFormat)
	}
	nb := (int64(s.size) + bs - 1) / bs
	for _, blk := range s.blocks[:nb] {
		if blk >= m.Super.NumBlocks {
			return nil, fmt.Errorf("block %d past the file's %d: %w", blk, m.Super.NumBlocks, ErrFormat)
		}
	}
	if m.data != nil && contiguous(s.blocks[:nb]) {
		start := int64(s.blocks[0]) * bs
		if end := start + int64(s.size); end <= int64(len(m.data)) {
			return m.data[start:end:end], nil
		}
	}
	out := make([]byte, s.size)
	for i, blk := range s.blocks[:nb] {
		chunk := out[int64(i)*bs : min(int64(i+1)*bs, int64(s.size))]
		if m.data != nil {
			if off := int64(blk) * bs; off+int64(len(chunk)) <= int64(len(m.data)) {
				copy(chunk, m.data[off:])
				continue
			}
		}
		n, err := m.r.ReadAt(chunk, int64(blk)*bs)
		if n < len(chunk) {
			if err == nil || err == io.EOF {
				err = io.ErrUnexpectedEOF
			}
			return nil, fmt.Errorf("block %d: %w", blk, err)
		}
	}
	return out, nil
}

// contiguous reports whether blocks are consecutive block numbers.
func contiguous(blocks []uint32) bool {
	for i := 1; i < len(blocks); i++ {
		if blocks[i] != blocks[i-1]+1 {
			return false
		}
	}
	return true
}

// Release tells the MSF that the bytes of stream i will not be read again
// soon. On a file mapped by Open the pages wholly inside the stream's
// blocks leave the process's resident memory: they stay in the system's
// page cache, and reading the stream again (slices of it kept meanwhile
// included) faults them back in, unchanged. Otherwise (bytes given to
// NewMSFBytes, streams read into copies) it does nothing: a copy is freed
// when no longer referenced.
func (m *MSF) Release(i int) {
	if !m.mapped || i < 0 || i >= len(m.streams) || m.streams[i].size == nilStream {
		return
	}
	s := m.streams[i]
	bs := int64(m.Super.BlockSize)
	nb := min((int64(s.size)+bs-1)/bs, int64(len(s.blocks)))
	for j := int64(0); j < nb; {
		k := j + 1
		for k < nb && s.blocks[k] == s.blocks[k-1]+1 {
			k++
		}
		start := int64(s.blocks[j]) * bs
		end := min(int64(s.blocks[k-1]+1)*bs, start+int64(s.size)-j*bs, int64(len(m.data)))
		// mmap.Release drops only the pages wholly inside the run: a
		// page may hold the start of the next stream.
		if start < end {
			mmap.Release(m.data[start:end])
		}
		j = k
	}
}
