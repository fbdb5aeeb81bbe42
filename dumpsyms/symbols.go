// Package dumpsyms holds what Breakpad's dump_syms makes, independent of the
// file format it was read from: the symbol records of one module
// ([Symbols]: MODULE, INFO, FILE, INLINE_ORIGIN, FUNC with their line and
// INLINE records, PUBLIC, STACK WIN, STACK CFI), the [Options] that select them, and
// their writer in Breakpad's order ([Model.Write]).
//
// The readers live in subpackages, one per object file format:
//
//   - dumpsyms/elf: ELF files and their DWARF (in the file, in separate debug
//     files, dwz and split DWARF), symbol tables and call frame information,
//     as Breakpad's Linux dump_syms reads them;
//
//   - dumpsyms/dwarfcfi: the DWARF call frame interpreter (.eh_frame and
//     .debug_frame), which is not tied to ELF (Mach-O carries the same
//     sections).
//
//   - dumpsyms/breakpad: Breakpad .sym files themselves, so that a symbol
//     file can be converted into the other formats the project writes.
//
// A PE/PDB reader (dumpsyms/pe) and a Mach-O one (dumpsyms/macho) fill the same
// [Model]. cmd/dump_syms picks the reader by the input's magic bytes.
package dumpsyms

import (
	"cmp"
	"fmt"
	"io"
	"slices"

	"github.com/gobreakpad/gobreakpad/symfile"
)

// Options select what a reader produces.
type Options struct {
	HeaderOnly bool     // only MODULE and INFO records (dump_syms -i)
	NoCFI      bool     // no STACK CFI records (-c)
	Inlines    bool     // INLINE_ORIGIN and INLINE records (-d)
	Multiple   bool     // mark FUNC and PUBLIC records folded onto one address with "m" (-m)
	Name       string   // module name instead of the file's base name (-n)
	OS         string   // operating system in the MODULE record (-o); "Linux" when empty
	DebugDirs  []string // directories holding separate debug files
	// MaxInflateRatio bounds a compressed section's decompressed size to
	// this many times its compressed size (at least 64 MiB); 0 means the
	// reader's default (32). Sections over it are skipped with a warning.
	MaxInflateRatio int64

	// Warn, when set, receives one line per problem met and per piece of
	// information left out, with the reason (dump_syms -v).
	Warn func(format string, args ...any)
	// Damage, when set, collects the parts of the input that failed to
	// parse, by kind (readers report them with Options.Damaged, which also
	// tells Warn): the program says them even without Warn, and may refuse
	// the input (dump_syms --strict). Filled by the PDB reader
	// (dumpsyms/pe).
	Damage *Damage
	// Progress, when set, is told the stage being worked on.
	Progress func(stage string)
}

// Function is a FUNC record with its line and INLINE records. A function
// with several address ranges is written as one FUNC record per range, each
// followed by all the function's INLINE records and the lines in that range,
// as Breakpad writes it.
type Function struct {
	Name      string
	Multiple  bool
	ParamSize uint64          // bytes of parameters (Windows x86); 0 elsewhere
	Ranges    []symfile.Range // in the debugging information's order
	Lines     []symfile.Line  // sorted by address
	Inlines   []symfile.Inline
}

// CFIEntry is one frame description entry as Breakpad writes it: a STACK CFI
// INIT record and the STACK CFI records changing its rules.
type CFIEntry struct {
	Init    symfile.CFIInit
	Changes []symfile.CFI
}

// Model is everything a reader found in one module, ready to write.
type Model struct {
	Module  symfile.Module
	CodeID  symfile.CodeID
	Infos   []symfile.Info // other INFO records, e.g. GENERATOR, in order
	Files   []symfile.File
	Origins []symfile.InlineOrigin
	Funcs   []Function // sorted by address
	Publics []symfile.Public
	Wins    []symfile.StackWin // STACK WIN records (Windows x86 frame data)
	CFI     []CFIEntry

	// LoadAddress is the address the records' addresses are relative to,
	// when the reader knows it (ELF: the lowest PT_LOAD address, as
	// Breakpad's dump_syms subtracts it); formats storing absolute
	// addresses, such as GSYM, add it back.
	LoadAddress uint64

	// HeaderOnly makes Write stop after the MODULE and INFO records
	// (Options.HeaderOnly).
	HeaderOnly bool

	// Lazy, when set, gives the functions and PUBLIC records instead of
	// Funcs and Publics (which are then empty): see [LazyRecords].
	Lazy LazyRecords
}

