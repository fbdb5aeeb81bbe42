// Package elf turns an ELF file and its DWARF debugging information into
// Breakpad symbol records (a dumpsyms.Model), as Breakpad's Linux dump_syms
// does (cmd/dump_syms is the command line over it). It imports debug/elf
// under its own name inside the package; importers that need both name one.
//
// [Dump] reads:
//
//   - the module identity: MODULE (debug identifier from the GNU build ID, or
//     Breakpad's hash of .text when there is none) and INFO CODE_ID, by
//     package moduleid's rules;
//   - DWARF 2 to 5 through debug/dwarf: FILE, FUNC with Breakpad's composed
//     C++ names (demangled linkage names, DW_AT_specification and
//     DW_AT_abstract_origin chains), line records, and with
//     dumpsyms.Options.Inlines
//     INLINE_ORIGIN and INLINE records;
//   - PUBLIC records for symbol-table functions no FUNC starts at, from .symtab
//     (or .dynsym) and from the xz-compressed mini debug info in
//     .gnu_debugdata;
//   - STACK CFI records from .eh_frame and .debug_frame, interpreted by
//     package dwarfcfi and named with Breakpad's register names.
//
// Debugging information is looked for where it is commonly shipped: in the
// file itself (SHF_COMPRESSED zlib or zstd sections are decompressed by
// debug/elf), in the file named by .gnu_debuglink (checked against its CRC)
// or by the build ID (.build-id/xx/rest.debug) in the given debug
// directories or beside the binary, in the dwz alternate file named by
// .gnu_debugaltlink, and in split DWARF: DWARF 5 .dwo files and GNU DWARF 4
// ones, loose or packed in BINARY.dwp.
//
// Damaged input gives warnings (dumpsyms.Options.Warn) and the best records that can
// still be made, never a panic. The differences from Breakpad's output are
// documented in docs/dump_syms.md.
package elf

import (
	"bytes"
	"cmp"
	"compress/zlib"
	"debug/dwarf"
	"debug/elf"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"

	"github.com/gobreakpad/gobreakpad/dumpsyms"
	"github.com/gobreakpad/gobreakpad/dumpsyms/dwarfcfi"
	"github.com/gobreakpad/gobreakpad/moduleid"
	"github.com/gobreakpad/gobreakpad/symfile"
	"github.com/ianlancetaylor/demangle"
	"github.com/ulikunitz/xz"
)

// elfArch returns Breakpad's architecture name for an ELF machine.
func elfArch(f *elf.File) (string, error) {
	switch f.Machine {
	case elf.EM_386:
		return "x86", nil
	case elf.EM_X86_64:
		return "x86_64", nil
	case elf.EM_AARCH64:
		return "arm64", nil
	case elf.EM_ARM:
		return "arm", nil
	case elf.EM_MIPS:
		if f.Class == elf.ELFCLASS64 {
			return "mips64", nil
		}
		return "mips", nil
	case elf.EM_PPC:
		return "ppc", nil
	case elf.EM_PPC64:
		return "ppc64", nil
	case elf.EM_RISCV:
		if f.Class == elf.ELFCLASS64 {
			return "riscv64", nil
		}
		return "riscv", nil
	case elf.EM_SPARCV9:
		return "sparcv9", nil
	case elf.EM_S390:
		return "s390", nil
	}
	return "", fmt.Errorf("unsupported ELF machine %v", f.Machine)
}

// loadAddress is the address the module's records are made relative to, as
// Breakpad chooses it: the first loadable segment's address (zero for
// position-independent files).
func loadAddress(f *elf.File) uint64 {
	for _, p := range f.Progs {
		if p.Type == elf.PT_LOAD {
			return p.Vaddr
		}
	}
	return 0
}

type dumper struct {
	opts  dumpsyms.Options
	path  string
	bin   *elf.File
	debug *elf.File // the file the DWARF comes from (may be bin)
	load  uint64
	out   *dumpsyms.Model
	files fileTable
	close []io.Closer
	// externs indexes out.Publics by module-relative address.
	externs map[uint64]int
	warnMu  sync.Mutex // the CFI is read concurrently with the rest
	sr      *sectionReader
	// inMemory is set for an image read from memory: path is only its
	// name, and no debugging file is looked for beside it.
	inMemory bool
	// ehNames, when set, names .eh_frame's register numbers instead of
	// the machine's (ImageOptions.EHFrameRegisters).
	ehNames []string
	// zeroIsCode: ImageOptions.ZeroIsCode.
	zeroIsCode bool
}

