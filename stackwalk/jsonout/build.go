package jsonout

import (
	"bytes"
	"cmp"
	"encoding/json"
	"fmt"
	"sort"
	"strconv"
	"strings"

	"github.com/gobreakpad/gobreakpad/arch"
	"github.com/gobreakpad/gobreakpad/minidump"
	"github.com/gobreakpad/gobreakpad/stackwalk"
	"github.com/gobreakpad/gobreakpad/stackwalk/crashreason"
	"github.com/gobreakpad/gobreakpad/symstore"
	"github.com/gobreakpad/gobreakpad/unwind"
)

// ids are the raw platform and CPU ids of the dump, as rust-minidump and
// stackwalk/crashreason take them.
type ids struct {
	platform minidump.PlatformID
	cpu      minidump.ProcessorArchitecture
}

// unknownPlatform stands for a missing system info stream: no platform has it.
const unknownPlatform minidump.PlatformID = 0xffffffff

// rawIDs returns the dump's ids, or for a state whose system info was not
// read from a dump, the ids recovered from Breakpad's names.
func rawIDs(st *stackwalk.ProcessState) ids {
	if st.System.RawValid {
		return ids{minidump.PlatformID(st.System.PlatformID), minidump.ProcessorArchitecture(st.System.ProcessorArchitecture)}
	}
	return ids{platformFromName(st.System.OSShort), cpuFromName(st.System.CPU)}
}

func build(st *stackwalk.ProcessState) *document {
	r := rawIDs(st)
	f := formatter{bits32: crashreason.RustPointerBits(r.cpu) == 32, mods: newRustModules(st.Modules)}

	doc := &document{
		Status:          "OK",
		Modules:         []module{},
		UnloadedModules: []unloadedModule{},
		Threads:         []thread{},
	}
	doc.SystemInfo = f.systemInfo(st, r)

	for _, m := range st.Modules {
		doc.Modules = append(doc.Modules, f.module(m))
	}
	// rust-minidump writes 0 whatever the module list holds (even none):
	// "the first module is always the main one".
	doc.MainModule = 0
	for _, m := range st.UnloadedModules {
		doc.UnloadedModules = append(doc.UnloadedModules, unloadedModule{
			BaseAddr: f.addr(m.Base),
			CodeID:   strings.ToLower(m.RustCodeID),
			EndAddr:  f.addr(m.Base + m.Size),
			Filename: m.CodeFile,
		})
	}

	// Threads: rust-minidump lists every thread of the dump, the one that
	// wrote it included (with no frames), where Breakpad leaves that one out.
	crashing := -1
	if st.DumpThreadIDs != nil {
		used := make([]bool, len(st.Threads))
		for i, id := range st.DumpThreadIDs {
			var cs *stackwalk.CallStack
			for j, s := range st.Threads {
				if !used[j] && s.ThreadID == id {
					cs, used[j] = s, true
					if j == st.RequestingThread {
						crashing = i
					}
					break
				}
			}
			if cs == nil {
				doc.Threads = append(doc.Threads, thread{ThreadID: id, Frames: frameSlot{list: []frame{}}})
				continue
			}
			doc.Threads = append(doc.Threads, f.thread(cs, st))
		}
	} else {
		for _, cs := range st.Threads {
			doc.Threads = append(doc.Threads, f.thread(cs, st))
		}
		if st.RequestingThread >= 0 && st.RequestingThread < len(st.Threads) {
			crashing = st.RequestingThread
		}
	}
	doc.ThreadCount = len(doc.Threads)
	// A thread listed in the thread name list has a name, even an empty one.
	for i := range doc.Threads {
		if name, ok := st.ThreadNames[doc.Threads[i].ThreadID]; ok {
			doc.Threads[i].ThreadName = &name
		}
	}

	doc.CrashInfo = f.crashInfo(st, r)
	if crashing >= 0 {
		doc.CrashInfo.CrashingThread = &crashing
		if doc.Threads[crashing].FrameCount > 0 {
			ct := doc.Threads[crashing]
			// The frames are shared; the first one's registers are added
			// as it is written.
			ct.Frames.first = f.registers(firstPhysical(st.Threads[st.RequestingThread]))
			ct.ThreadsIndex = &crashing
			doc.CrashingThread = &ct
		}
	}

	if up, ok := st.Uptime(); ok {
		doc.ProcessUptime = &up
	}
	if st.HasProcessID {
		pid := st.ProcessID
		doc.PID = &pid
	}
	if l := st.LSBRelease; l != nil {
		doc.LSBRelease = &lsbRelease{ID: l.ID, Release: l.Release, Codename: l.Codename, Description: l.Description}
	}
	if st.SoftErrors != nil {
		doc.SoftErrors = parseJSON(st.SoftErrors)
	}
	if len(st.Problems) > 0 {
		doc.SoftErrors = withProblems(doc.SoftErrors, st.Problems)
	}
	if st.System.HasCPUMicrocode {
		v := fmt.Sprintf("0x%x", st.System.CPUMicrocode)
		doc.SystemInfo.CPUMicrocodeVersion = &v
	}
	if st.HasLinuxMaps {
		n := st.LinuxMapCount
		doc.LinuxMemoryMapCount = &n
	}
	return doc
}

