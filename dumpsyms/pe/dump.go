// Package pe reads Windows symbols — a PDB, or a PE (.exe, .dll) and the
// PDB its CodeView record names — into the neutral model of package
// dumpsyms, as Breakpad's and Mozilla's Windows dump_syms write them:
//
//   - MODULE windows x86|x86_64|arm64 from the PDB's GUID, the DBI age and
//     the PDB's name; INFO CODE_ID from the PE's time stamp and image size
//     when the PE is at hand (given, or beside the PDB);
//   - FILE records from the modules' C13 file checksums and the /names
//     table;
//   - FUNC records from the modules' procedure symbols, named with their
//     argument lists formatted from the type records as Mozilla's
//     dump_syms does, and their C13 line records; with Options.Inlines,
//     INLINE_ORIGIN and INLINE records from the inline sites' binary
//     annotations;
//   - PUBLIC records from the S_PUB32 function symbols outside functions,
//     with the parameter size of a C-decorated name (_f@12, @f@12), C++
//     decorated names demangled as Mozilla's dump_syms writes them
//     (demangle/msvc's Mozilla style; names it cannot read kept whole);
//   - STACK WIN 4 records from the DBI's FrameData (new FPO) stream and
//     STACK WIN 0 from the old FPO stream, in Breakpad's order and format;
//   - STACK CFI for x64 from the PE's .pdata/.xdata (pe/unwindinfo) when
//     the PE is at hand, in the style Options.CFIStyle names;
//   - code reordered after linking (OMAP) in final-image addresses, ranges
//     split as Breakpad splits them.
//
// A PE whose PDB is not found gives what the PE alone holds: Breakpad's
// records (dumpsyms/peexports) or Mozilla's, with a FUNC placeholder for
// every .pdata function (Options.PEOnly).
package pe

import (
	"bytes"
	"cmp"
	"debug/pe"
	"encoding/binary"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/gobreakpad/gobreakpad/dumpsyms"
	"github.com/gobreakpad/gobreakpad/moduleid"
	"github.com/gobreakpad/gobreakpad/pdb"
	"github.com/gobreakpad/gobreakpad/symfile"
	"github.com/gobreakpad/gobreakpad/symstore"
)

// peInfo is what the PE gives: the code identifier and the CodeView
// record.
type peInfo struct {
	path      string
	name      string // base name
	timeStamp uint32
	sizeOfImg uint32
	rsds      moduleid.RSDS
	hasRSDS   bool
}

// pdbBase is the base name of the PDB path the CodeView record gives (a
// Windows or Unix path).
func (pi *peInfo) pdbBase() string {
	return symstore.BaseName(pi.rsds.PDBFileName)
}

// Dump reads the PDB or PE file at path with the default Windows choices
// ([Options]' zero values).
func Dump(path string, opts dumpsyms.Options) (*dumpsyms.Model, error) {
	return DumpWith(path, Options{Options: opts})
}

// DumpWith reads the PDB or PE file at path. For a PE it reads the PDB
// found beside it (by the name its CodeView record gives) or at the path
// the record names; a PE whose PDB is not found gives the records the PE
// alone holds, in the form opts.PEOnly chooses. For a PDB it reads the PE
// beside it (same base name, .exe or .dll) when there is one. When the PE
// is at hand and matches the PDB, its time stamp and size give INFO
// CODE_ID and, for x64, its .pdata/.xdata the STACK CFI records in
// opts.CFIStyle.
func DumpWith(path string, opts Options) (*dumpsyms.Model, error) {
	head := make([]byte, len(pdb.Magic))
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	n, _ := io.ReadFull(f, head)
	f.Close()
	head = head[:n]
	if bytes.HasPrefix(head, []byte("MZ")) {
		pi, err := readPE(path)
		if err != nil {
			return nil, err
		}
		pdbPath, err := findPDB(path, pi)
		if err != nil && opts.FindPDB != nil && pi.hasRSDS {
			var ferr error
			if pdbPath, ferr = opts.FindPDB(pi.pdbBase(), pi.rsds.DebugID()); ferr == nil {
				err = nil
			} else {
				err = fmt.Errorf("%w; %w", err, ferr)
			}
		}
		if err != nil {
			warn(opts.Options, "%v: writing what the PE alone holds", err)
			return dumpPEOnly(path, opts)
		}
		return dumpPDBPath(pdbPath, pi, opts)
	}
	var pi *peInfo
	for _, ext := range []string{".exe", ".dll"} {
		cand := strings.TrimSuffix(path, filepath.Ext(path)) + ext
		if p, err := readPE(cand); err == nil {
			pi = p
			break
		}
	}
	return dumpPDBPath(path, pi, opts)
}