func (d *dumper) warn(format string, args ...any) {
	if d.opts.Warn != nil {
		d.warnMu.Lock()
		defer d.warnMu.Unlock()
		d.opts.Warn(format, args...)
	}
}

func (d *dumper) progress(stage string) {
	if d.opts.Progress != nil {
		d.opts.Progress(stage)
	}
}

// Dump reads the ELF file at path (and its separate debugging information)
// into symbol records.
func Dump(path string, opts dumpsyms.Options) (*dumpsyms.Model, error) {
	bin, err := elf.Open(path)
	if err != nil {
		return nil, fmt.Errorf("dump_syms: %w", err)
	}
	defer bin.Close()
	return dumpFile(bin, path, opts)
}

// DumpImage reads an ELF image held in memory (r, such as a vDSO saved
// whole in a minidump) into symbol records, with opts.Name as the module's
// name. No separate debugging file is looked for.
func DumpImage(r io.ReaderAt, opts dumpsyms.Options) (*dumpsyms.Model, error) {
	return DumpImageWith(r, opts, ImageOptions{})
}

// ImageOptions are what DumpImageWith is told about an image beyond
// dumpsyms.Options.
type ImageOptions struct {
	// EHFrameRegisters, when set, names the DWARF register numbers of
	// .eh_frame (indexed by number, "" for unnamed ones) in place of the
	// machine's usual names: Darwin's i386 __eh_frame numbers esp 5 and
	// ebp 4, swapped from the System V numbering its DWARF elsewhere uses.
	EHFrameRegisters []string
	// ZeroIsCode says that address 0 holds code (a Mach-O object file's
	// first section), so functions and lines there are kept; in linked
	// files they are debugging data of code the linker discarded.
	ZeroIsCode bool
}

// DumpImageWith is DumpImage with the image's peculiarities (iopts).
func DumpImageWith(r io.ReaderAt, opts dumpsyms.Options, iopts ImageOptions) (*dumpsyms.Model, error) {
	bin, err := elf.NewFile(r)
	if err != nil {
		return nil, fmt.Errorf("dump_syms: image: %w", err)
	}
	name := opts.Name
	if name == "" {
		name = "image"
	}
	d := newDumper(bin, name, opts)
	d.inMemory = true
	d.ehNames = iopts.EHFrameRegisters
	d.zeroIsCode = iopts.ZeroIsCode
	defer d.closeAll()
	return d.run()
}

// dumpFile is Dump for an opened file; path names it and locates the files
// found beside it.
func dumpFile(bin *elf.File, path string, opts dumpsyms.Options) (*dumpsyms.Model, error) {
	d := newDumper(bin, path, opts)
	defer d.closeAll()
	return d.run()
}

func newDumper(bin *elf.File, path string, opts dumpsyms.Options) *dumper {
	d := &dumper{opts: opts, path: path, bin: bin}
	d.sr = &sectionReader{ratio: opts.MaxInflateRatio, warn: func(format string, args ...any) {
		d.warn("%s: "+format, append([]any{path}, args...)...)
	}}
	return d
}

func (d *dumper) closeAll() {
	d.sr.free()
	for _, c := range d.close {
		c.Close()
	}
}

func (d *dumper) run() (*dumpsyms.Model, error) {
	arch, err := elfArch(d.bin)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", d.path, err)
	}
	id, err := moduleid.BuildIDNote(d.bin)
	if err != nil {
		d.warn("%s: no GNU build ID note: identifying the module by a hash of .text", d.path)
		id, err = moduleid.TextHash(d.bin)
		if err != nil {
			return nil, fmt.Errorf("%s: no build ID and %w", d.path, err)
		}
	}
	// Breakpad names a shared object by its DT_SONAME.
	name := d.opts.Name
	if name == "" {
		if so, err := d.bin.DynString(elf.DT_SONAME); err == nil && len(so) > 0 && so[0] != "" {
			name = so[0]
		} else {
			name = filepath.Base(d.path)
		}
	}
	osName := d.opts.OS
	if osName == "" {
		osName = "Linux"
	}
	d.out = &dumpsyms.Model{
		Module:     symfile.Module{OS: osName, Arch: arch, ID: moduleid.ELFDebugID(id), Name: name},
		CodeID:     symfile.CodeID{ID: strings.ToUpper(moduleid.ELFCodeID(id))},
		HeaderOnly: d.opts.HeaderOnly,
	}
	if d.opts.HeaderOnly {
		return d.out, nil
	}
	d.load = loadAddress(d.bin)
	d.out.LoadAddress = d.load
	d.files.index = make(map[string]int32)

	d.debug = d.findDebugFile()
	// The call frame information is independent of the rest: read it on
	// another core meanwhile.
	var cfi sync.WaitGroup
	if !d.opts.NoCFI {
		cfi.Go(d.readCFI)
	}
	var funcs []*funcRec
	if d.debug != nil {
		d.progress("reading DWARF")
		funcs = d.readDWARF()
	}
	d.progress("reading symbol tables")
	d.readExterns()
	d.buildFunctions(funcs)
	d.finishPublics()
	d.progress("reading call frame information")
	cfi.Wait()
	return d.out, nil
}

