// Package unwind holds what the per-CPU stack unwinders (unwind/x86,
// unwind/amd64, unwind/arm, unwind/arm64, unwind/mips) share: a frame's
// register state with its validity bits, how a frame was found (Trust), CPU (what each unwinder provides),
// and Env, the one interface through which an unwinder asks the walk around
// it all it needs: stack memory and code bytes, STACK CFI and STACK WIN
// rules, modules and functions (is a value a plausible return address,
// where does a function start), the dump's memory map and whether scans
// check call sites. It knows only unwinding: how frames are printed is the
// outputs' concern (package stackwalk).
//
// The unwinders follow Breakpad's processor (stackwalker_*.cc): each caller
// frame is found by trying, in order, call frame information, (x86) Windows
// frame data, the frame-pointer chain, and stack scanning.
package unwind

import (
	"encoding/binary"
	"fmt"

	"github.com/gobreakpad/gobreakpad/cfi"
)

// MaxRegs is the number of register slots in a Context: enough for arm64's
// x0-x28, fp, lr, sp and pc.
const MaxRegs = 33

// Context is the register state of one frame. Each CPU package defines which
// slot holds which register; slot order is the order Breakpad prints them.
type Context struct {
	Regs  [MaxRegs]uint64
	Valid uint64 // bit i set: Regs[i] is known
}

// Has reports whether register i is known.
func (c *Context) Has(i int) bool { return c.Valid&(1<<uint(i)) != 0 }

// Set stores v in register i and marks it known.
func (c *Context) Set(i int, v uint64) {
	c.Regs[i] = v
	c.Valid |= 1 << uint(i)
}

// Trust says how a frame was found; its String is Breakpad's "Found by:" text.
type Trust uint8

// The ways a frame can be found, from least to most trusted, as Breakpad's
// StackFrame::FrameTrust. TrustInline marks a frame made from an INLINE record.
const (
	TrustNone Trust = iota
	TrustScan
	TrustCFIScan
	TrustFP
	TrustCFI
	TrustPrewalked
	TrustContext
	TrustInline
	TrustLeaf
	// TrustSignal marks a frame whose registers the kernel saved in a
	// signal frame, read when unwinding through a signal trampoline.
	TrustSignal
	// TrustCallSite marks a frame found by scanning whose return address
	// follows a call instruction decoded from the dump's code bytes.
	TrustCallSite
	// TrustTailCall marks a frame with no registers of its own: the
	// function its caller's call instruction (decoded from the dump's code
	// bytes) called, which is not the function of the frame below it,
	// so it left by a tail call (a jump) that gdb shows as a tail call
	// frame.
	TrustTailCall
	// TrustPrologue marks a frame found from its callee's code: decoded
	// from the callee's start up to its pc, it shows how far the stack
	// pointer moved and where the return address is (unwind.FrameState),
	// when the callee has no CFI and no frame pointer of its own yet.
	TrustPrologue
)

// String returns the Breakpad description printed after "Found by:".
func (t Trust) String() string {
	switch t {
	case TrustContext:
		return "given as instruction pointer in context"
	case TrustPrewalked:
		return "recovered by external stack walker"
	case TrustCFI:
		return "call frame info"
	case TrustCFIScan:
		return "call frame info with scanning"
	case TrustFP:
		return "previous frame's frame pointer"
	case TrustScan:
		return "stack scanning"
	case TrustInline:
		return "inline record"
	case TrustLeaf:
		return "simulating a return from leaf function"
	case TrustSignal:
		return "signal frame"
	case TrustCallSite:
		return "stack scanning, after a call instruction"
	case TrustTailCall:
		return "target of the caller's call, left by a tail call"
	case TrustPrologue:
		return "the callee's code decoded up to its pc"
	}
	return "unknown"
}

