package microdump

import "github.com/gobreakpad/gobreakpad/arch/mips"

// MIPSContextSize is the size in bytes of an encoded MIPSContext.
const MIPSContextSize = mips.ContextSize

// MIPSContext is the register state of a MIPS or MIPS64 thread in Breakpad's
// layout (MDRawContextMIPS, shared by both: registers are 64 bits wide).
type MIPSContext = mips.Context

// Indices into MIPSContext.Iregs of registers with a conventional role.
const (
	MIPSRegSP = mips.IregSP
	MIPSRegFP = mips.IregFP
	MIPSRegRA = mips.IregRA
)

func decodeMIPS(b []byte) (*MIPSContext, error) { return mips.DecodeContext(b) }
