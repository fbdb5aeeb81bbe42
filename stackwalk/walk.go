package stackwalk

import (
	"sort"

	"github.com/gobreakpad/gobreakpad/cfi"
	"github.com/gobreakpad/gobreakpad/internal/rangemap"
	"github.com/gobreakpad/gobreakpad/minidump"
	"github.com/gobreakpad/gobreakpad/unwind"
)

// Limits on a walk. Stack pointers must grow from frame to frame, so a walk
// always ends; these caps bound the work on hostile dumps.
const (
	// MaxFrames caps the frames of one thread (inline frames included).
	MaxFrames = 1 << 16
	// MaxTotalFrames caps the frames of all threads together; the dump's
	// own frame budget (budget.go) is usually much smaller.
	MaxTotalFrames = 1 << 18
	// MaxScannedFrames is how many frames may be found by scanning before
	// scanning is refused (Breakpad's max_frames_scanned_).
	MaxScannedFrames = 1 << 14
)

// moduleMap finds the module containing an address, as the range map of
// Breakpad's processor (BasicCodeModules) does: module ranges sorted by
// address, searched in O(log n). How overlapping modules are stored is
// merge: minidumps store their modules once in the dump's order
// (mergeTruncateLower for Linux and Android, mergeExclusive otherwise, or
// none at all when Breakpad refused the list), Android microdumps twice
// with mergeTruncateUpper.
type moduleMap struct {
	sorted []*Module     // the modules stored, in Breakpad's sequence order
	ranges []moduleRange // their ranges, as stored
	all    []*Module
	merge  mergeStrategy
}

func newModuleMap(mods []*Module, merge mergeStrategy) *moduleMap {
	mm := &moduleMap{all: mods, merge: merge}
	switch {
	case merge == mergeRefused:
	case len(mods) > maxShrinkModules:
		mm.ranges = exclusiveRanges(mods)
	case merge == mergeTruncateUpper:
		mm.ranges = shrinkModules(mods)
	case merge == mergeTruncateLower:
		mm.ranges = storeModules(mods, rangemap.TruncateLower)
	default:
		mm.ranges = storeModules(mods, rangemap.Exclusive)
	}
	mm.sorted = make([]*Module, len(mm.ranges))
	for i, r := range mm.ranges {
		mm.sorted[i] = r.Entry
	}
	return mm
}

// exclusiveRanges stores mods with the exclusive rule (the earliest of
// overlapping modules wins) in O(n log n), for lists too long for the
// range map's insertions. It is close to the range map, not exact: a module
// left out for overlapping one that is itself left out later (for an
// earlier module above it) stays out.
func exclusiveRanges(mods []*Module) []moduleRange {
	type entry struct {
		m     *Module
		order int
	}
	es := make([]entry, 0, len(mods))
	for i, m := range mods {
		if m.Size == 0 || m.Base+(m.Size-1) < m.Base {
			continue
		}
		es = append(es, entry{m, i})
	}
	// By base, and at one base the earliest first: the earliest is kept.
	sort.SliceStable(es, func(i, j int) bool { return es[i].m.Base < es[j].m.Base })
	// A module is stored when no earlier module of the dump overlaps it and
	// is stored. Going up by base, the stored modules that may overlap the
	// next are those on the stack whose end is above its base.
	var kept []entry
	for _, e := range es {
		drop := false
		for len(kept) > 0 && kept[len(kept)-1].m.Base+(kept[len(kept)-1].m.Size-1) >= e.m.Base {
			if kept[len(kept)-1].order < e.order {
				drop = true
				break
			}
			kept = kept[:len(kept)-1]
		}
		if !drop {
			kept = append(kept, e)
		}
	}
	rs := make([]moduleRange, len(kept))
	for i, e := range kept {
		rs[i] = moduleRange{Base: e.m.Base, High: e.m.Base + (e.m.Size - 1), Entry: e.m}
	}
	return rs
}

// at returns the module containing addr, or nil.
func (mm *moduleMap) at(addr uint64) *Module {
	r := mm.ranges
	i := sort.Search(len(r), func(i int) bool { return r[i].High >= addr })
	if i == len(r) || addr < r[i].Base {
		return nil
	}
	return r[i].Entry
}