// formatter prints addresses at the dump's pointer width, as rust-minidump
// does: 0x%08x for 32-bit CPUs, 0x%016x otherwise.
type formatter struct {
	bits32 bool
	mods   rustModules // the loaded modules as rust-minidump looks them up
}

func (f formatter) addr(v uint64) string {
	var buf [18]byte
	digits := 16
	if f.bits32 {
		digits = 8
	}
	return string(appendHex(buf[:0], v, digits))
}

func (f formatter) addrp(v uint64) *string {
	s := f.addr(v)
	return &s
}

// strp returns the text of an optional field (names, files), cut to
// stackwalk.MaxPrintedName like every output's.
func strp(s string) *string {
	if s == "" {
		return nil
	}
	s = stackwalk.Cap(s)
	return &s
}

func (f formatter) crashInfo(st *stackwalk.ProcessState, r ids) crashInfo {
	var ci crashInfo
	if st.Assertion != "" {
		ci.Assertion = strp(st.Assertion)
	}
	if !st.Crashed {
		return ci
	}
	ci.CrashInconsistencies = []string{}
	code, flags, params := st.ExceptionCode, st.ExceptionFlags, st.CrashParameters
	addr := crashreason.RustAddress(r.platform, r.cpu, code, st.ExceptionAddress, params)
	typ := crashreason.RustType(r.platform, r.cpu, code, flags, params)
	ci.Type = &typ
	ci.Address = f.addrp(addr)
	return ci
}

func (f formatter) systemInfo(st *stackwalk.ProcessState, r ids) systemInfo {
	si := systemInfo{
		CPUArch:  st.System.CPU,
		CPUCount: st.System.CPUCount,
		CPUInfo:  strp(cmp.Or(st.System.RustCPUInfo, st.System.CPUInfo)),
		OS:       st.System.OS,
	}
	if n := rustCPUName(r.cpu); n != "" {
		si.CPUArch = n
	}
	if n := rustOSName(r.platform); n != "" {
		si.OS = n
	}
	var version, csd string
	switch {
	case st.System.RawValid:
		version = fmt.Sprintf("%d.%d.%d", st.System.MajorVersion, st.System.MinorVersion, st.System.BuildNumber)
		csd = st.System.CSDVersion
	case st.System.OSVersion != "":
		version, csd, _ = strings.Cut(st.System.OSVersion, " ")
	default:
		return si
	}
	v := osVersion(r.platform, version, csd)
	si.OSVer = &v
	return si
}

// osVersion formats the OS version as rust-minidump does: "major.minor.build"
// and the CSD version; for Linux dumps with no version numbers, the kernel
// release and build from the `uname -srvmo` text Breakpad stores.
func osVersion(platform minidump.PlatformID, version, csd string) string {
	build := strings.TrimSpace(csd)
	if platform == minidump.PlatformLinux && version == "0.0.0" {
		parts := strings.Split(csd, " ")
		if len(parts) > 1 && parts[1] != "0.0.0" {
			version = parts[1]
			rest := parts[2:]
			if len(rest) > 0 {
				last := rest[len(rest)-1]
				rest = rest[:len(rest)-1]
				if last == "Linux/GNU" && len(rest) > 0 {
					rest = rest[:len(rest)-1]
				}
			}
			return version + " " + strings.Join(rest, " ")
		}
	}
	if build == "" {
		return version
	}
	return version + " " + build
}

// nilDebugID is rust-minidump's debug_id of a module without one (a nil
// DebugId in Breakpad's form: 32 zeros and age 0).
const nilDebugID = "000000000000000000000000000000000"

// module converts a loaded module with rust-minidump's identifiers
// (stackwalk.Module.RustCodeID and RustDebugID): Breakpad's placeholder code
// identifier "id" (Mach-O, Linux modules with a PDB record) never appears.
func (f formatter) module(m *stackwalk.Module) module {
	debugID := m.RustDebugID
	if debugID == "" {
		debugID = nilDebugID
	}
	return module{
		BaseAddr:       f.addr(m.Base),
		CodeID:         strings.ToLower(m.RustCodeID),
		CorruptSymbols: m.CorruptSymbols,
		DebugFile:      symstore.BaseName(m.DebugFile),
		DebugID:        debugID,
		EndAddr:        f.addr(m.Base + m.Size),
		Filename:       symstore.BaseName(m.CodeFile),
		LoadedSymbols:  m.SymbolsLoaded,
		MissingSymbols: m.MissingSymbols,
		Version:        strp(m.Version),
	}
}

