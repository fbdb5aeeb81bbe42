package stackwalk

import (
	"errors"
	"fmt"
	"github.com/gobreakpad/gobreakpad/symbols"
	amd64unwind "github.com/gobreakpad/gobreakpad/unwind/amd64"
	armunwind "github.com/gobreakpad/gobreakpad/unwind/arm"
	arm64unwind "github.com/gobreakpad/gobreakpad/unwind/arm64"
	mipsunwind "github.com/gobreakpad/gobreakpad/unwind/mips"
	x86unwind "github.com/gobreakpad/gobreakpad/unwind/x86"
	"strings"
	"sync"

	"github.com/gobreakpad/gobreakpad/arch"
	"github.com/gobreakpad/gobreakpad/cfi"
	"github.com/gobreakpad/gobreakpad/minidump"
	"github.com/gobreakpad/gobreakpad/stackwalk/crashreason"
	"github.com/gobreakpad/gobreakpad/unwind"
)

// Options configures Process.
type Options struct {
	// Symbols finds modules' symbol files; nil walks without symbols (and
	// reports no module as missing symbols, as Breakpad does). It must be
	// safe for concurrent use when Workers > 1 (breakpad.Dirs and symbols.Chain are).
	Symbols symbols.Source
	// Workers is how many threads are walked at once (each thread's walk,
	// and the symbol files it loads, on its own goroutine); 0 or 1 walks
	// them one after another. The result does not depend on it.
	Workers int
	// ImageSymbols, when set, reads the symbols of a module whose whole
	// image the dump holds (the vDSO that minidump_capture and core2md
	// save) when Symbols has none for it; symbols/elfimage.Load does it
	// for ELF images.
	ImageSymbols func(image []byte, m symbols.Module) (*symbols.Symbols, error)
	// CheckCallSites makes stack scans pass over candidates whose code
	// bytes are in the dump without a call instruction before them, and
	// report the frames they verify as found "after a call instruction".
	// Off, scans are Breakpad's (the reference for dumps without a known
	// true chain: the bytes around a context's pc reject some of the
	// candidates Breakpad takes).
	CheckCallSites bool
	// TailCalls shows the functions that left by a tail call: where the
	// direct call before a caller's return address (decoded from the
	// dump's code bytes) called a function with line records that is not
	// the function of the frame below, a frame for the called function is
	// inserted (trust unwind.TrustTailCall, no registers), as gdb shows
	// its tail call frames. Off, the walk shows the frames Breakpad's
	// does.
	TailCalls bool
	// Prefetch, when above 0, starts loading the symbols of every module
	// the walk may reach (those holding a thread's program counter, a
	// value of its context or a word of its stack, most likely first) at
	// once, on up to Prefetch goroutines, as the threads' walks start
	// (symbols.Prefetch); a frame then waits for its module's load, or
	// loads it at once when its turn has not come. Loads not started when
	// the walk ends are dropped, and Walk waits for those running. It pays
	// with symbol servers (a round of requests instead of one per module in
	// turn); with local stores it would only add the reading of files the
	// walk does not need. The result does not depend on it.
	Prefetch int
}

// Process reads a minidump and walks every thread, as Breakpad's
// MinidumpProcessor does: Read, then Walk. Problems with parts of the dump
// are not fatal: what can be read is reported, the rest is left empty.
func Process(f *minidump.File, opt Options) (*ProcessState, error) {
	p, err := Read(f)
	if p != nil {
		p.Walk(opt)
	}
	return p, err
}

