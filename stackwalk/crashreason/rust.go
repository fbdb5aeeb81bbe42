package crashreason

import (
	"fmt"
	"github.com/gobreakpad/gobreakpad/minidump"
	"sync"
)

// RustType returns the crash reason as rust-minidump names it (its
// CrashReason's Display, printed as crash_info.type by minidump-stackwalk
// --json). Arguments are those of Reason.
//
// rust-minidump reads exception_information beyond number_parameters for
// macOS EXC_RESOURCE and EXC_GUARD details; here parameters past params count
// as zero.
func RustType(platform minidump.PlatformID, cpu minidump.ProcessorArchitecture, code, flags uint32, params []uint64) string {
	var s string
	switch {
	case isMac(platform):
		s = rustMac(cpu, code, flags, params)
	case isLinux(platform):
		s = rustLinux(code, flags)
	case isWindows(platform):
		s = rustWindows(code, params)
	}
	if s == "" {
		return "unknown " + Raw(code, flags)
	}
	return s
}

// RustAddress returns the crash address as rust-minidump computes it
// (crash_info.address): the data address params[1] for Windows access
// violations and in-page errors with at least two parameters, else the
// exception address; masked to 32 bits on 32-bit CPUs.
func RustAddress(platform minidump.PlatformID, cpu minidump.ProcessorArchitecture, code uint32, addr uint64, params []uint64) uint64 {
	if isWindows(platform) && (code == winAccessViolation || code == winInPageError) && len(params) >= 2 {
		addr = params[1]
	}
	if RustPointerBits(cpu) == 32 {
		addr &= 0xffffffff
	}
	return addr
}

// RustPointerBits returns the pointer width rust-minidump assumes for a CPU
// architecture: 32, 64, or 0 when it does not know the CPU. rust-minidump's
// JSON pads addresses to this width ("0x%08x" or "0x%016x").
func RustPointerBits(cpu minidump.ProcessorArchitecture) int {
	switch cpu {
	case minidump.ArchX86, minidump.ArchX86Win64, minidump.ArchPPC, minidump.ArchSPARC, minidump.ArchARM, minidump.ArchMIPS:
		return 32
	case minidump.ArchAMD64, minidump.ArchPPC64, minidump.ArchARM64, minidump.ArchARM64Old, minidump.ArchMIPS64, minidump.ArchRISCV64:
		return 64
	}
	return 0
}

func rustArg(params []uint64, i int) uint64 {
	if i < len(params) {
		return params[i]
	}
	return 0
}

