// Package stackwalk turns a minidump into stack traces, the job of
// Breakpad's minidump_stackwalk: for every thread it unwinds the stack from
// the thread's CPU context (the exception context for the crashing thread),
// symbolizes each frame from Breakpad symbol files, and reports the crash.
//
// # Use
//
//	f, err := minidump.Open("crash.dmp")
//	syms := breakpad.NewDirs("symbols", "more-symbols")
//	defer syms.Close()
//	state, err := stackwalk.Process(f, stackwalk.Options{Symbols: syms})
//	stackwalk.Print(os.Stdout, state, stackwalk.PrintOptions{})   // Breakpad's human report
//	stackwalk.PrintMachineReadable(os.Stdout, state)               // Breakpad's -m report
//
// The JSON report of rust-minidump is rendered from the same ProcessState by
// package stackwalk/jsonout; crash reasons come from stackwalk/crashreason.
//
// # Model
//
// ProcessState mirrors Breakpad's: SystemInfo, the crash (reason, address,
// raw exception record), the requesting thread, one CallStack per thread
// (the thread that wrote the dump, named by the Breakpad info stream, is left
// out as Breakpad does) and the modules. A StackFrame holds the address used
// for lookups (Instruction), its Module, the symbol information (Function,
// FunctionBase, SourceFile, SourceLine, SourceLineBase, all absolute
// addresses), how it was found (Trust, whose String is Breakpad's "Found by"
// text) and the registers recovered for it (Context(), rebuilt from the
// known ones a frame keeps packed; Registers lists them by name in
// Breakpad's order, as the CPU's print layout says).
// Frames made from INLINE records have Trust == unwind.TrustInline, no
// registers, and come before the physical frame they are inlined into.
// ReturnAddress is the address Breakpad prints for a frame; offsets are
// computed from it.
//
// Read keeps all the outputs need, beyond Breakpad's report too (the Linux
// and Mozilla extras of the JSON report, the Crashpad annotations the
// signature rules read): the outputs render the ProcessState alone.
//
// Module.MissingSymbols and Module.CorruptSymbols are set when a frame of a
// walked stack fell in the module and its symbol file was absent or had
// malformed lines; Breakpad's report marks every module sharing the debug
// file and identifier of a flagged one.
//
// # Walking
//
// The per-CPU unwinders live in unwind/x86, unwind/amd64, unwind/arm,
// unwind/arm64 and unwind/mips (shared pieces, and unwind.Env, the one
// interface through which they ask the walk for memory, code bytes, rules
// and symbols, in package unwind) and follow Breakpad's stackwalker_*.cc,
// heuristics included: STACK CFI first, then (x86) STACK WIN, the
// frame-pointer chain, and stack scanning for a return address that lies,
// one byte back, in a module and, when the module has symbols, in a known
// function. Unwinders
// read only the thread's own stack memory, as Breakpad does. A walk ends at
// a return address below 4096 or a stack pointer that does not grow (equal is
// allowed once, for leaf functions whose return address is in a register);
// MaxFrames, MaxScannedFrames and the dump's frame budget (at most
// MaxTotalFrames, and one frame per two words of distinct stack memory
// beyond MinFrameBudget; see budget.go) bound the work on hostile dumps. Each
// thread's share of the budget depends on the dump alone (the crashed thread
// first), so the result does not depend on Options.Workers; a thread cut
// short is said in ProcessState.Problems.
//
// Module lookups are binary searches over the modules sorted by base
// address; symbol files are memory-mapped and indexed once per process
// (symfile.Open), and STACK CFI rule texts are compiled once per distinct
// text (cfi.Evaluator).
package stackwalk
