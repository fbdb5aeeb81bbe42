package pe

import (
	"cmp"
	"debug/pe"
	"errors"
	"path/filepath"
	"slices"
	"strings"

	"github.com/gobreakpad/gobreakpad/dumpsyms"
	"github.com/gobreakpad/gobreakpad/dumpsyms/peexports"
	"github.com/gobreakpad/gobreakpad/pe/unwindinfo"
	"github.com/gobreakpad/gobreakpad/symfile"
)

// Options are dumpsyms.Options with the choices where Breakpad's and
// Mozilla's Windows dump_syms write the records read from a PE differently.
type Options struct {
	dumpsyms.Options

	// CFIStyle is the style of the x64 STACK CFI records read from the
	// PE's .pdata/.xdata beside a PDB (and from a PE alone in Mozilla's
	// form). The zero value, unwindinfo.StyleSymbolic, is what Mozilla's
	// dump_syms writes today (through Sentry symbolic): saved registers
	// included, negative offsets kept. unwindinfo.StyleMozilla is Mozilla's
	// older references (negative offsets clamped to 0),
	// unwindinfo.StyleBreakpad Breakpad's (the CFA only),
	// unwindinfo.StyleMozillaPE Mozilla's older PE-alone reader and
	// unwindinfo.StyleExact ours, the rules at every instruction (also for
	// a PE alone in Breakpad's form).
	CFIStyle unwindinfo.Style

	// PEOnly is the form of the records of a PE whose PDB is not found.
	PEOnly PEOnlyForm

	// FindPDB, when set, is asked for the PDB of a PE that is neither
	// beside the PE nor at the path its CodeView record names: pdbName is
	// the record's file name (its last path element, as the record gives
	// it: check it before making a path of it), debugID the PDB's
	// identifier (GUID and age, as MODULE records write it). It returns
	// the path of a PDB file, or an error saying why there is none (the
	// PE is then dumped alone, as PEOnly says). cmd/dump_syms asks
	// Microsoft symbol servers with it.
	FindPDB func(pdbName, debugID string) (string, error)
}

// PEOnlyForm selects the records written for a PE without its PDB.
type PEOnlyForm int

const (
	// PEOnlyBreakpad is Breakpad's Windows dump_syms (peexports.Dump):
	// MODULE, INFO CODE_ID, the exports as PUBLIC records and the x64
	// STACK CFI in Breakpad's style whatever CFIStyle says, except
	// unwindinfo.StyleExact (ours: no reference to keep).
	PEOnlyBreakpad PEOnlyForm = iota
	// PEOnlyMozilla is Mozilla's dump_syms: a FUNC record for every .pdata
	// function, named after the export at its address or "<unknown in
	// FILE>", the other exports as PUBLIC records, the "<unknown in FILE>"
	// marker past the last symbol, and STACK CFI in CFIStyle.
	PEOnlyMozilla
)

// peCFI reads the STACK CFI records of the PE at path (none for machines
// other than x64).
func peCFI(path string, opts Options) []dumpsyms.CFIEntry {
	f, err := pe.Open(path)
	if err != nil {
		warn(opts.Options, "%s: STACK CFI left out: %v", path, err)
		return nil
	}
	defer f.Close()
	cfi, err := peexports.CFI(f, opts.CFIStyle)
	if err != nil {
		warn(opts.Options, "%s: STACK CFI: %v", path, err)
	}
	return cfi
}

// dumpPEOnly writes the records of a PE whose PDB is not at hand.
func dumpPEOnly(path string, opts Options) (*dumpsyms.Model, error) {
	f, err := pe.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return dumpPEFile(f, filepath.Base(path), opts)
}

