package x86

import (
	"encoding/binary"
	"testing"
)

// Field offsets from Breakpad's MDRawContextX86.
func TestContextLayout(t *testing.T) {
	c := &Context{ContextFlags: ContextFull, Dr7: 7, Gs: 0x11, Eip: 0x1234, Esp: 0x5678, Ss: 0x2b}
	c.FloatSave.Cr0NpxState = 9
	c.ExtendedRegisters[511] = 0xee
	b := c.Encode()
	if len(b) != ContextSize {
		t.Fatalf("size %d", len(b))
	}
	for _, f := range []struct {
		off  int
		want uint32
	}{{0, ContextFull}, {24, 7}, {136, 9}, {140, 0x11}, {184, 0x1234}, {196, 0x5678}, {200, 0x2b}} {
		if got := binary.LittleEndian.Uint32(b[f.off:]); got != f.want {
			t.Errorf("offset %d = %#x, want %#x", f.off, got, f.want)
		}
	}
	if b[715] != 0xee {
		t.Error("extended registers not at the end")
	}
	d, err := DecodeContext(append(b, 1, 2, 3)) // trailing XSAVE bytes are ignored
	if err != nil || *d != *c {
		t.Errorf("round trip: %v", err)
	}
	if _, err := DecodeContext(b[:ContextSize-1]); err == nil {
		t.Error("short context decoded")
	}
}