// rust-minidump's Mach tables differ from Breakpad's: it knows KERN_FAILURE,
// ARM arithmetic codes, and picks the ARM tables for ARM64 dumps.
var (
	rustMacKernNames = map[uint32]string{
		1: "KERN_INVALID_ADDRESS", 2: "KERN_PROTECTION_FAILURE", 5: "KERN_FAILURE",
		8: "KERN_NO_ACCESS", 9: "KERN_MEMORY_FAILURE", 10: "KERN_MEMORY_ERROR",
		50: "KERN_CODESIGN_ERROR",
	}
	rustMacARMArithmetic = map[uint32]string{
		1: "EXC_ARM_FP_IO", 2: "EXC_ARM_FP_DZ", 3: "EXC_ARM_FP_OF",
		4: "EXC_ARM_FP_UF", 5: "EXC_ARM_FP_IX", 6: "EXC_ARM_FP_ID",
	}
	rustMacResourceTypes = map[uint32]string{
		1: "RESOURCE_TYPE_CPU", 2: "RESOURCE_TYPE_WAKEUPS", 3: "RESOURCE_TYPE_MEMORY",
		4: "RESOURCE_TYPE_IO", 5: "RESOURCE_TYPE_THREADS",
	}
	rustMacGuardTypes = map[uint32]string{
		0: "GUARD_TYPE_NONE", 1: "GUARD_TYPE_MACH_PORT", 2: "GUARD_TYPE_FD",
		3: "GUARD_TYPE_USER", 4: "GUARD_TYPE_VN", 5: "GUARD_TYPE_VIRT_MEMORY",
	}
	rustMachPortGuardFlavors = map[uint64]string{
		0x1: "GUARD_EXC_DESTROY", 0x2: "GUARD_EXC_MOD_REFS", 0x4: "GUARD_EXC_SET_CONTEXT",
		0x8: "GUARD_EXC_UNGUARDED", 0x10: "GUARD_EXC_INCORRECT_GUARD", 0x20: "GUARD_EXC_IMMOVABLE",
		0x40: "GUARD_EXC_STRICT_REPLY", 0x80: "GUARD_EXC_MSG_FILTERED", 0x100: "GUARD_EXC_INVALID_RIGHT",
		0x200: "GUARD_EXC_INVALID_NAME", 0x400: "GUARD_EXC_INVALID_VALUE", 0x800: "GUARD_EXC_INVALID_ARGUMENT",
		0x1000: "GUARD_EXC_RIGHT_EXISTS", 0x2000: "GUARD_EXC_KERN_NO_SPACE", 0x4000: "GUARD_EXC_KERN_FAILURE",
		0x8000: "GUARD_EXC_KERN_RESOURCE", 0x10000: "GUARD_EXC_SEND_INVALID_REPLY",
		0x20000: "GUARD_EXC_SEND_INVALID_VOUCHER", 0x40000: "GUARD_EXC_SEND_INVALID_RIGHT",
		0x80000: "GUARD_EXC_RCV_INVALID_NAME", 0x100000: "GUARD_EXC_RCV_GUARDED_DESC",
		0x200000: "GUARD_EXC_MOD_REFS_NON_FATAL", 0x400000: "GUARD_EXC_IMMOVABLE_NON_FATAL",
	}
	rustFDGuardFlavors = map[uint64]string{
		0x1: "GUARD_EXC_CLOSE", 0x2: "GUARD_EXC_DUP", 0x4: "GUARD_EXC_NOCLOEXEC",
		0x8: "GUARD_EXC_SOCKET_IPC", 0x10: "GUARD_EXC_FILEPORT", 0x20: "GUARD_EXC_MISMATCH",
		0x40: "GUARD_EXC_WRITE",
	}
	rustVNGuardFlavors = map[uint64]string{
		0x1: "GUARD_EXC_RENAME_TO", 0x2: "GUARD_EXC_RENAME_FROM", 0x4: "GUARD_EXC_UNLINK",
		0x8: "GUARD_EXC_WRITE_OTHER", 0x10: "GUARD_EXC_TRUNC_OTHER", 0x20: "GUARD_EXC_LINK",
		0x40: "GUARD_EXC_EXCHDATA",
	}
)

func rustMac(cpu minidump.ProcessorArchitecture, code, flags uint32, params []uint64) string {
	if code == macSimulated {
		return "Simulated Exception"
	}
	typ, ok := macTypeNames()[code]
	if !ok {
		return ""
	}
	switch code {
	case macBadAccess:
		if n, ok := rustMacKernNames[flags]; ok {
			return typ + " / " + n
		}
	case macResource:
		if r, ok := rustMacResourceTypes[(flags>>29)&7]; ok {
			return rustExcResource(r, rustArg(params, 1), rustArg(params, 2))
		}
	case macGuard:
		if g, ok := rustMacGuardTypes[(flags>>29)&7]; ok {
			return rustExcGuard(g, rustArg(params, 1), rustArg(params, 2))
		}
	}
	arm := cpu == minidump.ArchARM64 || cpu == minidump.ArchARM64Old
	x86 := cpu == minidump.ArchX86 || cpu == minidump.ArchAMD64 || cpu == minidump.ArchX86Win64
	return macName(typ, macCodes(code, arm, cpu == minidump.ArchPPC, x86, rustMacARMArithmetic), flags)
}

