package crashreason

import (
	"github.com/gobreakpad/gobreakpad/minidump"
	"maps"
	"sync"
)

// Reason returns the crash reason and crash address as Breakpad's
// minidump_stackwalk prints them ("Crash reason:" and "Crash address:"),
// following MinidumpProcessor::GetCrashReason.
//
// The address is the exception address, except for Windows access violations
// and in-page errors with at least two parameters, where it is the faulting
// data address (params[1]). On 32-bit CPUs (x86, MIPS, PPC, SHX, ARM,
// X86_WIN64) it is masked to 32 bits.
//
// Codes the platform's table does not name keep the numeric form Raw(code,
// flags); for signals with an unknown si_code Breakpad appends the flags in hex
// (note its "SIGSEGV /" has no space before the si_code name).
func Reason(platform minidump.PlatformID, cpu minidump.ProcessorArchitecture, code, flags uint32, addr uint64, params []uint64) (reason string, address uint64) {
	reason = Raw(code, flags)
	address = addr
	fl := hex8(uint64(flags))

	switch {
	case platform == minidump.PlatformFuchsia:
		if n, ok := fuchsiaExceptions()[code]; ok {
			reason = n + " / " + fl
		}
	case isMac(platform):
		reason = macReason(cpu, code, flags, reason)
	case isWindows(platform):
		var wa bool
		reason, wa = windowsReason(code, params, reason)
		if wa && len(params) >= 2 {
			address = params[1]
		}
	case isLinux(platform):
		reason = linuxReason(code, flags, reason)
	case platform == minidump.PlatformSolaris:
		if n, ok := solarisSignals()[code]; ok {
			reason = n
		}
	case platform == minidump.PlatformPS3:
		if n, ok := ps3Exceptions[code]; ok {
			reason = n
		}
	}

	switch cpu {
	case minidump.ArchX86, minidump.ArchMIPS, minidump.ArchPPC, minidump.ArchSHX, minidump.ArchARM, minidump.ArchX86Win64:
		address &= 0xffffffff
	}
	return reason, address
}

// withNames returns a new table holding the names of base and of extra.
func withNames[K comparable](base, extra map[K]string) map[K]string {
	m := make(map[K]string, len(base)+len(extra))
	maps.Copy(m, base)
	maps.Copy(m, extra)
	return m
}

// Mach exception types (exception_code on macOS and iOS).
const (
	macBadAccess      = 1
	macBadInstruction = 2
	macArithmetic     = 3
	macEmulation      = 4
	macSoftware       = 5
	macBreakpoint     = 6
	macSyscall        = 7
	macMachSyscall    = 8
	macRPCAlert       = 9
	macResource       = 11
	macGuard          = 12
	macSimulated      = 0x43507378 // 'CPsx', Crashpad's simulated crash
	macNSSimulated    = 0x43506e78 // 'CPnx', Crashpad's uncaught NSException
)

// macTypeNames names the Mach exception types that carry a code in flags.
var macTypeNames = sync.OnceValue(func() map[uint32]string {
	return map[uint32]string{
		macBadAccess:      "EXC_BAD_ACCESS",
		macBadInstruction: "EXC_BAD_INSTRUCTION",
		macArithmetic:     "EXC_ARITHMETIC",
		macEmulation:      "EXC_EMULATION",
		macSoftware:       "EXC_SOFTWARE",
		macBreakpoint:     "EXC_BREAKPOINT",
		macSyscall:        "EXC_SYSCALL",
		macMachSyscall:    "EXC_MACH_SYSCALL",
		macRPCAlert:       "EXC_RPC_ALERT",
		macResource:       "EXC_RESOURCE",
		macGuard:          "EXC_GUARD",
	}
})

// kern_return_t values that EXC_BAD_ACCESS carries on every CPU.
var macKernNames = sync.OnceValue(func() map[uint32]string {
	return map[uint32]string{
		1:  "KERN_INVALID_ADDRESS",
		2:  "KERN_PROTECTION_FAILURE",
		8:  "KERN_NO_ACCESS",
		9:  "KERN_MEMORY_FAILURE",
		10: "KERN_MEMORY_ERROR",
		50: "KERN_CODESIGN_ERROR",
	}
})

