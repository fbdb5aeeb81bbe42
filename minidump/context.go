package minidump

import (
	"fmt"

	"github.com/gobreakpad/gobreakpad/arch"
	"github.com/gobreakpad/gobreakpad/arch/amd64"
	"github.com/gobreakpad/gobreakpad/arch/arm"
	"github.com/gobreakpad/gobreakpad/arch/arm64"
	"github.com/gobreakpad/gobreakpad/arch/mips"
	"github.com/gobreakpad/gobreakpad/arch/x86"
)

// Context is a decoded CPU context of a thread or exception. Exactly one of
// the per-CPU pointers is set, the one named by CPU. A context in the old
// arm64 layout is also given as ARM64 (converted); ARM64Old keeps the
// original.
type Context struct {
	CPU      arch.CPU
	X86      *x86.Context
	AMD64    *amd64.Context
	ARM      *arm.Context
	ARM64    *arm64.Context
	ARM64Old *arm64.OldContext
	MIPS     *mips.Context // mips and mips64
}

// Flags returns the context flags (for the old arm64 layout, the low 32 bits
// of its converted flags).
func (c *Context) Flags() uint32 {
	switch {
	case c.X86 != nil:
		return c.X86.ContextFlags
	case c.AMD64 != nil:
		return c.AMD64.ContextFlags
	case c.ARM != nil:
		return c.ARM.ContextFlags
	case c.ARM64 != nil:
		return c.ARM64.ContextFlags
	case c.MIPS != nil:
		return c.MIPS.ContextFlags
	}
	return 0
}

// InstructionPointer returns eip, rip, pc (r15), pc or epc.
func (c *Context) InstructionPointer() uint64 {
	switch {
	case c.X86 != nil:
		return uint64(c.X86.Eip)
	case c.AMD64 != nil:
		return c.AMD64.Rip
	case c.ARM != nil:
		return uint64(c.ARM.Iregs[arm.RegPC])
	case c.ARM64 != nil:
		return c.ARM64.Iregs[arm64.RegPC]
	case c.MIPS != nil:
		return c.MIPS.EPC
	}
	return 0
}

// StackPointer returns esp, rsp, sp (r13), sp or $29.
func (c *Context) StackPointer() uint64 {
	switch {
	case c.X86 != nil:
		return uint64(c.X86.Esp)
	case c.AMD64 != nil:
		return c.AMD64.Rsp
	case c.ARM != nil:
		return uint64(c.ARM.Iregs[arm.RegSP])
	case c.ARM64 != nil:
		return c.ARM64.Iregs[arm64.RegSP]
	case c.MIPS != nil:
		return c.MIPS.Iregs[mips.IregSP]
	}
	return 0
}

// CPU bits of the 32-bit context flags (MD_CONTEXT_CPU_MASK).
const contextCPUMask = 0xffffff00