// Frame is one physical frame as an unwinder sees it.
type Frame struct {
	Context
	Trust Trust
	// Win is the STACK WIN record that was used to find this frame's caller
	// (x86 only); the next unwind step needs its parameter size.
	Win *WinInfo
	// Interrupted marks a frame restored from a signal frame: its pc is the
	// interrupted instruction itself, not a return address, so rules and
	// symbols are looked up at the pc (as for the context frame).
	Interrupted bool
	// Trampoline marks a frame at the entry of a signal trampoline (the
	// handler returned to it): its pc starts the trampoline, so its symbol
	// is looked up at the pc, and its caller is the interrupted frame.
	Trampoline bool
	// Signal is the layout of the signal frame at this frame's stack
	// pointer when it was recognised from the stack (the trampoline's
	// code not being in the dump; StackSignalFrame); nil otherwise.
	Signal *SignalFrame
	// Handler marks a signal handler's frame found by frame pointer whose
	// stack pointer (its CFA, as the frame-pointer step gives it) holds
	// the signal frame (Signal): the handler's caller is the trampoline, at
	// the handler's return address with the same stack pointer. Its own pc
	// is a return address like any caller's.
	Handler bool
	// CalleeVsyscall marks a caller found from the shape of Linux i386's
	// __kernel_vsyscall (unwind/x86) whose callee, the frame it was
	// unwound from, stopped in that function by the auxiliary vector
	// (VsyscallEnv: its pc lies in the function's first bytes after
	// AT_SYSINFO): a walker may name the callee __kernel_vsyscall where no
	// symbols name it.
	CalleeVsyscall bool
}

// FrameRecycler is what an Env may also implement to give the unwinders
// frames to reuse: a walk that keeps only its last two physical frames
// gives back the older ones, so that a walk of thousands of frames does not
// leave one dead Frame (300 bytes) behind per step for the collector.
type FrameRecycler interface {
	// RecycledFrame returns a frame nothing refers to any more, or nil.
	RecycledFrame() *Frame
}

// NewFrame returns a zeroed frame for a caller the unwinder found: one
// env gives back (FrameRecycler), else a new one.
func NewFrame(env Env) *Frame {
	if r, ok := env.(FrameRecycler); ok {
		if f := r.RecycledFrame(); f != nil {
			*f = Frame{}
			return f
		}
	}
	return &Frame{}
}

// NewCaller returns a frame for a caller the unwinder found (NewFrame),
// starting from last's registers, found as trust says.
func NewCaller(env Env, last *Frame, trust Trust) *Frame {
	f := NewFrame(env)
	f.Context = last.Context
	f.Trust = trust
	return f
}

// Memory is the stack memory an unwinder reads: the same one-method
// interface the minidump reader and the CFI evaluator use.
type Memory interface {
	ReadMemory(addr uint64, n int) ([]byte, error)
}

// WinInfo is a STACK WIN record (or a function's parameter size alone) as
// the x86 unwinder uses it.
type WinInfo struct {
	Type                 int // 0 FPO, 4 FrameData
	ValidAll             bool
	ParameterSize        uint32
	SavedRegisterSize    uint32
	LocalSize            uint32
	AllocatesBasePointer bool
	ProgramString        string
}

// STACK WIN types the x86 unwinder distinguishes.
const (
	WinFPO       = 0
	WinFrameData = 4
)