// CPU-specific Mach exception codes, per exception type. Breakpad picks the
// ARM tables for MD_CPU_ARCHITECTURE_ARM and ARM64_OLD only (not ARM64).
var (
	macARMBadAccess = map[uint32]string{0x101: "EXC_ARM_DA_ALIGN", 0x102: "EXC_ARM_DA_DEBUG"}
	macPPCBadAccess = map[uint32]string{0x101: "EXC_PPC_VM_PROT_READ", 0x102: "EXC_PPC_BADSPACE", 0x103: "EXC_PPC_UNALIGNED"}
	macX86BadAccess = map[uint32]string{13: "EXC_I386_GPFLT"}

	macARMBadInstruction = map[uint32]string{1: "EXC_ARM_UNDEFINED"}
	macPPCBadInstruction = map[uint32]string{
		1: "EXC_PPC_INVALID_SYSCALL", 2: "EXC_PPC_UNIPL_INST", 3: "EXC_PPC_PRIVINST",
		4: "EXC_PPC_PRIVREG", 5: "EXC_PPC_TRACE", 6: "EXC_PPC_PERFMON",
	}
	macX86BadInstruction = map[uint32]string{
		1: "EXC_I386_INVOP", 10: "EXC_I386_INVTSSFLT", 11: "EXC_I386_SEGNPFLT",
		12: "EXC_I386_STKFLT", 13: "EXC_I386_GPFLT", 17: "EXC_I386_ALIGNFLT",
	}

	macPPCArithmetic = map[uint32]string{
		1: "EXC_PPC_OVERFLOW", 2: "EXC_PPC_ZERO_DIVIDE", 3: "EXC_FLT_INEXACT",
		4: "EXC_PPC_FLT_ZERO_DIVIDE", 5: "EXC_PPC_FLT_UNDERFLOW", 6: "EXC_PPC_FLT_OVERFLOW",
		7: "EXC_PPC_FLT_NOT_A_NUMBER", 8: "EXC_PPC_NOEMULATION", 9: "EXC_PPC_ALTIVECASSIST",
	}
	macX86Arithmetic = map[uint32]string{
		1: "EXC_I386_DIV", 2: "EXC_I386_INTO", 3: "EXC_I386_NOEXT", 4: "EXC_I386_EXTOVR",
		5: "EXC_I386_EXTERR", 6: "EXC_I386_EMERR", 7: "EXC_I386_BOUND", 8: "EXC_I386_SSEEXTERR",
	}

	macSoftwareCodes = map[uint32]string{
		0x00010002: "SIGABRT",
		0xdeadc0de: "UNCAUGHT_NS_EXCEPTION",
		0x00000001: "EXC_PPC_TRAP",
		0x00010100: "EXC_PPC_MIGRATE",
	}

	macARMBreakpoint = map[uint32]string{0x101: "EXC_ARM_DA_ALIGN", 0x102: "EXC_ARM_DA_DEBUG", 1: "EXC_ARM_BREAKPOINT"}
	macPPCBreakpoint = map[uint32]string{1: "EXC_PPC_BREAKPOINT"}
	macX86Breakpoint = map[uint32]string{1: "EXC_I386_SGL", 2: "EXC_I386_BPT"}
)

func macReason(cpu minidump.ProcessorArchitecture, code, flags uint32, raw string) string {
	switch code {
	case macSimulated:
		return "Simulated Exception"
	case macNSSimulated:
		return "Uncaught NSException"
	}
	typ, ok := macTypeNames()[code]
	if !ok {
		return raw
	}
	if n, ok := macKernNames()[flags]; ok && code == macBadAccess {
		return typ + " / " + n
	}
	arm := cpu == minidump.ArchARM || cpu == minidump.ArchARM64Old
	x86 := cpu == minidump.ArchX86 || cpu == minidump.ArchAMD64
	return macName(typ, macCodes(code, arm, cpu == minidump.ArchPPC, x86, nil), flags)
}

