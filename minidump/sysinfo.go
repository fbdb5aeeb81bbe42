package minidump

import (
	"fmt"

	"github.com/gobreakpad/gobreakpad/arch"
)

// ProcessorArchitecture is SystemInfo.ProcessorArchitecture (MDCPUArchitecture).
type ProcessorArchitecture uint16

// Processor architectures.
const (
	ArchX86         ProcessorArchitecture = 0
	ArchMIPS        ProcessorArchitecture = 1
	ArchAlpha       ProcessorArchitecture = 2
	ArchPPC         ProcessorArchitecture = 3
	ArchSHX         ProcessorArchitecture = 4
	ArchARM         ProcessorArchitecture = 5
	ArchIA64        ProcessorArchitecture = 6
	ArchAlpha64     ProcessorArchitecture = 7
	ArchMSIL        ProcessorArchitecture = 8
	ArchAMD64       ProcessorArchitecture = 9
	ArchX86Win64    ProcessorArchitecture = 10
	ArchARM64       ProcessorArchitecture = 12
	ArchSPARC       ProcessorArchitecture = 0x8001
	ArchPPC64       ProcessorArchitecture = 0x8002
	ArchARM64Old    ProcessorArchitecture = 0x8003
	ArchMIPS64      ProcessorArchitecture = 0x8004
	ArchRISCV       ProcessorArchitecture = 0x8005
	ArchRISCV64     ProcessorArchitecture = 0x8006
	ArchLoongArch64 ProcessorArchitecture = 0x8007
	ArchUnknown     ProcessorArchitecture = 0xffff
)

// PlatformID is SystemInfo.PlatformID (MDOSPlatform).
type PlatformID uint32

// Operating systems.
const (
	PlatformWin32s       PlatformID = 0
	PlatformWin32Windows PlatformID = 1
	PlatformWin32NT      PlatformID = 2
	PlatformWin32CE      PlatformID = 3
	PlatformUnix         PlatformID = 0x8000
	PlatformMacOSX       PlatformID = 0x8101
	PlatformIOS          PlatformID = 0x8102
	PlatformLinux        PlatformID = 0x8201
	PlatformSolaris      PlatformID = 0x8202
	PlatformAndroid      PlatformID = 0x8203
	PlatformPS3          PlatformID = 0x8204
	PlatformNaCl         PlatformID = 0x8205
	PlatformFuchsia      PlatformID = 0x8206
)

// SystemInfo is the system info stream (MDRawSystemInfo) with its CSD
// version string.
type SystemInfo struct {
	ProcessorArchitecture ProcessorArchitecture
	ProcessorLevel        uint16
	ProcessorRevision     uint16
	NumberOfProcessors    uint8
	ProductType           uint8
	MajorVersion          uint32
	MinorVersion          uint32
	BuildNumber           uint32
	PlatformID            PlatformID
	CSDVersionRva         uint32
	SuiteMask             uint16
	Reserved2             uint16
	// CPUInfo is the 24-byte CPU information union. For x86 and amd64 it is
	// X86CPUInfo; otherwise OtherCPUInfo.
	CPUInfo [24]byte

	// CSDVersion is the string at CSDVersionRva (the service pack on
	// Windows, the kernel version on Linux); CSDVersionErr says why it is
	// empty when it could not be read.
	CSDVersion    string
	CSDVersionErr error
}

// X86CPUInfo is the x86 member of the CPU information union (CPUID results).
type X86CPUInfo struct {
	VendorID               [3]uint32
	VersionInformation     uint32
	FeatureInformation     uint32
	AMDExtendedCPUFeatures uint32
}

// X86CPUInfo decodes CPUInfo as the x86 member of the union.
func (s *SystemInfo) X86CPUInfo() X86CPUInfo {
	b := s.CPUInfo[:]
	return X86CPUInfo{[3]uint32{le32(b), le32(b[4:]), le32(b[8:])}, le32(b[12:]), le32(b[16:]), le32(b[20:])}
}

