// Package macho turns Mach-O files and dSYM bundles into Breakpad symbol
// records (a dumpsyms.Model), as Breakpad's Mac dump_syms does
// (cmd/dump_syms picks it by the file's magic bytes).
//
// [Dump] reads a thin or universal (fat, fat64) file, one architecture
// slice of it ([Options.Arch], Breakpad's -a), a dSYM bundle (the one DWARF
// file in Contents/Resources/DWARF) or the file inside one, and a binary
// with its dSYM ([Options.DSYM], Breakpad's -g; without it, BINARY.dSYM
// beside the binary when its UUID matches):
//
//   - MODULE as Breakpad's: "mac", the architecture (x86 for i386; arm64e
//     named arm64e where Breakpad built off macOS writes arm64), the LC_UUID
//     in upper-case hexadecimal followed by the age 0 (the MD5 of its
//     sections' bytes without LC_UUID), the binary's file name; INFO CODE_ID as Mozilla's
//     dump_syms writes it (the UUID alone);
//   - FUNC, line, INLINE_ORIGIN and INLINE records from the DWARF of the
//     dSYM (or of the file itself), by the code of dumpsyms/elf: the
//     Mach-O sections are handed to it as an ELF image (image.go), so both
//     readers make the same records of the same DWARF; without DWARF, FUNC
//     records from the debug map's N_FUN stabs, as Breakpad does;
//   - PUBLIC records from the symbol table (every section symbol, its
//     leading underscore removed) where no FUNC starts;
//   - STACK CFI from __eh_frame and __debug_frame (package dwarfcfi through
//     dumpsyms/elf; i386 __eh_frame with Darwin's register numbers, esp
//     and ebp swapped), and from the compact unwind information
//     (__unwind_info; in object files the compiler's __LD,__compact_unwind)
//     for the functions __eh_frame does not describe (compact.go).
//
// 64-bit slices (x86_64, x86_64h, arm64, arm64e) and 32-bit ones (i386,
// armv7 and the other arm subtypes) are read, the 32-bit ones through a
// 32-bit ELF image; object files (MH_OBJECT) too, address 0 being code
// there. The differences from Breakpad's output are documented in
// docs/dump_syms.md.
package macho

import (
	"bytes"
	"debug/elf"
	"debug/macho"
	"encoding/hex"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/gobreakpad/gobreakpad/dumpsyms"
	dself "github.com/gobreakpad/gobreakpad/dumpsyms/elf"
	"github.com/gobreakpad/gobreakpad/symfile"
	"github.com/ianlancetaylor/demangle"
)

// Options select what Dump produces.
type Options struct {
	dumpsyms.Options
	// Arch selects the slice of a universal file (Breakpad's -a): x86_64,
	// arm64, arm64e, ...; "" for the default (see Select).
	Arch string
	// DSYM names the dSYM bundle, or the DWARF file inside one, holding the
	// binary's debugging information (Breakpad's -g).
	DSYM string
	// Exact makes the compact unwind rules (x86_64, i386, arm64) and the
	// FDEs' (x86_64, arm64) right at every instruction, prologues and
	// epilogues included (dump_syms --cfi-style exact; exact.go,
	// exactarm.go), instead of the body's rules alone.
	Exact bool
}

// input is a file given to Dump, opened.
type input struct {
	path string
	f    *os.File
	obj  *object
}

func (in *input) close() {
	if in != nil && in.f != nil {
		in.f.Close()
	}
}

// open opens path's slice for arch (a bundle's DWARF file when path is a
// dSYM bundle).
func open(path, arch string, warn func(string, ...any)) (*input, error) {
	p, f, sl, err := openSlices(path)
	if err != nil {
		return nil, err
	}
	in, err := selectSlice(p, f, sl, arch, warn)
	if err != nil {
		f.Close()
		return nil, err
	}
	in.f = f
	return in, nil
}

// selectSlice opens the slice for arch of the Mach-O file r (named p in
// messages).
func selectSlice(p string, r io.ReaderAt, sl []Slice, arch string, warn func(string, ...any)) (*input, error) {
	s, w, err := Select(sl, arch)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", p, err)
	}
	if w != "" && warn != nil {
		warn("%s: %s", p, w)
	}
	o, err := openSlice(r, s)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", p, err)
	}
	return &input{path: p, obj: o}, nil
}

