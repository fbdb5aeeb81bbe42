package dumptext

import (
	"github.com/gobreakpad/gobreakpad/arch/amd64"
	"github.com/gobreakpad/gobreakpad/arch/arm"
	"github.com/gobreakpad/gobreakpad/arch/arm64"
	"github.com/gobreakpad/gobreakpad/arch/mips"
	"github.com/gobreakpad/gobreakpad/arch/x86"
	"github.com/gobreakpad/gobreakpad/minidump"
)

// context prints a decoded context as DumpContext::Print, or "(no context)".
func (d *dumper) context(c *minidump.Context) {
	if c == nil {
		d.printf("  (no context)\n")
		d.printf("\n")
		return
	}
	d.printf("\n")
	switch {
	case c.X86 != nil:
		d.x86(c.X86)
	case c.AMD64 != nil:
		d.amd64(c.AMD64)
	case c.ARM != nil:
		d.arm(c.ARM)
	case c.ARM64 != nil:
		d.arm64(c.ARM64)
	case c.MIPS != nil:
		d.mips(c.MIPS)
	}
}

// mips prints MDRawContextMIPS as DumpContext::Print, which prints mdhi
// for mdlo too.
func (d *dumper) mips(c *mips.Context) {
	d.printf("MDRawContextMIPS\n")
	d.printf("  context_flags        = 0x%x\n", c.ContextFlags)
	for i, r := range c.Iregs {
		d.printf("  iregs[%2d]           = 0x%x\n", i, r)
	}
	d.printf("  mdhi                 = 0x%x\n", c.MDHi)
	d.printf("  mdlo                 = 0x%x\n", c.MDHi)
	for i := range c.Hi {
		d.printf("  hi[%1d]              = 0x%x\n", i, c.Hi[i])
		d.printf("  lo[%1d]              = 0x%x\n", i, c.Lo[i])
	}
	d.printf("  dsp_control          = 0x%x\n", c.DSPControl)
	d.printf("  epc                  = 0x%x\n", c.EPC)
	d.printf("  badvaddr             = 0x%x\n", c.BadVAddr)
	d.printf("  status               = 0x%x\n", c.Status)
	d.printf("  cause                = 0x%x\n", c.Cause)
	for i, r := range c.FloatSave.Regs {
		d.printf("  float_save.regs[%2d] = 0x%x\n", i, r)
	}
	d.printf("  float_save.fpcsr     = 0x%x\n", c.FloatSave.FPCSR)
	d.printf("  float_save.fir       = 0x%x\n", c.FloatSave.FIR)
}

// x86 prints MDRawContextX86 as DumpContext::Print.
func (d *dumper) x86(c *x86.Context) {
	d.printf("MDRawContextX86\n")
	d.printf("  context_flags                = 0x%x\n", c.ContextFlags)
	d.printf("  dr0                          = 0x%x\n", c.Dr0)
	d.printf("  dr1                          = 0x%x\n", c.Dr1)
	d.printf("  dr2                          = 0x%x\n", c.Dr2)
	d.printf("  dr3                          = 0x%x\n", c.Dr3)
	d.printf("  dr6                          = 0x%x\n", c.Dr6)
	d.printf("  dr7                          = 0x%x\n", c.Dr7)
	fs := &c.FloatSave
	d.printf("  float_save.control_word      = 0x%x\n", fs.ControlWord)
	d.printf("  float_save.status_word       = 0x%x\n", fs.StatusWord)
	d.printf("  float_save.tag_word          = 0x%x\n", fs.TagWord)
	d.printf("  float_save.error_offset      = 0x%x\n", fs.ErrorOffset)
	d.printf("  float_save.error_selector    = 0x%x\n", fs.ErrorSelector)
	d.printf("  float_save.data_offset       = 0x%x\n", fs.DataOffset)
	d.printf("  float_save.data_selector     = 0x%x\n", fs.DataSelector)
	d.printf("  float_save.register_area[%2d] = 0x%x\n", len(fs.RegisterArea), fs.RegisterArea[:])
	d.printf("  float_save.cr0_npx_state     = 0x%x\n", fs.Cr0NpxState)
	d.printf("  gs                           = 0x%x\n", c.Gs)
	d.printf("  fs                           = 0x%x\n", c.Fs)
	d.printf("  es                           = 0x%x\n", c.Es)
	d.printf("  ds                           = 0x%x\n", c.Ds)
	d.printf("  edi                          = 0x%x\n", c.Edi)
	d.printf("  esi                          = 0x%x\n", c.Esi)
	d.printf("  ebx                          = 0x%x\n", c.Ebx)
	d.printf("  edx                          = 0x%x\n", c.Edx)
	d.printf("  ecx                          = 0x%x\n", c.Ecx)
	d.printf("  eax                          = 0x%x\n", c.Eax)
	d.printf("  ebp                          = 0x%x\n", c.Ebp)
	d.printf("  eip                          = 0x%x\n", c.Eip)
	d.printf("  cs                           = 0x%x\n", c.Cs)
	d.printf("  eflags                       = 0x%x\n", c.EFlags)
	d.printf("  esp                          = 0x%x\n", c.Esp)
	d.printf("  ss                           = 0x%x\n", c.Ss)
	d.printf("  extended_registers[%3d]      = 0x%x\n", len(c.ExtendedRegisters), c.ExtendedRegisters[:])
	d.printf("\n")
}

