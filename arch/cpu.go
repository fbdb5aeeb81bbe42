// Package arch names the CPU architectures gobreakpad understands and holds
// what is common to their register sets. Each architecture has a subpackage
// (x86, amd64, arm, arm64) with the raw minidump CPU context for that CPU.
package arch

// CPU is a processor architecture.
type CPU int

// The architectures a minidump may describe. The zero value is Unknown.
const (
	Unknown CPU = iota
	X86
	AMD64
	ARM
	ARM64
	PPC
	PPC64
	SPARC
	MIPS
	MIPS64
	RISCV
	RISCV64
	LoongArch64
)

var cpuNames = [...]string{
	Unknown:     "unknown",
	X86:         "x86",
	AMD64:       "amd64",
	ARM:         "arm",
	ARM64:       "arm64",
	PPC:         "ppc",
	PPC64:       "ppc64",
	SPARC:       "sparc",
	MIPS:        "mips",
	MIPS64:      "mips64",
	RISCV:       "riscv",
	RISCV64:     "riscv64",
	LoongArch64: "loongarch64",
}

// String returns the architecture's name as Breakpad's processor prints it
// ("x86", "amd64", "arm", "arm64", ...), or "unknown".
func (c CPU) String() string {
	if c < 0 || int(c) >= len(cpuNames) {
		return "unknown"
	}
	return cpuNames[c]
}

// CPUNamed returns the architecture whose String is name, Unknown for names
// of none.
func CPUNamed(name string) CPU {
	for c, n := range cpuNames {
		if n == name {
			return CPU(c)
		}
	}
	return Unknown
}

// PointerSize returns the size in bytes of a pointer (and of a general
// register) on the architecture, or 0 when it is unknown.
func (c CPU) PointerSize() int {
	switch c {
	case X86, ARM, PPC, SPARC, MIPS, RISCV:
		return 4
	case AMD64, ARM64, PPC64, MIPS64, RISCV64, LoongArch64:
		return 8
	}
	return 0
}

// Uint128 is a 128-bit value (a vector or floating-point register) as CPU
// contexts store it: the low 64 bits first, little-endian.
type Uint128 struct {
	Low, High uint64
}