// DecodeContext decodes a raw CPU context, recognizing its CPU as Breakpad
// does: an amd64 context by its size (its flags are not at offset 0; a larger
// context is an amd64 one with XSAVE state when the dump's CPU is amd64), the
// old arm64 layout by its size, the others by the CPU bits of their flags,
// and when those are zero, by fallback (the system info's CPU). Sizes must be
// exact, except that x86 and amd64 contexts may carry trailing XSAVE state.
func DecodeContext(b []byte, fallback arch.CPU) (*Context, error) {
	switch {
	case len(b) == amd64.ContextSize || (fallback == arch.AMD64 && len(b) > amd64.ContextSize):
		if flags := le32(b[48:]); flags&contextCPUMask != amd64.ContextAMD64 {
			return nil, fmt.Errorf("context: %d bytes (amd64 size) but flags %#x are not amd64's", len(b), flags)
		}
		c, err := amd64.DecodeContext(b)
		if err != nil {
			return nil, err
		}
		return &Context{CPU: arch.AMD64, AMD64: c}, nil
	case len(b) == arm64.OldContextSize:
		flags := le64(b)
		if cpu := uint32(flags) & contextCPUMask; cpu != arm64.ContextARM64Old && !(cpu == 0 && fallback == arch.ARM64) {
			return nil, fmt.Errorf("context: %d bytes (old arm64 size) but flags %#x are not old arm64's", len(b), flags)
		}
		old, err := arm64.DecodeOldContext(b)
		if err != nil {
			return nil, err
		}
		return &Context{CPU: arch.ARM64, ARM64: old.Upgrade(), ARM64Old: old}, nil
	}
	if len(b) < 4 {
		return nil, fmt.Errorf("context: %d bytes, too short for its flags", len(b))
	}
	flags := le32(b)
	cpu := arch.Unknown
	switch flags & contextCPUMask {
	case x86.ContextX86:
		cpu = arch.X86
	case amd64.ContextAMD64:
		cpu = arch.AMD64
	case arm.ContextARM:
		cpu = arch.ARM
	case arm64.ContextARM64:
		cpu = arch.ARM64
	case mips.ContextMIPS:
		cpu = arch.MIPS
	case mips.ContextMIPS64:
		cpu = arch.MIPS64
	case 0:
		if flags&arm.ContextARMOld != 0 {
			cpu = arch.ARM // the old ARM flag, which collides with CONTEXT_XSTATE
		} else {
			cpu = fallback
		}
	default:
		return nil, fmt.Errorf("context: flags %#x name no known CPU", flags)
	}
	want := 0
	switch cpu {
	case arch.X86:
		if len(b) >= x86.ContextSize { // trailing XSAVE state is allowed
			c, err := x86.DecodeContext(b)
			if err != nil {
				return nil, err
			}
			return &Context{CPU: cpu, X86: c}, nil
		}
		want = x86.ContextSize
	case arch.ARM:
		if len(b) == arm.ContextSize {
			c, err := arm.DecodeContext(b)
			if err != nil {
				return nil, err
			}
			return &Context{CPU: cpu, ARM: c}, nil
		}
		want = arm.ContextSize
	case arch.ARM64:
		if len(b) == arm64.ContextSize {
			c, err := arm64.DecodeContext(b)
			if err != nil {
				return nil, err
			}
			return &Context{CPU: cpu, ARM64: c}, nil
		}
		want = arm64.ContextSize
	case arch.MIPS, arch.MIPS64:
		if len(b) == mips.ContextSize {
			c, err := mips.DecodeContext(b)
			if err != nil {
				return nil, err
			}
			return &Context{CPU: cpu, MIPS: c}, nil
		}
		want = mips.ContextSize
	case arch.AMD64:
		want = amd64.ContextSize
	default:
		return nil, fmt.Errorf("context: unsupported CPU %s (flags %#x, %d bytes)", cpu, flags, len(b))
	}
	return nil, fmt.Errorf("context: %s context of %d bytes, want %d", cpu, len(b), want)
}

// Encode returns the raw bytes of the context in its own layout.
func (c *Context) Encode() []byte {
	switch {
	case c.X86 != nil:
		return c.X86.Encode()
	case c.AMD64 != nil:
		return c.AMD64.Encode()
	case c.ARM != nil:
		return c.ARM.Encode()
	case c.ARM64Old != nil:
		return c.ARM64Old.Encode()
	case c.ARM64 != nil:
		return c.ARM64.Encode()
	case c.MIPS != nil:
		return c.MIPS.Encode()
	}
	return nil
}

// context decodes the context at l, using the system info's CPU when the
// context's flags do not name one.
func (f *File) context(l LocationDescriptor) (*Context, error) {
	b, err := f.location(l)
	if err != nil {
		return nil, fmt.Errorf("context: %w", err)
	}
	si, sysErr := f.SystemInfo()
	fallback := arch.Unknown
	if sysErr == nil {
		fallback = si.CPU()
	}
	c, err := DecodeContext(b, fallback)
	if err != nil {
		return nil, err
	}
	if sysErr == nil && !contextMatchesSystem(c, si.ProcessorArchitecture) {
		return nil, fmt.Errorf("context: %s context in a dump of CPU %s", c.CPU, si.CPUName())
	}
	return c, nil
}

// contextMatchesSystem reports whether a context fits the system info's
// processor architecture, as Breakpad checks it.
func contextMatchesSystem(c *Context, a ProcessorArchitecture) bool {
	switch {
	case c.X86 != nil:
		return a == ArchX86 || a == ArchX86Win64 || a == ArchAMD64
	case c.AMD64 != nil:
		return a == ArchAMD64
	case c.ARM != nil:
		return a == ArchARM
	case c.ARM64Old != nil:
		return a == ArchARM64Old || a == ArchARM64
	case c.ARM64 != nil:
		return a == ArchARM64 || a == ArchARM64Old
	case c.MIPS != nil:
		if c.CPU == arch.MIPS64 {
			return a == ArchMIPS64
		}
		return a == ArchMIPS
	}
	return false
}