// openSlices opens the Mach-O file a path names (BundleFile) and lists its
// slices; the caller closes the file.
func openSlices(path string) (p string, f *os.File, sl []Slice, err error) {
	if p, err = BundleFile(path); err != nil {
		return "", nil, nil, err
	}
	if f, err = os.Open(p); err != nil {
		return "", nil, nil, err
	}
	st, err := f.Stat()
	if err != nil {
		f.Close()
		return "", nil, nil, err
	}
	if sl, err = Slices(f, st.Size()); err != nil {
		f.Close()
		return "", nil, nil, fmt.Errorf("%s: %w", p, err)
	}
	return p, f, sl, nil
}

// BundleFile returns the DWARF file a path names: the one file in a dSYM
// bundle's Contents/Resources/DWARF when path is a directory, path itself
// otherwise. A bundle with no file or several is an error naming them.
func BundleFile(path string) (string, error) {
	st, err := os.Stat(path)
	if err != nil || !st.IsDir() {
		return path, err
	}
	dir := filepath.Join(path, "Contents", "Resources", "DWARF")
	ents, err := os.ReadDir(dir)
	if err != nil {
		return "", fmt.Errorf("%s: a directory but not a dSYM bundle (no Contents/Resources/DWARF)", path)
	}
	var names []string
	for _, e := range ents {
		if e.Type().IsRegular() {
			names = append(names, e.Name())
		}
	}
	switch len(names) {
	case 0:
		return "", fmt.Errorf("%s: dSYM bundle with no file in Contents/Resources/DWARF", path)
	case 1:
		return filepath.Join(dir, names[0]), nil
	}
	return "", fmt.Errorf("%s: dSYM bundle with %d files in Contents/Resources/DWARF (%s): give the one to read", path, len(names), strings.Join(names, ", "))
}

// ListArch writes the architectures of the file at path as Mozilla's
// dump_syms --list-arch does: "NAME contains the following
// architectures:" (architecture for one), then their names separated by
// ", " (x86 for i386, as symbolic names it).
func ListArch(path string, w io.Writer) error {
	_, f, sl, err := openSlices(path)
	if err != nil {
		return err
	}
	f.Close()
	var names []string
	for _, s := range sl {
		names = append(names, s.ModuleArch())
	}
	plural := "s"
	if len(names) == 1 {
		plural = ""
	}
	_, err = fmt.Fprintf(w, "%s contains the following architecture%s:\n%s\n", filepath.Base(path), plural, strings.Join(names, ", "))
	return err
}

func hasDWARF(o *object) bool {
	for _, s := range o.Sections {
		if s.Seg == "__DWARF" && s.Name == "__debug_info" && s.Offset != 0 {
			return true
		}
	}
	return false
}

// Dump reads the Mach-O file or dSYM bundle at path (and the dSYM of a
// binary) into symbol records.
func Dump(path string, opts Options) (*dumpsyms.Model, error) {
	warn := opts.warnf()
	bin, err := open(path, opts.Arch, warn)
	if err != nil {
		return nil, err
	}
	defer bin.close()
	dbg := bin
	if opts.DSYM != "" {
		if dbg, err = open(opts.DSYM, bin.obj.slice.Arch(), warn); err != nil {
			return nil, err
		}
		defer dbg.close()
		if !bytes.Equal(dbg.obj.uuid, bin.obj.uuid) {
			warn("%s: UUID %X differs from %s's %X", dbg.path, dbg.obj.uuid, bin.path, bin.obj.uuid)
		}
	} else if !hasDWARF(bin.obj) {
		if d, err := open(path+".dSYM", bin.obj.slice.Arch(), nil); err == nil {
			if bin.obj.uuid != nil && bytes.Equal(d.obj.uuid, bin.obj.uuid) {
				warn("%s: reading DWARF from %s", bin.path, d.path)
				dbg = d
			} else {
				warn("%s: UUID %X is not %s's %X: not read", d.path, d.obj.uuid, bin.path, bin.obj.uuid)
			}
			defer d.close()
		}
	}
	return dump(bin, dbg, opts, warn)
}

// dumpBytes reads the Mach-O file b (no bundle, no dSYM beside it) as Dump
// reads a file at path: without temporary files, for the fuzz target.
func dumpBytes(path string, b []byte, opts Options) (*dumpsyms.Model, error) {
	r := bytes.NewReader(b)
	sl, err := Slices(r, int64(len(b)))
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	warn := opts.warnf()
	in, err := selectSlice(path, r, sl, opts.Arch, warn)
	if err != nil {
		return nil, err
	}
	return dump(in, in, opts, warn)
}