// macCodes returns the table naming the codes (flags) of a Mach exception
// type on an ARM, PPC or x86 CPU, or nil. armArithmetic is the ARM table for
// EXC_ARITHMETIC, which Breakpad lacks and rust-minidump has.
func macCodes(code uint32, arm, ppc, x86 bool, armArithmetic map[uint32]string) map[uint32]string {
	pick := func(armT, ppcT, x86T map[uint32]string) map[uint32]string {
		switch {
		case arm:
			return armT
		case ppc:
			return ppcT
		case x86:
			return x86T
		}
		return nil
	}
	switch code {
	case macBadAccess:
		return pick(macARMBadAccess, macPPCBadAccess, macX86BadAccess)
	case macBadInstruction:
		return pick(macARMBadInstruction, macPPCBadInstruction, macX86BadInstruction)
	case macArithmetic:
		return pick(armArithmetic, macPPCArithmetic, macX86Arithmetic)
	case macSoftware:
		return macSoftwareCodes
	case macBreakpoint:
		return pick(macARMBreakpoint, macPPCBreakpoint, macX86Breakpoint)
	}
	return nil
}

// macName formats a Mach exception type and its code: the code's name from
// t, or the code in hex.
func macName(typ string, t map[uint32]string, flags uint32) string {
	if n, ok := t[flags]; ok {
		return typ + " / " + n
	}
	return typ + " / " + hex8(uint64(flags))
}

// Windows exception codes that need more than a name.
const (
	winAccessViolation    = 0xc0000005
	winInPageError        = 0xc0000006
	winStackBufferOverrun = 0xc0000409
)

// winCommonExceptions holds the names of Windows exception codes that
// Breakpad and rust-minidump agree on.
var winCommonExceptions = sync.OnceValue(func() map[uint32]string {
	return map[uint32]string{
		0x80000001: "EXCEPTION_GUARD_PAGE",
		0x80000002: "EXCEPTION_DATATYPE_MISALIGNMENT",
		0x80000003: "EXCEPTION_BREAKPOINT",
		0x80000004: "EXCEPTION_SINGLE_STEP",
		0xc0000008: "EXCEPTION_INVALID_HANDLE",
		0xc000001d: "EXCEPTION_ILLEGAL_INSTRUCTION",
		0xc0000025: "EXCEPTION_NONCONTINUABLE_EXCEPTION",
		0xc0000026: "EXCEPTION_INVALID_DISPOSITION",
		0xc000008c: "EXCEPTION_BOUNDS_EXCEEDED",
		0xc000008d: "EXCEPTION_FLT_DENORMAL_OPERAND",
		0xc000008e: "EXCEPTION_FLT_DIVIDE_BY_ZERO",
		0xc000008f: "EXCEPTION_FLT_INEXACT_RESULT",
		0xc0000090: "EXCEPTION_FLT_INVALID_OPERATION",
		0xc0000091: "EXCEPTION_FLT_OVERFLOW",
		0xc0000092: "EXCEPTION_FLT_STACK_CHECK",
		0xc0000093: "EXCEPTION_FLT_UNDERFLOW",
		0xc0000094: "EXCEPTION_INT_DIVIDE_BY_ZERO",
		0xc0000095: "EXCEPTION_INT_OVERFLOW",
		0xc0000096: "EXCEPTION_PRIV_INSTRUCTION",
		0xc00000fd: "EXCEPTION_STACK_OVERFLOW",
		0xc0000194: "EXCEPTION_POSSIBLE_DEADLOCK",
		0xe0000008: "Out of Memory",
		0xe06d7363: "Unhandled C++ Exception",
		0x0517a7ed: "Simulated Exception",
	}
})

// winExceptionNames holds Breakpad's names of Windows exception codes.
var winExceptionNames = sync.OnceValue(func() map[uint32]string {
	return withNames(winCommonExceptions(), map[uint32]string{
		0x40010005: "DBG_CONTROL_C",
		0xc00000ff: "EXCEPTION_BAD_FUNCTION_TABLE",
		0xc0000374: "EXCEPTION_HEAP_CORRUPTION",
	})
})