// walkEnv is the unwind.Env of one thread's walk.
type walkEnv struct {
	stack   StackMemory
	syms    *symbolizer
	windows bool
	eval    *cfi.Evaluator
	entry   uint64                  // the program's entry point, or 0
	code    unwind.Memory           // the dump's whole memory, for code bytes; or nil
	calls   bool                    // scans check call sites (Options.CheckCallSites)
	maps    memMap                  // the dump's address space map, or nil
	tails   bool                    // show tail call frames (tailCallFrame)
	exc     *unwind.ExceptionRecord // the exception's record, when the walk starts from its context
	// vsyscall is Linux i386's __kernel_vsyscall (AT_SYSINFO), or 0.
	vsyscall uint64
	// free holds frames the thread's walk no longer refers to, for the
	// unwinders to reuse (unwind.FrameRecycler).
	free []*unwind.Frame
}

var (
	_ unwind.Env           = (*walkEnv)(nil)
	_ unwind.FrameRecycler = (*walkEnv)(nil)
	_ unwind.VDSOEnv       = (*walkEnv)(nil)
	_ unwind.VsyscallEnv   = (*walkEnv)(nil)
)

// KernelVsyscall returns __kernel_vsyscall's address from the dump's
// auxiliary vector (unwind.VsyscallEnv).
func (e *walkEnv) KernelVsyscall() (uint64, bool) { return e.vsyscall, e.vsyscall != 0 }

// kernelVsyscall is the name the kernel gives the i386 vDSO's system call
// entry, the function AT_SYSINFO points at (vdso(7)).
const kernelVsyscall = "__kernel_vsyscall"

// nameVsyscall names frame sf __kernel_vsyscall when no symbols named it
// and its caller was found from that function's shape with sf's pc in it by
// the auxiliary vector (unwind.Frame.CalleeVsyscall): the name and start the
// kernel gives it (AT_SYSINFO), where a dump of Breakpad's client holds
// neither the vDSO's code nor its symbols.
func (e *walkEnv) nameVsyscall(sf *StackFrame, caller *unwind.Frame) {
	if caller == nil || !caller.CalleeVsyscall || sf.Function != "" || sf.Module == nil || e.vsyscall == 0 {
		return
	}
	sf.Function, sf.FunctionBase = kernelVsyscall, e.vsyscall
}

// RecycledFrame returns a frame the walk dropped, or nil
// (unwind.FrameRecycler).
func (e *walkEnv) RecycledFrame() *unwind.Frame {
	n := len(e.free)
	if n == 0 {
		return nil
	}
	f := e.free[n-1]
	e.free = e.free[:n-1]
	return f
}

// Executable answers from the dump's address space map (unwind.Env).
func (e *walkEnv) Executable(addr uint64) (exec, known bool) { return e.maps.executable(addr) }

// CheckCallSites says whether scans check call sites (unwind.Env).
func (e *walkEnv) CheckCallSites() bool { return e.calls }

// ReadMemory reads the thread's stack; the other methods answer from the
// symbolizer, implementing unwind.Env.
func (e *walkEnv) ReadMemory(addr uint64, n int) ([]byte, error) {
	if e.stack == nil {
		return nil, errNoStack
	}
	return e.stack.ReadMemory(addr, n)
}

// ReadCode reads code bytes from the dump's whole memory (unwind.Env).
func (e *walkEnv) ReadCode(addr uint64, n int) ([]byte, error) {
	if e.code == nil {
		return nil, errNoMemory
	}
	// Most frames' code is not in the dump: answer without making an error.
	if m, ok := e.code.(*minidump.Memory); ok {
		if _, ok := m.Region(addr); !ok {
			return nil, errNoMemory
		}
	}
	return e.code.ReadMemory(addr, n)
}

// FunctionName names the function covering addr (unwind.Env).
func (e *walkEnv) FunctionName(addr uint64) string { return e.syms.functionName(addr) }

func (e *walkEnv) CFI(addr uint64) *cfi.RuleSet { return e.syms.cfi(addr, e.eval) }

