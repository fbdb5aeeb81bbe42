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

// Raw is the reason Breakpad prints for a code it cannot name, and for any
// exception when the dump has no system info: "0xCCCCCCCC / 0xFFFFFFFF".
func Raw(code, flags uint32) string {
	return fmt.Sprintf("0x%08x / 0x%08x", code, flags)
}

// hex8 formats v as Breakpad's and Rust's "0x%08x" / "{:#010x}" do.
func hex8(v uint64) string {
	return fmt.Sprintf("0x%08x", v)
}

func isWindows(platform minidump.PlatformID) bool {
	return platform == minidump.PlatformWin32NT || platform == minidump.PlatformWin32Windows
}

func isMac(platform minidump.PlatformID) bool {
	return platform == minidump.PlatformMacOSX || platform == minidump.PlatformIOS
}

func isLinux(platform minidump.PlatformID) bool {
	return platform == minidump.PlatformLinux || platform == minidump.PlatformAndroid
}
