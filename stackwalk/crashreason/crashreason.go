// Package crashreason names the cause of a crash from a minidump's exception
// record, the way Google Breakpad's minidump_stackwalk prints it ("Crash
// reason:" and "Crash address:") and the way rust-minidump names it in its JSON
// output (crash_info.type and crash_info.address).
//
// The package works on raw numbers; of the project it imports only package
// minidump, whose PlatformID and ProcessorArchitecture constants define the
// values of its Platform* and CPU* constants:
//
//   - platform is MDRawSystemInfo.platform_id (an MDOSPlatform, see the
//     Platform* constants, or uint32(si.PlatformID) of a minidump.SystemInfo),
//   - cpu is MDRawSystemInfo.processor_architecture (an MDCPUArchitecture, see
//     the CPU* constants, or uint32(si.ProcessorArchitecture)),
//   - code, flags and addr are exception_record.exception_code,
//     exception_flags and exception_address,
//   - params is exception_record.exception_information[:n] with
//     n = min(number_parameters, 15), so len(params) tells how many
//     parameters the record claims.
//
// Breakpad's form:
//
//	reason, addr := crashreason.Reason(platform, cpu, code, flags, addr, params)
//
// When the dump has no system info stream, Breakpad prints Raw(code, flags) and
// the exception address unchanged; Reason must not be called in that case.
//
// rust-minidump's form (minidump-stackwalk --json):
//
//	typ := crashreason.RustType(platform, cpu, code, flags, params)
//	addr := crashreason.RustAddress(platform, cpu, code, addr, params)
//
// The two differ: Linux si_code names ("SIGSEGV / SEGV_MAPERR" against
// Breakpad's "SIGSEGV /SEGV_MAPERR"), fast-fail codes ("EXCEPTION_STACK_BUFFER_OVERRUN /
// FAST_FAIL_FATAL_APP_EXIT" against "FAST_FAIL_FATAL_APP_EXIT"), NTSTATUS names
// for codes Breakpad prints in hex, and unknown codes ("unknown 0x... / 0x...").
//
// Name tables: Breakpad's and rust-minidump's NTSTATUS and Win32 error tables
// hold thousands of names generated from the Windows SDK headers; this package
// carries the names that occur as crash causes (see ntStatusNames and
// winErrorNames). A code outside them prints in hex, as both tools do for codes
// they do not know.
package crashreason

import (
	"fmt"

	"github.com/gobreakpad/gobreakpad/minidump"
)

// MDOSPlatform values (MDRawSystemInfo.platform_id): minidump's PlatformID
// constants, which define them, as the uint32 this package takes.
const (
	PlatformWin32Windows = uint32(minidump.PlatformWin32Windows) // MD_OS_WIN32_WINDOWS
	PlatformWin32NT      = uint32(minidump.PlatformWin32NT)      // MD_OS_WIN32_NT
	PlatformMacOSX       = uint32(minidump.PlatformMacOSX)       // MD_OS_MAC_OS_X
	PlatformIOS          = uint32(minidump.PlatformIOS)          // MD_OS_IOS
	PlatformLinux        = uint32(minidump.PlatformLinux)        // MD_OS_LINUX
	PlatformSolaris      = uint32(minidump.PlatformSolaris)      // MD_OS_SOLARIS
	PlatformAndroid      = uint32(minidump.PlatformAndroid)      // MD_OS_ANDROID
	PlatformPS3          = uint32(minidump.PlatformPS3)          // MD_OS_PS3
	PlatformNaCl         = uint32(minidump.PlatformNaCl)         // MD_OS_NACL
	PlatformFuchsia      = uint32(minidump.PlatformFuchsia)      // MD_OS_FUCHSIA
)

// MDCPUArchitecture values (MDRawSystemInfo.processor_architecture):
// minidump's ProcessorArchitecture constants, which define them, as the
// uint32 this package takes.
const (
	CPUX86      = uint32(minidump.ArchX86)      // MD_CPU_ARCHITECTURE_X86
	CPUMIPS     = uint32(minidump.ArchMIPS)     // MD_CPU_ARCHITECTURE_MIPS
	CPUPPC      = uint32(minidump.ArchPPC)      // MD_CPU_ARCHITECTURE_PPC
	CPUSHX      = uint32(minidump.ArchSHX)      // MD_CPU_ARCHITECTURE_SHX
	CPUARM      = uint32(minidump.ArchARM)      // MD_CPU_ARCHITECTURE_ARM
	CPUAMD64    = uint32(minidump.ArchAMD64)    // MD_CPU_ARCHITECTURE_AMD64
	CPUX86Win64 = uint32(minidump.ArchX86Win64) // MD_CPU_ARCHITECTURE_X86_WIN64
	CPUARM64    = uint32(minidump.ArchARM64)    // MD_CPU_ARCHITECTURE_ARM64
	CPUSPARC    = uint32(minidump.ArchSPARC)    // MD_CPU_ARCHITECTURE_SPARC
	CPUPPC64    = uint32(minidump.ArchPPC64)    // MD_CPU_ARCHITECTURE_PPC64
	CPUARM64Old = uint32(minidump.ArchARM64Old) // MD_CPU_ARCHITECTURE_ARM64_OLD
	CPUMIPS64   = uint32(minidump.ArchMIPS64)   // MD_CPU_ARCHITECTURE_MIPS64
	CPURISCV    = uint32(minidump.ArchRISCV)    // MD_CPU_ARCHITECTURE_RISCV
	CPURISCV64  = uint32(minidump.ArchRISCV64)  // MD_CPU_ARCHITECTURE_RISCV64
)

// Raw is the reason Breakpad prints for a code it cannot name, and for any
// exception when the dump has no system info: "0xCCCCCCCC / 0xFFFFFFFF".
func Raw(code, flags uint32) string {
	return fmt.Sprintf("0x%08x / 0x%08x", code, flags)
}

// hex8 formats v as Breakpad's and Rust's "0x%08x" / "{:#010x}" do.
func hex8(v uint64) string {
	return fmt.Sprintf("0x%08x", v)
}

func isWindows(platform uint32) bool {
	return platform == PlatformWin32NT || platform == PlatformWin32Windows
}

func isMac(platform uint32) bool {
	return platform == PlatformMacOSX || platform == PlatformIOS
}

func isLinux(platform uint32) bool {
	return platform == PlatformLinux || platform == PlatformAndroid
}