// HasCFI says whether addr's module has STACK CFI rules (unwind.Env).
func (e *walkEnv) HasCFI(addr uint64) bool { return e.syms.hasCFI(addr) }

func (e *walkEnv) Win(addr uint64) *unwind.WinInfo { return e.syms.win(addr) }

func (e *walkEnv) InModule(addr uint64) bool { return e.syms.mods.at(addr) != nil }

// InVDSO says whether addr lies in the vDSO module: linux-gate.so as
// Breakpad's client names it, linux-vdso.so.1 or [vdso] (unwind.VDSOEnv).
func (e *walkEnv) InVDSO(addr uint64) bool {
	m := e.syms.mods.at(addr)
	if m == nil {
		return false
	}
	switch baseName(m.CodeFile) {
	case "linux-gate.so", "linux-gate.so.1", "linux-vdso.so.1", "[vdso]":
		return true
	}
	return false
}

func (e *walkEnv) SeemsValid(addr uint64) bool { return e.syms.seemsValid(addr) }

// FunctionStart says whether a function starts at addr (unwind.Env).
func (e *walkEnv) FunctionStart(addr uint64) bool { return e.syms.functionStart(addr) }

// FunctionBase returns the start of the function covering addr
// (unwind.Env).
func (e *walkEnv) FunctionBase(addr uint64) (uint64, bool) { return e.syms.functionBase(addr) }

func (e *walkEnv) Windows() bool { return e.windows }

// Exception returns the dump's exception record when this walk starts from
// the exception's context, else nil (unwind.Env).
func (e *walkEnv) Exception() *unwind.ExceptionRecord { return e.exc }

func (e *walkEnv) Evaluator() *cfi.Evaluator { return e.eval }

type walkError string

func (e walkError) Error() string { return string(e) }

const (
	errNoStack  = walkError("no stack memory")
	errNoMemory = walkError("no memory list")
)

// entryPoint is the ELF entry point's symbol, the outermost frame of a
// program's main thread, for dumps whose auxiliary vector does not say
// where it is.
const entryPoint = "_start"

// entryWindow is how far past the entry point a frame without symbols is
// taken to be inside the entry function: every libc's _start calls
// __libc_start_main within its first 64 bytes.
const entryWindow = 64

// atEntry reports whether the frame is in the program's entry function:
// its symbol starts at entry, or (no symbol, frame not found by scanning)
// its instruction lies just past entry. A scanned frame without symbols
// keeps Breakpad's walk: its scans past _start are what Breakpad's outputs
// of dumps without a truth show.
func atEntry(f *StackFrame, entry uint64) bool {
	if entry == 0 {
		return false
	}
	if f.Function != "" {
		return f.FunctionBase == entry
	}
	switch f.Trust {
	case unwind.TrustScan, unwind.TrustCallSite, unwind.TrustCFIScan, unwind.TrustNone:
		return false
	}
	return f.Instruction >= entry && f.Instruction-entry < entryWindow
}

// threadWalk unwinds one thread from its raw CPU context, in steps: run
// continues the walk until it holds a number of frames, so that a walk cut
// by its share of the dump's frame budget can go on when other threads left
// some of theirs unused. Without stack memory only the context frame is
// produced. The walk ends at the program's entry point (env.entry) or at a
// frame whose CFI says it is the outermost (its return address is
// undefined).
type threadWalk struct {
	cpu unwind.CPU
	thr *frameThread // the frames' shared part and storage
	env *walkEnv

	out       []*StackFrame
	physical  []*unwind.Frame // the last two physical frames, innermost first
	next      *unwind.Frame   // the next physical frame to add; nil when done
	scanned   int
	pastEntry bool
	callee    *StackFrame // the last physical frame
	done      bool        // the walk ended by itself (not by a limit)
	err       error
}

func newThreadWalk(cpu unwind.CPU, layout *printLayout, raw any, env *walkEnv) *threadWalk {
	w := &threadWalk{cpu: cpu, thr: &frameThread{cpu: cpu, layout: layout}, env: env}
	first, err := cpu.ContextFrame(raw, env)
	if err != nil {
		w.err, w.done = err, true
		return w
	}
	w.physical = make([]*unwind.Frame, 1, 2)
	w.physical[0] = first
	w.next = first
	return w
}