// Vendor returns the CPUID vendor string held in VendorID ("GenuineIntel"),
// all 12 bytes, NULs included.
func (x X86CPUInfo) Vendor() string {
	b := make([]byte, 0, 12)
	for _, w := range x.VendorID {
		b = append(b, byte(w), byte(w>>8), byte(w>>16), byte(w>>24))
	}
	return string(b)
}

// OtherCPUInfo decodes CPUInfo as the processor-features member of the union.
func (s *SystemInfo) OtherCPUInfo() [2]uint64 {
	return [2]uint64{le64(s.CPUInfo[:]), le64(s.CPUInfo[8:])}
}

// SystemInfo decodes the system info stream. It is read once and cached.
func (f *File) SystemInfo() (*SystemInfo, error) {
	f.sysOnce.Do(func() { f.sys, f.sysErr = f.readSystemInfo() })
	return f.sys, f.sysErr
}

func (f *File) readSystemInfo() (*SystemInfo, error) {
	b, err := f.stream(SystemInfoStream)
	if err != nil {
		return nil, fmt.Errorf("system info: %w", err)
	}
	if len(b) != systemInfoSize {
		return nil, fmt.Errorf("system info: %d bytes, want %d", len(b), systemInfoSize)
	}
	s := &SystemInfo{
		ProcessorArchitecture: ProcessorArchitecture(le16(b)),
		ProcessorLevel:        le16(b[2:]),
		ProcessorRevision:     le16(b[4:]),
		NumberOfProcessors:    b[6],
		ProductType:           b[7],
		MajorVersion:          le32(b[8:]),
		MinorVersion:          le32(b[12:]),
		BuildNumber:           le32(b[16:]),
		PlatformID:            PlatformID(le32(b[20:])),
		CSDVersionRva:         le32(b[24:]),
		SuiteMask:             le16(b[28:]),
		Reserved2:             le16(b[30:]),
	}
	copy(s.CPUInfo[:], b[32:56])
	s.CSDVersion, s.CSDVersionErr = f.String(s.CSDVersionRva)
	if s.CSDVersionErr != nil {
		s.CSDVersionErr = fmt.Errorf("system info: CSD version: %w", s.CSDVersionErr)
	}
	return s, nil
}

// LinuxArchitecture returns the processor architecture a Linux dump gives
// beside a context in arch/'s current layout of the CPU; ArchUnknown for CPUs
// without one. For arm64 that is ArchARM64, as Crashpad writes: Breakpad's
// reader (MinidumpContext::CheckAgainstSystemInfo) pairs ArchARM64 with the
// current context and ArchARM64Old (what Breakpad's Linux client writes) only
// with the old context, and reads no context of a dump that mixes them. See
// [ContextArchitecture] for a dump of old arm64 contexts.
func LinuxArchitecture(cpu arch.CPU) ProcessorArchitecture {
	switch cpu {
	case arch.X86, arch.AMD64, arch.ARM, arch.ARM64, arch.MIPS, arch.MIPS64:
		return Architecture(cpu) // archCPUs lists ArchARM64 before ArchARM64Old
	}
	return ArchUnknown
}

// ContextArchitecture returns the processor architecture a Linux dump gives
// beside the context c: ArchARM64Old for an old arm64 context (c.ARM64Old
// set), as Breakpad's Linux client writes it, else LinuxArchitecture of its
// CPU.
func ContextArchitecture(c *Context) ProcessorArchitecture {
	if c.ARM64Old != nil {
		return ArchARM64Old
	}
	return LinuxArchitecture(c.CPU)
}

// CPU returns the processor architecture as an arch.CPU.
func (s *SystemInfo) CPU() arch.CPU {
	for _, e := range archCPUs {
		if e.arch == s.ProcessorArchitecture {
			return e.cpu
		}
	}
	return arch.Unknown
}

// Architecture returns the processor architecture of a CPU, the inverse of
// [SystemInfo.CPU]: ArchX86 for x86, ArchARM64 for arm64; ArchUnknown for
// arch.Unknown.
func Architecture(cpu arch.CPU) ProcessorArchitecture {
	for _, e := range archCPUs {
		if e.cpu == cpu {
			return e.arch
		}
	}
	return ArchUnknown
}

