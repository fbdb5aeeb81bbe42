package dwarfbuf

import (
	"encoding/binary"
	"errors"
	"testing"
)

func appendUleb(b []byte, v uint64) []byte {
	for {
		c := byte(v & 0x7f)
		v >>= 7
		if v != 0 {
			c |= 0x80
		}
		b = append(b, c)
		if v == 0 {
			return b
		}
	}
}

func appendSleb(b []byte, v int64) []byte {
	for {
		c := byte(v & 0x7f)
		v >>= 7
		done := v == 0 && c&0x40 == 0 || v == -1 && c&0x40 != 0
		if !done {
			c |= 0x80
		}
		b = append(b, c)
		if done {
			return b
		}
	}
}

// TestLEB128 checks the DWARF specification's examples (section 7.6) and
// the extremes.
func TestLEB128(t *testing.T) {
	for _, c := range []struct {
		in []byte
		u  uint64
	}{
		{[]byte{2}, 2}, {[]byte{127}, 127}, {[]byte{0x80, 1}, 128}, {[]byte{0x81, 1}, 129},
		{[]byte{0x82, 1}, 130}, {[]byte{0xb9, 0x64}, 12857},
		{[]byte{0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 1}, 1<<64 - 1},
		// Bits past the 64th are dropped, as every reader here did.
		{[]byte{0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 1}, 0},
	} {
		p := 0
		if v, ok := Uleb(c.in, &p); !ok || v != c.u || p != len(c.in) {
			t.Errorf("Uleb(% x) = %d, %v, end %d; want %d", c.in, v, ok, p, c.u)
		}
	}
	for _, c := range []struct {
		in []byte
		s  int64
	}{
		{[]byte{2}, 2}, {[]byte{0x7e}, -2}, {[]byte{0xff, 0}, 127}, {[]byte{0x81, 0x7f}, -127},
		{[]byte{0x80, 1}, 128}, {[]byte{0x80, 0x7f}, -128}, {[]byte{0x81, 1}, 129}, {[]byte{0xff, 0x7e}, -129},
		{appendSleb(nil, -1<<63), -1 << 63}, {appendSleb(nil, 1<<63-1), 1<<63 - 1},
	} {
		p := 0
		if v, ok := Sleb(c.in, &p); !ok || v != c.s || p != len(c.in) {
			t.Errorf("Sleb(% x) = %d, %v, end %d; want %d", c.in, v, ok, p, c.s)
		}
	}
	for _, in := range [][]byte{nil, {0x80}, {0xff, 0xff}} {
		p := 0
		if _, ok := Uleb(in, &p); ok || p != len(in) {
			t.Errorf("Uleb(% x) ok, end %d; want failure at end", in, p)
		}
		p = 0
		if _, ok := Sleb(in, &p); ok || p != len(in) {
			t.Errorf("Sleb(% x) ok, end %d; want failure at end", in, p)
		}
	}
}

