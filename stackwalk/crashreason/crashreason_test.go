package crashreason

import (
	"bufio"
	"github.com/gobreakpad/gobreakpad/minidump"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/gobreakpad/gobreakpad/internal/testkit/corpus"
)

func TestReason(t *testing.T) {
	tests := []struct {
		name        string
		platform    minidump.PlatformID
		cpu         minidump.ProcessorArchitecture
		code, flags uint32
		addr        uint64
		params      []uint64
		reason      string
		address     uint64
		rustType    string
		rustAddress uint64
	}{
		{"win av read", minidump.PlatformWin32NT, minidump.ArchX86, 0xc0000005, 0, 0x401000, []uint64{0, 0x41414141},
			"EXCEPTION_ACCESS_VIOLATION_READ", 0x41414141, "EXCEPTION_ACCESS_VIOLATION_READ", 0x41414141},
		{"win av write", minidump.PlatformWin32NT, minidump.ArchAMD64, 0xc0000005, 0, 0x401000, []uint64{1, 0x45},
			"EXCEPTION_ACCESS_VIOLATION_WRITE", 0x45, "EXCEPTION_ACCESS_VIOLATION_WRITE", 0x45},
		{"win av exec (DEP)", minidump.PlatformWin32NT, minidump.ArchX86, 0xc0000005, 0, 0x3df944, []uint64{8, 0x3df944},
			"EXCEPTION_ACCESS_VIOLATION_EXEC", 0x3df944, "EXCEPTION_ACCESS_VIOLATION_EXEC", 0x3df944},
		{"win av unknown kind", minidump.PlatformWin32NT, minidump.ArchX86, 0xc0000005, 0, 0x1000, []uint64{3, 0x20},
			"EXCEPTION_ACCESS_VIOLATION", 0x20, "EXCEPTION_ACCESS_VIOLATION", 0x20},
		{"win av no params", minidump.PlatformWin32NT, minidump.ArchX86, 0xc0000005, 0, 0x1000, nil,
			"EXCEPTION_ACCESS_VIOLATION", 0x1000, "EXCEPTION_ACCESS_VIOLATION", 0x1000},
		{"win av one param", minidump.PlatformWin32NT, minidump.ArchX86, 0xc0000005, 0, 0x1000, []uint64{1},
			"EXCEPTION_ACCESS_VIOLATION_WRITE", 0x1000, "EXCEPTION_ACCESS_VIOLATION_WRITE", 0x1000},
		{"win av 32-bit mask", minidump.PlatformWin32NT, minidump.ArchX86, 0xc0000005, 0, 0x1000, []uint64{0, 0xffffffff80000042},
			"EXCEPTION_ACCESS_VIOLATION_READ", 0x80000042, "EXCEPTION_ACCESS_VIOLATION_READ", 0x80000042},
		{"win in-page error", minidump.PlatformWin32NT, minidump.ArchAMD64, 0xc0000006, 0, 0x1000, []uint64{0, 0x7000, 0xc000009c},
			"EXCEPTION_IN_PAGE_ERROR_READ / STATUS_DEVICE_DATA_ERROR", 0x7000,
			"EXCEPTION_IN_PAGE_ERROR_READ / STATUS_DEVICE_DATA_ERROR", 0x7000},
		{"win in-page error unknown status", minidump.PlatformWin32NT, minidump.ArchAMD64, 0xc0000006, 0, 0x1000, []uint64{8, 0x7000, 0xc0ffee00},
			"EXCEPTION_IN_PAGE_ERROR_EXEC / 0xc0ffee00", 0x7000, "EXCEPTION_IN_PAGE_ERROR_EXEC / 0xc0ffee00", 0x7000},
		{"win in-page error two params", minidump.PlatformWin32NT, minidump.ArchAMD64, 0xc0000006, 0, 0x1000, []uint64{1, 0x7000},
			"EXCEPTION_IN_PAGE_ERROR_WRITE", 0x7000, "EXCEPTION_IN_PAGE_ERROR", 0x7000},
		{"win fast fail", minidump.PlatformWin32NT, minidump.ArchAMD64, 0xc0000409, 1, 0x7ff75355af42, []uint64{7},
			"FAST_FAIL_FATAL_APP_EXIT", 0x7ff75355af42, "EXCEPTION_STACK_BUFFER_OVERRUN / FAST_FAIL_FATAL_APP_EXIT", 0x7ff75355af42},
		{"win fast fail legacy gs", minidump.PlatformWin32NT, minidump.ArchAMD64, 0xc0000409, 1, 0x10, []uint64{0},
			"EXCEPTION_STACK_BUFFER_OVERRUN", 0x10, "EXCEPTION_STACK_BUFFER_OVERRUN / FAST_FAIL_LEGACY_GS_VIOLATION", 0x10},
		{"win fast fail unknown", minidump.PlatformWin32NT, minidump.ArchAMD64, 0xc0000409, 1, 0x10, []uint64{1234},
			"EXCEPTION_STACK_BUFFER_OVERRUN", 0x10, "EXCEPTION_STACK_BUFFER_OVERRUN / 0x000004d2", 0x10},
		{"win stack buffer overrun no params", minidump.PlatformWin32NT, minidump.ArchAMD64, 0xc0000409, 1, 0x10, nil,
			"EXCEPTION_STACK_BUFFER_OVERRUN", 0x10, "STATUS_STACK_BUFFER_OVERRUN", 0x10},
		{"win stack overflow", minidump.PlatformWin32NT, minidump.ArchX86, 0xc00000fd, 0, 0xdea637, []uint64{0, 0x102000},
			"EXCEPTION_STACK_OVERFLOW", 0xdea637, "EXCEPTION_STACK_OVERFLOW", 0xdea637},
		{"win invalid parameter", minidump.PlatformWin32NT, minidump.ArchAMD64, 0xc000000d, 0, 0, []uint64{0xfc218feac0, 0xfc218fecc0, 0x20},
			"0xc000000d / 0x00000000", 0, "STATUS_INVALID_PARAMETER", 0},
		{"win heap corruption", minidump.PlatformWin32NT, minidump.ArchAMD64, 0xc0000374, 0, 0x77, nil,
			"EXCEPTION_HEAP_CORRUPTION", 0x77, "STATUS_HEAP_CORRUPTION", 0x77},
		{"win control-c", minidump.PlatformWin32Windows, minidump.ArchX86, 0x40010005, 0, 0x77, nil,
			"DBG_CONTROL_C", 0x77, "DBG_CONTROL_C", 0x77},
		{"win c++ exception", minidump.PlatformWin32NT, minidump.ArchAMD64, 0xe06d7363, 1, 0x77, nil,
			"Unhandled C++ Exception", 0x77, "Unhandled C++ Exception", 0x77},
		{"win oom", minidump.PlatformWin32NT, minidump.ArchAMD64, 0xe0000008, 1, 0x77, nil,
			"Out of Memory", 0x77, "Out of Memory", 0x77},
		{"win simulated", minidump.PlatformWin32NT, minidump.ArchAMD64, 0x0517a7ed, 0, 0x77, nil,
			"Simulated Exception", 0x77, "Simulated Exception", 0x77},
		{"win unknown", minidump.PlatformWin32NT, minidump.ArchAMD64, 0xdeadbeef, 2, 0x77, nil,
			"0xdeadbeef / 0x00000002", 0x77, "unknown 0xdeadbeef", 0x77},
		{"win win32 error", minidump.PlatformWin32NT, minidump.ArchAMD64, 5, 0, 0x77, nil,
			"0x00000005 / 0x00000000", 0x77, "ERROR_ACCESS_DENIED", 0x77},
		{"win visual c++ facility", minidump.PlatformWin32NT, minidump.ArchAMD64, 0xc06d007e, 0, 0x77, nil,
			"0xc06d007e / 0x00000000", 0x77, "FACILITY_VISUALCPP / ERROR_MOD_NOT_FOUND", 0x77},

		{"linux segv maperr", minidump.PlatformLinux, minidump.ArchAMD64, 11, 1, 0x45, nil,
			"SIGSEGV /SEGV_MAPERR", 0x45, "SIGSEGV / SEGV_MAPERR", 0x45},
		{"linux segv no si_code", minidump.PlatformLinux, minidump.ArchAMD64, 11, 0, 0x45, nil,
			"SIGSEGV /0x00000000", 0x45, "SIGSEGV", 0x45},
		{"linux segv mte", minidump.PlatformAndroid, minidump.ArchARM64, 11, 9, 0x45, nil,
			"SIGSEGV /SEGV_MTESERR", 0x45, "SIGSEGV / 0x00000009", 0x45},
		{"linux segv si_kernel", minidump.PlatformLinux, minidump.ArchAMD64, 11, 0x80, 0, nil,
			"SIGSEGV /0x00000080", 0, "SIGSEGV / SI_KERNEL", 0},
		{"linux ill", minidump.PlatformLinux, minidump.ArchAMD64, 4, 2, 0x401000, nil,
			"SIGILL / ILL_ILLOPN", 0x401000, "SIGILL / ILL_ILLOPN", 0x401000},
		{"linux ill badiaddr", minidump.PlatformLinux, minidump.ArchAMD64, 4, 9, 0x401000, nil,
			"SIGILL / 0x00000009", 0x401000, "SIGILL / ILL_BADIADDR", 0x401000},
		{"linux fpe no si_code", minidump.PlatformLinux, minidump.ArchAMD64, 8, 0, 0x401f27, nil,
			"SIGFPE / 0x00000000", 0x401f27, "SIGFPE", 0x401f27},
		{"linux fpe intdiv", minidump.PlatformLinux, minidump.ArchX86, 8, 1, 0x401f27, nil,
			"SIGFPE / FPE_INTDIV", 0x401f27, "SIGFPE / FPE_INTDIV", 0x401f27},
		{"linux bus", minidump.PlatformLinux, minidump.ArchARM, 7, 2, 0x1_0000_1234, nil,
			"SIGBUS / BUS_ADRERR", 0x1234, "SIGBUS / BUS_ADRERR", 0x1234},
		{"linux abort", minidump.PlatformLinux, minidump.ArchAMD64, 6, 0xfffffffa, 0x7f00, nil,
			"SIGABRT", 0x7f00, "SIGABRT / 0xfffffffa", 0x7f00},
		{"linux trap", minidump.PlatformLinux, minidump.ArchARM64, 5, 1, 0x7f00, nil,
			"SIGTRAP", 0x7f00, "SIGTRAP / TRAP_BRKPT", 0x7f00},
		{"linux sys seccomp", minidump.PlatformLinux, minidump.ArchAMD64, 31, 1, 0x7f00, nil,
			"SIGSYS", 0x7f00, "SIGSYS / SYS_SECCOMP", 0x7f00},
		{"linux dump requested", minidump.PlatformLinux, minidump.ArchAMD64, 0xffffffff, 0, 0x7f00, nil,
			"DUMP_REQUESTED", 0x7f00, "DUMP_REQUESTED", 0x7f00},
		{"linux unknown signal", minidump.PlatformLinux, minidump.ArchAMD64, 40, 0, 0x7f00, nil,
			"0x00000028 / 0x00000000", 0x7f00, "unknown 0x00000028 / 0x00000000", 0x7f00},

		{"mac bad access", minidump.PlatformMacOSX, minidump.ArchAMD64, 1, 1, 0xffffffff80000042, nil,
			"EXC_BAD_ACCESS / KERN_INVALID_ADDRESS", 0xffffffff80000042,
			"EXC_BAD_ACCESS / KERN_INVALID_ADDRESS", 0xffffffff80000042},
		{"mac bad access gpflt", minidump.PlatformMacOSX, minidump.ArchAMD64, 1, 13, 0, nil,
			"EXC_BAD_ACCESS / EXC_I386_GPFLT", 0, "EXC_BAD_ACCESS / EXC_I386_GPFLT", 0},
		{"ios bad access arm64 align", minidump.PlatformIOS, minidump.ArchARM64, 1, 0x101, 0, nil,
			"EXC_BAD_ACCESS / 0x00000101", 0, "EXC_BAD_ACCESS / EXC_ARM_DA_ALIGN", 0},
		{"ios bad access arm64-old align", minidump.PlatformIOS, minidump.ArchARM64Old, 1, 0x101, 0, nil,
			"EXC_BAD_ACCESS / EXC_ARM_DA_ALIGN", 0, "EXC_BAD_ACCESS / EXC_ARM_DA_ALIGN", 0},
		{"mac kern failure", minidump.PlatformMacOSX, minidump.ArchAMD64, 1, 5, 0, nil,
			"EXC_BAD_ACCESS / 0x00000005", 0, "EXC_BAD_ACCESS / KERN_FAILURE", 0},
		{"mac bad instruction", minidump.PlatformMacOSX, minidump.ArchAMD64, 2, 1, 0x10, nil,
			"EXC_BAD_INSTRUCTION / EXC_I386_INVOP", 0x10, "EXC_BAD_INSTRUCTION / EXC_I386_INVOP", 0x10},
		{"mac arithmetic", minidump.PlatformMacOSX, minidump.ArchX86, 3, 1, 0x10, nil,
			"EXC_ARITHMETIC / EXC_I386_DIV", 0x10, "EXC_ARITHMETIC / EXC_I386_DIV", 0x10},
		{"mac abort", minidump.PlatformMacOSX, minidump.ArchAMD64, 5, 0x10002, 0x10, nil,
			"EXC_SOFTWARE / SIGABRT", 0x10, "EXC_SOFTWARE / SIGABRT", 0x10},
		{"mac ns exception code", minidump.PlatformMacOSX, minidump.ArchAMD64, 5, 0xdeadc0de, 0x10, nil,
			"EXC_SOFTWARE / UNCAUGHT_NS_EXCEPTION", 0x10, "EXC_SOFTWARE / UNCAUGHT_NS_EXCEPTION", 0x10},
		{"mac breakpoint arm", minidump.PlatformIOS, minidump.ArchARM, 6, 1, 0x10, nil,
			"EXC_BREAKPOINT / EXC_ARM_BREAKPOINT", 0x10, "EXC_BREAKPOINT / 0x00000001", 0x10},
		{"mac breakpoint x86", minidump.PlatformMacOSX, minidump.ArchAMD64, 6, 2, 0x10, nil,
			"EXC_BREAKPOINT / EXC_I386_BPT", 0x10, "EXC_BREAKPOINT / EXC_I386_BPT", 0x10},
		{"mac resource", minidump.PlatformMacOSX, minidump.ArchAMD64, 11, 3 << 29, 0x10, []uint64{0, 1<<58 | 300, 0},
			"EXC_RESOURCE / 0x60000000", 0x10, "EXC_RESOURCE / RESOURCE_TYPE_MEMORY / FLAVOR_HIGH_WATERMARK high watermark limit: 300MiB", 0x10},
		{"mac guard fd", minidump.PlatformMacOSX, minidump.ArchARM64, 12, 2 << 29, 0x10, []uint64{0, 1<<32 | 7, 99},
			"EXC_GUARD / 0x40000000", 0x10, "EXC_GUARD / GUARD_TYPE_FD / GUARD_EXC_CLOSE file descriptor: 7 guard identifier: 99", 0x10},
		{"mac simulated", minidump.PlatformMacOSX, minidump.ArchAMD64, 0x43507378, 0, 0x10, nil,
			"Simulated Exception", 0x10, "Simulated Exception", 0x10},
		{"mac uncaught NSException", minidump.PlatformMacOSX, minidump.ArchAMD64, 0x43506e78, 0, 0x1030e9c34, []uint64{0x43506e78, 0, 0},
			"Uncaught NSException", 0x1030e9c34, "unknown 0x43506e78 / 0x00000000", 0x1030e9c34},
		{"mac zero", minidump.PlatformMacOSX, minidump.ArchAMD64, 0, 0, 0x7fff6f41333a, nil,
			"0x00000000 / 0x00000000", 0x7fff6f41333a, "unknown 0x00000000 / 0x00000000", 0x7fff6f41333a},
		{"mac rpc alert", minidump.PlatformMacOSX, minidump.ArchAMD64, 9, 7, 0x10, nil,
			"EXC_RPC_ALERT / 0x00000007", 0x10, "EXC_RPC_ALERT / 0x00000007", 0x10},

		{"solaris abort", minidump.PlatformSolaris, minidump.ArchSPARC, 6, 0, 0x10, nil,
			"SIGIOT | SIGABRT", 0x10, "unknown 0x00000006 / 0x00000000", 0x10},
		{"solaris bus", minidump.PlatformSolaris, minidump.ArchX86, 10, 0, 0x10, nil,
			"SIGBUS", 0x10, "unknown 0x0000000a / 0x00000000", 0x10},
		{"ps3 graphic", minidump.PlatformPS3, minidump.ArchPPC64, 22, 0, 0x10, nil,
			"GRAPHIC", 0x10, "unknown 0x00000016 / 0x00000000", 0x10},
		{"fuchsia page fault", minidump.PlatformFuchsia, minidump.ArchARM64, 0x108, 3, 0x10, nil,
			"FATAL_PAGE_FAULT / 0x00000003", 0x10, "unknown 0x00000108 / 0x00000003", 0x10},
		{"nacl", minidump.PlatformNaCl, minidump.ArchX86, 11, 0, 0x1_0000_0010, nil,
			"0x0000000b / 0x00000000", 0x10, "unknown 0x0000000b / 0x00000000", 0x10},
		{"unknown platform", 0x1234, 0x4242, 11, 0, 0x1_0000_0010, nil,
			"0x0000000b / 0x00000000", 0x1_0000_0010, "unknown 0x0000000b / 0x00000000", 0x1_0000_0010},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r, a := Reason(tc.platform, tc.cpu, tc.code, tc.flags, tc.addr, tc.params)
			if r != tc.reason || a != tc.address {
				t.Errorf("Reason = %q, %#x; want %q, %#x", r, a, tc.reason, tc.address)
			}
			if got := RustType(tc.platform, tc.cpu, tc.code, tc.flags, tc.params); got != tc.rustType {
				t.Errorf("RustType = %q; want %q", got, tc.rustType)
			}
			if got := RustAddress(tc.platform, tc.cpu, tc.code, tc.addr, tc.params); got != tc.rustAddress {
				t.Errorf("RustAddress = %#x; want %#x", got, tc.rustAddress)
			}
		})
	}
}