// run walks on until the walk holds at least limit frames (inline frames
// included) or ends; at most MaxFrames in all.
func (w *threadWalk) run(limit int) {
	cpu, env := w.cpu, w.env
	limit = min(limit, MaxFrames)
	for !w.done && len(w.out) < limit {
		f := w.next
		if f == nil {
			w.done = true
			break
		}
		sf := w.thr.newFrame()
		sf.Trust = f.Trust
		w.thr.setContext(sf, &f.Context)
		sf.Instruction = f.Regs[cpu.PC()]
		if f.Trust != unwind.TrustContext && !f.Interrupted && !f.Trampoline {
			sf.Instruction -= cpu.InstructionAdjust()
		}
		inlines := env.syms.fill(sf, true)
		if tc := tailCallFrame(w.thr, env, f, w.callee); tc != nil {
			w.out = append(w.out, tc)
		}
		w.callee = sf
		if f.Trampoline {
			w.callee = nil
		}
		if sf.Function == entryPoint {
			w.pastEntry = true
		}
		switch f.Trust {
		case unwind.TrustNone, unwind.TrustScan, unwind.TrustCallSite, unwind.TrustCFIScan:
			w.scanned++
		}
		w.out = append(w.out, inlines...)
		w.out = append(w.out, sf)
		// Nothing calls the program's entry point: the walk ends there.
		if env.stack == nil || atEntry(sf, env.entry) {
			w.next, w.done = nil, true
			break
		}
		// Without the entry point's address, what a scan finds beyond
		// _start is stale data (Breakpad reports it; gdb does not).
		next := cpu.Caller(env, w.physical, w.scanned < MaxScannedFrames && !w.pastEntry)
		env.nameVsyscall(sf, next)
		switch {
		case next == nil:
		case len(w.physical) < 2:
			w.physical = append(w.physical, next)
		default:
			// Only the last two physical frames are kept: the unwinders
			// look at no more (the callee's, and on x86, arm64 and mips
			// its callee's), and a walk of 65,536 frames kept them all.
			// The one dropped is given back to the unwinders (when
			// nothing else holds it: an unwinder returns new frames).
			if old := w.physical[0]; old != w.physical[1] && old != next && len(env.free) < 4 {
				env.free = append(env.free, old)
			}
			w.physical[0], w.physical[1] = w.physical[1], next
		}
		w.next = next
		if next == nil {
			w.done = true
		}
	}
	if w.done {
		w.physical = nil
	}
}

// cut reports whether the walk was stopped by a limit rather than ending.
func (w *threadWalk) cut() bool { return !w.done && w.err == nil }

// tailCallFrame returns the frame of a function that left by a tail call
// between callee and the caller frame f, or nil: the direct call before
// f's return address (decoded from the dump's code bytes) called a
// function that symbols say starts there and that is not callee's, so
// that function jumped to callee's (or to another that did). Only callers
// found by CFI or frame pointers are asked: their return addresses are
// not stale values. The frame has no registers; its instruction is the
// called function's start.
func tailCallFrame(thr *frameThread, env *walkEnv, f *unwind.Frame, callee *StackFrame) *StackFrame {
	cpu := thr.cpu
	if !env.tails || callee == nil || callee.Function == "" || f.Interrupted || f.Trampoline {
		return nil
	}
	if f.Trust != unwind.TrustCFI && f.Trust != unwind.TrustFP {
		return nil
	}
	target, ok := cpu.CallTarget(env, f.Regs[cpu.PC()])
	if !ok || target == callee.FunctionBase || !env.syms.functionStart(target) {
		return nil
	}
	tc := StackFrame{Trust: unwind.TrustTailCall, Instruction: target, pc: target, thr: thr}
	env.syms.fill(&tc, false)
	if tc.Function == "" || tc.SourceLine == 0 {
		return nil
	}
	return thr.add(tc)
}