// DumpFiles reads the PDB at pdbPath with the PE at pePath (empty: none)
// as DumpWith reads a PDB with the PE beside it, for files that are not
// side by side under their own names (extracted from a symbol server's
// cabinets, fetched into a cache). The MODULE record names the PDB's file
// (opts.Name aside), INFO CODE_ID the PE's.
func DumpFiles(pdbPath, pePath string, opts Options) (*dumpsyms.Model, error) {
	var pi *peInfo
	if pePath != "" {
		p, err := readPE(pePath)
		if err != nil {
			return nil, err
		}
		pi = p
	}
	return dumpPDBPath(pdbPath, pi, opts)
}

func readPE(path string) (*peInfo, error) {
	f, err := pe.Open(path)
	if err != nil {
		return nil, fmt.Errorf("%s: a PE file that does not read: %w", path, err)
	}
	defer f.Close()
	pi := &peInfo{path: path, name: filepath.Base(path), timeStamp: f.FileHeader.TimeDateStamp}
	var dd pe.DataDirectory
	switch oh := f.OptionalHeader.(type) {
	case *pe.OptionalHeader32:
		pi.sizeOfImg = oh.SizeOfImage
		if len(oh.DataDirectory) > pe.IMAGE_DIRECTORY_ENTRY_DEBUG {
			dd = oh.DataDirectory[pe.IMAGE_DIRECTORY_ENTRY_DEBUG]
		}
	case *pe.OptionalHeader64:
		pi.sizeOfImg = oh.SizeOfImage
		if len(oh.DataDirectory) > pe.IMAGE_DIRECTORY_ENTRY_DEBUG {
			dd = oh.DataDirectory[pe.IMAGE_DIRECTORY_ENTRY_DEBUG]
		}
	}
	// The debug directory: 28-byte entries; type 2 is CodeView.
	if dd.Size > 0 {
		if dir := readRVA(f, dd.VirtualAddress, min(dd.Size, 28*64)); dir != nil {
			for i := 0; i+28 <= len(dir); i += 28 {
				e := dir[i:]
				if binary.LittleEndian.Uint32(e[12:]) != 2 {
					continue
				}
				size, rva := binary.LittleEndian.Uint32(e[16:]), binary.LittleEndian.Uint32(e[20:])
				if cv := readRVA(f, rva, min(size, 4096)); cv != nil {
					if r, ok := moduleid.ParseRSDS(cv); ok {
						pi.rsds, pi.hasRSDS = r, true
					}
				}
			}
		}
	}
	return pi, nil
}

// readRVA reads n bytes at an RVA from the section holding it.
func readRVA(f *pe.File, rva, n uint32) []byte {
	for _, s := range f.Sections {
		if rva >= s.VirtualAddress && uint64(rva)+uint64(n) <= uint64(s.VirtualAddress)+uint64(max(s.VirtualSize, s.Size)) {
			b := make([]byte, n)
			m, _ := s.ReadAt(b, int64(rva-s.VirtualAddress))
			if m < int(n) {
				return nil
			}
			return b
		}
	}
	return nil
}

// findPDB finds the PDB of a PE: beside it under the name its CodeView
// record gives, beside it with the PE's own base name, or at the recorded
// path.
func findPDB(pePath string, pi *peInfo) (string, error) {
	dir := filepath.Dir(pePath)
	var cands []string
	if pi.hasRSDS && pi.rsds.PDBFileName != "" {
		cands = append(cands, filepath.Join(dir, pi.pdbBase()), pi.rsds.PDBFileName)
	}
	cands = append(cands, strings.TrimSuffix(pePath, filepath.Ext(pePath))+".pdb")
	for _, c := range cands {
		if st, err := os.Stat(c); err == nil && st.Mode().IsRegular() {
			return c, nil
		}
	}
	if pi.hasRSDS {
		return "", fmt.Errorf("%s: its PDB %q is neither beside it nor at the recorded path", pePath, pi.rsds.PDBFileName)
	}
	return "", fmt.Errorf("%s: no CodeView record names a PDB and none is beside it", pePath)
}