// amd64 prints MDRawContextAMD64 as DumpContext::Print.
func (d *dumper) amd64(c *amd64.Context) {
	d.printf("MDRawContextAMD64\n")
	for _, r := range []struct {
		name string
		v    uint64
	}{
		{"p1_home", c.P1Home}, {"p2_home", c.P2Home}, {"p3_home", c.P3Home},
		{"p4_home", c.P4Home}, {"p5_home", c.P5Home}, {"p6_home", c.P6Home},
		{"context_flags", uint64(c.ContextFlags)}, {"mx_csr", uint64(c.MxCsr)},
		{"cs", uint64(c.Cs)}, {"ds", uint64(c.Ds)}, {"es", uint64(c.Es)},
		{"fs", uint64(c.Fs)}, {"gs", uint64(c.Gs)}, {"ss", uint64(c.Ss)},
		{"eflags", uint64(c.EFlags)},
		{"dr0", c.Dr0}, {"dr1", c.Dr1}, {"dr2", c.Dr2}, {"dr3", c.Dr3}, {"dr6", c.Dr6}, {"dr7", c.Dr7},
		{"rax", c.Rax}, {"rcx", c.Rcx}, {"rdx", c.Rdx}, {"rbx", c.Rbx},
		{"rsp", c.Rsp}, {"rbp", c.Rbp}, {"rsi", c.Rsi}, {"rdi", c.Rdi},
		{"r8", c.R8}, {"r9", c.R9}, {"r10", c.R10}, {"r11", c.R11},
		{"r12", c.R12}, {"r13", c.R13}, {"r14", c.R14}, {"r15", c.R15},
		{"rip", c.Rip},
	} {
		d.printf("  %-13s = 0x%x\n", r.name, r.v)
	}
	d.printf("\n")
}

// armRegNames are the names Breakpad prints for the ARM integer registers.
var armRegNames = [16]string{"r0", "r1", "r2", "r3", "r4", "r5", "r6", "r7",
	"r8", "r9", "r10", "r11", "r12", "sp", "lr", "pc"}

// arm prints MDRawContextARM as DumpContext::Print (with no blank line
// after it, as in Breakpad).
func (d *dumper) arm(c *arm.Context) {
	d.printf("MDRawContextARM\n")
	d.printf("  context_flags        = 0x%x\n", c.ContextFlags)
	for i, v := range c.Iregs {
		d.printf("  %-3s                  = 0x%x\n", armRegNames[i], v)
	}
	d.printf("  cpsr                 = 0x%x\n", c.Cpsr)
	d.printf("  float_save.fpscr     = 0x%x\n", c.FloatSave.Fpscr)
	for i, v := range c.FloatSave.Regs {
		d.printf("  float_save.regs[%2d]  = 0x%x\n", i, v)
	}
	for i, v := range c.FloatSave.Extra {
		d.printf("  float_save.extra[%2d] = 0x%x\n", i, v)
	}
}

// arm64 prints MDRawContextARM64 as DumpContext::Print.
func (d *dumper) arm64(c *arm64.Context) {
	d.printf("MDRawContextARM64\n")
	d.printf("  context_flags       = 0x%x\n", c.ContextFlags)
	for i, v := range c.Iregs {
		d.printf("  iregs[%2d]            = 0x%x\n", i, v)
	}
	d.printf("  cpsr                = 0x%x\n", c.Cpsr)
	d.printf("  float_save.fpsr     = 0x%x\n", c.FloatSave.Fpsr)
	d.printf("  float_save.fpcr     = 0x%x\n", c.FloatSave.Fpcr)
	for i, v := range c.FloatSave.Regs {
		// Breakpad prints the two halves without padding the low one.
		d.printf("  float_save.regs[%2d]            = 0x%x%x\n", i, v.High, v.Low)
	}
}