// Env is what an unwinder asks of the walk around it: every question an
// unwinder may ask, in one interface, so that its needs are seen in one
// type. The walk's environment (package stackwalk) answers them from the
// dump and the symbols; unwind/unwindtest's answers them from a hand-built
// stack. An environment that lacks what a question needs (no code bytes,
// no memory map, no symbols) gives the "not available" answer each method
// documents, and the unwinders then do what Breakpad's do without it.
type Env interface {
	// Memory is the thread's stack: every value an unwinder reads (saved
	// registers, return addresses, frame records) comes from it alone, as
	// in Breakpad.
	Memory
	// ReadCode returns n bytes of code at addr, read from the whole dump's
	// memory (not only the thread's stack). Unwinders read it only to
	// recognise code (signal trampolines, call instructions, prologues),
	// never values. Not available: an error (the bytes are not in the
	// dump, or there is no memory but the stack). Unwinders call it
	// through the ReadCode function, which also checks the length.
	ReadCode(addr uint64, n int) ([]byte, error)
	// CFI returns the STACK CFI rules in force at instruction, or nil. They
	// are compiled by Evaluator, so register indices are the CPU's slots.
	CFI(instruction uint64) *cfi.RuleSet
	// HasCFI reports whether the module holding addr has STACK CFI rules
	// at all (its symbols hold some): then an address of it that no rule
	// covers is code without unwind information (on Windows x64, a leaf
	// function, whose return address is at the stack pointer). Not
	// available: false.
	HasCFI(addr uint64) bool
	// Win returns the STACK WIN information covering instruction, or nil.
	Win(instruction uint64) *WinInfo
	// InModule reports whether addr lies inside a loaded module.
	InModule(addr uint64) bool
	// SeemsValid reports whether addr is a plausible return address: inside
	// a module and, when that module has symbols, inside a known function.
	SeemsValid(addr uint64) bool
	// FunctionName returns the name of the function whose symbol covers
	// addr (signal trampolines are recognised by it when their code is not
	// in the dump). Not available: "".
	FunctionName(addr uint64) string
	// FunctionBase returns the start of the function whose symbol (a FUNC
	// or PUBLIC record) covers addr, where decoding its prologue starts
	// (FunctionCode). Not available: false.
	FunctionBase(addr uint64) (uint64, bool)
	// FunctionStart reports whether a symbol (a FUNC or PUBLIC record)
	// says a function starts exactly at addr. With call sites checked
	// (ScanForCaller), a scan candidate there whose code bytes are not in
	// the dump is passed over: a function's start is what a stored
	// function pointer holds, and a return address only when the function
	// before ends with a call to a no-return function, which the code
	// bytes would show. Breakpad's scans take such candidates, and its
	// outputs of dumps without a truth contain them (a qsort callback's
	// address), so unchecked scans keep them. Not available: false.
	FunctionStart(addr uint64) bool
	// Executable says what the dump's map of the process's address space
	// (a Linux dump's /proc/PID/maps, a memory info list) says of addr:
	// a map without addr says it is not executable (nothing is mapped
	// there). Not available (the dump has no map): known false.
	Executable(addr uint64) (exec, known bool)
	// CheckCallSites reports whether scans apply their call-site check
	// (ScanForCaller). The walk turns it off by default, because
	// Breakpad's scan is the reference for dumps without a known true
	// chain (stackwalk.Options.CheckCallSites); unwindtest's Env checks.
	CheckCallSites() bool
	// Windows reports whether the dump comes from Windows.
	Windows() bool
	// Exception returns the dump's exception record when the walk starts
	// from the exception's context (the thread that raised it, walked
	// from the context the exception stream gives): the record tells how
	// the context frame came to be, and its in-stack copies are no return
	// addresses (unwind/amd64's Windows scan). Not available (another
	// thread, no exception stream, the thread list's context used): nil.
	Exception() *ExceptionRecord
	// Evaluator compiles rule text for this CPU: its register names are
	// the CPU's CFINames.
	Evaluator() *cfi.Evaluator
}

// Read32 reads a little-endian 32-bit word.
func Read32(m Memory, addr uint64) (uint32, bool) {
	if m == nil {
		return 0, false
	}
	b, err := m.ReadMemory(addr, 4)
	if err != nil || len(b) < 4 {
		return 0, false
	}
	return binary.LittleEndian.Uint32(b), true
}

// Read64 reads a little-endian 64-bit word.
func Read64(m Memory, addr uint64) (uint64, bool) {
	if m == nil {
		return 0, false
	}
	b, err := m.ReadMemory(addr, 8)
	if err != nil || len(b) < 8 {
		return 0, false
	}
	return binary.LittleEndian.Uint64(b), true
}

// ReadWord reads a word of size 4 or 8.
func ReadWord(m Memory, addr uint64, size int) (uint64, bool) {
	if size == 4 {
		v, ok := Read32(m, addr)
		return uint64(v), ok
	}
	return Read64(m, addr)
}