// hasDWARF reports whether f carries DWARF debugging information.
func hasDWARF(f *elf.File) bool {
	for _, s := range f.Sections {
		if (s.Name == ".debug_info" || s.Name == ".zdebug_info") && s.Type != elf.SHT_NOBITS {
			return true
		}
	}
	return false
}

// findDebugFile returns the file to read DWARF from: the binary itself, the
// file its build ID or .gnu_debuglink names, or nil.
func (d *dumper) findDebugFile() *elf.File {
	if hasDWARF(d.bin) {
		return d.bin
	}
	if d.inMemory {
		return nil
	}
	link, crc, hasLink := debugLink(d.bin)
	var cands []string
	binDir := filepath.Dir(d.path)
	if id, err := moduleid.BuildIDNote(d.bin); err == nil && len(id) > 1 {
		h := hex.EncodeToString(id)
		rel := filepath.Join(".build-id", h[:2], h[2:]+".debug")
		for _, dir := range d.opts.DebugDirs {
			cands = append(cands, filepath.Join(dir, rel), filepath.Join(dir, h[2:]+".debug"))
		}
	}
	if hasLink {
		for _, dir := range d.opts.DebugDirs {
			cands = append(cands, filepath.Join(dir, link))
		}
		cands = append(cands, filepath.Join(binDir, link), filepath.Join(binDir, ".debug", link))
	}
	for _, c := range cands {
		if c == d.path {
			continue
		}
		f, err := elf.Open(c)
		if err != nil {
			if !errors.Is(err, os.ErrNotExist) {
				d.warn("%s: %v", c, err)
			}
			continue
		}
		if hasLink && filepath.Base(c) == link {
			if sum, err := fileCRC(c); err != nil || sum != crc {
				d.warn("%s: CRC does not match .gnu_debuglink of %s: skipped", c, d.path)
				f.Close()
				continue
			}
		}
		if !hasDWARF(f) {
			d.warn("%s: no DWARF in debug file", c)
			f.Close()
			continue
		}
		d.warn("%s: reading DWARF from %s", d.path, c)
		d.close = append(d.close, f)
		return f
	}
	if hasLink {
		d.warn("%s: no DWARF; debug file %q not found (pass its directory as DEBUG_DIR)", d.path, link)
	} else {
		d.warn("%s: no DWARF debugging information", d.path)
	}
	return nil
}

// fileCRC returns the CRC-32 (IEEE) of a file's contents, which
// .gnu_debuglink records, reading it in chunks.
func fileCRC(path string) (uint32, error) {
	f, err := os.Open(path)
	if err != nil {
		return 0, err
	}
	defer f.Close()
	h := crc32.NewIEEE()
	if _, err := io.Copy(h, f); err != nil {
		return 0, err
	}
	return h.Sum32(), nil
}

// debugLink returns the file name and CRC in .gnu_debuglink.
func debugLink(f *elf.File) (string, uint32, bool) {
	s := f.Section(".gnu_debuglink")
	if s == nil || s.Type == elf.SHT_NOBITS {
		return "", 0, false
	}
	b, err := s.Data()
	if err != nil {
		return "", 0, false
	}
	i := bytes.IndexByte(b, 0)
	if i <= 0 {
		return "", 0, false
	}
	name := string(b[:i])
	off := (i + 4) &^ 3
	if off+4 > len(b) || strings.ContainsRune(name, '/') {
		return "", 0, false
	}
	return name, f.ByteOrder.Uint32(b[off:]), true
}

