package arm64

import (
	"encoding/binary"
	"testing"

	"github.com/gobreakpad/gobreakpad/arch"
)

// Field offsets from Breakpad's MDRawContextARM64 and MDRawContextARM64_Old.
func TestContextLayout(t *testing.T) {
	c := &Context{ContextFlags: ContextFull, Cpsr: 0x60000000}
	c.Iregs[RegPC] = 0x5555
	c.Iregs[RegSP] = 0x7ff0
	c.FloatSave.Regs[0] = arch.Uint128{Low: 1, High: 2}
	c.FloatSave.Fpcr = 0xfc
	c.Wvr[1] = 0x99
	b := c.Encode()
	if len(b) != ContextSize {
		t.Fatalf("size %d", len(b))
	}
	check := func(name string, got, want uint64) {
		t.Helper()
		if got != want {
			t.Errorf("%s = %#x, want %#x", name, got, want)
		}
	}
	check("cpsr", uint64(binary.LittleEndian.Uint32(b[4:])), 0x60000000)
	check("sp", binary.LittleEndian.Uint64(b[8+31*8:]), 0x7ff0)
	check("pc", binary.LittleEndian.Uint64(b[8+32*8:]), 0x5555)
	check("v0.lo", binary.LittleEndian.Uint64(b[272:]), 1)
	check("v0.hi", binary.LittleEndian.Uint64(b[280:]), 2)
	check("fpcr", uint64(binary.LittleEndian.Uint32(b[272+512+4:])), 0xfc)
	check("wvr[1]", binary.LittleEndian.Uint64(b[904:]), 0x99)
	if d, err := DecodeContext(b); err != nil || *d != *c {
		t.Errorf("round trip: %v", err)
	}

	old := &OldContext{ContextFlags: ContextARM64Old | 0x6, Cpsr: 0x20}
	old.Iregs[RegPC] = 0x1234
	old.FloatSave.Fpsr = 0x10
	old.FloatSave.Regs[31] = arch.Uint128{Low: 3}
	ob := old.Encode()
	if len(ob) != OldContextSize {
		t.Fatalf("old size %d", len(ob))
	}
	check("old pc", binary.LittleEndian.Uint64(ob[8+32*8:]), 0x1234)
	check("old cpsr", uint64(binary.LittleEndian.Uint32(ob[272:])), 0x20)
	check("old fpsr", uint64(binary.LittleEndian.Uint32(ob[276:])), 0x10)
	check("old v31", binary.LittleEndian.Uint64(ob[284+31*16:]), 3)
	d, err := DecodeOldContext(ob)
	if err != nil || *d != *old {
		t.Fatalf("old round trip: %v", err)
	}
	n := d.Upgrade()
	if n.ContextFlags != ContextFull || n.Iregs[RegPC] != 0x1234 || n.FloatSave.Regs[31].Low != 3 || n.Cpsr != 0x20 {
		t.Errorf("upgraded = %+v", n)
	}
	if up := (&OldContext{ContextFlags: ContextARM64Old | 0x4}).Upgrade(); up.ContextFlags != ContextFloatingPoint {
		t.Errorf("fp-only flags upgrade to %#x", up.ContextFlags)
	}
}