// RASearchWords is how many words past the start a return-address scan
// looks (Breakpad's kRASearchWords); the scan from the context frame looks
// four times as far.
const RASearchWords = 40

// ScanForReturnAddress looks for a plausible return address in the words
// from start up to and including start + words*size. It returns the
// address where it was found and its value. It is Breakpad's scan:
// ScanForCaller with no call-site check.
func ScanForReturnAddress(env Env, start uint64, words, size int) (loc, ip uint64, ok bool) {
	loc, ip, _, ok = ScanForCaller(env, start, words, size, nil)
	return loc, ip, ok
}

// CallSite is what the code before a candidate return address says.
type CallSite uint8

// The answers of a CallCheck.
const (
	// CallUnknown: the code bytes are not in the dump.
	CallUnknown CallSite = iota
	// CallBefore: the instruction ending at the address is a call.
	CallBefore
	// NoCallBefore: the bytes are there and no call ends at the address.
	NoCallBefore
)

// CallCheck decodes the code before ra, a candidate return address (read
// with ReadCode), and says whether a call instruction ends there.
type CallCheck func(env Env, ra uint64) CallSite

// ScanForCaller is Breakpad's scan (see ScanForReturnAddress) that also
// asks check, when not nil, about each candidate: a candidate whose code is
// in the dump without a call instruction before it is a stale value or a
// stored code pointer, not a return address, and is passed over. It
// returns the trust the candidate earns: TrustCallSite when a call was
// decoded before it, else TrustScan (no code bytes: Breakpad's evidence
// alone). With check, a candidate the dump's memory map (Env.Executable) says
// is not executable is passed over too, and the scan then looks as far
// past it as a new scan from it would.
func ScanForCaller(env Env, start uint64, words, size int, check CallCheck) (loc, ip uint64, trust Trust, ok bool) {
	if !env.CheckCallSites() {
		check = nil
	}
	// The scan stops at the last word of the address space (32-bit for
	// 4-byte words) rather than wrapping around: Breakpad's bound wraps
	// for 64-bit words, where it then scans nothing (docs/stackwalk.md).
	top := ^uint64(0) - uint64(size) + 1
	if size == 4 {
		top = 1<<32 - 4
	}
	end := start + uint64(words*size)
	if end < start || end > top {
		end = top
	}
	for l := start; l <= end; l += uint64(size) {
		v, ok := ReadWord(env, l, size)
		if !ok {
			break
		}
		// A return address may point just past the end of a function that
		// calls a no-return function: test the address one byte back.
		if env.InModule(v-1) && env.SeemsValid(v-1) {
			// With call sites checked: a module's data (the dump's
			// map says it is not executable) holds no return address.
			// Breakpad takes such words, and its outputs of dumps
			// without a truth show them (docs/stackwalk.md).
			if check != nil {
				if exec, known := env.Executable(v - 1); known && !exec {
					// Breakpad's walk would take it and scan on from
					// there: look as far past it.
					if e := l + uint64((RASearchWords+1)*size); e > end && e > l {
						end = min(e, top)
					}
					goto next
				}
			}
			trust := TrustScan
			if check != nil {
				switch check(env, v) {
				case CallBefore:
					// Even at a function's start: a call to a
					// no-return function ending the function before.
					trust = TrustCallSite
				case NoCallBefore:
					goto next
				default:
					// No code bytes: a candidate at a function's
					// start is a stored function pointer.
					if env.FunctionStart(v) {
						goto next
					}
				}
			}
			return l, v, trust, true
		}
	next:
		if l+uint64(size) < l {
			break
		}
	}
	return 0, 0, TrustNone, false
}

// RuleAddress is the address whose CFI or STACK WIN rules unwind frame
// last: its pc, less adjust (the CPU's InstructionAdjust) when the pc is a
// return address rather than the context's.
func RuleAddress(last *Frame, pc int, adjust uint64) uint64 {
	if last.Trust == TrustContext || last.Interrupted {
		return last.Regs[pc]
	}
	return last.Regs[pc] - adjust
}

