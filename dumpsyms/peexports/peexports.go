// Package peexports reads what a PE image (.exe, .dll) tells a symbol file
// without its PDB: the MODULE record from the CodeView debug directory
// entry, INFO CODE_ID from the header, the exported functions as PUBLIC
// records and, for x64 images, STACK CFI from the exception directory
// (.pdata/.xdata, through pe/unwindinfo).
//
// [Dump] assembles them as Breakpad's Windows dump_syms writes a PE without
// a PDB. dumpsyms/pe, the PDB reader, calls [Module], [Exports] and [CFI]
// for the same records beside what it reads from the PDB.
package peexports

import (
	"debug/pe"
	"encoding/binary"
	"errors"
	"fmt"
	"sort"

	"github.com/gobreakpad/gobreakpad/demangle/msvc"
	"github.com/gobreakpad/gobreakpad/dumpsyms"
	"github.com/gobreakpad/gobreakpad/internal/peimage"
	"github.com/gobreakpad/gobreakpad/moduleid"
	"github.com/gobreakpad/gobreakpad/pe/unwindinfo"
	"github.com/gobreakpad/gobreakpad/symfile"
	"github.com/gobreakpad/gobreakpad/symstore"
)

// Arch returns the MODULE record's architecture of a PE machine type:
// "x86", "x86_64", "arm64", "arm", or "" for others.
func Arch(machine uint16) string {
	switch machine {
	case pe.IMAGE_FILE_MACHINE_I386:
		return "x86"
	case pe.IMAGE_FILE_MACHINE_AMD64:
		return "x86_64"
	case pe.IMAGE_FILE_MACHINE_ARM64:
		return "arm64"
	case pe.IMAGE_FILE_MACHINE_ARMNT, pe.IMAGE_FILE_MACHINE_ARM, pe.IMAGE_FILE_MACHINE_THUMB:
		return "arm"
	}
	return ""
}

// ErrNoCodeView is returned by [Module] for an image whose debug directory
// has no CodeView (RSDS or NB10) record.
var ErrNoCodeView = errors.New("no CodeView record in the debug directory")

// Module returns the image's MODULE record (OS "windows", the machine's
// architecture, the debug identifier and the base name of the PDB path of
// its CodeView record) and its INFO CODE_ID record (time stamp and image
// size, "%08X%X" as Breakpad's and Mozilla's dump_syms write it, with
// fileName's base name). The Module is filled as far as it can be when the
// error is ErrNoCodeView.
func Module(f *pe.File, fileName string) (symfile.Module, symfile.CodeID, error) {
	m := symfile.Module{OS: "windows", Arch: Arch(f.Machine)}
	var size uint32
	var dirs []pe.DataDirectory
	switch oh := f.OptionalHeader.(type) {
	case *pe.OptionalHeader32:
		size, dirs = oh.SizeOfImage, oh.DataDirectory[:min(int(oh.NumberOfRvaAndSizes), 16)]
	case *pe.OptionalHeader64:
		size, dirs = oh.SizeOfImage, oh.DataDirectory[:min(int(oh.NumberOfRvaAndSizes), 16)]
	default:
		return m, symfile.CodeID{}, errors.New("pe: no optional header")
	}
	cid := symfile.CodeID{ID: fmt.Sprintf("%08X%X", f.TimeDateStamp, size), File: symstore.BaseName(fileName)}
	if len(dirs) <= pe.IMAGE_DIRECTORY_ENTRY_DEBUG {
		return m, cid, ErrNoCodeView
	}
	dir := dirs[pe.IMAGE_DIRECTORY_ENTRY_DEBUG]
	if dir.VirtualAddress == 0 || dir.Size == 0 {
		return m, cid, ErrNoCodeView
	}
	img := peimage.New(f)
	b, err := img.Slice(dir.VirtualAddress, dir.Size)
	if err != nil {
		return m, cid, fmt.Errorf("debug directory: %w", err)
	}
	for i := 0; i+28 <= len(b); i += 28 {
		e := b[i:]
		if binary.LittleEndian.Uint32(e[12:]) != 2 { // IMAGE_DEBUG_TYPE_CODEVIEW
			continue
		}
		n, rva := binary.LittleEndian.Uint32(e[16:]), binary.LittleEndian.Uint32(e[20:])
		cv, err := img.Slice(rva, n)
		if err != nil {
			return m, cid, fmt.Errorf("debug directory: entry %d: %w", i/28, err)
		}
		if r, ok := moduleid.ParseRSDS(cv); ok {
			m.ID, m.Name = r.DebugID(), symstore.BaseName(r.PDBFileName)
			return m, cid, nil
		}
		if r, ok := moduleid.ParseNB10(cv); ok {
			m.ID, m.Name = r.DebugID(), symstore.BaseName(r.PDBFileName)
			return m, cid, nil
		}
	}
	return m, cid, ErrNoCodeView
}