// warnf returns opts.Warn, or a function that drops the warnings when it
// is nil.
func (opts Options) warnf() func(string, ...any) {
	return func(format string, args ...any) {
		if opts.Warn != nil {
			opts.Warn(format, args...)
		}
	}
}

func dump(bin, dbg *input, opts Options, warn func(string, ...any)) (*dumpsyms.Model, error) {
	o := bin.obj
	id, err := o.debugID()
	if err != nil {
		return nil, fmt.Errorf("%s: %w", bin.path, err)
	}
	name := opts.Name
	if name == "" {
		name = filepath.Base(bin.path)
	}
	osName := opts.OS
	if osName == "" || osName == "Linux" { // dump_syms' -o default is for ELF
		osName = "mac"
	}
	head := &dumpsyms.Model{
		Module:     symfile.Module{OS: osName, Arch: o.slice.ModuleArch(), ID: id, Name: name},
		CodeID:     symfile.CodeID{ID: o.codeID()},
		HeaderOnly: opts.HeaderOnly,
	}
	if opts.HeaderOnly {
		return head, nil
	}
	machine, err := elfMachine(o.Cpu)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", bin.path, err)
	}
	// The image's build ID is the module's identifier (the ELF reader
	// wants one; MODULE and INFO are replaced afterwards).
	bid, _ := hex.DecodeString(id[:32])
	im := &elfImage{machine: machine, segments: segments(o), buildID: bid}
	// Code sections (unwind information) from the binary, DWARF from the
	// debug file.
	for _, s := range o.Sections {
		if n := elfName(s.Seg, s.Name); n != "" && s.Seg != "__DWARF" {
			im.add(n, o, s, warn, bin.path, n == ".text")
		}
	}
	for _, s := range dbg.obj.Sections {
		if n := elfName(s.Seg, s.Name); n != "" && s.Seg == "__DWARF" {
			im.add(n, dbg.obj, s, warn, dbg.path, false)
		}
	}
	syms := o
	if o.Symtab == nil || len(o.Symtab.Syms) == 0 {
		syms = dbg.obj
	}
	if syms.Symtab != nil {
		for _, s := range syms.Symtab.Syms {
			if s.Type&0xe0 == 0 && s.Type&0x0e == 0x0e && s.Sect != 0 && s.Name != "" {
				im.symbols = append(im.symbols, elfSymbol{name: trimUnderscore(s.Name), value: s.Value})
			}
		}
	}
	eopts := opts.Options
	eopts.Name = name
	iopts := dself.ImageOptions{ZeroIsCode: o.Type == macho.TypeObj}
	if o.Cpu == macho.Cpu386 {
		iopts.EHFrameRegisters = darwinI386EH()
	}
	out, err := dself.DumpImageWith(bytes.NewReader(im.bytes()), eopts, iopts)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", bin.path, err)
	}
	out.Module, out.CodeID = head.Module, head.CodeID
	if len(out.Funcs) == 0 {
		stabFunctions(o, out)
	}
	if !opts.NoCFI {
		if err := compactUnwind(o, out, warn, opts.Exact); err != nil {
			warn("%s: __unwind_info: %v", bin.path, err)
		}
	}
	return out, nil
}

// darwinI386EH returns the names of the register numbers of i386
// __eh_frame: the System V ones with 4 and 5 swapped (esp is 5 and ebp 4
// there, LLVM's X86_32_DarwinEH flavour: "DwarfRegNum<[-2, 5, 4]>" for
// esp in X86RegisterInfo.td; Apple's libunwind's UNW_X86_EBP is 4 and
// UNW_X86_ESP 5 likewise). __debug_frame and DWARF expressions use the
// System V numbers.
func darwinI386EH() []string {
	n := dself.RegisterNames(elf.EM_386)
	n[4], n[5] = n[5], n[4]
	return n
}

// segments returns the object's segments in load-command order.
func segments(o *object) []*macho.Segment {
	var out []*macho.Segment
	for _, l := range o.Loads {
		if s, ok := l.(*macho.Segment); ok {
			out = append(out, s)
		}
	}
	return out
}

// maxSection bounds one section's size: the largest dSYMs' __debug_info
// is some gigabytes; a damaged size past the file is refused anyway.
const maxSection = 4 << 30