// DefaultInflateRatio is the default bound on a compressed section's
// declared size, as a multiple of its compressed size (dumpsyms.Options.MaxInflateRatio).
// Real debug sections shrink 3 to 10 times; zlib can reach 1000.
const DefaultInflateRatio = 32

// minInflateLimit is the decompressed size always allowed, however small
// the compressed section (a variable: the fuzz targets lower it, or each
// mutated section declaring a few MiB takes milliseconds to inflate).
var minInflateLimit uint64 = 64 << 20

// sectionReader reads sections, refusing compressed ones that declare more
// than their bound: ratio times their compressed size, at least
// minInflateLimit. debug/elf allocates the declared size before
// decompressing, so the check comes first.
type sectionReader struct {
	ratio int64
	warn  func(format string, args ...any)

	mu    sync.Mutex
	frees []func() error // of the sections read by anonSection
}

// limit returns the largest decompressed size allowed for a section whose
// compressed form takes n bytes.
func (sr *sectionReader) limit(n uint64) uint64 {
	r := uint64(sr.ratio)
	if r == 0 {
		r = DefaultInflateRatio
	}
	if n > (1<<63)/r {
		return 1 << 63
	}
	return max(minInflateLimit, r*n)
}

// check returns an error when s is compressed and declares more than its
// bound (SHF_COMPRESSED sections and legacy .zdebug ones).
func (sr *sectionReader) check(s *elf.Section) error {
	if s.Type == elf.SHT_NOBITS {
		return nil
	}
	size := uint64(0)
	switch {
	case s.Flags&elf.SHF_COMPRESSED != 0:
		size = s.Size // debug/elf reads it from the compression header
	case strings.HasPrefix(s.Name, ".zdebug_"):
		var h [12]byte
		if _, err := s.ReadAt(h[:], 0); err != nil || string(h[:4]) != "ZLIB" {
			return nil
		}
		size = binary.BigEndian.Uint64(h[4:])
	default:
		return nil
	}
	if lim := sr.limit(s.FileSize); size > lim {
		return fmt.Errorf("section %s: compressed %d bytes declare %d decompressed, over the limit of %d (%d times the compressed size; raise it with --max-inflate-ratio)",
			s.Name, s.FileSize, size, lim, lim/max(s.FileSize, 1))
	}
	return nil
}

// section returns a section's contents, decompressed, within the bound.
func (sr *sectionReader) section(s *elf.Section) ([]byte, error) {
	if err := sr.check(s); err != nil {
		return nil, err
	}
	b, err := s.Data()
	if err != nil || !strings.HasPrefix(s.Name, ".zdebug_") || len(b) < 12 || string(b[:4]) != "ZLIB" {
		return b, err
	}
	// A legacy .zdebug section: "ZLIB", the size (big-endian), zlib data;
	// its size was checked above.
	size := binary.BigEndian.Uint64(b[4:12])
	zr, err := zlib.NewReader(bytes.NewReader(b[12:]))
	if err != nil {
		return nil, fmt.Errorf("section %s: %w", s.Name, err)
	}
	out := make([]byte, size)
	if _, err := io.ReadFull(zr, out); err != nil {
		return nil, fmt.Errorf("section %s: %w", s.Name, err)
	}
	return out, nil
}

// data returns a named section's contents, or nil when it is absent, has
// none in the file, or cannot be read (said through warn).
func (sr *sectionReader) data(f *elf.File, name string) []byte {
	s := f.Section(name)
	if s == nil && strings.HasPrefix(name, ".debug_") {
		s = f.Section(".z" + name[1:])
	}
	if s == nil || s.Type == elf.SHT_NOBITS {
		return nil
	}
	b, err := sr.section(s)
	if err != nil {
		if sr.warn != nil {
			sr.warn("%v (section skipped)", err)
		}
		return nil
	}
	return b
}

// checkAll returns the first section of f over its bound, for readers
// (debug/elf's DWARF) that decompress sections themselves.
func (sr *sectionReader) checkAll(f *elf.File) error {
	for _, s := range f.Sections {
		if strings.HasPrefix(s.Name, ".debug_") || strings.HasPrefix(s.Name, ".zdebug_") {
			if err := sr.check(s); err != nil {
				return err
			}
		}
	}
	return nil
}