func TestBuf(t *testing.T) {
	data := []byte{1, 0x34, 0x12, 0x78, 0x56, 0x34, 0x12, 8, 7, 6, 5, 4, 3, 2, 1, 0xe5, 0x8e, 0x26, 0x7f, 'h', 'i', 0, 9, 9}
	b := Make(data, binary.LittleEndian, nil)
	if v := b.U8(); v != 1 {
		t.Errorf("U8 = %d", v)
	}
	if v := b.U16(); v != 0x1234 {
		t.Errorf("U16 = %#x", v)
	}
	if v := b.U32(); v != 0x12345678 {
		t.Errorf("U32 = %#x", v)
	}
	if v := b.U64(); v != 0x0102030405060708 {
		t.Errorf("U64 = %#x", v)
	}
	if v := b.Uleb(); v != 624485 {
		t.Errorf("Uleb = %d", v)
	}
	if v := b.Sleb(); v != -1 {
		t.Errorf("Sleb = %d", v)
	}
	if s := b.CString(); s != "hi" {
		t.Errorf("CString = %q", s)
	}
	if b.Off() != 22 || b.Len() != 2 || len(b.Rest()) != 2 || b.Err() != nil {
		t.Fatalf("at %d, %d left, err %v", b.Off(), b.Len(), b.Err())
	}
	// Running out records the error once, at the offset it happened.
	if v := b.U32(); v != 0 || !errors.Is(b.Err(), ErrShort) || b.ErrOffset() != 22 {
		t.Errorf("U32 past the end = %d, err %v at %d", v, b.Err(), b.ErrOffset())
	}
	b.Fail(errors.New("other"))
	if v := b.U8(); v != 0 || b.Err() != ErrShort || b.Off() != 22 {
		t.Errorf("after an error: U8 = %d, err %v, at %d", v, b.Err(), b.Off())
	}
	if b.Bytes(1) != nil || b.CString() != "" || b.Uleb() != 0 || b.Sleb() != 0 || b.U16() != 0 || b.U64() != 0 {
		t.Error("reads after an error are not zero")
	}

	big := Make([]byte{0x12, 0x34, 0, 0, 0, 1}, binary.BigEndian, errors.New("mine"))
	if v := big.U16(); v != 0x1234 {
		t.Errorf("big-endian U16 = %#x", v)
	}
	big.Limit(3)
	if v := big.U32(); v != 0 || big.Err() == nil || big.Err().Error() != "mine" {
		t.Errorf("U32 past the limit = %d, err %v", v, big.Err())
	}
	il := Make([]byte{0xff, 0xff, 0xff, 0xff, 1, 0, 0, 0, 0, 0, 0, 0, 0x10, 0, 0, 0}, binary.LittleEndian, nil)
	if n, is64 := il.InitialLength(); n != 1 || !is64 {
		t.Errorf("64-bit InitialLength = %d, %v", n, is64)
	}
	if n, is64 := il.InitialLength(); n != 0x10 || is64 || il.Err() != nil {
		t.Errorf("32-bit InitialLength = %d, %v, %v", n, is64, il.Err())
	}
	e := Make([]byte{1, 2}, nil, nil)
	if v := e.Bytes(0); v == nil || len(v) != 0 {
		t.Errorf("Bytes(0) = %v, want empty non-nil", v)
	}
	e.Skip(-1)
	if e.Err() == nil {
		t.Error("Skip(-1) did not fail")
	}
}

// FuzzBuf runs a sequence of reads chosen by ops over data and checks that
// nothing panics, the offset stays in bounds, reads after an error are zero
// and LEB128 numbers decode as they were encoded.
func FuzzBuf(f *testing.F) {
	f.Add([]byte{0, 1, 2, 3, 4, 5, 6}, []byte{0x80, 0x80, 1, 'a', 0}, uint64(300), int64(-300))
	f.Add([]byte{7, 8}, []byte{0xff}, uint64(1<<63), int64(-1<<63))
	f.Fuzz(func(t *testing.T, ops, data []byte, u uint64, s int64) {
		enc := appendSleb(appendUleb(nil, u), s)
		p := 0
		if v, ok := Uleb(enc, &p); !ok || v != u {
			t.Fatalf("Uleb of encoded %d = %d, %v", u, v, ok)
		}
		if v, ok := Sleb(enc, &p); !ok || v != s || p != len(enc) {
			t.Fatalf("Sleb of encoded %d = %d, %v", s, v, ok)
		}
		b := Make(data, binary.BigEndian, nil)
		for _, op := range ops {
			failed := b.Err() != nil
			var zero bool
			switch op % 11 {
			case 0:
				zero = b.U8() == 0
			case 1:
				zero = b.U16() == 0
			case 2:
				zero = b.U32() == 0
			case 3:
				zero = b.U64() == 0
			case 4:
				zero = b.Uleb() == 0
			case 5:
				zero = b.Sleb() == 0
			case 6:
				zero = b.CString() == ""
			case 7:
				zero = b.Bytes(uint64(op/10)) == nil
			case 8:
				b.Skip(int(op / 10))
				zero = true
			case 9:
				b.Limit(uint64(op / 10))
				zero = true
			case 10:
				n, is64 := b.InitialLength()
				zero = n == 0 && !is64
			}
			if failed && !zero {
				t.Fatalf("op %d returned a value after error %v", op, b.Err())
			}
			if b.Off() < 0 || b.Off() > len(b.Data()) {
				t.Fatalf("offset %d outside %d bytes", b.Off(), len(b.Data()))
			}
			if b.Err() != nil && (b.ErrOffset() < 0 || b.ErrOffset() > len(data)) {
				t.Fatalf("error offset %d outside the data", b.ErrOffset())
			}
		}
	})
}
