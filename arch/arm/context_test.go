package arm

import (
	"encoding/binary"
	"testing"
)

// Field offsets from Breakpad's MDRawContextARM.
func TestContextLayout(t *testing.T) {
	c := &Context{ContextFlags: ContextFull, Cpsr: 0x10}
	c.Iregs[RegPC] = 0x8000
	c.FloatSave.Fpscr = 0x123456789
	c.FloatSave.Regs[31] = 31
	c.FloatSave.Extra[7] = 7
	b := c.Encode()
	if len(b) != ContextSize {
		t.Fatalf("size %d", len(b))
	}
	if got := binary.LittleEndian.Uint32(b[4+4*15:]); got != 0x8000 {
		t.Errorf("pc = %#x", got)
	}
	if got := binary.LittleEndian.Uint32(b[68:]); got != 0x10 {
		t.Errorf("cpsr = %#x", got)
	}
	if got := binary.LittleEndian.Uint64(b[72:]); got != 0x123456789 {
		t.Errorf("fpscr = %#x", got)
	}
	if got := binary.LittleEndian.Uint64(b[80+31*8:]); got != 31 {
		t.Errorf("d31 = %#x", got)
	}
	if got := binary.LittleEndian.Uint32(b[364:]); got != 7 {
		t.Errorf("extra[7] = %#x", got)
	}
	if d, err := DecodeContext(b); err != nil || *d != *c {
		t.Errorf("round trip: %v", err)
	}
}