func (d *dumper) readDWARF() []*funcRec {
	src, err := loadDWARF(d.debug, d.sr)
	if err != nil {
		d.warn("%s: DWARF: %v (no FUNC records)", d.path, err)
		return nil
	}
	if alt, str := d.openAlt(); alt != nil {
		src.alt, src.altStr = alt, str
	}
	split := &splitLoader{binPath: d.path, binDir: filepath.Dir(d.path), debugDirs: d.opts.DebugDirs,
		debugAddr: src.addr, debugRanges: d.sr.data(d.debug, ".debug_ranges"), order: d.debug.ByteOrder, warn: d.warn, sr: d.sr}
	defer split.close()
	dr := &dwarfReader{warn: d.warn, inlines: d.opts.Inlines, blockInlines: true, files: &d.files, split: split, load: d.load, zeroIsCode: d.zeroIsCode}
	dr.read(src)
	// What the walk made holds no part of the sections (debug/dwarf copies
	// strings out): their memory goes now, before the model is built.
	d.sr.free()
	return dr.funcs
}

// dwarfSections are the sections loadDWARF reads, in dwarf.New's order
// then those added with AddSection.
var dwarfSections = []string{"abbrev", "aranges", "frame", "info", "line", "pubnames", "ranges", "str",
	"addr", "line_str", "str_offsets", "rnglists"}

// loadDWARF reads f's DWARF sections, decompressing them concurrently, and
// keeps the raw ones the line table headers and split units need. Object
// files (which need relocations) and legacy .zdebug sections go through
// debug/elf's own loader.
func loadDWARF(f *elf.File, sr *sectionReader) (*dwarfSource, error) {
	src := &dwarfSource{order: f.ByteOrder}
	legacy := f.Type == elf.ET_REL
	for _, s := range f.Sections {
		legacy = legacy || strings.HasPrefix(s.Name, ".zdebug_")
	}
	if legacy {
		if err := sr.checkAll(f); err != nil {
			return nil, err
		}
		data, err := f.DWARF()
		if err != nil {
			return nil, err
		}
		src.data = data
		src.line, src.lineStr, src.str = sr.data(f, ".debug_line"), sr.data(f, ".debug_line_str"), sr.data(f, ".debug_str")
		src.addr = sr.data(f, ".debug_addr")
		return src, nil
	}
	secs := make([][]byte, len(dwarfSections))
	var refill func() error
	var wg sync.WaitGroup
	for i, n := range dwarfSections {
		if n == "aranges" || n == "frame" || n == "pubnames" {
			continue // debug/dwarf keeps them but never reads them
		}
		// Outside the heap, freed when the walk ends (readDWARF); the
		// pages of .debug_info given back behind the walk
		// (unitSections.passed).
		wg.Go(func() {
			if b, r, ok := sr.anonSection(f, ".debug_"+n); ok {
				secs[i] = b
				if n == "info" {
					refill = r
				}
			} else {
				secs[i] = sr.data(f, ".debug_"+n)
			}
		})
	}
	wg.Wait()
	src.line, src.str, src.addr, src.lineStr = secs[4], secs[7], secs[8], secs[9]
	src.info, src.abbrev = secs[3], secs[0]
	if unitAtATime && unitsReadable(secs[3], secs[0], f.ByteOrder) {
		// A unit at a time (dieReader), with the same entries, errors and
		// warnings as one dwarf.New over everything.
		src.units = &unitSections{abbrev: secs[0], info: secs[3], line: secs[4], ranges: secs[6], str: secs[7],
			addr: secs[8], lineStr: secs[9], strOffsets: secs[10], rnglists: secs[11], refill: refill}
		return src, nil
	}
	data, err := dwarf.New(secs[0], secs[1], secs[2], secs[3], secs[4], secs[5], secs[6], secs[7])
	if err != nil {
		return nil, err
	}
	for i := 8; i < len(dwarfSections); i++ {
		if secs[i] != nil {
			if err := data.AddSection(".debug_"+dwarfSections[i], secs[i]); err != nil {
				return nil, err
			}
		}
	}
	src.data = data
	src.line, src.str, src.addr, src.lineStr = secs[4], secs[7], secs[8], secs[9]
	src.info, src.abbrev = secs[3], secs[0]
	return src, nil
}