// Read reads everything the walk and the outputs need from a minidump,
// without walking: the system, modules, crash, the dump's Linux and Mozilla
// extras, and the threads to walk (chosen as Breakpad chooses them, with the
// context and stack memory of each). The returned state has no frames until
// Walk. It returns an error, with the state read so far, when nothing at all
// could be read.
func Read(f *minidump.File) (*ProcessState, error) {
	if f == nil {
		return nil, fmt.Errorf("process: no minidump")
	}
	p := &ProcessState{RequestingThread: -1, MainModule: -1}
	p.TimeDateStamp = f.Header.TimeDateStamp

	sys, sysErr := f.SystemInfo()
	if sysErr == nil {
		p.System = systemInfo(sys)
	}
	p.problem(sysErr, "no system information")

	// Modules.
	// Modules whose range is empty or ends past 2^64-1 are left out (as
	// rust-minidump does, for --json); Breakpad refuses the whole list for
	// one, and also when a module cannot be stored in its processor's range
	// map, whose strategy depends on the platform: it then lists no module
	// and finds no address in any. The modules stay in Modules.
	raw, skipped, modErr := f.ModuleListSkipping()
	p.problem(modErr, "no module read")
	for i := range raw {
		p.Modules = append(p.Modules, convertModule(&raw[i]))
	}
	if modErr == nil {
		if len(skipped) > 0 {
			p.moduleMerge = mergeRefused
			p.Problems = append(p.Problems, fmt.Errorf("module list: module %d: empty range or one past 2^64-1 (module list left out as Breakpad's processor does)", skipped[0]))
		} else if err := f.CheckModuleList(raw); err != nil {
			p.moduleMerge = mergeRefused
			p.problem(err, "module list left out as Breakpad's processor does")
		} else if sys != nil && (sys.PlatformID == minidump.PlatformLinux || sys.PlatformID == minidump.PlatformAndroid) {
			p.moduleMerge = mergeTruncateLower
		}
	}
	if len(p.Modules) > 0 {
		p.MainModule = 0
	}
	if present(f, minidump.UnloadedModuleListStream) {
		ul, err := f.UnloadedModuleList()
		p.problem(err, "no unloaded module read")
		for _, u := range ul { // none on error
			p.UnloadedModules = append(p.UnloadedModules, &Module{
				Base: u.BaseOfImage, Size: uint64(u.SizeOfImage), CodeFile: u.Name, Unloaded: true,
				RustCodeID: u.RustCodeIdentifier(), // no CodeID: no symbol lookup by it (Breakpad's has none)
			})
		}
	}

	exc, excErr := f.Exception()
	p.problem(excErr, "no crash information")
	if excErr == nil {
		p.Crashed = true
		r := &exc.ExceptionRecord
		p.ExceptionCode, p.ExceptionFlags = r.ExceptionCode, r.ExceptionFlags
		p.CrashParameters = append([]uint64(nil), r.Parameters()...)
		p.ExceptionAddress = r.ExceptionAddress
		if sys != nil {
			p.CrashReason, p.CrashAddress = crashreason.Reason(sys.PlatformID, sys.ProcessorArchitecture,
				r.ExceptionCode, r.ExceptionFlags, r.ExceptionAddress, r.Parameters())
		} else {
			p.CrashReason, p.CrashAddress = crashreason.Raw(r.ExceptionCode, r.ExceptionFlags), r.ExceptionAddress
		}
	}
	if present(f, minidump.AssertionInfoStream) {
		a, err := f.AssertionInfo()
		p.problem(err, "no assertion read")
		if err == nil {
			p.Assertion = assertionText(a)
		}
	}
	if present(f, minidump.MiscInfoStream) {
		mi, err := f.MiscInfo()
		p.problem(err, "no process times or id")
		if err == nil {
			if mi.Flags1&minidump.MiscInfoProcessTimes != 0 {
				p.ProcessCreateTime = mi.ProcessCreateTime
			}
			if mi.Flags1&minidump.MiscInfoProcessID != 0 {
				p.ProcessID, p.HasProcessID = mi.ProcessID, true
			}
		}
	}
	readExtras(f, p)
	if m, err := f.Memory(); err == nil {
		p.memory = m
	}
	p.maps = readMemMap(f)

	threads, thErr := f.ThreadList()
	p.problem(thErr, "no thread walked")
	if thErr == nil {
		p.DumpThreadIDs = make([]uint32, len(threads))
		for i := range threads {
			p.DumpThreadIDs[i] = threads[i].ThreadID
		}
	}
	if excErr != nil {
		exc = nil
	}
	chooseThreads(f, p, threads, exc)
	if sysErr != nil && thErr != nil && excErr != nil && (len(p.Modules) == 0 || p.moduleMerge == mergeRefused) {
		return p, fmt.Errorf("process: nothing readable in the dump: %w", sysErr)
	}
	return p, nil
}

// present reports whether the dump has a stream of type t. The accessors of
// optional streams are called only then: an absent stream is no problem,
// and asking for it would only make an error value to drop.
func present(f *minidump.File, t minidump.StreamType) bool { return f.StreamIndex(t) >= 0 }

// problem records err, a stream that could not be read though present, in
// p.Problems with what was left out.
func (p *ProcessState) problem(err error, dropped string) {
	if err != nil && !errors.Is(err, minidump.ErrNoStream) {
		p.Problems = append(p.Problems, fmt.Errorf("%w (%s)", err, dropped))
	}
}

