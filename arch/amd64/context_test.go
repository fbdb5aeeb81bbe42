package amd64

import (
	"encoding/binary"
	"testing"

	"github.com/gobreakpad/gobreakpad/arch"
)

// Field offsets from Breakpad's MDRawContextAMD64 (Windows CONTEXT).
func TestContextLayout(t *testing.T) {
	c := &Context{P6Home: 6, ContextFlags: ContextFull, MxCsr: 0x1f80, Cs: 0x33, Ss: 0x2b, EFlags: 0x246,
		Rax: 1, Rsp: 0x7fff0000, R15: 15, Rip: 0x401000, LastExceptionFromRip: 0xabc}
	c.FltSave.XmmRegisters[15] = arch.Uint128{Low: 0x11, High: 0x22}
	b := c.Encode()
	if len(b) != ContextSize {
		t.Fatalf("size %d", len(b))
	}
	for _, f := range []struct {
		off  int
		want uint64
	}{{40, 6}, {120, 1}, {152, 0x7fff0000}, {240, 15}, {248, 0x401000}, {256 + 160 + 15*16, 0x11}, {256 + 160 + 15*16 + 8, 0x22}, {1224, 0xabc}} {
		if got := binary.LittleEndian.Uint64(b[f.off:]); got != f.want {
			t.Errorf("offset %d = %#x, want %#x", f.off, got, f.want)
		}
	}
	for _, f := range []struct {
		off  int
		want uint32
	}{{48, ContextFull}, {52, 0x1f80}, {68, 0x246}} {
		if got := binary.LittleEndian.Uint32(b[f.off:]); got != f.want {
			t.Errorf("offset %d = %#x, want %#x", f.off, got, f.want)
		}
	}
	if got := binary.LittleEndian.Uint16(b[56:]); got != 0x33 {
		t.Errorf("cs = %#x", got)
	}
	d, err := DecodeContext(b)
	if err != nil || *d != *c {
		t.Errorf("round trip: %v", err)
	}
	if _, err := DecodeContext(b[:100]); err == nil {
		t.Error("short context decoded")
	}
}