// dumpPEFile writes the records of an open PE alone; name is its file name.
func dumpPEFile(f *pe.File, name string, opts Options) (*dumpsyms.Model, error) {
	if opts.PEOnly != PEOnlyMozilla {
		style := unwindinfo.StyleBreakpad
		if opts.CFIStyle == unwindinfo.StyleExact {
			style = unwindinfo.StyleExact
		}
		return peexports.Dump(f, name, peexports.Options{Options: opts.Options, Style: style})
	}
	mod, cid, err := peexports.Module(f, name)
	if err != nil && !errors.Is(err, peexports.ErrNoCodeView) {
		return nil, err
	}
	if opts.Name != "" {
		mod.Name = opts.Name
	}
	s := &dumpsyms.Model{Module: mod, CodeID: cid, HeaderOnly: opts.HeaderOnly}
	if opts.HeaderOnly {
		return s, nil
	}
	exports, err := peexports.Exports(f)
	if err != nil {
		warn(opts.Options, "exports left out: %v", err)
	}
	var rfs []unwindinfo.RuntimeFunction
	if f.Machine == pe.IMAGE_FILE_MACHINE_AMD64 {
		t, err := unwindinfo.New(f)
		switch {
		case err == nil:
			rfs = t.Functions
		case !errors.Is(err, unwindinfo.ErrNoExceptionDirectory):
			warn(opts.Options, "exception directory: %v", err)
		}
	}
	mozillaPEOnly(s, rfs, exports, name, f.Machine == pe.IMAGE_FILE_MACHINE_I386)
	if !opts.NoCFI {
		if s.CFI, err = peexports.CFI(f, opts.CFIStyle); err != nil {
			warn(opts.Options, "STACK CFI: %v", err)
		}
	}
	return s, nil
}

// mozillaPEOnly composes Mozilla's FUNC and PUBLIC records of a PE alone,
// as its collector does: a placeholder FUNC for each RUNTIME_FUNCTION not
// inside the one before it (in address order) and not at an address taken;
// then the exports: one inside the symbol before it is left out, one at a
// placeholder names it (unless the name has an argument list) and gives
// its parameter size, one at a public marks it "m", others are PUBLIC
// records; then the "<unknown in FILE>" marker past the last symbol.
// Export names lose their C decoration only on i386 (x86): parseWinName.
func mozillaPEOnly(s *dumpsyms.Model, rfs []unwindinfo.RuntimeFunction, exports []symfile.Public, file string, x86 bool) {
	type sym struct {
		name      string
		public    bool
		multiple  bool
		addr      uint32
		size      uint32
		paramSize uint32
	}
	var syms []sym // sorted by address
	find := func(a uint32) (int, bool) {
		return slices.BinarySearchFunc(syms, a, func(x sym, v uint32) int { return cmp.Compare(x.addr, v) })
	}
	inside := func(a uint32) bool {
		i, _ := find(a)
		return i > 0 && uint64(a) < uint64(syms[i-1].addr)+uint64(syms[i-1].size)
	}
	placeholder := "<unknown in " + file + ">"
	for _, rf := range rfs {
		if rf.End < rf.Begin || inside(rf.Begin) {
			continue
		}
		i, found := find(rf.Begin)
		if found {
			continue
		}
		syms = slices.Insert(syms, i, sym{name: placeholder, addr: rf.Begin, size: rf.End - rf.Begin})
	}
	for _, e := range exports {
		a := uint32(e.Address)
		if inside(a) || skipPublic(e.Name) {
			continue
		}
		name, size, _ := parseWinName(e.Name, x86)
		name = demangle(fixName(name))
		i, found := find(a)
		if found {
			x := &syms[i]
			if x.public {
				x.multiple = true
			} else {
				if !strings.Contains(x.name, "(") {
					x.name = name
				}
				if size != 0 {
					x.paramSize = size
				}
			}
			continue
		}
		if name == "" {
			name = "<name omitted>"
		}
		syms = slices.Insert(syms, i, sym{name: name, public: true, addr: a, paramSize: size})
	}
	if n := len(syms); n > 0 {
		last := syms[n-1]
		at := uint64(last.addr) + uint64(last.size)
		if last.size == 0 {
			at++
		}
		if at <= 0xffffffff {
			if _, found := find(uint32(at)); !found {
				syms = append(syms, sym{name: placeholder, public: true, addr: uint32(at)})
			}
		}
	}
	for _, x := range syms {
		if x.public {
			s.Publics = append(s.Publics, symfile.Public{Address: uint64(x.addr), ParamSize: uint64(x.paramSize), Name: x.name, Multiple: x.multiple})
			continue
		}
		s.Funcs = append(s.Funcs, dumpsyms.Function{Name: x.name, ParamSize: uint64(x.paramSize), Ranges: []symfile.Range{{Address: uint64(x.addr), Size: uint64(x.size)}}})
	}
}