// chooseThreads makes the call stacks to walk, as Breakpad's
// MinidumpProcessor does: every thread but the one that wrote the dump (named
// by the Breakpad info stream), each with its context (for the thread that
// crashed or asked for the dump, the exception's context) and stack memory.
func chooseThreads(f *minidump.File, p *ProcessState, threads []minidump.Thread, exc *minidump.Exception) {
	var names map[uint32]string
	var tn []minidump.ThreadName
	err := minidump.ErrNoStream
	if present(f, minidump.ThreadNamesStream) {
		tn, err = f.ThreadNames()
	}
	if err != nil {
		p.problem(err, "no thread name read")
	} else {
		names = map[uint32]string{}
		p.ThreadNames = map[uint32]string{}
		for _, n := range tn {
			names[n.ThreadID] = n.Name
			if n.NameErr == nil {
				p.ThreadNames[n.ThreadID] = n.Name // a later entry wins, as in rust-minidump
			}
		}
	}
	var dumpThread, reqThread uint32
	var hasDumpThread, hasReqThread bool
	var bi *minidump.BreakpadInfo
	err = minidump.ErrNoStream
	if present(f, minidump.BreakpadInfoStream) {
		bi, err = f.BreakpadInfo()
	}
	p.problem(err, "dump and requesting threads unknown")
	if err == nil {
		if bi.Validity&minidump.BreakpadInfoValidDumpThreadID != 0 {
			hasDumpThread, dumpThread = true, bi.DumpThreadID
		}
		if bi.Validity&minidump.BreakpadInfoValidRequestingThreadID != 0 {
			hasReqThread, reqThread = true, bi.RequestingThreadID
		}
	}
	if exc != nil {
		hasReqThread, reqThread = true, exc.ThreadID
	}
	for i := range threads {
		t := &threads[i]
		if hasDumpThread && t.ThreadID == dumpThread {
			continue
		}
		cs := &CallStack{ThreadID: t.ThreadID, ThreadName: names[t.ThreadID], context: t.Context}
		if hasReqThread && t.ThreadID == reqThread && p.RequestingThread < 0 {
			p.RequestingThread = len(p.Threads)
			if exc != nil && exc.Context != nil {
				cs.context = exc.Context
				cs.exception = exceptionRecord(&exc.ExceptionRecord)
			}
		}
		p.Threads = append(p.Threads, cs)
		stack, err := f.StackMemory(t)
		if err != nil && t.Stack.Memory.DataSize != 0 {
			// A thread whose stack the dump should hold but cannot give.
			p.Problems = append(p.Problems, err)
		}
		if err == nil && len(stack) > 0 {
			cs.Memory = &region{base: t.Stack.StartOfMemoryRange, data: stack}
		}
	}
}

// exceptionRecord is the dump's exception record as the unwinders see it
// (unwind.ExceptionRecord).
func exceptionRecord(r *minidump.ExceptionRecord) *unwind.ExceptionRecord {
	return &unwind.ExceptionRecord{
		Code: r.ExceptionCode, Flags: r.ExceptionFlags, Record: r.ExceptionRecord, Address: r.ExceptionAddress,
		NumberParameters: r.NumberParameters, Parameters: append([]uint64(nil), r.Parameters()...),
	}
}