// thread converts a call stack. rust-minidump numbers physical frames only;
// the inline frames Breakpad lists before a physical frame become its inlines,
// innermost first.
func (f formatter) thread(cs *stackwalk.CallStack, st *stackwalk.ProcessState) thread {
	t := thread{ThreadID: cs.ThreadID, ThreadName: strp(cs.ThreadName)}
	// The frames are made as they are written (frameSlot.each): a walk
	// of 65,536 frames held them all twice, as StackFrames and as frames.
	t.Frames = frameSlot{cs: cs, st: st, f: f}
	for _, sf := range cs.Frames {
		if sf.Trust != unwind.TrustInline {
			t.FrameCount++
		}
	}
	return t
}

// frames calls yield with each physical frame of cs in turn. The frame
// and what its pointers point to are reused from one call to the next, so
// that writing a walk of 65,536 frames leaves little for the collector.
func (f formatter) frames(cs *stackwalk.CallStack, st *stackwalk.ProcessState, yield func(fr *frame) error) error {
	var sc struct {
		fr                           frame
		file, function, module       string
		functionOffset, moduleOffset string
		lineNo                       int
	}
	// text points into sc for an optional field (nil when empty), cut as
	// strp cuts it.
	text := func(dst *string, s string) *string {
		if s == "" {
			return nil
		}
		*dst = stackwalk.Cap(s)
		return dst
	}
	n := 0
	var pending []inline
	for _, sf := range cs.Frames {
		if sf.Trust == unwind.TrustInline {
			pending = append(pending, inline{
				File:     strp(sf.SourceFile),
				Function: strp(sf.Function),
				Line:     line(sf),
			})
			continue
		}
		sc.fr = frame{
			Frame:   n,
			Offset:  f.addr(sf.Instruction),
			Trust:   trustName(sf.Trust),
			Inlines: pending,
		}
		fr := &sc.fr
		pending = nil
		// The module is the one rust-minidump finds; where Breakpad's
		// rules (the walk's) found another module, or none, the walk's
		// symbols are not that module's and are left out.
		mod := f.mods.at(sf.Instruction)
		if mod == sf.Module {
			fr.File, fr.Function = text(&sc.file, sf.SourceFile), text(&sc.function, sf.Function)
			if sf.SourceFile != "" {
				sc.lineNo = sf.SourceLine
				fr.Line = &sc.lineNo
			}
			if sf.Function != "" {
				sc.functionOffset = f.addr(sf.Instruction - sf.FunctionBase)
				fr.FunctionOffset = &sc.functionOffset
			}
		} else {
			fr.Inlines = nil
		}
		fr.MissingSymbols = fr.Function == nil
		if mod != nil {
			fr.Module = text(&sc.module, symstore.BaseName(mod.CodeFile))
			sc.moduleOffset = f.addr(sf.Instruction - mod.Base)
			fr.ModuleOffset = &sc.moduleOffset
		} else {
			fr.UnloadedModules = f.unloadedHits(sf.Instruction, st.UnloadedModules)
		}
		n++
		if err := yield(fr); err != nil {
			return err
		}
	}
	return nil
}

func line(sf *stackwalk.StackFrame) *int {
	if sf.SourceFile == "" {
		return nil
	}
	n := sf.SourceLine
	return &n
}

// unloadedHits lists, by module name, the offsets of addr into every
// unloaded module range that covers it (names and offsets sorted, offsets
// without repeats).
func (f formatter) unloadedHits(addr uint64, mods []*stackwalk.Module) []unloadedHits {
	byName := map[string][]uint64{}
	for _, m := range mods {
		if addr >= m.Base && addr-m.Base < m.Size {
			name := symstore.BaseName(m.CodeFile)
			byName[name] = append(byName[name], addr-m.Base)
		}
	}
	if len(byName) == 0 {
		return nil
	}
	names := make([]string, 0, len(byName))
	for n := range byName {
		names = append(names, n)
	}
	sort.Strings(names)
	out := make([]unloadedHits, 0, len(names))
	for _, n := range names {
		offs := byName[n]
		sort.Slice(offs, func(i, j int) bool { return offs[i] < offs[j] })
		h := unloadedHits{Module: n}
		for i, o := range offs {
			if i > 0 && o == offs[i-1] {
				continue
			}
			h.Offsets = append(h.Offsets, f.addr(o))
		}
		out = append(out, h)
	}
	return out
}