// add copies section s of o into the image as name; nobits keeps only its
// address and size.
func (im *elfImage) add(name string, o *object, s *macho.Section, warn func(string, ...any), path string, nobits bool) {
	zerofill := s.Flags&0xff == 0x1 || s.Flags&0xff == 0xc || s.Flags&0xff == 0x12
	if nobits || zerofill || s.Offset == 0 {
		im.sections = append(im.sections, elfSection{name: name, typ: 8 /* SHT_NOBITS */, addr: s.Addr, nobits: s.Size})
		return
	}
	if s.Size > maxSection || int64(s.Offset)+int64(s.Size) > o.slice.Size {
		warn("%s: section %s,%s (%d bytes at %#x) runs past the end of the file: skipped", path, s.Seg, s.Name, s.Size, s.Offset)
		return
	}
	b := make([]byte, s.Size)
	if _, err := o.r.ReadAt(b, int64(s.Offset)); err != nil {
		warn("%s: section %s,%s: %v: skipped", path, s.Seg, s.Name, err)
		return
	}
	im.sections = append(im.sections, elfSection{name: name, typ: 1 /* SHT_PROGBITS */, addr: s.Addr, data: b})
}

// stabFunctions adds FUNC records from the debug map's N_FUN stabs (the
// function's address, then an unnamed N_FUN holding its size), as
// Breakpad's dump_syms reads a binary without dSYM, and drops the PUBLIC
// records at their addresses.
func stabFunctions(o *object, out *dumpsyms.Model) {
	if o.Symtab == nil {
		return
	}
	base := textBase(o)
	const nFUN = 0x24
	syms := o.Symtab.Syms
	starts := map[uint64]bool{}
	for i := 0; i+1 < len(syms); i++ {
		s := syms[i]
		if s.Type != nFUN || s.Name == "" || syms[i+1].Type != nFUN || syms[i+1].Name != "" || s.Value < base {
			continue
		}
		addr := s.Value - base
		if starts[addr] {
			continue
		}
		starts[addr] = true
		out.Funcs = append(out.Funcs, dumpsyms.Function{Name: symbolName(s.Name),
			Ranges: []symfile.Range{{Address: addr, Size: syms[i+1].Value}}})
	}
	slices.SortStableFunc(out.Funcs, func(a, b dumpsyms.Function) int {
		return int(min(max(int64(a.Ranges[0].Address-b.Ranges[0].Address), -1), 1))
	})
	pubs := out.Publics[:0]
	for _, p := range out.Publics {
		if !starts[p.Address] {
			pubs = append(pubs, p)
		}
	}
	out.Publics = pubs
}

// symbolName is a symbol table name as a record names it: the leading
// underscore of C names removed, C++ names demangled.
func symbolName(s string) string {
	s = trimUnderscore(s)
	if strings.HasPrefix(s, "_Z") {
		if d, err := demangle.ToString(s); err == nil {
			return d
		}
	}
	return s
}

// trimUnderscore removes the underscore the compiler puts before C names,
// but not from "_Z" names: Itanium-mangled names of local symbols the
// compiler made without one, which Breakpad keeps whole.
func trimUnderscore(s string) string {
	if strings.HasPrefix(s, "_Z") {
		return s
	}
	return strings.TrimPrefix(s, "_")
}

// textBase returns the address records are relative to: the __TEXT
// segment's (the first loaded segment's).
func textBase(o *object) uint64 {
	for _, s := range segments(o) {
		if s.Name != "__PAGEZERO" && s.Memsz != 0 {
			return s.Addr
		}
	}
	return 0
}

// Identity is what identifies one slice of a Mach-O file, for finding a
// module's files among many (symbols/machosyms).
type Identity struct {
	Arch    string // the slice's architecture (Options.Arch selects it)
	DebugID string // Breakpad's identifier of the slice (MODULE), "" without LC_UUID
	DWARF   bool   // the slice holds DWARF (a dSYM's file, or an unlinked object)
}

// Identify returns the identities of the slices of the Mach-O file at path
// (a dSYM bundle's file when path is a bundle). Slices without LC_UUID are
// not hashed: their DebugID is empty.
func Identify(path string) ([]Identity, error) {
	p, f, sl, err := openSlices(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var out []Identity
	for _, s := range sl {
		o, err := openSlice(f, s)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", p, err)
		}
		id := Identity{Arch: o.slice.Arch(), DWARF: hasDWARF(o)}
		if o.uuid != nil {
			id.DebugID = fmt.Sprintf("%X0", o.uuid)
		}
		out = append(out, id)
	}
	return out, nil
}