// Innermost reports whether last's pc is an instruction being executed
// rather than a return address: the context frame, or a frame restored
// from a signal frame. Its callee-saved state is then whole, and its
// return address may still be in a register or on top of the stack.
func Innermost(last *Frame) bool { return last.Trust == TrustContext || last.Interrupted }

// wildPC reports whether a context frame's pc is outside all code: in the
// first page (a call through a null pointer), or outside the stack and
// either in memory the dump's map says is not executable (a module's data,
// an unmapped address) or, without a map, outside every module (a call
// through a wild pointer). A pc in the stack (code run from the stack) is
// left to Breakpad's strategies.
func wildPC(env Env, last *Frame, pc int) bool {
	if !Innermost(last) {
		return false
	}
	p := last.Regs[pc]
	if p < 1<<12 {
		return true
	}
	if _, err := env.ReadMemory(p, 1); err == nil {
		return false
	}
	if exec, known := env.Executable(p); known {
		return !exec
	}
	return !env.InModule(p)
}

// CallerOfNullCall goes beyond Breakpad for a context frame whose pc is
// outside all code (see wildPC), as after a call through a null or wild
// function pointer on x86 and amd64: the return address is then on top of
// the stack, and taking it keeps the calling function, which a
// frame-pointer chain would skip. It returns the caller found in the word
// at the stack pointer (registers pc, sp and fp marked known; words of
// size bytes), or nil.
func CallerOfNullCall(env Env, last *Frame, pc, sp, fp, size int) *Frame {
	if !wildPC(env, last, pc) {
		return nil
	}
	f := CallerByScan(env, last, pc, sp, 0, size, TrustScan)
	if f == nil {
		return nil
	}
	if size == 4 {
		f.Regs[pc], f.Regs[sp] = f.Regs[pc]&0xffffffff, f.Regs[sp]&0xffffffff
	}
	f.Valid |= 1 << uint(fp)
	return f
}

// CallerOfWildLeaf is CallerOfNullCall for CPUs with a link register (arm,
// arm64): the caller's pc is the context's lr (register lr) when that is a
// plausible return address, with the stack pointer unchanged (nothing ran
// in the callee) and the keep registers (callee-saved, stack and frame
// pointers) carried over. Trust is "simulating a return from leaf
// function".
func CallerOfWildLeaf(env Env, last *Frame, pc, lr int, keep uint64) *Frame {
	if !wildPC(env, last, pc) || !last.Has(lr) {
		return nil
	}
	ra := last.Regs[lr]
	if !env.InModule(ra-1) || !env.SeemsValid(ra-1) {
		return nil
	}
	f := NewCaller(env, last, TrustLeaf)
	f.Valid = last.Valid & keep
	f.Set(pc, ra)
	return f
}

// CallerByScan scans the stack of last from its stack pointer (register
// sp) for a return address, words words of size bytes (see
// ScanForReturnAddress), and returns the caller it gives: last's registers
// with pc the return address and sp just above it, only those two marked
// known; nil when the scan finds none.
func CallerByScan(env Env, last *Frame, pc, sp, words, size int, trust Trust) *Frame {
	return CallerByScanChecked(env, last, pc, sp, words, size, trust, nil)
}

// CallerByScanChecked is CallerByScan with ScanForCaller's call-site
// check: a candidate verified by it gets TrustCallSite instead of trust.
func CallerByScanChecked(env Env, last *Frame, pc, sp, words, size int, trust Trust, check CallCheck) *Frame {
	loc, ip, t, ok := ScanForCaller(env, last.Regs[sp], words, size, check)
	if !ok {
		return nil
	}
	if t == TrustCallSite {
		trust = t
	}
	f := NewCaller(env, last, trust)
	f.Regs[pc], f.Regs[sp] = ip, loc+uint64(size)
	f.Valid = 1<<uint(pc) | 1<<uint(sp)
	return f
}

// ScanWords returns how far a scan looks from a frame of trust t.
func ScanWords(t Trust) int {
	if t == TrustContext {
		return RASearchWords * 4
	}
	return RASearchWords
}