// openAlt opens the dwz alternate file named by .gnu_debugaltlink, relative
// to the debug file's directory (or the binary's), or in the debug
// directories. It returns the file's DWARF and its .debug_str.
func (d *dumper) openAlt() (*dwarfSource, []byte) {
	b := d.sr.data(d.debug, ".gnu_debugaltlink")
	if b == nil {
		return nil, nil
	}
	i := bytes.IndexByte(b, 0)
	if i <= 0 {
		return nil, nil
	}
	name := string(b[:i])
	cands := []string{name}
	if !filepath.IsAbs(name) {
		cands = []string{filepath.Join(filepath.Dir(d.path), name)}
		for _, dir := range d.opts.DebugDirs {
			cands = append(cands, filepath.Join(dir, name), filepath.Join(dir, filepath.Base(name)))
		}
	}
	for _, c := range cands {
		f, err := elf.Open(c)
		if err != nil {
			continue
		}
		if err := d.sr.checkAll(f); err != nil {
			d.warn("%s: DWARF: %v", c, err)
			f.Close()
			continue
		}
		data, err := f.DWARF()
		if err != nil {
			d.warn("%s: DWARF: %v", c, err)
			f.Close()
			continue
		}
		d.close = append(d.close, f)
		return &dwarfSource{data: data}, d.sr.data(f, ".debug_str")
	}
	d.warn("%s: dwz alternate file %q not found: names it holds are missing", d.path, name)
	return nil, nil
}

// buildFunctions turns the DWARF functions into FUNC, line and inline
// records: addresses made module-relative, one function per start address
// (the first one read), files and inline origins numbered by name.
func (d *dumper) buildFunctions(funcs []*funcRec) {
	slices.SortStableFunc(funcs, func(a, b *funcRec) int { return cmp.Compare(a.ranges[0].lo, b.ranges[0].lo) })
	origins := map[string]uint32{}
	type pending struct {
		fn      *funcRec
		inlines []symfile.Inline
		names   []string
	}
	var out []dumpsyms.Function
	var originNames []string
	cuts := 0
	for i, fn := range funcs {
		if i > 0 && fn.ranges[0].lo == funcs[i-1].ranges[0].lo || !d.inModule(fn.ranges[0].lo) {
			continue
		}
		name := qualifiedName(fn.node)
		if fn.node.cut {
			cuts++
		}
		if name == "" {
			name = "<name omitted>"
		}
		f := dumpsyms.Function{Name: name}
		// A FUNC replaces the PUBLIC at its address; with -m it is marked
		// when that symbol had another name or several symbols.
		if j, ok := d.externs[fn.ranges[0].lo-d.load]; ok {
			ext := &d.out.Publics[j]
			if d.opts.Multiple && ext.Name != "" {
				mismatch := ext.Name != name && name != "<name omitted>" && !strings.Contains(ext.Name, name)
				f.Multiple = mismatch || ext.Multiple
			}
			ext.Name = "" // removed by finishPublics
		}
		for _, r := range fn.ranges {
			f.Ranges = append(f.Ranges, symfile.Range{Address: r.lo - d.load, Size: r.hi - r.lo})
		}
		// The lines are in the model's form already (assignLines).
		f.Lines = fn.lines
		if f.Lines == nil {
			f.Lines = []symfile.Line{}
		}
		for _, l := range f.Lines {
			d.files.used[l.File] = true
		}
		for _, in := range fn.inlines {
			on := nameOf(in.origin)
			if on == "" {
				on = "<name omitted>"
			}
			id, ok := origins[on]
			if !ok {
				id = uint32(len(originNames))
				origins[on] = id
				originNames = append(originNames, on)
			}
			rec := symfile.Inline{Depth: in.depth, CallLine: in.callLine, HasCallFile: true, Origin: id, CallFile: in.callFile}
			if in.callFile >= 0 {
				d.files.used[in.callFile] = true
			}
			for _, r := range in.ranges {
				rec.Ranges = append(rec.Ranges, symfile.Range{Address: r.lo - d.load, Size: r.hi - r.lo})
			}
			f.Inlines = append(f.Inlines, rec)
		}
		fn.lines, fn.inlines = nil, nil
		out = append(out, f)
	}
	// Number the used files and the origins in name order.
	var used []int32
	for i, u := range d.files.used {
		if u {
			used = append(used, int32(i))
		}
	}
	slices.SortFunc(used, func(a, b int32) int { return strings.Compare(d.files.names[a], d.files.names[b]) })
	renum := make([]uint32, len(d.files.names))
	for n, i := range used {
		renum[i] = uint32(n)
		d.out.Files = append(d.out.Files, symfile.File{Number: uint32(n), Name: d.files.names[i]})
	}
	oorder := make([]uint32, len(originNames))
	for i := range oorder {
		oorder[i] = uint32(i)
	}
	slices.SortFunc(oorder, func(a, b uint32) int { return strings.Compare(originNames[a], originNames[b]) })
	orenum := make([]uint32, len(originNames))
	for n, i := range oorder {
		orenum[i] = uint32(n)
		d.out.Origins = append(d.out.Origins, symfile.InlineOrigin{ID: uint32(n), Name: originNames[i]})
	}
	for i := range out {
		for j := range out[i].Lines {
			out[i].Lines[j].File = renum[out[i].Lines[j].File]
		}
		for j := range out[i].Inlines {
			in := &out[i].Inlines[j]
			if in.CallFile >= 0 {
				in.CallFile = int32(renum[in.CallFile])
			}
			in.Origin = orenum[in.Origin]
		}
	}
	if cuts > 0 {
		d.warn("%s: DWARF: %d functions nested in functions have enclosing names over %d bytes: cut to their last %d bytes after \"...\"", d.path, cuts, maxNestedName, maxNestedName)
	}
	d.out.Funcs = out
}