func TestRaw(t *testing.T) {
	if got, want := Raw(0xc000000d, 1), "0xc000000d / 0x00000001"; got != want {
		t.Errorf("Raw = %q, want %q", got, want)
	}
}

// dumpException is what a minidump_dump listing tells about a crash.
type dumpException struct {
	platform    minidump.PlatformID
	cpu         minidump.ProcessorArchitecture
	code, flags uint32
	addr        uint64
	params      []uint64
}

var (
	dumpFieldRE = regexp.MustCompile(`^\s+(platform_id|processor_architecture|exception_record\.exception_code|exception_record\.exception_flags|exception_record\.exception_address|exception_record\.number_parameters|exception_record\.exception_information\[\s*(\d+)\])\s+= (\S+)`)
	reasonRE    = regexp.MustCompile(`^Crash reason:  (.*)$`)
	addressRE   = regexp.MustCompile(`^Crash address: (0x[0-9a-f]+)$`)
)

// parseDump reads the system info and exception of a minidump_dump listing;
// ok is false when the listing has no exception or no system info.
func parseDump(t *testing.T, path string) (d dumpException, ok bool) {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var haveExc, havePlat, haveCPU bool
	n := -1
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 1<<24)
	for sc.Scan() {
		m := dumpFieldRE.FindStringSubmatch(sc.Text())
		if m == nil {
			continue
		}
		v, err := strconv.ParseUint(m[3], 0, 64)
		if err != nil {
			continue
		}
		switch {
		case m[1] == "platform_id" && !havePlat:
			d.platform, havePlat = minidump.PlatformID(v), true
		case m[1] == "processor_architecture" && !haveCPU:
			d.cpu, haveCPU = minidump.ProcessorArchitecture(v), true
		case m[1] == "exception_record.exception_code":
			d.code, haveExc = uint32(v), true
		case m[1] == "exception_record.exception_flags":
			d.flags = uint32(v)
		case m[1] == "exception_record.exception_address":
			d.addr = v
		case m[1] == "exception_record.number_parameters":
			n = int(v)
		case m[2] != "":
			d.params = append(d.params, v)
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	if n >= 0 && n < len(d.params) {
		d.params = d.params[:n]
	}
	return d, haveExc && havePlat && haveCPU
}

// expectedCrash reads the "Crash reason:" and "Crash address:" lines of a
// Breakpad human output.
func expectedCrash(t *testing.T, path string) (reason string, addr uint64, ok bool) {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var haveAddr bool
	for _, line := range strings.Split(string(data), "\n") {
		if m := reasonRE.FindStringSubmatch(line); m != nil {
			reason, ok = m[1], true
		}
		if m := addressRE.FindStringSubmatch(line); m != nil {
			addr, _ = strconv.ParseUint(m[1], 0, 64)
			haveAddr = true
		}
	}
	return reason, addr, ok && haveAddr
}

// TestBreakpadCorpus checks Reason against Breakpad's own outputs for every
// minidump of the shared corpus that has a minidump_dump listing.
func TestBreakpadCorpus(t *testing.T) {
	dir := corpus.Dir(t)
	type pair struct{ name, dump, human string }
	var cases []pair
	dumps, _ := filepath.Glob(filepath.Join(dir, "breakpad/expected/*.dump.txt"))
	for _, d := range dumps {
		base := strings.TrimSuffix(d, ".dump.txt")
		cases = append(cases, pair{filepath.Base(base), d, base + ".txt"})
	}
	gen, _ := filepath.Glob(filepath.Join(dir, "generated/*/dump.txt"))
	for _, d := range gen {
		cases = append(cases, pair{filepath.Base(filepath.Dir(d)), d, filepath.Join(filepath.Dir(d), "ref.txt")})
	}
	checked := 0
	for _, c := range cases {
		if _, err := os.Stat(c.human); err != nil {
			continue
		}
		want, wantAddr, ok := expectedCrash(t, c.human)
		if !ok {
			continue
		}
		d, ok := parseDump(t, c.dump)
		if !ok {
			t.Errorf("%s: Breakpad names a crash but the listing has no exception or system info", c.name)
			continue
		}
		got, gotAddr := Reason(d.platform, d.cpu, d.code, d.flags, d.addr, d.params)
		if got != want || gotAddr != wantAddr {
			t.Errorf("%s: Reason = %q, %#x; Breakpad printed %q, %#x", c.name, got, gotAddr, want, wantAddr)
		}
		checked++
	}
	if checked < 50 {
		t.Errorf("checked only %d corpus dumps; the corpus has more than 50 with a crash", checked)
	}
	t.Logf("%d corpus crashes agree with Breakpad", checked)
}

// TestRustSnapshots checks RustType and RustAddress against rust-minidump's
// JSON snapshots of the dumps Breakpad's listings describe.
func TestRustSnapshots(t *testing.T) {
	tests := []struct {
		listing, snapshot string
	}{
		{"rm-test.dump.txt", "test_minidump_stackwalk__json-pretty.snap"},
		{"rm-linux-mini.dump.txt", "test_minidump_stackwalk__linux_json_pretty.snap"},
		{"rm-pipeline-inlines-macos-segv.dump.txt", "test_minidump_stackwalk__macos_inlines_json_pretty.snap"},
	}
	typeRE := regexp.MustCompile(`(?m)^    "type": "(.*)"`)
	addrRE := regexp.MustCompile(`(?m)^    "address": "0x([0-9a-f]+)"`)
	for _, tc := range tests {
		d, ok := parseDump(t, corpus.File(t, "breakpad/expected/"+tc.listing))
		if !ok {
			t.Fatalf("%s: no exception", tc.listing)
		}
		snap, err := os.ReadFile(corpus.File(t, "rust-minidump/snapshots/"+tc.snapshot))
		if err != nil {
			t.Fatal(err)
		}
		mt, ma := typeRE.FindSubmatch(snap), addrRE.FindSubmatch(snap)
		if mt == nil || ma == nil {
			t.Fatalf("%s: no crash_info type or address", tc.snapshot)
		}
		wantAddr, _ := strconv.ParseUint(string(ma[1]), 16, 64)
		if got := RustType(d.platform, d.cpu, d.code, d.flags, d.params); got != string(mt[1]) {
			t.Errorf("%s: RustType = %q; snapshot has %q", tc.listing, got, mt[1])
		}
		if got := RustAddress(d.platform, d.cpu, d.code, d.addr, d.params); got != wantAddr {
			t.Errorf("%s: RustAddress = %#x; snapshot has %#x", tc.listing, got, wantAddr)
		}
		if bits, digits := RustPointerBits(d.cpu), len(ma[1]); bits/4 != digits {
			t.Errorf("%s: pointer width %d bits; snapshot pads the address to %d digits", tc.listing, bits, digits)
		}
	}
}

func FuzzReason(f *testing.F) {
	f.Add(uint32(minidump.PlatformWin32NT), uint32(minidump.ArchX86), uint32(0xc0000005), uint32(0), uint64(0x1000), 2, uint64(1), uint64(0x45), uint64(0))
	f.Add(uint32(minidump.PlatformMacOSX), uint32(minidump.ArchAMD64), uint32(11), uint32(3<<29), uint64(0x1000), 3, uint64(0), uint64(1<<58), uint64(7))
	f.Add(uint32(minidump.PlatformLinux), uint32(minidump.ArchARM64), uint32(11), uint32(0x80), uint64(0), 0, uint64(0), uint64(0), uint64(0))
	f.Fuzz(func(t *testing.T, rawPlatform, rawCPU, code, flags uint32, addr uint64, n int, p0, p1, p2 uint64) {
		platform, cpu := minidump.PlatformID(rawPlatform), minidump.ProcessorArchitecture(rawCPU)
		params := []uint64{p0, p1, p2}
		if n < 0 {
			n = -n
		}
		params = params[:n%4]
		r, a := Reason(platform, cpu, code, flags, addr, params)
		if r == "" {
			t.Fatal("empty Breakpad reason")
		}
		if a != addr && a != addr&0xffffffff && (len(params) < 2 || (a != params[1] && a != params[1]&0xffffffff)) {
			t.Fatalf("address %#x comes from nowhere", a)
		}
		if RustType(platform, cpu, code, flags, params) == "" {
			t.Fatal("empty rust-minidump type")
		}
		RustAddress(platform, cpu, code, addr, params)
	})
}

func BenchmarkReason(b *testing.B) {
	params := []uint64{1, 0x45}
	b.ReportAllocs()
	for b.Loop() {
		Reason(minidump.PlatformWin32NT, minidump.ArchX86, 0xc0000005, 0, 0x40429e, params)
		Reason(minidump.PlatformLinux, minidump.ArchAMD64, 11, 1, 0x45, nil)
		RustType(minidump.PlatformMacOSX, minidump.ArchAMD64, 1, 1, nil)
	}
}
