// Package symbols is the contract between symbol formats and the stack
// walker. A Source finds what it holds for a module (named as a minidump
// names it: code file and id, debug file and id) and returns it as Symbols:
// up to three kinds of information, each an interface a format adapter
// implements when its format carries that kind:
//
//   - Lookup: functions, source lines and inlined calls at an address
//     (every format: Breakpad .sym, GSYM, SymCache, symbfile, PDB);
//   - CFI: DWARF-style call frame rules as STACK CFI text (Breakpad .sym);
//   - Win: Windows frame data as STACK WIN records (Breakpad .sym, PDB).
//
// Unwind information is returned as rule text, not compiled rules: the
// walker compiles it for the CPU it walks and caches the result, so a format
// knows nothing of CPUs, registers or walks.
//
// Sources chain (Chain): for each kind, the first source that has the module
// and that kind wins, so lookups may come from one file and unwind rules from
// another, as Sentry's symbolicator pairs a SymCache with a CFI cache.
//
// The package is a leaf: it imports nothing of the project. Format adapters
// live beside it (symbols/breakpad for symfile).
package symbols

import (
	"errors"
)

// Module names a module the way minidumps and symbol stores do. Sources use
// whichever fields their layout needs.
type Module struct {
	// CodeFile is the module's path as loaded; CodeID its code identifier
	// (PE: timestamp and image size; ELF: the build ID in hex).
	CodeFile, CodeID string
	// DebugFile and DebugID name its symbol file as Breakpad's stores do
	// (PE: the PDB name and GUID+age; ELF: the file name and the build ID
	// as a GUID with age 0).
	DebugFile, DebugID string
}

// Symbol is what a symbol file says about one address. Addresses are
// module-relative.
type Symbol struct {
	// Function is the enclosing function's (or public symbol's) name and
	// FunctionBase its start.
	Function     string
	FunctionBase uint64
	// File, Line and LineBase come from the line record covering the
	// address; HasLine is false without one. With inlined calls, File and
	// Line are the call site of the outermost inlined call (and may be set
	// without a line record).
	File     string
	Line     int
	LineBase uint64
	HasLine  bool
	// Inlines are the inlined calls covering the address, innermost first.
	Inlines []InlineFrame
}

// InlineFrame is one inlined call as a frame: the inlined function, the start
// of the inlined range holding the address, and the source position within
// the inlined function (for the innermost, the line record's; for the
// others, the call site of the next inner call).
type InlineFrame struct {
	Function string
	Base     uint64
	File     string
	Line     int
}

// Lookuper answers symbol lookups in one module. Addresses are
// module-relative. It must be safe for concurrent use.
type Lookuper interface {
	// Lookup describes the code at rel. With inlines set it also returns the
	// inlined calls covering rel. It reports false when nothing covers rel.
	Lookup(rel uint64, inlines bool) (Symbol, bool)
}

// CFIRuler gives the DWARF-style call frame rules of one module as Breakpad
// STACK CFI text. It must be safe for concurrent use.
type CFIRuler interface {
	// CFIRules appends to dst the rule text in force at module-relative
	// address rel: the STACK CFI INIT record's rules, then those of each
	// delta record that applies, in order, and reports whether an INIT
	// record covers rel.
	CFIRules(rel uint64, dst []string) ([]string, bool)
}

// StackWin is a Windows frame-data record as Breakpad's STACK WIN line
// carries it, or (ParamSizeOnly) just a function's parameter size, which
// Breakpad's x86 walker uses when no record covers an address.
type StackWin struct {
	// Type is 0 for FPO data, 4 for FrameData.
	Type                 int
	ParamSizeOnly        bool
	ParameterSize        uint32
	SavedRegisterSize    uint32
	LocalSize            uint32
	AllocatesBasePointer bool
	// ProgramString is the postfix program of FrameData records; empty
	// for FPO records, which use AllocatesBasePointer instead.
	ProgramString string
}

// WinRuler gives the Windows frame data of one module. It must be safe for
// concurrent use.
type WinRuler interface {
	// StackWin returns the record covering module-relative address rel, or
	// failing that the parameter size of the function covering rel (with
	// ParamSizeOnly set); false if neither.
	StackWin(rel uint64) (StackWin, bool)
}

// Symbols is what one source holds for one module. A nil field is a kind of
// information the source does not have for it.
type Symbols struct {
	Lookup Lookuper
	CFI    CFIRuler
	Win    WinRuler
	// Corrupt is set when the file held records that did not parse (what
	// did parse is still used, as Breakpad does).
	Corrupt bool
}

// Empty reports whether s holds no kind of information.
func (s *Symbols) Empty() bool { return s == nil || (s.Lookup == nil && s.CFI == nil && s.Win == nil) }

// complete reports whether s holds every kind of information.
func (s *Symbols) complete() bool { return s.Lookup != nil && s.CFI != nil && s.Win != nil }

// Source finds modules' symbols. Load returns an error wrapping ErrNotFound
// when the source has nothing for the module, and another error when it has
// something that cannot be read. Each file is loaded once, however many
// modules and goroutines ask for it; Load must be safe for concurrent use.
type Source interface {
	Load(m Module) (*Symbols, error)
}

// ErrNotFound is what a Source's Load wraps when it has nothing for a module.
var ErrNotFound = errors.New("symbols: not found")