// Access kinds in exception_information[0] of access violations and in-page
// errors.
var winAccessKinds = sync.OnceValue(func() map[uint64]string {
	return map[uint64]string{
		0: "READ", 1: "WRITE", 8: "EXEC",
	}
})

// windowsReason names a Windows exception. dataAddr reports whether the crash
// address is the data address in params[1] (access violations and in-page
// errors).
func windowsReason(code uint32, params []uint64, raw string) (reason string, dataAddr bool) {
	switch code {
	case winAccessViolation, winInPageError:
		reason = "EXCEPTION_ACCESS_VIOLATION"
		if code == winInPageError {
			reason = "EXCEPTION_IN_PAGE_ERROR"
		}
		if len(params) >= 1 {
			if k, ok := winAccessKinds()[params[0]]; ok {
				reason += "_" + k
			}
		}
		if code == winInPageError && len(params) >= 3 {
			reason += " / " + NTStatusName(uint32(params[2]))
		}
		return reason, true
	case winStackBufferOverrun:
		if len(params) >= 1 {
			// Code 0 (FAST_FAIL_LEGACY_GS_VIOLATION) is left out on purpose, as
			// Breakpad does.
			if n, ok := fastFailNames()[params[0]]; ok && params[0] != 0 {
				return n, false
			}
		}
		return "EXCEPTION_STACK_BUFFER_OVERRUN", false
	}
	if n, ok := winExceptionNames()[code]; ok {
		return n, false
	}
	return raw, false
}

// NTStatusName returns the name of an NTSTATUS code as Breakpad's
// NTStatusToString does, or the code as "0x%08x" when it is not in the table.
// Breakpad's table holds error codes only (severity 0xC).
func NTStatusName(status uint32) string {
	if n, ok := ntStatusNames()[status]; ok && status>>28 == 0xc {
		return n
	}
	return hex8(uint64(status))
}

// Linux signal numbers, also used by Android.
const (
	sigILL  = 4
	sigBUS  = 7
	sigFPE  = 8
	sigSEGV = 11
	sigSYS  = 31
)

var linuxSignals = sync.OnceValue(func() map[uint32]string {
	return map[uint32]string{
		1: "SIGHUP", 2: "SIGINT", 3: "SIGQUIT", 4: "SIGILL", 5: "SIGTRAP", 6: "SIGABRT",
		7: "SIGBUS", 8: "SIGFPE", 9: "SIGKILL", 10: "SIGUSR1", 11: "SIGSEGV", 12: "SIGUSR2",
		13: "SIGPIPE", 14: "SIGALRM", 15: "SIGTERM", 16: "SIGSTKFLT", 17: "SIGCHLD",
		18: "SIGCONT", 19: "SIGSTOP", 20: "SIGTSTP", 21: "SIGTTIN", 22: "SIGTTOU",
		23: "SIGURG", 24: "SIGXCPU", 25: "SIGXFSZ", 26: "SIGVTALRM", 27: "SIGPROF",
		28: "SIGWINCH", 29: "SIGIO", 30: "SIGPWR", 31: "SIGSYS",
		0xffffffff: "DUMP_REQUESTED",
	}
})

// si_code names per signal, as Breakpad knows them.
var (
	sigillCodes = map[uint32]string{
		1: "ILL_ILLOPC", 2: "ILL_ILLOPN", 3: "ILL_ILLADR", 4: "ILL_ILLTRP",
		5: "ILL_PRVOPC", 6: "ILL_PRVREG", 7: "ILL_COPROC", 8: "ILL_BADSTK",
	}
	sigbusCodes = map[uint32]string{
		1: "BUS_ADRALN", 2: "BUS_ADRERR", 3: "BUS_OBJERR", 4: "BUS_MCEERR_AR", 5: "BUS_MCEERR_AO",
	}
	sigfpeCodes = map[uint32]string{
		1: "FPE_INTDIV", 2: "FPE_INTOVF", 3: "FPE_FLTDIV", 4: "FPE_FLTOVF",
		5: "FPE_FLTUND", 6: "FPE_FLTRES", 7: "FPE_FLTINV", 8: "FPE_FLTSUB",
	}
	sigsegvCodes = map[uint32]string{
		1: "SEGV_MAPERR", 2: "SEGV_ACCERR", 3: "SEGV_BNDERR", 4: "SEGV_PKUERR",
		5: "SEGV_ACCADI", 6: "SEGV_ADIDERR", 7: "SEGV_ADIPERR", 8: "SEGV_MTEAERR", 9: "SEGV_MTESERR",
	}
)