// readExterns reads the function symbols that become PUBLIC records unless
// a FUNC starts at their address, in Breakpad's order of precedence (the
// first symbol at an address names it): the binary's .symtab (or its
// .dynsym when it has none), then the debug file's .symtab, then the
// symbols of .gnu_debugdata.
func (d *dumper) readExterns() {
	var syms []elf.Symbol
	if s, err := d.bin.Symbols(); err == nil && len(s) > 0 {
		syms = s
	} else if s, err := d.bin.DynamicSymbols(); err == nil {
		syms = s
	} else if !errors.Is(err, elf.ErrNoSymbols) {
		d.warn("%s: .dynsym: %v", d.path, err)
	}
	if d.debug != nil && d.debug != d.bin {
		if s, err := d.debug.Symbols(); err == nil {
			syms = append(syms, s...)
		}
	}
	if mini := d.miniDebugInfo(); mini != nil {
		ms, err := mini.Symbols()
		if err != nil {
			d.warn("%s: .gnu_debugdata: symbols: %v", d.path, err)
		} else {
			syms = append(syms, ms...)
		}
	}
	d.externs = make(map[uint64]int)
	for _, s := range syms {
		if elf.ST_TYPE(s.Info) != elf.STT_FUNC || s.Section == elf.SHN_UNDEF || s.Name == "" {
			continue
		}
		if !d.inModule(s.Value) {
			continue
		}
		addr := s.Value - d.load
		if i, ok := d.externs[addr]; ok {
			if d.opts.Multiple {
				d.out.Publics[i].Multiple = true
			}
			continue
		}
		d.externs[addr] = len(d.out.Publics)
		d.out.Publics = append(d.out.Publics, symfile.Public{Address: addr, Name: publicName(s.Name)})
	}
}

// finishPublics drops the PUBLIC records a FUNC replaced and sorts the rest.
func (d *dumper) finishPublics() {
	out := d.out.Publics[:0]
	for _, p := range d.out.Publics {
		if p.Name != "" {
			out = append(out, p)
		}
	}
	slices.SortStableFunc(out, func(a, b symfile.Public) int { return cmp.Compare(a.Address, b.Address) })
	d.out.Publics = out
}

// inModule reports whether a (not yet module-relative) address is inside a
// loadable segment, as Breakpad requires of every record.
func (d *dumper) inModule(addr uint64) bool {
	loads := false
	for _, p := range d.bin.Progs {
		if p.Type != elf.PT_LOAD {
			continue
		}
		loads = true
		if addr >= p.Vaddr && addr-p.Vaddr < p.Memsz {
			return true
		}
	}
	return !loads
}

// publicName demangles a C++ symbol name.
func publicName(name string) string {
	if strings.HasPrefix(name, "_Z") {
		if s, err := demangle.ToString(name); err == nil {
			return s
		}
	}
	return name
}

// maxMiniDebugInfo bounds the decompressed size of .gnu_debugdata (real
// ones are a few megabytes: function symbols only), besides the bound of
// every compressed section (sectionReader.limit); lowered by the fuzz
// targets.
var maxMiniDebugInfo int64 = 256 << 20