// Walk unwinds and symbolizes every thread Read chose, filling each
// CallStack's Frames and the modules' symbol flags. Walking a state twice
// walks it anew.
func (p *ProcessState) Walk(opt Options) {
	mods := p.moduleMap()
	source := opt.Symbols
	if opt.Prefetch > 0 && source != nil {
		pf := symbols.NewPrefetch(source, p.prefetchOrder(mods), opt.Prefetch)
		// Every listed module loaded, also those the walk did not reach: a
		// walk's requests do not depend on timing (a second walk through
		// the cache the first filled sends none).
		defer pf.Wait()
		source = pf
	}
	syms := newSymbolizer(source, mods)
	syms.image, syms.memory = opt.ImageSymbols, p.memory
	if len(p.UnloadedModules) > 0 {
		// Breakpad keeps unloaded modules in a range map of their own,
		// with kTruncateLower whatever the platform (the lower of two
		// overlapping modules ends below the other's base, a module at a
		// stored one's base is dropped), and refuses the whole list for
		// more than minidump.MaxModules, or one empty or ending past
		// 2^64-1.
		merge := mergeTruncateLower
		if len(p.UnloadedModules) > minidump.MaxModules {
			merge = mergeRefused
		}
		for _, m := range p.UnloadedModules {
			if m.Size == 0 || m.Size > ^uint64(0)-m.Base {
				merge = mergeRefused // MinidumpUnloadedModule::Read fails the list
			}
		}
		syms.unloaded = newModuleMap(p.UnloadedModules, merge)
	}
	windows := p.System.OSShort == "windows"
	var walks []*threadWalk
	var owners []int // the index in p.Threads of each walk
	// The threads' CPUs share an evaluator; evaluatorFor's key is a string
	// made with fmt, so it is looked up once per CPU here, not per thread.
	type evalKey struct {
		size, n int
		first   *string // the CPU's rule name list (a package variable)
	}
	evals := map[evalKey]*cfi.Evaluator{}
	for i, cs := range p.Threads {
		cs.Frames = nil
		ctx := cs.context
		if ctx == nil {
			continue
		}
		cpu, rawCtx, layout := unwinderFor(ctx, mods, p.System.OSShort)
		if cpu == nil {
			continue
		}
		names := cpu.CFINames()
		k := evalKey{size: cpu.WordSize(), n: len(names)}
		if len(names) > 0 {
			k.first = &names[0]
		}
		ev, ok := evals[k]
		if !ok {
			ev = evaluatorFor(cpu)
			evals[k] = ev
		}
		env := &walkEnv{syms: syms, windows: windows, eval: ev, entry: p.EntryPoint, vsyscall: p.KernelVsyscall, code: p.memory, calls: opt.CheckCallSites, maps: p.maps, tails: opt.TailCalls, exc: cs.exception}
		if r, ok := cs.Memory.(*region); ok && !(ctx.CPU.PointerSize() == 4 && r.end() > 1<<32) {
			env.stack = r
		}
		// The context frame is read before the walk: cheap, and every
		// walk then holds its first frame.
		walks = append(walks, newThreadWalk(cpu, layout, rawCtx, env))
		owners = append(owners, i)
	}
	crashed := -1
	for j, i := range owners {
		if i == p.RequestingThread {
			crashed = j
		}
	}
	fb := frameBudget(walks)
	allot(walks, crashed, fb.total, opt.Workers)
	for j, w := range walks {
		if w.err == nil {
			p.Threads[owners[j]].Frames = w.out
		}
	}
	p.Problems = removeWalkProblems(p.Problems)
	if err := fb.report(walks, owners, p.Threads); err != nil {
		p.Problems = append(p.Problems, err)
	}
}

// runJobs runs the thread walks, on up to workers goroutines.
func runJobs(jobs []func(), workers int) {
	if workers <= 1 || len(jobs) <= 1 {
		for _, j := range jobs {
			j()
		}
		return
	}
	next := make(chan func())
	var wg sync.WaitGroup
	for range min(workers, len(jobs)) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for j := range next {
				j()
			}
		}()
	}
	for _, j := range jobs {
		next <- j
	}
	close(next)
	wg.Wait()
}

// unwinderFor picks the unwinder for a context's CPU, the raw context it
// starts from, and how the outputs print the CPU's frames.
func unwinderFor(c *minidump.Context, mods *moduleMap, os string) (unwind.CPU, any, *printLayout) {
	switch {
	case c.ARM != nil:
		return armunwind.Unwinder{IOS: os == "ios"}, c.ARM, layoutARM
	case c.AMD64 != nil:
		return amd64unwind.Unwinder{}, c.AMD64, layoutAMD64
	case c.X86 != nil:
		return x86unwind.Unwinder{}, c.X86, layoutX86
	case c.ARM64 != nil:
		// Pointer-authentication bits are masked off with a mask covering
		// the highest module, as Breakpad guesses the address range.
		var end uint64
		if n := len(mods.sorted); n > 0 {
			end = mods.sorted[n-1].End()
		}
		return arm64unwind.NewUnwinder(end), c.ARM64, layoutARM64
	case c.MIPS != nil:
		return mipsunwind.NewUnwinder(c.MIPS), c.MIPS, layoutMIPS
	}
	return nil, nil, nil
}

// region is a thread's stack memory.
type region struct {
	base uint64
	data []byte
}

func (r *region) end() uint64 { return r.base + uint64(len(r.data)) }

// Bounds returns the first address of the region and the one past its end.
func (r *region) Bounds() (lo, hi uint64) { return r.base, r.end() }

// ReadMemory returns n bytes at addr when they lie inside the region.
func (r *region) ReadMemory(addr uint64, n int) ([]byte, error) {
	if n < 0 || addr < r.base || addr-r.base > uint64(len(r.data)) || uint64(len(r.data))-(addr-r.base) < uint64(n) {
		return nil, fmt.Errorf("stack: %d bytes at %#x outside %#x-%#x", n, addr, r.base, r.end())
	}
	off := addr - r.base
	return r.data[off : off+uint64(n)], nil
}

