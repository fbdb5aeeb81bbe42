package arch

import "encoding/binary"

// LEReader reads little-endian fields in order, as the context decoders do;
// the caller checks the length first (reading past the end panics).
type LEReader struct {
	b   []byte
	off int
}

// NewLEReader returns a reader of b from its start.
func NewLEReader(b []byte) *LEReader { return &LEReader{b: b} }

// U8 reads one byte.
func (r *LEReader) U8() uint8 { v := r.b[r.off]; r.off++; return v }

// U16 reads a little-endian 16-bit value.
func (r *LEReader) U16() uint16 { v := binary.LittleEndian.Uint16(r.b[r.off:]); r.off += 2; return v }

// U32 reads a little-endian 32-bit value.
func (r *LEReader) U32() uint32 { v := binary.LittleEndian.Uint32(r.b[r.off:]); r.off += 4; return v }

// U64 reads a little-endian 64-bit value.
func (r *LEReader) U64() uint64 { v := binary.LittleEndian.Uint64(r.b[r.off:]); r.off += 8; return v }

// U128 reads the low 64 bits, then the high.
func (r *LEReader) U128() Uint128 { lo := r.U64(); return Uint128{Low: lo, High: r.U64()} }

// Bytes fills dst.
func (r *LEReader) Bytes(dst []byte) { r.off += copy(dst, r.b[r.off:]) }

// EncodeContext returns the little-endian encoding of the fixed-size context
// c, size bytes long; name (the package) prefixes the panic of a layout that
// is not fixed-size, which cannot happen for the contexts.
func EncodeContext(name string, size int, c any) []byte {
	b := make([]byte, size)
	if _, err := binary.Encode(b, binary.LittleEndian, c); err != nil {
		panic(name + ": encoding a fixed-size context: " + err.Error()) // unreachable: the layout is fixed
	}
	return b
}