// miniDebugInfo opens the ELF file compressed with xz in .gnu_debugdata.
func (d *dumper) miniDebugInfo() *elf.File {
	b := d.sr.data(d.bin, ".gnu_debugdata")
	if b == nil {
		return nil
	}
	r, err := xz.NewReader(bytes.NewReader(b))
	if err != nil {
		d.warn("%s: .gnu_debugdata: %v", d.path, err)
		return nil
	}
	lim := min(maxMiniDebugInfo, int64(d.sr.limit(uint64(len(b)))))
	data, err := readAtMost(r, lim+1)
	if err != nil {
		d.warn("%s: .gnu_debugdata: %v", d.path, err)
		return nil
	}
	if int64(len(data)) > lim {
		d.warn("%s: .gnu_debugdata: %d compressed bytes decompress to more than the limit of %d (raise it with --max-inflate-ratio): skipped", d.path, len(b), lim)
		return nil
	}
	f, err := elf.NewFile(bytes.NewReader(data))
	if err != nil {
		d.warn("%s: .gnu_debugdata: %v", d.path, err)
		return nil
	}
	return f
}

// readAtMost reads r to its end or to n bytes, growing its buffer by
// doubling up to n at most (io.ReadAll's growth would pass n by half as
// much again for a bomb that fills it).
func readAtMost(r io.Reader, n int64) ([]byte, error) {
	b := make([]byte, 0, min(n, 1<<20))
	for int64(len(b)) < n {
		if len(b) == cap(b) {
			b = slices.Grow(b, int(min(int64(cap(b)), n-int64(cap(b)))))
		}
		k, err := r.Read(b[len(b):cap(b)])
		b = b[:len(b)+k]
		if err == io.EOF {
			return b, nil
		}
		if err != nil {
			return b, err
		}
	}
	return b, nil
}

// readCFI converts .debug_frame and .eh_frame into STACK CFI records.
func (d *dumper) readCFI() {
	names := registerNames(d.bin.Machine)
	if names == nil {
		d.warn("%s: no register names for %v: no STACK CFI records", d.path, d.bin.Machine)
		return
	}
	addrSize := 8
	if d.bin.Class == elf.ELFCLASS32 {
		addrSize = 4
	}
	var textAddr, gotAddr uint64
	if s := d.bin.Section(".text"); s != nil {
		textAddr = s.Addr
	}
	if s := d.bin.Section(".got"); s != nil {
		gotAddr = s.Addr
	}
	conv := &cfiConverter{names: names, warn: d.warn}
	type source struct {
		f    *elf.File
		name string
		kind dwarfcfi.Kind
	}
	srcs := []source{{d.bin, ".debug_frame", dwarfcfi.DebugFrame}, {d.bin, ".eh_frame", dwarfcfi.EHFrame}}
	if d.debug != nil && d.debug != d.bin {
		srcs[0].f = d.debug
		if d.sr.data(d.bin, ".debug_frame") != nil {
			srcs[0].f = d.bin
		}
	}
	for _, s := range srcs {
		sec := s.f.Section(s.name)
		if sec == nil || sec.Type == elf.SHT_NOBITS {
			continue
		}
		data, err := d.sr.section(sec)
		if err != nil {
			d.warn("%s: %s: %v", d.path, s.name, err)
			continue
		}
		conv.names = names
		if s.kind == dwarfcfi.EHFrame && d.ehNames != nil {
			conv.names = d.ehNames
		}
		cs := &dwarfcfi.Section{Kind: s.kind, Data: data, Addr: sec.Addr, ByteOrder: s.f.ByteOrder,
			AddrSize: addrSize, TextAddr: textAddr, DataAddr: gotAddr}
		err = cs.Entries(func(f *dwarfcfi.FDE) error {
			if !d.inModule(f.Begin) {
				return nil
			}
			e, err := conv.convertFDE(cs, f, d.load)
			if err != nil {
				d.warn("%s: %s: %v (rules from there on left out)", d.path, s.name, err)
			}
			d.out.CFI = append(d.out.CFI, e)
			return nil
		}, func(off uint64, err error) {
			d.warn("%s: %s: entry at %#x: %v: skipped", d.path, s.name, off, err)
		})
		if err != nil {
			d.warn("%s: %s: %v", d.path, s.name, err)
		}
	}
	for reason, n := range conv.skipped {
		d.warn("%s: STACK CFI: %d rules left out: %s", d.path, n, reason)
	}
}
