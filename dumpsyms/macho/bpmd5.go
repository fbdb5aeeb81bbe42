package macho

import (
	"encoding/binary"
	"math"
	"math/bits"
)

// bpMD5 is the MD5 of Breakpad's src/common/md5.cc, which Breakpad's
// MachoID::MD5 uses for a Mach-O file without LC_UUID (its dump_syms and
// its Mac client both): the standard algorithm but for the final block,
// where its MD5Final copies the 64-bit bit count to &ctx->in[14] and
// &ctx->in[15] of a byte array (u8 in[64]), that is to bytes 14-21 over the
// last bytes of data and padding, not to bytes 56-63, which keep what the
// padding (or, when two blocks are padded, the first one) left there. Its
// digests are therefore not MD5's ("abc" gives DBD859A0FAE25B9F9F460EAFBE7C1A67,
// not 900150983CD24FB0D6963F7D28E17F72), and identifiers must be made the
// same way to match the modules of Breakpad's dumps and symbol files.
type bpMD5 struct {
	buf  [4]uint32
	bits uint64
	in   [64]byte
}

func newBPMD5() *bpMD5 {
	return &bpMD5{buf: [4]uint32{0x67452301, 0xefcdab89, 0x98badcfe, 0x10325476}}
}

// Write is md5.cc's MD5Update.
func (h *bpMD5) Write(p []byte) (int, error) {
	n := len(p)
	t := int(h.bits>>3) & 0x3f
	h.bits += uint64(len(p)) << 3
	if t != 0 {
		k := copy(h.in[t:], p)
		if t+k < 64 {
			return n, nil
		}
		h.block()
		p = p[k:]
	}
	for len(p) >= 64 {
		copy(h.in[:], p)
		h.block()
		p = p[64:]
	}
	copy(h.in[:], p)
	return n, nil
}

// Sum is md5.cc's MD5Final.
func (h *bpMD5) Sum() []byte {
	count := int(h.bits>>3) & 0x3f
	h.in[count] = 0x80
	count = 64 - 1 - count
	p := 64 - count
	if count < 8 {
		clear(h.in[p:])
		h.block()
		clear(h.in[:56])
	} else {
		clear(h.in[p : p+count-8])
	}
	// memcpy(&ctx->in[14], &ctx->bits[0], 4); memcpy(&ctx->in[15], &ctx->bits[1], 4)
	binary.LittleEndian.PutUint32(h.in[14:], uint32(h.bits))
	binary.LittleEndian.PutUint32(h.in[15:], uint32(h.bits>>32))
	h.block()
	out := make([]byte, 16)
	for i, v := range h.buf {
		binary.LittleEndian.PutUint32(out[4*i:], v)
	}
	return out
}

var md5T, md5S = func() (t [64]uint32, s [64]int) {
	for i := range t {
		t[i] = uint32(math.Floor(math.Abs(math.Sin(float64(i+1))) * (1 << 32)))
	}
	shifts := [4][4]int{{7, 12, 17, 22}, {5, 9, 14, 20}, {4, 11, 16, 23}, {6, 10, 15, 21}}
	for i := range s {
		s[i] = shifts[i/16][i%4]
	}
	return
}()

// block is MD5's transform of h.in into h.buf.
func (h *bpMD5) block() {
	var x [16]uint32
	for i := range x {
		x[i] = binary.LittleEndian.Uint32(h.in[4*i:])
	}
	a, b, c, d := h.buf[0], h.buf[1], h.buf[2], h.buf[3]
	for i := range 64 {
		var f uint32
		var g int
		switch i / 16 {
		case 0:
			f, g = d^(b&(c^d)), i
		case 1:
			f, g = c^(d&(b^c)), (5*i+1)%16
		case 2:
			f, g = b^c^d, (3*i+5)%16
		default:
			f, g = c^(b|^d), (7*i)%16
		}
		a, d, c, b = d, c, b, b+bits.RotateLeft32(a+f+md5T[i]+x[g], md5S[i])
	}
	h.buf[0] += a
	h.buf[1] += b
	h.buf[2] += c
	h.buf[3] += d
}