func dumpPDBPath(path string, pi *peInfo, wopts Options) (*dumpsyms.Model, error) {
	opts := wopts.Options
	f, err := pdb.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	name := filepath.Base(path)
	if opts.Name != "" {
		name = opts.Name
	}
	syms, err := dumpMapped(f, name, opts)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	// The PE is the PDB's when its CodeView record names the PDB's GUID
	// (or it has none to say otherwise).
	matched := pi != nil && (!pi.hasRSDS || pi.rsds.GUID == guidOf(f))
	code := name
	if matched {
		code = pi.name
	}
	if !opts.HeaderOnly {
		addUnknownPublic(syms, code)
	}
	switch {
	case matched:
		syms.CodeID = symfile.CodeID{ID: strings.ToUpper(moduleid.PECodeID(pi.timeStamp, pi.sizeOfImg)), File: pi.name}
		if !opts.HeaderOnly && !opts.NoCFI {
			syms.CFI = peCFI(pi.path, wopts)
		}
	case pi != nil:
		warn(opts, "%s does not match %s (GUID %s): INFO CODE_ID left out", pi.name, path, pi.rsds.DebugID())
	}
	return syms, nil
}

func guidOf(f *pdb.File) moduleid.GUID {
	if in, err := f.Info(); err == nil {
		return in.GUID
	}
	return moduleid.GUID{}
}

func warn(opts dumpsyms.Options, format string, args ...any) {
	if opts.Warn != nil {
		opts.Warn(format, args...)
	}
}

// Arch returns Breakpad's name of a PDB's machine type.
func Arch(m pdb.Machine) string {
	switch m {
	case pdb.MachineI386:
		return "x86"
	case pdb.MachineAMD64:
		return "x86_64"
	case pdb.MachineARM64:
		return "arm64"
	case pdb.MachineARM, pdb.MachineARMNT:
		return "arm"
	case pdb.MachineIA64:
		return "ia64"
	}
	return "unknown"
}

// DumpPDB reads an open PDB into the model; name is the MODULE record's
// file name.
func DumpPDB(f *pdb.File, name string, opts dumpsyms.Options) (*dumpsyms.Model, error) {
	info, err := f.Info()
	if err != nil {
		return nil, err
	}
	dbi, err := f.DBI()
	if err != nil {
		return nil, err
	}
	age := dbi.Header.Age
	if age == 0 {
		age = info.Age
	}
	s := &dumpsyms.Model{
		Module:     symfile.Module{OS: "windows", Arch: Arch(dbi.Header.Machine), ID: moduleid.DebugID(info.GUID, age), Name: name},
		HeaderOnly: opts.HeaderOnly,
	}
	if opts.HeaderOnly {
		return s, nil
	}
	d := &dumper{f: f, dbi: dbi, opts: opts, syms: s, fileIDs: map[string]uint32{}, origins: map[string]uint32{}}
	if err := d.run(); err != nil {
		return nil, err
	}
	return s, nil
}

type dumper struct {
	f    *pdb.File
	dbi  *pdb.DBI
	opts dumpsyms.Options
	syms *dumpsyms.Model

	names    *pdb.StringTable
	sections []pdb.SectionHeader // of the original image when OMAP
	imap     *imageMap
	fmt      *formatter

	fileIDs map[string]uint32
	origins map[string]uint32
}

func (d *dumper) warn(format string, args ...any) { warn(d.opts, format, args...) }

// damage reports a record or stream of kind that failed to parse
// (dumpsyms.Options.Damaged): said by dump_syms once per kind with a
// count, an error with --strict.
func (d *dumper) damage(kind, format string, args ...any) { d.opts.Damaged(kind, format, args...) }

// inconsistent reports a part of the PDB that parsed but contradicts the
// rest (Options.Inconsistent).
func (d *dumper) inconsistent(kind, format string, args ...any) {
	d.opts.Inconsistent(kind, format, args...)
}

func (d *dumper) progress(stage string) {
	if d.opts.Progress != nil {
		d.opts.Progress(stage)
	}
}

func (d *dumper) run() error {
	var err error
	if d.names, err = d.f.Names(); err != nil {
		d.damage("names stream", "%v: file names and frame programs left out", err)
	}
	if err := d.readAddressMap(); err != nil {
		return err
	}
	tpi, err := d.f.TPI()
	if err != nil {
		d.damage("type stream (TPI)", "%v: function names without argument lists", err)
	}
	ipi, err := d.f.IPI()
	if err != nil {
		d.damage("id stream (IPI)", "%v: inline names left out", err)
	}
	ptr := uint64(4)
	if m := d.dbi.Header.Machine; m == pdb.MachineAMD64 || m == pdb.MachineARM64 || m == pdb.MachineIA64 {
		ptr = 8
	}
	d.fmt = &formatter{tpi: tpi, ipi: ipi, ptrSize: ptr, fwd: map[string]uint64{}, xmod: &crossModules{d: d}}
	d.progress("functions")
	funcs := d.functions()
	// The type records (the largest streams, often copied: see pdb.Open)
	// name functions and inlines only: free them before the publics.
	d.fmt = nil
	d.f.MSF.Release(pdb.StreamTPI)
	d.f.MSF.Release(pdb.StreamIPI)
	d.progress("publics")
	d.publics(funcs)
	d.progress("frame data")
	d.stackWin()
	return nil
}

