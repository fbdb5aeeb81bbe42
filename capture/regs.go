package capture

import (
	"encoding/binary"
	"fmt"

	"github.com/gobreakpad/gobreakpad/arch"
	"github.com/gobreakpad/gobreakpad/arch/amd64"
	"github.com/gobreakpad/gobreakpad/arch/arm"
	"github.com/gobreakpad/gobreakpad/arch/arm64"
	"github.com/gobreakpad/gobreakpad/arch/x86"
)

// Linux user_regs_struct word indices of x86-64 (also the order of
// NT_PRSTATUS's pr_reg and of PTRACE_GETREGS).
const (
	amd64R15 = iota
	amd64R14
	amd64R13
	amd64R12
	amd64Rbp
	amd64Rbx
	amd64R11
	amd64R10
	amd64R9
	amd64R8
	amd64Rax
	amd64Rcx
	amd64Rdx
	amd64Rsi
	amd64Rdi
	amd64OrigRax
	amd64Rip
	amd64Cs
	amd64Eflags
	amd64Rsp
	amd64Ss
	amd64FsBase
	amd64GsBase
	amd64Ds
	amd64Es
	amd64Fs
	amd64Gs
	amd64NumRegs
)

// Linux user_regs_struct word indices of i386.
const (
	i386Ebx = iota
	i386Ecx
	i386Edx
	i386Esi
	i386Edi
	i386Ebp
	i386Eax
	i386Ds
	i386Es
	i386Fs
	i386Gs
	i386OrigEax
	i386Eip
	i386Cs
	i386Eflags
	i386Esp
	i386Ss
	i386NumRegs
)

// Sizes of the floating-point register notes.
const (
	fxsaveSize       = 512 // fxsave area: x86-64 NT_PRFPREG, i386 NT_PRXFPREG, PTRACE_GETFPREGS on x86-64
	fsaveSize        = 108 // i386 NT_PRFPREG (user_i387_struct)
	arm64FPSIMDSize  = 32*16 + 8
	arm64NumRegs     = 34 // x0-x30, sp, pc, pstate
	arm64RegPstate   = 33
	arm64FPSIMDRegsN = 32
)

// amd64Context converts x86-64 user_regs_struct words and an optional fxsave
// area into a minidump context.
func amd64Context(r []uint64, fxsave []byte) (*amd64.Context, error) {
	if len(r) < amd64NumRegs {
		return nil, fmt.Errorf("amd64 registers: %d words, want %d", len(r), amd64NumRegs)
	}
	c := &amd64.Context{
		ContextFlags: amd64.ContextFull | amd64.ContextSegments,
		Cs:           uint16(r[amd64Cs]), Ds: uint16(r[amd64Ds]), Es: uint16(r[amd64Es]),
		Fs: uint16(r[amd64Fs]), Gs: uint16(r[amd64Gs]), Ss: uint16(r[amd64Ss]),
		EFlags: uint32(r[amd64Eflags]),
		Rax:    r[amd64Rax], Rcx: r[amd64Rcx], Rdx: r[amd64Rdx], Rbx: r[amd64Rbx],
		Rsp: r[amd64Rsp], Rbp: r[amd64Rbp], Rsi: r[amd64Rsi], Rdi: r[amd64Rdi],
		R8: r[amd64R8], R9: r[amd64R9], R10: r[amd64R10], R11: r[amd64R11],
		R12: r[amd64R12], R13: r[amd64R13], R14: r[amd64R14], R15: r[amd64R15],
		Rip: r[amd64Rip],
	}
	if len(fxsave) >= fxsaveSize {
		if _, err := binary.Decode(fxsave[:fxsaveSize], binary.LittleEndian, &c.FltSave); err != nil {
			return nil, fmt.Errorf("amd64 fxsave area: %w", err)
		}
		c.MxCsr = c.FltSave.MxCsr
	} else {
		c.ContextFlags &^= amd64.ContextFloatingPoint &^ amd64.ContextAMD64
	}
	return c, nil
}