// archCPUs are the processor architectures with an arch.CPU; of two with
// the same CPU, the first is the one Architecture returns.
var archCPUs = [...]struct {
	arch ProcessorArchitecture
	cpu  arch.CPU
}{
	{ArchX86, arch.X86}, {ArchX86Win64, arch.X86}, {ArchAMD64, arch.AMD64}, {ArchARM, arch.ARM},
	{ArchARM64, arch.ARM64}, {ArchARM64Old, arch.ARM64}, {ArchPPC, arch.PPC}, {ArchPPC64, arch.PPC64},
	{ArchSPARC, arch.SPARC}, {ArchMIPS, arch.MIPS}, {ArchMIPS64, arch.MIPS64}, {ArchRISCV, arch.RISCV},
	{ArchRISCV64, arch.RISCV64}, {ArchLoongArch64, arch.LoongArch64},
}

// CPUName returns the architecture's name as minidump_dump prints it
// ("x86", "x86-64", "arm64", ...; "" when unknown).
func (s *SystemInfo) CPUName() string {
	switch s.ProcessorArchitecture {
	case ArchX86, ArchX86Win64:
		return "x86"
	case ArchAMD64:
		return "x86-64"
	case ArchPPC:
		return "ppc"
	case ArchPPC64:
		return "ppc64"
	case ArchSPARC:
		return "sparc"
	case ArchARM:
		return "arm"
	case ArchARM64, ArchARM64Old:
		return "arm64"
	case ArchMIPS:
		return "mips"
	case ArchMIPS64:
		return "mips64"
	case ArchRISCV:
		return "riscv"
	case ArchRISCV64:
		return "riscv64"
	}
	return ""
}

// OSName returns the short system name minidump_dump prints ("windows",
// "mac", "ios", "linux", "solaris", "android", "ps3", "nacl", "fuchsia";
// "" when unknown).
func (s *SystemInfo) OSName() string {
	for _, e := range platformNames {
		if e.platform == s.PlatformID {
			return e.name
		}
	}
	return ""
}

// PlatformNamed returns the platform of a short system name, the inverse of
// [SystemInfo.OSName]: PlatformWin32NT for "windows"; false for names OSName
// does not return.
func PlatformNamed(name string) (PlatformID, bool) {
	for _, e := range platformNames {
		if e.name == name {
			return e.platform, true
		}
	}
	return 0, false
}

// platformNames are the platforms' short names; of two platforms with the
// same name, the first is the one PlatformNamed returns.
var platformNames = [...]struct {
	platform PlatformID
	name     string
}{
	{PlatformWin32NT, "windows"}, {PlatformWin32Windows, "windows"}, {PlatformMacOSX, "mac"},
	{PlatformIOS, "ios"}, {PlatformLinux, "linux"}, {PlatformSolaris, "solaris"},
	{PlatformAndroid, "android"}, {PlatformPS3, "ps3"}, {PlatformNaCl, "nacl"},
	{PlatformFuchsia, "fuchsia"},
}

// CPUVendor returns the x86 CPUID vendor string ("GenuineIntel") for x86 and
// amd64 dumps, else "".
func (s *SystemInfo) CPUVendor() string {
	switch s.ProcessorArchitecture {
	case ArchX86, ArchAMD64:
	default:
		return ""
	}
	return s.X86CPUInfo().Vendor()
}

// CPUFamily returns the x86 family (the processor level), as in Breakpad's
// "family F model M stepping S".
func (s *SystemInfo) CPUFamily() uint16 { return s.ProcessorLevel }

// CPUModel returns the x86 model (the high byte of the processor revision).
func (s *SystemInfo) CPUModel() uint16 { return s.ProcessorRevision >> 8 }

// CPUStepping returns the x86 stepping (the low byte of the processor revision).
func (s *SystemInfo) CPUStepping() uint16 { return s.ProcessorRevision & 0xff }
