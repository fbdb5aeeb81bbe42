package pdb

import (
	"encoding/binary"
	"fmt"
	"sort"
)

// pieces is a stream's bytes as the runs of consecutive blocks of a file
// in memory: the stream read without copying it, though its blocks are
// not all consecutive (a stream longer than 16 MB, for one, is cut by the
// free page map's blocks every 4096 blocks).
type pieces struct {
	p     [][]byte
	start []int // stream offset of p[i]
	size  int
}

func onePiece(b []byte) pieces { return pieces{p: [][]byte{b}, start: []int{0}, size: len(b)} }

// at returns the n bytes at stream offset off: a slice of the file when
// they lie in one piece, else a copy; nil when they pass the end.
func (ps *pieces) at(off, n int) []byte {
	if off < 0 || n < 0 || off > ps.size || n > ps.size-off {
		return nil
	}
	i := 0
	if len(ps.p) > 1 {
		i = sort.Search(len(ps.start), func(i int) bool { return ps.start[i] > off }) - 1
	}
	if rel := off - ps.start[i]; n <= len(ps.p[i])-rel {
		return ps.p[i][rel : rel+n : rel+n]
	}
	out := make([]byte, 0, n)
	for ; len(out) < n && i < len(ps.p); i++ {
		rel := max(0, off+len(out)-ps.start[i])
		out = append(out, ps.p[i][rel:min(len(ps.p[i]), rel+n-len(out))]...)
	}
	return out
}

// u16 reads a little-endian uint16 at off (0 past the end).
func (ps *pieces) u16(off int) uint16 {
	if b := ps.at(off, 2); b != nil {
		return binary.LittleEndian.Uint16(b)
	}
	return 0
}

// minPieceSize is the average run of consecutive blocks below which a
// stream is copied rather than read in pieces: records crossing a piece's
// end are copied on each read.
var minPieceSize = 64 << 10

// streamPieces returns stream i as runs of the file's bytes, without
// copying, when the MSF holds the file in memory (NewMSFBytes, Open) and
// the runs are long enough; ok is false otherwise (read it with Stream).
func (m *MSF) streamPieces(i int) (ps pieces, ok bool, err error) {
	if m.data == nil || i < 0 || i >= len(m.streams) || m.streams[i].size == nilStream || m.streams[i].size == 0 {
		return pieces{}, false, nil
	}
	s := m.streams[i]
	bs := int64(m.Super.BlockSize)
	if int64(len(s.blocks))*bs < int64(s.size) || int64(s.size) > m.size {
		return pieces{}, false, nil // Stream reports it
	}
	nb := (int64(s.size) + bs - 1) / bs
	for _, blk := range s.blocks[:nb] {
		if blk >= m.Super.NumBlocks {
			return pieces{}, false, nil // Stream reports it
		}
	}
	var runs int64
	for j := int64(0); j < nb; j++ {
		if j == 0 || s.blocks[j] != s.blocks[j-1]+1 {
			runs++
		}
	}
	if int64(s.size)/runs < int64(minPieceSize) && runs > 1 {
		return pieces{}, false, nil
	}
	ps.size = int(s.size)
	for j := int64(0); j < nb; {
		k := j + 1
		for k < nb && s.blocks[k] == s.blocks[k-1]+1 {
			k++
		}
		start := int64(s.blocks[j]) * bs
		end := start + min((k-j)*bs, int64(s.size)-j*bs)
		if end > int64(len(m.data)) {
			return pieces{}, false, nil // a last block cut short: Stream reports it
		}
		ps.p = append(ps.p, m.data[start:end:end])
		ps.start = append(ps.start, int(j*bs))
		j = k
	}
	if n := m.read.Add(int64(s.size)); n > ReadBudget*m.size+1<<20 {
		return pieces{}, false, fmt.Errorf("msf: stream %d: %d bytes of streams read from a file of %d (overlapping streams?): %w", i, n, m.size, ErrFormat)
	}
	return ps, true, nil
}