// maxExports bounds the export directory's counts beyond what the section
// holding the tables justifies.
const maxExports = 1 << 20

// Exports returns the image's exported functions as PUBLIC records sorted
// by address: named exports only (forwarders, which name code in another
// module, are left out), their decorated names demangled in the style
// Mozilla's dump_syms writes (msvc.Mozilla), undecorated names as they are.
// Several names at one address give one record each, the later ones with
// Multiple set. An image without an export directory has none.
func Exports(f *pe.File) ([]symfile.Public, error) {
	var dirs []pe.DataDirectory
	switch oh := f.OptionalHeader.(type) {
	case *pe.OptionalHeader32:
		dirs = oh.DataDirectory[:min(int(oh.NumberOfRvaAndSizes), 16)]
	case *pe.OptionalHeader64:
		dirs = oh.DataDirectory[:min(int(oh.NumberOfRvaAndSizes), 16)]
	}
	if len(dirs) <= pe.IMAGE_DIRECTORY_ENTRY_EXPORT {
		return nil, nil
	}
	dir := dirs[pe.IMAGE_DIRECTORY_ENTRY_EXPORT]
	if dir.VirtualAddress == 0 || dir.Size == 0 {
		return nil, nil
	}
	img := peimage.New(f)
	d, err := img.Slice(dir.VirtualAddress, 40)
	if err != nil {
		return nil, fmt.Errorf("export directory: %w", err)
	}
	le := binary.LittleEndian
	nfuncs, nnames := le.Uint32(d[20:]), le.Uint32(d[24:])
	if nfuncs > maxExports || nnames > maxExports {
		return nil, fmt.Errorf("export directory: %d functions, %d names: too many", nfuncs, nnames)
	}
	funcs, err := img.Slice(le.Uint32(d[28:]), 4*nfuncs)
	if err != nil {
		return nil, fmt.Errorf("export directory: address table: %w", err)
	}
	names, err := img.Slice(le.Uint32(d[32:]), 4*nnames)
	if err != nil {
		return nil, fmt.Errorf("export directory: name table: %w", err)
	}
	ords, err := img.Slice(le.Uint32(d[36:]), 2*nnames)
	if err != nil {
		return nil, fmt.Errorf("export directory: ordinal table: %w", err)
	}
	var out []symfile.Public
	for i := uint32(0); i < nnames; i++ {
		ord := uint32(le.Uint16(ords[2*i:]))
		if ord >= nfuncs {
			return nil, fmt.Errorf("export %d: ordinal index %d past %d functions", i, ord, nfuncs)
		}
		rva := le.Uint32(funcs[4*ord:])
		if rva == 0 || rva-dir.VirtualAddress < dir.Size { // unused slot, or a forwarder
			continue
		}
		nb, err := img.Rest(le.Uint32(names[4*i:]))
		if err != nil {
			return nil, fmt.Errorf("export %d: name: %w", i, err)
		}
		name := cString(nb)
		if dm, err := msvc.Demangle(name, msvc.Mozilla); err == nil {
			name = dm
		}
		out = append(out, symfile.Public{Address: uint64(rva), Name: name})
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].Address < out[j].Address })
	for i := 1; i < len(out); i++ {
		if out[i].Address == out[i-1].Address {
			out[i].Multiple = true
		}
	}
	return out, nil
}

