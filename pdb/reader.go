package pdb

import (
	"bytes"
	"encoding/binary"
	"fmt"
)

// buf reads little-endian fields from a byte slice, keeping the first
// error: reads past the end return zeros and set err.
type buf struct {
	b   []byte
	off int
	err error
	ctx string
}

func (b *buf) fail(n int) {
	if b.err == nil {
		b.err = fmt.Errorf("%s: %d bytes at offset %d past the end (%d): %w", b.ctx, n, b.off, len(b.b), ErrFormat)
	}
	b.off = len(b.b)
}

func (b *buf) bytes(n int) []byte {
	if n < 0 || n > len(b.b)-b.off {
		b.fail(n)
		return nil
	}
	r := b.b[b.off : b.off+n]
	b.off += n
	return r
}

func (b *buf) u8() uint8 {
	if p := b.bytes(1); p != nil {
		return p[0]
	}
	return 0
}

func (b *buf) u16() uint16 {
	if p := b.bytes(2); p != nil {
		return binary.LittleEndian.Uint16(p)
	}
	return 0
}

func (b *buf) u32() uint32 {
	if p := b.bytes(4); p != nil {
		return binary.LittleEndian.Uint32(p)
	}
	return 0
}

func (b *buf) u64() uint64 {
	if p := b.bytes(8); p != nil {
		return binary.LittleEndian.Uint64(p)
	}
	return 0
}

// cstr reads a NUL-terminated string (the rest when unterminated).
func (b *buf) cstr() string {
	rest := b.b[b.off:]
	if i := bytes.IndexByte(rest, 0); i >= 0 {
		b.off += i + 1
		return string(rest[:i])
	}
	b.off = len(b.b)
	return string(rest)
}

func (b *buf) align(n int) {
	if r := b.off % n; r != 0 {
		b.off = min(len(b.b), b.off+n-r)
	}
}

func (b *buf) left() int { return len(b.b) - b.off }

// cString returns p up to its first NUL.
func cString(p []byte) string {
	if i := bytes.IndexByte(p, 0); i >= 0 {
		p = p[:i]
	}
	return string(p)
}
