package mips

import (
	"encoding/binary"
	"testing"
)

// Field offsets from Breakpad's MDRawContextMIPS.
func TestContextLayout(t *testing.T) {
	c := &Context{ContextFlags: ContextMIPS | ContextFull, EPC: 0x4000f0, Cause: 0x10}
	c.Iregs[IregSP] = 0x7ff0
	c.Iregs[IregRA] = 0x400123
	c.Lo[2] = 7
	c.FloatSave.FIR = 0x99
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
	le := binary.LittleEndian
	check("sp", le.Uint64(b[8+29*8:]), 0x7ff0)
	check("ra", le.Uint64(b[8+31*8:]), 0x400123)
	check("lo[2]", uint64(le.Uint32(b[8+256+16+20:])), 7)
	check("epc", le.Uint64(b[312:]), 0x4000f0)
	check("cause", uint64(le.Uint32(b[332:])), 0x10)
	check("fir", uint64(le.Uint32(b[596:])), 0x99)
	d, err := DecodeContext(b)
	if err != nil || *d != *c {
		t.Fatalf("round trip: %v", err)
	}
	if d.Is64() || d.CPU().String() != "mips" {
		t.Errorf("mips context taken for %s", d.CPU())
	}
	if _, err := DecodeContext(b[1:]); err == nil {
		t.Error("short context decoded")
	}
}

func TestNames(t *testing.T) {
	want := []string{"gp", "sp", "fp", "ra", "pc", "s0", "s1", "s2", "s3", "s4", "s5", "s6", "s7"}
	for i, w := range want {
		if RegisterNames[i] != w {
			t.Errorf("slot %d = %q, want %q", i, RegisterNames[i], w)
		}
	}
	seen := map[string]bool{}
	for i, n := range CFIRegisterNames {
		if n == "" || seen[n] {
			t.Errorf("CFI name %d %q empty or repeated", i, n)
		}
		seen[n] = true
	}
	if CFIRegisterNames[Slot(8)] != "$to" || CFIRegisterNames[Slot(25)] != "$t9" || CFIRegisterNames[Slot(29)] != "$sp" {
		t.Errorf("CFI names %q", CFIRegisterNames)
	}
}