// x86Context converts i386 user_regs_struct words, an optional fsave area
// and an optional fxsave area into a minidump context.
func x86Context(r []uint64, fsave, fxsave []byte) (*x86.Context, error) {
	if len(r) < i386NumRegs {
		return nil, fmt.Errorf("x86 registers: %d words, want %d", len(r), i386NumRegs)
	}
	w := func(i int) uint32 { return uint32(r[i]) }
	c := &x86.Context{
		ContextFlags: x86.ContextFull,
		Gs:           w(i386Gs) & 0xffff, Fs: w(i386Fs) & 0xffff, Es: w(i386Es) & 0xffff, Ds: w(i386Ds) & 0xffff,
		Edi: w(i386Edi), Esi: w(i386Esi), Ebx: w(i386Ebx), Edx: w(i386Edx), Ecx: w(i386Ecx), Eax: w(i386Eax),
		Ebp: w(i386Ebp), Eip: w(i386Eip), Cs: w(i386Cs) & 0xffff, EFlags: w(i386Eflags), Esp: w(i386Esp), Ss: w(i386Ss) & 0xffff,
	}
	if len(fsave) >= fsaveSize {
		fs := &c.FloatSave
		le := binary.LittleEndian
		fs.ControlWord, fs.StatusWord, fs.TagWord = le.Uint32(fsave), le.Uint32(fsave[4:]), le.Uint32(fsave[8:])
		fs.ErrorOffset, fs.ErrorSelector = le.Uint32(fsave[12:]), le.Uint32(fsave[16:])
		fs.DataOffset, fs.DataSelector = le.Uint32(fsave[20:]), le.Uint32(fsave[24:])
		copy(fs.RegisterArea[:], fsave[28:108])
		c.ContextFlags |= x86.ContextFloatingPoint
	}
	if len(fxsave) >= fxsaveSize {
		copy(c.ExtendedRegisters[:], fxsave)
		c.ContextFlags |= x86.ContextExtendedRegisters
		if len(fsave) < fsaveSize {
			c.FloatSave = fsaveFromFxsave(fxsave)
			c.ContextFlags |= x86.ContextFloatingPoint
		}
	}
	return c, nil
}

// fsaveFromFxsave derives the x87 fsave area from an fxsave area, as the
// kernel does for i386 NT_PRFPREG (convert_from_fxsr): a 64-bit tracer reads
// only the fxsave form of a 32-bit process's registers.
func fsaveFromFxsave(fx []byte) x86.FloatingSaveArea {
	le := binary.LittleEndian
	fsw := le.Uint16(fx[2:])
	f := x86.FloatingSaveArea{
		ControlWord:   uint32(le.Uint16(fx[0:])) | 0xffff0000,
		StatusWord:    uint32(fsw) | 0xffff0000,
		ErrorOffset:   le.Uint32(fx[8:]),
		ErrorSelector: uint32(le.Uint16(fx[12:])) | uint32(le.Uint16(fx[6:])&0x7ff)<<16, // fcs | fop<<16
		DataOffset:    le.Uint32(fx[16:]),
		DataSelector:  uint32(le.Uint16(fx[20:])),
	}
	// The abridged tag has one bit per physical register (1: in use); the
	// full tag has two, classifying the value: 0 valid, 1 zero, 2 special, 3 empty.
	abridged := fx[4]
	top := int(fsw>>11) & 7
	tag := uint32(0xffff0000)
	for phys := range 8 {
		st := fx[32+16*((phys-top)&7):] // fxsave keeps the registers in stack order
		t := uint32(3)
		if abridged&(1<<phys) != 0 {
			exp := le.Uint16(st[8:]) & 0x7fff
			mant := le.Uint64(st)
			switch {
			case exp == 0x7fff:
				t = 2
			case exp == 0 && mant == 0:
				t = 1
			case exp == 0 || mant>>63 == 0:
				t = 2
			default:
				t = 0
			}
		}
		tag |= t << (2 * phys)
	}
	f.TagWord = tag
	for i := range 8 {
		copy(f.RegisterArea[10*i:10*i+10], fx[32+16*i:])
	}
	return f
}

// x86FromAMD64Regs rearranges the x86-64 user_regs_struct a 64-bit tracer
// reads from a 32-bit process into i386 order.
func x86FromAMD64Regs(r []uint64) []uint64 {
	out := make([]uint64, i386NumRegs)
	for i386, a := range [i386NumRegs]int{
		i386Ebx: amd64Rbx, i386Ecx: amd64Rcx, i386Edx: amd64Rdx, i386Esi: amd64Rsi, i386Edi: amd64Rdi,
		i386Ebp: amd64Rbp, i386Eax: amd64Rax, i386Ds: amd64Ds, i386Es: amd64Es, i386Fs: amd64Fs,
		i386Gs: amd64Gs, i386OrigEax: amd64OrigRax, i386Eip: amd64Rip, i386Cs: amd64Cs,
		i386Eflags: amd64Eflags, i386Esp: amd64Rsp, i386Ss: amd64Ss,
	} {
		out[i386] = r[a] & 0xffffffff
	}
	return out
}

