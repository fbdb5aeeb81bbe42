package microdump

import (
	"encoding/binary"
	"fmt"
)

// MIPSContextSize is the size in bytes of an encoded MIPSContext.
const MIPSContextSize = 600

// MIPSContext is the register state of a MIPS or MIPS64 thread in Breakpad's
// layout (MDRawContextMIPS, shared by both: registers are 64 bits wide).
type MIPSContext struct {
	ContextFlags uint32
	Iregs        [32]uint64 // $0-$31 (sp is 29, fp 30, ra 31)
	MDHi, MDLo   uint64
	Hi, Lo       [3]uint32 // DSP accumulators
	DSPControl   uint32
	EPC          uint64 // the program counter
	BadVAddr     uint64
	Status       uint32
	Cause        uint32
	FloatRegs    [32]uint64
	FPCSR, FIR   uint32
}

// Indices into MIPSContext.Iregs of registers with a conventional role.
const (
	MIPSRegSP = 29
	MIPSRegFP = 30
	MIPSRegRA = 31
)

func decodeMIPS(b []byte) (*MIPSContext, error) {
	if len(b) != MIPSContextSize {
		return nil, fmt.Errorf("mips context: %d bytes, want %d", len(b), MIPSContextSize)
	}
	le := binary.LittleEndian
	off := 0
	u32 := func() uint32 { v := le.Uint32(b[off:]); off += 4; return v }
	u64 := func() uint64 { v := le.Uint64(b[off:]); off += 8; return v }
	c := &MIPSContext{ContextFlags: u32()}
	u32() // padding
	for i := range c.Iregs {
		c.Iregs[i] = u64()
	}
	c.MDHi, c.MDLo = u64(), u64()
	for i := range c.Hi {
		c.Hi[i] = u32()
	}
	for i := range c.Lo {
		c.Lo[i] = u32()
	}
	c.DSPControl = u32()
	u32() // padding
	c.EPC, c.BadVAddr = u64(), u64()
	c.Status, c.Cause = u32(), u32()
	for i := range c.FloatRegs {
		c.FloatRegs[i] = u64()
	}
	c.FPCSR, c.FIR = u32(), u32()
	return c, nil
}
