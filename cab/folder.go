package cab

import (
	"bytes"
	"compress/flate"
	"encoding/binary"
	"fmt"
	"io"
)

// maxBlock is the most uncompressed data one CFDATA block may hold (MS-CAB:
// 32 KiB, plus a little for stored MSZIP blocks).
const maxBlock = 32768 + 6144

// folderReader yields a folder's uncompressed data, block after block.
type folderReader struct {
	c     *Reader
	f     folder
	off   int64 // next CFDATA block
	block int   // blocks read
	out   []byte
	pos   int
	// window is the previous block's output: MSZIP blocks share the
	// deflate history.
	window []byte
}

func (fr *folderReader) Read(p []byte) (int, error) {
	for fr.pos == len(fr.out) {
		if fr.block == int(fr.f.blocks) {
			return 0, io.EOF
		}
		if err := fr.next(); err != nil {
			return 0, err
		}
	}
	n := copy(p, fr.out[fr.pos:])
	fr.pos += n
	return n, nil
}

// next reads and decompresses the next block.
func (fr *folderReader) next() error {
	var h [8]byte
	if _, err := fr.c.r.ReadAt(h[:], fr.off); err != nil {
		return fmt.Errorf("%w: block %d header: %v", ErrFormat, fr.block, err)
	}
	le := binary.LittleEndian
	packed := int(le.Uint16(h[4:]))
	unpacked := int(le.Uint16(h[6:]))
	if unpacked > maxBlock {
		return fmt.Errorf("%w: block %d: %d bytes uncompressed", ErrFormat, fr.block, unpacked)
	}
	dataOff := fr.off + 8 + int64(fr.c.dataRes)
	if dataOff+int64(packed) > fr.c.size {
		return fmt.Errorf("%w: block %d: %d bytes at %d past the end", ErrFormat, fr.block, packed, dataOff)
	}
	data := make([]byte, packed)
	if _, err := fr.c.r.ReadAt(data, dataOff); err != nil {
		return fmt.Errorf("%w: block %d: %v", ErrFormat, fr.block, err)
	}
	fr.off = dataOff + int64(packed)
	fr.block++
	if want := le.Uint32(h[0:]); want != 0 {
		if got := checksum(data, 0) ^ le.Uint32(h[4:]); got != want {
			return fmt.Errorf("%w: block %d: checksum %#08x, the block says %#08x (damaged data)", ErrChecksum, fr.block-1, got, want)
		}
	}
	// File.Open lets only stored and MSZIP folders through.
	out := data
	if fr.f.compress&0xf == CompressNone {
		if packed != unpacked {
			return fmt.Errorf("%w: block %d: stored block of %d bytes says %d", ErrFormat, fr.block-1, packed, unpacked)
		}
	} else {
		if len(data) < 2 || data[0] != 'C' || data[1] != 'K' {
			return fmt.Errorf("%w: block %d: no MSZIP signature", ErrFormat, fr.block-1)
		}
		out = make([]byte, unpacked)
		zr := flate.NewReaderDict(bytes.NewReader(data[2:]), fr.window)
		if _, err := io.ReadFull(zr, out); err != nil {
			return fmt.Errorf("%w: block %d: inflating: %v", ErrFormat, fr.block-1, err)
		}
	}
	fr.window = out
	fr.out, fr.pos = out, 0
	return nil
}

// checksum is MS-CAB's CFDATA checksum of b, seeded with seed: the XOR of
// its little-endian 32-bit words, the last one to three bytes taken as a
// big-endian word (as cabarc and libmspack compute it). A block's checksum
// covers its data then its cbData and cbUncomp fields (one word, XORed
// in); 0 means the block has none.
func checksum(b []byte, seed uint32) uint32 {
	c := seed
	n := len(b) &^ 3
	for i := 0; i < n; i += 4 {
		c ^= binary.LittleEndian.Uint32(b[i:])
	}
	var ul uint32
	for _, x := range b[n:] {
		ul = ul<<8 | uint32(x)
	}
	return c ^ ul
}