// trustName maps Breakpad's frame trust to rust-minidump's names. A frame
// recovered from the link register of a leaf function is what rust-minidump's
// frame-pointer fallback finds there, so it is reported as "frame_pointer".
func trustName(t unwind.Trust) string {
	switch t {
	case unwind.TrustScan, unwind.TrustCallSite:
		return "scan"
	case unwind.TrustCFIScan:
		return "cfi_scan"
	case unwind.TrustFP, unwind.TrustLeaf:
		return "frame_pointer"
	case unwind.TrustCFI, unwind.TrustPrologue:
		// Rules decoded from the callee's code are call frame
		// information made by the walker.
		return "cfi"
	case unwind.TrustPrewalked:
		return "prewalked"
	case unwind.TrustContext, unwind.TrustSignal:
		// rust-minidump has no trust for a frame the kernel's signal
		// frame restores: it is a saved context, as the first frame's.
		return "context"
	}
	return "none"
}

func firstPhysical(cs *stackwalk.CallStack) *stackwalk.StackFrame {
	for _, sf := range cs.Frames {
		if sf.Trust != unwind.TrustInline {
			return sf
		}
	}
	return nil
}

// registers returns a frame's registers under rust-minidump's names, at the
// frame's register width.
func (f formatter) registers(sf *stackwalk.StackFrame) registerMap {
	if sf == nil {
		return nil
	}
	regs := sf.Registers()
	if len(regs) == 0 {
		return nil
	}
	out := registerMap{}
	width := formatter{bits32: sf.WordSize() == 4}
	for _, r := range regs {
		name := r.Name
		if name == "efl" {
			name = "eflags"
		}
		out[name] = width.addr(r.Value)
	}
	return out
}

// rustCPUName is rust-minidump's name of a CPU architecture, "" for ones it
// does not know.
func rustCPUName(cpu minidump.ProcessorArchitecture) string {
	switch cpu {
	case minidump.ArchX86, minidump.ArchX86Win64:
		return "x86"
	case minidump.ArchAMD64:
		return "amd64"
	case minidump.ArchPPC:
		return "ppc"
	case minidump.ArchPPC64:
		return "ppc64"
	case minidump.ArchSPARC:
		return "sparc"
	case minidump.ArchARM:
		return "arm"
	case minidump.ArchARM64, minidump.ArchARM64Old:
		return "arm64"
	case minidump.ArchMIPS:
		return "mips"
	case minidump.ArchMIPS64:
		return "mips64"
	}
	return ""
}

// rustOSName is rust-minidump's long name of a platform. Unknown platforms
// print as "0x" followed by Rust's {:#08x} of the number (sic).
func rustOSName(platform minidump.PlatformID) string {
	switch platform {
	case minidump.PlatformWin32NT, minidump.PlatformWin32Windows:
		return "Windows NT"
	case minidump.PlatformMacOSX:
		return "Mac OS X"
	case minidump.PlatformIOS:
		return "iOS"
	case minidump.PlatformLinux:
		return "Linux"
	case minidump.PlatformSolaris:
		return "Solaris"
	case minidump.PlatformAndroid:
		return "Android"
	case minidump.PlatformPS3:
		return "PS3"
	case minidump.PlatformNaCl:
		return "NaCl"
	case unknownPlatform:
		return ""
	}
	digits := strconv.FormatUint(uint64(platform), 16)
	if len(digits) < 6 {
		digits = strings.Repeat("0", 6-len(digits)) + digits
	}
	return "0x0x" + digits
}

// platformFromName recovers the platform from Breakpad's short OS name, for
// a ProcessState given without its minidump.
func platformFromName(os string) minidump.PlatformID {
	if p, ok := minidump.PlatformNamed(os); ok {
		return p
	}
	return unknownPlatform
}

// cpuFromName recovers the architecture from Breakpad's CPU name.
func cpuFromName(cpu string) minidump.ProcessorArchitecture {
	return minidump.Architecture(arch.CPUNamed(cpu))
}

// parseJSON decodes Mozilla's soft-errors stream, to be re-encoded with
// sorted keys as rust-minidump embeds it; nil when it is not JSON.
func parseJSON(b []byte) any {
	d := json.NewDecoder(bytes.NewReader(b))
	d.UseNumber()
	var v any
	if err := d.Decode(&v); err != nil || d.More() {
		return nil
	}
	return v
}

// withProblems appends the reader's and the walk's problems to soft_errors
// in the shape of rust-minidump's entries (an object naming the kind of
// error): {"ProcessingProblem": "thread list: ..."}. The dump's own list
// (Mozilla's stream, an array) comes first; a stream that is not an array
// becomes the first element.
func withProblems(soft any, problems []error) any {
	var out []any
	switch v := soft.(type) {
	case nil:
	case []any:
		out = v
	default:
		out = []any{v}
	}
	for _, p := range problems {
		out = append(out, map[string]any{"ProcessingProblem": p.Error()})
	}
	return out
}