// Write writes the records in Breakpad's order: MODULE, INFO, FILE,
// INLINE_ORIGIN, FUNC (with their INLINE and line records), PUBLIC, STACK WIN,
// STACK CFI.
func (s *Model) Write(w io.Writer) error {
	sw := symfile.NewWriter(w)
	sw.WriteModule(s.Module)
	if s.CodeID != (symfile.CodeID{}) {
		sw.WriteCodeID(s.CodeID)
	}
	for _, in := range s.Infos {
		sw.WriteInfo(in)
	}
	if s.HeaderOnly {
		return sw.Flush()
	}
	for _, f := range s.Files {
		sw.WriteFile(f)
	}
	for _, o := range s.Origins {
		sw.WriteInlineOrigin(o)
	}
	var buf Function
	for i := range s.NumFuncs() {
		f := s.Func(i, &buf, true)
		li := 0
		for _, r := range f.Ranges {
			sw.WriteFunc(symfile.Func{Multiple: f.Multiple, Address: r.Address, Size: r.Size, ParamSize: f.ParamSize, Name: f.Name})
			for _, in := range f.Inlines {
				sw.WriteInline(in)
			}
			if len(f.Ranges) == 1 {
				// All of them, even lines outside the range, which a
				// symbol file read back may have (PDBs with OMAP).
				for _, l := range f.Lines {
					sw.WriteLine(l)
				}
				continue
			}
			// Lines are sorted; those of this range are a run of them.
			li, _ = slices.BinarySearchFunc(f.Lines, r.Address, func(l symfile.Line, a uint64) int { return cmp.Compare(l.Address, a) })
			for ; li < len(f.Lines) && f.Lines[li].Address-r.Address < r.Size; li++ {
				sw.WriteLine(f.Lines[li])
			}
		}
	}
	for i := range s.NumPublics() {
		sw.WritePublic(s.Public(i))
	}
	for _, w := range s.Wins {
		sw.WriteStackWin(w)
	}
	for _, c := range s.CFI {
		sw.WriteCFIInit(c.Init)
		for _, ch := range c.Changes {
			sw.WriteCFI(ch)
		}
	}
	return sw.Flush()
}

// LazyRecords gives the functions and PUBLIC records of a model one at a time,
// for models too large to hold decoded (dumpsyms/breakpad.Open: a mapped
// .sym file indexed by offsets). Writers reach functions and PUBLIC records
// through [Model.NumFuncs], [Model.Func], [Model.NumPublics] and
// [Model.Public], which use the LazyRecords when the model has one.
type LazyRecords interface {
	// NumFuncs returns the number of functions.
	NumFuncs() int
	// Func decodes function i (in the order of Model.Funcs: by address)
	// into f, reusing its slices; with body false only its name, flags,
	// parameter size and ranges, without lines and inlines.
	Func(i int, f *Function, body bool)
	// NumPublics returns the number of PUBLIC records.
	NumPublics() int
	// Public returns PUBLIC record i (in the order of Model.Publics).
	Public(i int) symfile.Public
}

// NumFuncs returns the number of functions: len(s.Funcs), or the Source's.
func (s *Model) NumFuncs() int {
	if s.Lazy != nil {
		return s.Lazy.NumFuncs()
	}
	return len(s.Funcs)
}

// Func returns function i: &s.Funcs[i], or, for a model with a Source, buf
// filled by the Source (body false: without lines and inlines). The result
// may be overwritten by the next call with the same buf.
func (s *Model) Func(i int, buf *Function, body bool) *Function {
	if s.Lazy != nil {
		s.Lazy.Func(i, buf, body)
		return buf
	}
	return &s.Funcs[i]
}

// NumPublics returns the number of PUBLIC records: len(s.Publics), or the
// Source's.
func (s *Model) NumPublics() int {
	if s.Lazy != nil {
		return s.Lazy.NumPublics()
	}
	return len(s.Publics)
}

// Public returns PUBLIC record i.
func (s *Model) Public(i int) symfile.Public {
	if s.Lazy != nil {
		return s.Lazy.Public(i)
	}
	return s.Publics[i]
}

// Rebase adds delta to every address of the model (functions and their
// ranges, lines and inlined calls, PUBLIC records, STACK CFI; STACK WIN
// holds 32-bit RVAs and is refused), as Breakpad's dump_syms -a writes
// addresses that keep the module's load address. LoadAddress is lowered by
// delta, so that LoadAddress + address stays the same. A model with Lazy
// records cannot be rebased.
func (s *Model) Rebase(delta uint64) error {
	if s.Lazy != nil {
		return fmt.Errorf("rebasing a model read lazily")
	}
	if len(s.Wins) > 0 && delta != 0 {
		return fmt.Errorf("rebasing STACK WIN records (32-bit RVAs)")
	}
	for i := range s.Funcs {
		f := &s.Funcs[i]
		for j := range f.Ranges {
			f.Ranges[j].Address += delta
		}
		for j := range f.Lines {
			f.Lines[j].Address += delta
		}
		for j := range f.Inlines {
			for k := range f.Inlines[j].Ranges {
				f.Inlines[j].Ranges[k].Address += delta
			}
		}
	}
	for i := range s.Publics {
		s.Publics[i].Address += delta
	}
	for i := range s.CFI {
		s.CFI[i].Init.Address += delta
		for j := range s.CFI[i].Changes {
			s.CFI[i].Changes[j].Address += delta
		}
	}
	s.LoadAddress -= delta
	return nil
}