// liveContext converts the general registers that PTRACE_GETREGSET with
// NT_PRSTATUS returned for a stopped task on an x86-64 host, and the fxsave
// area of PTRACE_GETFPREGS (nil when unreadable), into a minidump context.
//
// The register set comes in the tracee's own layout, which its length
// tells: the 216 bytes of x86-64's user_regs_struct, or the 68 bytes of
// i386's for a 32-bit process (Go's syscall.PtraceGetRegs uses this request
// too, so its PtraceRegs holds the i386 words packed at its start for such
// a process). An x86-64 layout whose code segment is the 32-bit user one
// (what PTRACE_GETREGS returns for a 32-bit process) is converted to x86
// as well.
func liveContext(gregs, fxsave []byte) (Context, arch.CPU, error) {
	le := binary.LittleEndian
	switch len(gregs) {
	case i386NumRegs * 4:
		words := make([]uint64, i386NumRegs)
		for i := range words {
			words[i] = uint64(le.Uint32(gregs[4*i:]))
		}
		c, err := x86Context(words, nil, fxsave)
		return c, arch.X86, err
	case amd64NumRegs * 8:
		words := make([]uint64, amd64NumRegs)
		for i := range words {
			words[i] = le.Uint64(gregs[8*i:])
		}
		if words[amd64Cs] == user32CS {
			c, err := x86Context(x86FromAMD64Regs(words), nil, fxsave)
			return c, arch.X86, err
		}
		c, err := amd64Context(words, fxsave)
		return c, arch.AMD64, err
	}
	return nil, arch.Unknown, fmt.Errorf("general registers: %d bytes, neither x86-64's %d nor i386's %d", len(gregs), amd64NumRegs*8, i386NumRegs*4)
}

// user32CS is the code segment of 32-bit processes on x86-64 Linux.
const user32CS = 0x23

// arm64Context converts AArch64 user_pt_regs words (x0-x30, sp, pc, pstate)
// and an optional user_fpsimd_state into a minidump context.
func arm64Context(r []uint64, fpsimd []byte) (*arm64.Context, error) {
	if len(r) < arm64NumRegs {
		return nil, fmt.Errorf("arm64 registers: %d words, want %d", len(r), arm64NumRegs)
	}
	c := &arm64.Context{
		ContextFlags: arm64.ContextControl | arm64.ContextInteger,
		Cpsr:         uint32(r[arm64RegPstate]),
	}
	copy(c.Iregs[:], r[:33]) // x0-x30, sp, pc: the same order as Iregs
	if len(fpsimd) >= arm64FPSIMDSize {
		le := binary.LittleEndian
		for i := range arm64FPSIMDRegsN {
			c.FloatSave.Regs[i].Low = le.Uint64(fpsimd[16*i:])
			c.FloatSave.Regs[i].High = le.Uint64(fpsimd[16*i+8:])
		}
		c.FloatSave.Fpsr = le.Uint32(fpsimd[512:])
		c.FloatSave.Fpcr = le.Uint32(fpsimd[516:])
		c.ContextFlags |= arm64.ContextFloatingPoint
	}
	return c, nil
}

// armNumRegs is the count of 32-bit arm's user_regs words the context
// takes: r0-r15, then cpsr (orig_r0 follows).
const armNumRegs = 17

// armContext converts 32-bit arm user_regs words (r0-r15, cpsr, orig_r0)
// into a minidump context (integer registers only: the VFP registers are
// in a note of their own, not read).
func armContext(r []uint64) (*arm.Context, error) {
	if len(r) < armNumRegs {
		return nil, fmt.Errorf("arm registers: %d words, want %d", len(r), armNumRegs)
	}
	c := &arm.Context{ContextFlags: arm.ContextInteger, Cpsr: uint32(r[16])}
	for i := range c.Iregs {
		c.Iregs[i] = uint32(r[i])
	}
	return c, nil
}