var osNames = map[string]string{
	"windows": "Windows NT",
	"mac":     "Mac OS X",
	"ios":     "iOS",
	"linux":   "Linux",
	"solaris": "Solaris",
	"android": "Android",
	"ps3":     "PS3",
	"nacl":    "NaCl",
	"fuchsia": "Fuchsia",
}

// latin1 reads each byte of b as one character (Rust's char::from(u8)).
func latin1(b string) string {
	r := make([]rune, len(b))
	for i := range len(b) {
		r[i] = rune(b[i])
	}
	return string(r)
}

func systemInfo(s *minidump.SystemInfo) SystemInfo {
	si := SystemInfo{PlatformID: uint32(s.PlatformID), ProcessorArchitecture: uint32(s.ProcessorArchitecture),
		RawValid: true, MajorVersion: s.MajorVersion, MinorVersion: s.MinorVersion, BuildNumber: s.BuildNumber,
		CSDVersion: s.CSDVersion}
	si.OSShort = s.OSName()
	si.OS = osNames[si.OSShort]
	if si.OS == "" {
		si.OS = fmt.Sprintf("0x%08x", uint32(s.PlatformID))
	}
	si.OSVersion = fmt.Sprintf("%d.%d.%d", s.MajorVersion, s.MinorVersion, s.BuildNumber)
	if s.CSDVersionRva != 0 && s.CSDVersionErr == nil {
		si.OSVersion += " " + s.CSDVersion
	}
	cpu := s.CPU()
	si.CPU = cpu.String()
	if cpu == arch.Unknown {
		si.CPU = fmt.Sprintf("0x%04x", uint16(s.ProcessorArchitecture))
	}
	switch cpu {
	case arch.X86, arch.AMD64:
		vendor := s.CPUVendor()
		si.CPUVendor = strings.ReplaceAll(vendor, "\x00", "")
		if cpu == arch.X86 {
			if v := strings.TrimRight(vendor, "\x00"); v != "" {
				si.CPUInfo = v + " "
			}
		}
		fms := fmt.Sprintf("family %d model %d stepping %d", s.CPUFamily(), s.CPUModel(), s.CPUStepping())
		si.CPUInfo += fms
		if cpu == arch.X86 {
			si.RustCPUInfo = latin1(vendor) + " " + fms
		}
	}
	si.CPUCount = int(s.NumberOfProcessors)
	return si
}

func convertModule(m *minidump.Module) *Module {
	return &Module{
		Base:        m.BaseOfImage,
		Size:        uint64(m.SizeOfImage),
		CodeFile:    m.CodeFile(),
		CodeID:      m.CodeIdentifier(),
		DebugFile:   m.DebugFile(),
		DebugID:     m.DebugIdentifier(),
		RustCodeID:  m.RustCodeIdentifier(),
		RustDebugID: m.RustDebugIdentifier(),
		Version:     m.Version(),
	}
}

// assertionText renders an assertion stream as Breakpad does.
func assertionText(a *minidump.AssertionInfo) string {
	var b strings.Builder
	switch a.Type {
	case 1:
		b.WriteString("Invalid parameter passed to library function")
	case 2:
		b.WriteString("Pure virtual function called")
	default:
		fmt.Fprintf(&b, "Unknown assertion type 0x%08x", a.Type)
	}
	if e := minidump.UTF16String(a.Expression[:]); e != "" {
		b.WriteString(" " + e)
	}
	if fn := minidump.UTF16String(a.Function[:]); fn != "" {
		b.WriteString(" in function " + fn)
	}
	if file := minidump.UTF16String(a.File[:]); file != "" {
		b.WriteString(", in file " + file)
	}
	if a.Line != 0 {
		fmt.Fprintf(&b, " at line %d", a.Line)
	}
	return b.String()
}

// evaluators holds one rule compiler per CPU for the life of the process:
// compiled rules are cached by their text inside it, so repeated walks
// parse nothing (cfi.Evaluator is safe for concurrent use).
var evaluators sync.Map // address size and rule names of a CPU -> *cfi.Evaluator

func evaluatorFor(cpu unwind.CPU) *cfi.Evaluator {
	key := fmt.Sprint(cpu.WordSize(), cpu.CFINames())
	if ev, ok := evaluators.Load(key); ok {
		return ev.(*cfi.Evaluator)
	}
	ev, err := cfi.NewEvaluator(cpu.WordSize(), cpu.CFINames())
	if err != nil {
		// The CPUs' name lists are fixed and valid; a failure here would
		// leave the walk without CFI rather than stop it.
		return nil
	}
	actual, _ := evaluators.LoadOrStore(key, ev)
	return actual.(*cfi.Evaluator)
}
