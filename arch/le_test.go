package arch

import "testing"

func TestLEReader(t *testing.T) {
	r := NewLEReader([]byte{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20, 21, 22, 23, 24, 25, 26, 27, 28, 29, 30, 31, 32, 33})
	var two [2]byte
	if v := r.U8(); v != 1 {
		t.Errorf("U8 = %#x", v)
	}
	if v := r.U16(); v != 0x0302 {
		t.Errorf("U16 = %#x", v)
	}
	if v := r.U32(); v != 0x07060504 {
		t.Errorf("U32 = %#x", v)
	}
	if v := r.U64(); v != 0x0f0e0d0c0b0a0908 {
		t.Errorf("U64 = %#x", v)
	}
	if v := r.U128(); v != (Uint128{Low: 0x1716151413121110, High: 0x1f1e1d1c1b1a1918}) {
		t.Errorf("U128 = %#x", v)
	}
	if r.Bytes(two[:]); two != [2]byte{0x20, 0x21} {
		t.Errorf("Bytes = %#x", two)
	}
}

func TestEncodeContext(t *testing.T) {
	b := EncodeContext("test", 10, &struct {
		A uint16
		B uint64
	}{0x0201, 0x0a09080706050403})
	if string(b) != "\x01\x02\x03\x04\x05\x06\x07\x08\x09\x0a" {
		t.Errorf("EncodeContext = %x", b)
	}
}
