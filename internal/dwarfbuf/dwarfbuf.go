// Package dwarfbuf reads the encodings DWARF-style data is made of: fixed-width
// integers in either byte order, unsigned and signed LEB128, NUL-terminated
// strings and byte runs.
//
// [Buf] is a bounds-checked cursor that records the first error, as
// debug/dwarf's internal buf does: after an error every read returns zero (or
// nil, or ""), [Buf.Err] reports that first error and [Buf.ErrOffset] the
// offset where it happened. Callers read a whole header and check the error
// once.
//
// [Uleb] and [Sleb] are the free-function forms for hot loops that keep
// their own position (the DIE walk of package dumpsyms/elf): they are small
// enough to be inlined and never allocate.
//
// Nothing here panics on bad input.
package dwarfbuf

import (
	"encoding/binary"
	"errors"
)

// ErrShort is the error a [Buf] records, unless given another one, when a
// read runs past the end of its data.
var ErrShort = errors.New("unexpected end of data")

// Uleb decodes an unsigned LEB128 number at b[*p] and advances *p past it.
// Bits beyond the 64th are dropped. It reports false, with *p at len(b),
// when the number is not terminated within b.
func Uleb(b []byte, p *int) (uint64, bool) {
	var v uint64
	var shift uint
	for *p < len(b) {
		c := b[*p]
		*p++
		if shift < 64 {
			v |= uint64(c&0x7f) << shift
		}
		shift += 7
		if c&0x80 == 0 {
			return v, true
		}
	}
	return 0, false
}

// Sleb decodes a signed LEB128 number at b[*p] and advances *p past it. Bits
// beyond the 64th are dropped. It reports false, with *p at len(b), when the
// number is not terminated within b.
func Sleb(b []byte, p *int) (int64, bool) {
	var v int64
	var shift uint
	for *p < len(b) {
		c := b[*p]
		*p++
		if shift < 64 {
			v |= int64(c&0x7f) << shift
		}
		shift += 7
		if c&0x80 == 0 {
			if shift < 64 && c&0x40 != 0 {
				v |= -1 << shift
			}
			return v, true
		}
	}
	return 0, false
}

// Buf is a cursor over a byte slice that records its first error. The zero
// Buf has no data; [Make] gives one over a slice.
type Buf struct {
	data   []byte
	off    int
	order  binary.ByteOrder
	short  error
	err    error
	errOff int
}

// Make returns a Buf reading data from its start, with fixed-width values in
// the given byte order (which may be nil when only bytes, LEB128 numbers and
// strings are read). short is the error recorded when a read runs past the
// end of the data; nil means [ErrShort].
func Make(data []byte, order binary.ByteOrder, short error) Buf {
	if short == nil {
		short = ErrShort
	}
	return Buf{data: data, order: order, short: short}
}

// New is [Make] returning a pointer, for readers handed to helper
// functions; it is inlined, so the Buf stays on the stack when they do not
// keep it.
func New(data []byte, order binary.ByteOrder, short error) *Buf {
	b := Make(data, order, short)
	return &b
}

// Fail records err as the Buf's error, unless an error was recorded before.
func (b *Buf) Fail(err error) {
	if b.err == nil {
		b.err, b.errOff = err, b.off
	}
}

// Err returns the first error met, nil if none.
func (b *Buf) Err() error { return b.err }

// ErrOffset returns the offset (from the start of the data) at which the
// first error was met; meaningful only when Err is not nil.
func (b *Buf) ErrOffset() int { return b.errOff }

// Off returns the offset of the next byte to read.
func (b *Buf) Off() int { return b.off }

// Data returns all the Buf's data, from its start.
func (b *Buf) Data() []byte { return b.data }

// Rest returns the data not read yet.
func (b *Buf) Rest() []byte { return b.data[b.off:] }

// Len returns the number of bytes not read yet.
func (b *Buf) Len() int { return len(b.data) - b.off }

// Limit cuts the data n bytes past the current offset, so that reads past
// there fail. It fails itself when fewer than n bytes are left.
func (b *Buf) Limit(n uint64) {
	if b.err != nil {
		return
	}
	if n > uint64(b.Len()) {
		b.Fail(b.short)
		return
	}
	b.data = b.data[:b.off+int(n)]
}

// need reports whether n more bytes can be read, recording the error when
// not.
func (b *Buf) need(n int) bool {
	if b.err != nil {
		return false
	}
	if n < 0 || n > len(b.data)-b.off {
		b.Fail(b.short)
		return false
	}
	return true
}

// Skip steps over n bytes.
func (b *Buf) Skip(n int) {
	if b.need(n) {
		b.off += n
	}
}

// take returns the next n bytes (aliasing the data) and steps over them; nil,
// with the error recorded, when fewer are left.
func (b *Buf) take(n int) []byte {
	if !b.need(n) {
		return nil
	}
	v := b.data[b.off : b.off+n]
	b.off += n
	return v
}

// Bytes returns the next n bytes (aliasing the data), nil after an error.
func (b *Buf) Bytes(n uint64) []byte {
	if n > uint64(len(b.data)) {
		b.Fail(b.short)
		return nil
	}
	return b.take(int(n))
}

// U8 reads one byte (on its own, not through take, to stay inlined).
func (b *Buf) U8() uint8 {
	if !b.need(1) {
		return 0
	}
	v := b.data[b.off]
	b.off++
	return v
}

// U16 reads a 2-byte number in the Buf's byte order.
func (b *Buf) U16() uint16 {
	if v := b.take(2); v != nil {
		return b.order.Uint16(v)
	}
	return 0
}

// U32 reads a 4-byte number in the Buf's byte order.
func (b *Buf) U32() uint32 {
	if v := b.take(4); v != nil {
		return b.order.Uint32(v)
	}
	return 0
}

// U64 reads an 8-byte number in the Buf's byte order.
func (b *Buf) U64() uint64 {
	if v := b.take(8); v != nil {
		return b.order.Uint64(v)
	}
	return 0
}

// InitialLength reads a DWARF initial length: a 4-byte length, or
// 0xffffffff and an 8-byte one, which marks 64-bit DWARF (dwarf64 true).
func (b *Buf) InitialLength() (length uint64, dwarf64 bool) {
	length = uint64(b.U32())
	if length == 0xffffffff {
		return b.U64(), true
	}
	return length, false
}

// Uleb reads an unsigned LEB128 number.
func (b *Buf) Uleb() uint64 {
	if b.err != nil {
		return 0
	}
	v, ok := Uleb(b.data, &b.off)
	if !ok {
		b.Fail(b.short)
	}
	return v
}

// Sleb reads a signed LEB128 number.
func (b *Buf) Sleb() int64 {
	if b.err != nil {
		return 0
	}
	v, ok := Sleb(b.data, &b.off)
	if !ok {
		b.Fail(b.short)
	}
	return v
}

// CString reads a NUL-terminated string (without its NUL).
func (b *Buf) CString() string {
	if b.err != nil {
		return ""
	}
	for i := b.off; i < len(b.data); i++ {
		if b.data[i] == 0 {
			s := string(b.data[b.off:i])
			b.off = i + 1
			return s
		}
	}
	b.Fail(b.short)
	return ""
}