// readAddressMap reads the section headers and OMAP tables that turn
// section:offset addresses into RVAs.
func (d *dumper) readAddressMap() error {
	read := func(slot int) []byte {
		b, err := d.f.DebugStream(slot)
		if err != nil {
			d.damage("debug streams", "debug stream %d: %v", slot, err)
		}
		return b
	}
	var from, to []pdb.OMAP
	var err error
	if b := read(pdb.DbgOmapFromSrc); b != nil {
		if from, err = pdb.ParseOMAP(b); err != nil {
			d.damage("debug streams", "OMAP from source: %v", err)
		}
	}
	if b := read(pdb.DbgOmapToSrc); b != nil {
		if to, err = pdb.ParseOMAP(b); err != nil {
			d.damage("debug streams", "OMAP to source: %v", err)
		}
	}
	slot := pdb.DbgSectionHdr
	if len(from) > 0 {
		if b := read(pdb.DbgSectionHdrOrig); b != nil {
			slot = pdb.DbgSectionHdrOrig
		}
	}
	b := read(slot)
	secs, err := pdb.ParseSectionHeaders(b)
	if err != nil {
		return err
	}
	if len(secs) == 0 {
		return fmt.Errorf("no section headers: addresses cannot be computed: %w", pdb.ErrFormat)
	}
	d.sections = secs
	if len(from) > 0 {
		var length uint32
		for _, s := range secs {
			length = max(length, s.VirtualAddress+s.VirtualSize)
		}
		d.imap = newImageMap(from, to, length)
	}
	return nil
}

// rva turns a section:offset address into an RVA of the original image
// (before OMAP); ok is false for addresses outside the sections.
func (d *dumper) rva(seg uint16, off uint32) (uint32, bool) {
	if seg == 0 || int(seg) > len(d.sections) {
		return 0, false
	}
	return d.sections[seg-1].VirtualAddress + off, true
}

// finalRVA maps a single original RVA through OMAP, as Breakpad maps a
// public symbol's address: the first piece of the one-byte range there.
func (d *dumper) finalRVA(r uint32) (uint32, bool) {
	if d.imap == nil {
		return r, true
	}
	rs := d.imap.mapRange(addrRange{r, 1})
	if len(rs) == 0 {
		return 0, false
	}
	return rs[0].rva, true
}

func (d *dumper) fileID(name string) uint32 {
	if id, ok := d.fileIDs[name]; ok {
		return id
	}
	id := uint32(len(d.syms.Files))
	d.fileIDs[name] = id
	d.syms.Files = append(d.syms.Files, symfile.File{Number: id, Name: name})
	return id
}

func (d *dumper) originID(name string) uint32 {
	if id, ok := d.origins[name]; ok {
		return id
	}
	id := uint32(len(d.syms.Origins))
	d.origins[name] = id
	d.syms.Origins = append(d.syms.Origins, symfile.InlineOrigin{ID: id, Name: name})
	return id
}

func sortFuncs(fs []dumpsyms.Function) {
	slices.SortStableFunc(fs, func(a, b dumpsyms.Function) int { return cmp.Compare(a.Ranges[0].Address, b.Ranges[0].Address) })
}

// addUnknownPublic ends the symbols with Mozilla's marker PUBLIC "<unknown
// in CODE>" just past the last FUNC or PUBLIC, so that addresses after the
// last known symbol are not taken for it.
func addUnknownPublic(s *dumpsyms.Model, code string) {
	var at uint64
	var found bool
	for _, f := range s.Funcs {
		for _, r := range f.Ranges {
			end := r.Address + r.Size
			if r.Size == 0 {
				end++
			}
			if !found || r.Address >= at {
				at, found = end, true
			}
		}
	}
	for _, p := range s.Publics {
		if !found || p.Address >= at {
			at, found = p.Address+1, true
		}
	}
	if !found {
		return
	}
	for _, p := range s.Publics {
		if p.Address == at {
			return
		}
	}
	s.Publics = append(s.Publics, symfile.Public{Address: at, Name: "<unknown in " + code + ">"})
	slices.SortStableFunc(s.Publics, func(a, b symfile.Public) int { return cmp.Compare(a.Address, b.Address) })
}