// TerminateWalk reports whether a proposed caller ends the walk: a return
// address below 4096, or a stack pointer that did not grow (equal is allowed
// on the first unwind, for leaf functions whose return address is in a
// register).
func TerminateWalk(callerIP, callerSP, calleeSP uint64, firstUnwind bool) bool {
	if callerIP < 1<<12 {
		return true
	}
	if firstUnwind {
		return callerSP < calleeSP
	}
	return callerSP <= calleeSP
}

// CPU is one architecture's unwinder: its register slots (as arch/<cpu>
// lays them out) and how it finds frames. How frames are printed is not
// here: that is the outputs' concern (package stackwalk's print layouts).
type CPU interface {
	// CFINames returns the names rule text uses for the slots, followed by
	// any pseudo-values the CPU's STACK WIN programs use.
	CFINames() []string
	// PC and SP return the slots of the instruction and stack pointers.
	PC() int
	SP() int
	// WordSize is 4 or 8.
	WordSize() int
	// InstructionAdjust is what to subtract from a return address to land
	// inside the call instruction.
	InstructionAdjust() uint64
	// ContextFrame returns the first frame from a thread's raw context.
	ContextFrame(raw any, env Env) (*Frame, error)
	// Caller finds the caller of frames[len(frames)-1], or nil when the walk
	// ends. frames holds the physical frames found so far, innermost first
	// (stackwalk passes the last two only: look at no more).
	Caller(env Env, frames []*Frame, scanAllowed bool) *Frame
	// CallTarget returns the target of the direct call instruction that
	// ends at ra, a return address, decoded from the dump's code bytes
	// (env's ReadCode), for the walk's tail call frames
	// (stackwalk.Options.TailCalls). Not available (a CPU whose calls are
	// not decoded, the code not in the dump, no direct call there): false.
	CallTarget(env Env, ra uint64) (target uint64, ok bool)
}

// ErrContextType is returned by ContextFrame for a context of another CPU.
type ErrContextType struct{ Got any }

// Error implements error.
func (e ErrContextType) Error() string { return fmt.Sprintf("unexpected context type %T", e.Got) }

// ContextAs returns raw, the context given to ContextFrame, as a *T; an
// ErrContextType when it is not a non-nil *T.
func ContextAs[T any](raw any) (*T, error) {
	c, ok := raw.(*T)
	if !ok || c == nil {
		return nil, ErrContextType{Got: raw}
	}
	return c, nil
}

// Outermost reports whether the CFI rules in force at a frame say it has
// no caller: its return address is undefined. The walk then ends, with no
// other strategy tried.
func Outermost(rules *cfi.RuleSet) bool { return rules != nil && rules.Outermost() }

// CallerByCFI evaluates rules over callee and returns the caller frame, as
// Breakpad's CFIWalker does: registers the rules recover, callee-saved
// registers (the calleeSaved mask) they do not mention copied from the
// callee when known, the stack pointer from .cfa and the program counter
// from .ra when not recovered by name. Register slots are rule-set indices.
// It returns nil when the rules fail.
func CallerByCFI(env Env, callee *Context, rules *cfi.RuleSet, nregs int, calleeSaved uint64, sp, pc int) *Frame {
	var in, out cfi.Registers
	copy(in.Values[:], callee.Regs[:nregs])
	in.Valid = callee.Valid & (1<<uint(nregs) - 1)
	cfa, ra, err := rules.FindCallerRegs(&in, env, &out)
	if err != nil {
		return nil
	}
	f := NewFrame(env)
	for i := 0; i < nregs; i++ {
		if v, ok := out.Get(i); ok {
			f.Set(i, v)
		} else if calleeSaved&(1<<uint(i)) != 0 && callee.Has(i) {
			f.Set(i, callee.Regs[i])
		}
	}
	if !f.Has(sp) {
		f.Set(sp, cfa)
	}
	if !f.Has(pc) {
		f.Set(pc, ra)
	}
	return f
}