// rustExcResource decodes an EXC_RESOURCE code as xnu's exc_resource.h lays it
// out, in rust-minidump's words.
func rustExcResource(typ string, code, subcode uint64) string {
	s := "EXC_RESOURCE / " + typ + " / "
	flavor := (code >> 58) & 7
	raw := fmt.Sprintf("0x%016x / 0x%016x", code, subcode)
	switch typ {
	case "RESOURCE_TYPE_CPU":
		f := map[uint64]string{1: "FLAVOR_CPU_MONITOR", 2: "FLAVOR_CPU_MONITOR_FATAL"}[flavor]
		if f == "" {
			return s + raw
		}
		return s + fmt.Sprintf("%s interval: %ds CPU limit: %d%% CPU consumed: %d%%",
			f, (code>>7)&0x1ffffff, code&7, subcode&7)
	case "RESOURCE_TYPE_WAKEUPS":
		if flavor != 1 {
			return s + raw
		}
		return s + fmt.Sprintf("FLAVOR_WAKEUPS_MONITOR interval: %ds wakeups permitted: %d wakeups observed: %d",
			(code>>20)&0xfffff, code&0xfff, subcode&0xfff)
	case "RESOURCE_TYPE_MEMORY":
		if flavor != 1 {
			return s + raw
		}
		return s + fmt.Sprintf("FLAVOR_HIGH_WATERMARK high watermark limit: %dMiB", code&0x1fff)
	case "RESOURCE_TYPE_IO":
		f := map[uint64]string{1: "FLAVOR_IO_PHYSICAL_WRITES", 2: "FLAVOR_IO_LOGICAL_WRITES"}[flavor]
		if f == "" {
			return s + raw
		}
		return s + fmt.Sprintf("%s interval: %ds I/O limit: %d%% I/O observed: %d%%",
			f, (code>>15)&0x1ffff, code&0x7fff, subcode&0x7fff)
	default: // RESOURCE_TYPE_THREADS
		if flavor != 1 {
			return s + raw
		}
		return s + fmt.Sprintf("FLAVOR_THREADS_HIGH_WATERMARK high watermark limit: %d", code&0x7fff)
	}
}

// rustExcGuard decodes an EXC_GUARD code as xnu's exc_guard.h lays it out, in
// rust-minidump's words (including its missing space before "/ namespace").
func rustExcGuard(typ string, code, subcode uint64) string {
	s := "EXC_GUARD / " + typ
	flavor := (code >> 32) & 0x1fffffff
	raw := fmt.Sprintf(" / 0x%016x / 0x%016x", code, subcode)
	switch typ {
	case "GUARD_TYPE_NONE":
		return s
	case "GUARD_TYPE_MACH_PORT":
		if f, ok := rustMachPortGuardFlavors[flavor]; ok {
			return s + fmt.Sprintf(" / %s port name: %d guard identifier: %d", f, code&0xfffffff, subcode)
		}
	case "GUARD_TYPE_FD":
		if f, ok := rustFDGuardFlavors[flavor]; ok {
			return s + fmt.Sprintf(" / %s file descriptor: %d guard identifier: %d", f, code&0xfffffff, subcode)
		}
	case "GUARD_TYPE_USER":
		return s + fmt.Sprintf("/ namespace: %d guard identifier: %d", code&0xffffffff, subcode)
	case "GUARD_TYPE_VN":
		if f, ok := rustVNGuardFlavors[flavor]; ok {
			return s + fmt.Sprintf(" / %s pid: %d guard identifier: %d", f, code&0xfffffff, subcode)
		}
	case "GUARD_TYPE_VIRT_MEMORY":
		if flavor == 1 {
			return s + fmt.Sprintf(" / GUARD_EXC_DEALLOC_GAP offset: %d", subcode)
		}
	}
	return s + raw
}