func linuxReason(code, flags uint32, raw string) string {
	var t map[uint32]string
	sep := " / "
	switch code {
	case sigILL:
		t = sigillCodes
	case sigBUS:
		t = sigbusCodes
	case sigFPE:
		t = sigfpeCodes
	case sigSEGV:
		t = sigsegvCodes
		sep = " /" // sic: Breakpad prints "SIGSEGV /SEGV_MAPERR"
	default:
		if n, ok := linuxSignals()[code]; ok {
			return n
		}
		return raw
	}
	if n, ok := t[flags]; ok {
		return linuxSignals()[code] + sep + n
	}
	return linuxSignals()[code] + sep + hex8(uint64(flags))
}

var solarisSignals = sync.OnceValue(func() map[uint32]string {
	return map[uint32]string{
		1: "SIGHUP", 2: "SIGINT", 3: "SIGQUIT", 4: "SIGILL", 5: "SIGTRAP", 6: "SIGIOT | SIGABRT",
		7: "SIGEMT", 8: "SIGFPE", 9: "SIGKILL", 10: "SIGBUS", 11: "SIGSEGV", 12: "SIGSYS",
		13: "SIGPIPE", 14: "SIGALRM", 15: "SIGTERM", 16: "SIGUSR1", 17: "SIGUSR2",
		18: "SIGCLD | SIGCHLD", 19: "SIGPWR", 20: "SIGWINCH", 21: "SIGURG", 22: "SIGPOLL | SIGIO",
		23: "SIGSTOP", 24: "SIGTSTP", 25: "SIGCONT", 26: "SIGTTIN", 27: "SIGTTOU",
		28: "SIGVTALRM", 29: "SIGPROF", 30: "SIGXCPU", 31: "SIGXFSZ", 32: "SIGWAITING",
		33: "SIGLWP", 34: "SIGFREEZE", 35: "SIGTHAW", 36: "SIGCANCEL", 37: "SIGLOST",
		38: "SIGXRES", 39: "SIGJVM1", 40: "SIGJVM2",
	}
})

var ps3Exceptions = map[uint32]string{
	0: "UNKNOWN", 1: "TRAP_EXCEP", 2: "PRIV_INSTR", 3: "ILLEGAL_INSTR", 4: "INSTR_STORAGE",
	5: "INSTR_SEGMENT", 6: "DATA_STORAGE", 7: "DATA_SEGMENT", 8: "FLOAT_POINT",
	9: "DABR_MATCH", 10: "ALIGN_EXCEP", 11: "MEMORY_ACCESS", 12: "COPRO_ALIGN",
	13: "COPRO_INVALID_COM", 14: "COPRO_ERR", 15: "COPRO_FIR", 16: "COPRO_DATA_SEGMENT",
	17: "COPRO_DATA_STORAGE", 18: "COPRO_STOP_INSTR", 19: "COPRO_HALT_INSTR",
	20: "COPRO_HALTINSTR_UNKNOWN", 21: "COPRO_MEMORY_ACCESS", 22: "GRAPHIC",
}

// Zircon exception types; Breakpad appends the flags to each.
var fuchsiaExceptions = sync.OnceValue(func() map[uint32]string {
	return map[uint32]string{
		0x8: "GENERAL", 0x108: "FATAL_PAGE_FAULT", 0x208: "UNDEFINED_INSTRUCTION",
		0x308: "SW_BREAKPOINT", 0x408: "HW_BREAKPOINT", 0x508: "UNALIGNED_ACCESS",
		0x8008: "THREAD_STARTING", 0x8108: "THREAD_EXITING", 0x8208: "POLICY_ERROR",
		0x8308: "PROCESS_STARTING",
	}
})