func cString(b []byte) string {
	for i, c := range b {
		if c == 0 {
			return string(b[:i])
		}
	}
	return string(b)
}

// CFI returns the STACK CFI entries of an x64 image's exception directory
// in the given style (unwindinfo.StyleSymbolic for what Mozilla's dump_syms
// writes beside a PDB today, unwindinfo.StyleBreakpad for Breakpad's PE-only
// output). Images of other machines and images without an exception
// directory have none. Functions with bad unwind information are left out
// and named in the error; the entries returned are still good.
func CFI(f *pe.File, style unwindinfo.Style) ([]dumpsyms.CFIEntry, error) {
	if f.Machine != pe.IMAGE_FILE_MACHINE_AMD64 {
		return nil, nil
	}
	t, err := unwindinfo.New(f)
	if errors.Is(err, unwindinfo.ErrNoExceptionDirectory) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	entries, err := t.Rules(style)
	out := make([]dumpsyms.CFIEntry, len(entries))
	for i, e := range entries {
		out[i].Init = symfile.CFIInit{Address: uint64(e.Address), Size: uint64(e.Size), Rules: e.Init}
		for _, c := range e.Changes {
			out[i].Changes = append(out[i].Changes, symfile.CFI{Address: uint64(c.Address), Rules: c.Rules})
		}
	}
	return out, err
}

// Options select what [Dump] writes beyond Breakpad's PE-only records.
type Options struct {
	dumpsyms.Options
	// Style is the STACK CFI style; the zero value is symbolic's. Breakpad's
	// output for a PE without a PDB is unwindinfo.StyleBreakpad.
	Style unwindinfo.Style
	// ByCodeID names an image without a CodeView record (Wine's DLLs, some
	// system and third-party DLLs) by its code identifier and file name:
	// MODULE windows ARCH TIMESTAMPSIZE NAME.dll, the identity a minidump
	// gives such a module (symbols/pdbsyms keys its conversions so).
	// Without it such an image is an error (ErrNoCodeView), as Breakpad's
	// dump_syms has it.
	ByCodeID bool
}

// Dump reads a PE image without its PDB into the symbol model, as
// Breakpad's Windows dump_syms does: MODULE (from the CodeView record),
// INFO CODE_ID, PUBLIC records of the exports and STACK CFI for x64.
// fileName names the image in INFO CODE_ID (its base name is used). With
// opts.HeaderOnly only MODULE and INFO are read; with opts.NoCFI no STACK
// CFI. Problems that leave records out are passed to opts.Warn.
func Dump(f *pe.File, fileName string, opts Options) (*dumpsyms.Model, error) {
	warn := opts.Warn
	if warn == nil {
		warn = func(string, ...any) {}
	}
	mod, cid, err := Module(f, fileName)
	if errors.Is(err, ErrNoCodeView) && opts.ByCodeID && mod.Arch != "" && cid.File != "" {
		mod.ID, mod.Name, err = cid.ID, cid.File, nil
	}
	if err != nil {
		return nil, err
	}
	if opts.Name != "" {
		mod.Name = opts.Name
	}
	s := &dumpsyms.Model{Module: mod, CodeID: cid, HeaderOnly: opts.HeaderOnly}
	if opts.HeaderOnly {
		return s, nil
	}
	if s.Publics, err = Exports(f); err != nil {
		warn("exports left out: %v", err)
	}
	if !opts.Multiple {
		for i := range s.Publics {
			s.Publics[i].Multiple = false
		}
	}
	if !opts.NoCFI {
		if s.CFI, err = CFI(f, opts.Style); err != nil {
			warn("STACK CFI: %v", err)
		}
	}
	return s, nil
}