var (
	rustSigillCodes  = withNames(sigillCodes, map[uint32]string{9: "ILL_BADIADDR"})
	rustSigtrapCodes = map[uint32]string{
		1: "TRAP_BRKPT", 2: "TRAP_TRACE", 3: "TRAP_BRANCH", 4: "TRAP_HWBKPT", 5: "TRAP_UNK", 6: "TRAP_PERF",
	}
	rustSigsegvCodes = map[uint32]string{1: "SEGV_MAPERR", 2: "SEGV_ACCERR", 3: "SEGV_BNDERR", 4: "SEGV_PKUERR"}
	rustSigsysCodes  = map[uint32]string{1: "SYS_SECCOMP", 2: "SYS_USER_DISPATCH"}
)

func rustLinux(code, flags uint32) string {
	sig, ok := linuxSignals()[code]
	if !ok {
		return ""
	}
	var t map[uint32]string
	switch code {
	case sigILL:
		t = rustSigillCodes
	case 5: // SIGTRAP
		t = rustSigtrapCodes
	case sigFPE:
		t = sigfpeCodes
	case sigSEGV:
		t = rustSigsegvCodes
	case sigBUS:
		t = sigbusCodes
	case sigSYS:
		t = rustSigsysCodes
	}
	if n, ok := t[flags]; ok {
		return sig + " / " + n
	}
	// The generic form names the si_code when it is a known sender code.
	// rust-minidump converts flags as unsigned, so the negative SI_* codes
	// (SI_QUEUE, SI_TKILL, ...) never match and print in hex.
	switch flags {
	case 0: // SI_USER
		return sig
	case 0x80:
		return sig + " / SI_KERNEL"
	}
	return sig + " / " + hex8(uint64(flags))
}

// rustWinExceptions holds rust-minidump's ExceptionCodeWindows names (it
// knows the access violation and in-page error codes by name too); the
// codes it lacks (DBG_CONTROL_C, heap corruption, fast fail, ...) are named
// from the NTSTATUS table instead.
var rustWinExceptions = sync.OnceValue(func() map[uint32]string {
	return withNames(winCommonExceptions(), map[uint32]string{
		0xc0000005: "EXCEPTION_ACCESS_VIOLATION",
		0xc0000006: "EXCEPTION_IN_PAGE_ERROR",
		0xe0434352: "MANAGED_EXCEPTION_CODE_V4",
	})
})

const facilityVisualCPP = 109

func rustNTStatus(status uint64) string {
	if status <= 0xffffffff {
		if n, ok := ntStatusNames()[uint32(status)]; ok {
			return n
		}
	}
	return hex8(status)
}

func rustWindows(code uint32, params []uint64) string {
	switch code {
	case winAccessViolation:
		if len(params) >= 1 {
			if k, ok := winAccessKinds()[params[0]]; ok {
				return "EXCEPTION_ACCESS_VIOLATION_" + k
			}
		}
	case winInPageError:
		if len(params) >= 3 {
			if k, ok := winAccessKinds()[params[0]]; ok {
				return "EXCEPTION_IN_PAGE_ERROR_" + k + " / " + rustNTStatus(params[2])
			}
		}
	case winStackBufferOverrun:
		if len(params) >= 1 {
			ff, ok := fastFailNames()[params[0]]
			if !ok {
				ff = hex8(params[0])
			}
			return "EXCEPTION_STACK_BUFFER_OVERRUN / " + ff
		}
	}
	if n, ok := rustWinExceptions()[code]; ok {
		return n
	}
	if n, ok := winErrorNames()[code]; ok {
		return n
	}
	if n, ok := ntStatusNames()[code]; ok {
		return n
	}
	if code&0xf0000000 != 0 && (code&0x0fff0000)>>16 == facilityVisualCPP {
		if n, ok := winErrorNames()[code&0xffff]; ok {
			return "FACILITY_VISUALCPP / " + n
		}
	}
	return "unknown " + hex8(uint64(code))
}
