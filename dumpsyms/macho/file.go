package macho

import (
	"debug/macho"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
)

// Magic numbers of Mach-O files: thin files (32 and 64 bits, both byte
// orders) and universal ones (fat, fat64; always big-endian).
const (
	magic32    = 0xfeedface
	magic64    = 0xfeedfacf
	cigam32    = 0xcefaedfe
	cigam64    = 0xcffaedfe
	magicFat   = 0xcafebabe
	magicFat64 = 0xcafebabf
)

// IsMachO reports whether head, a file's first bytes, starts like a Mach-O
// file, thin or universal (Java class files share the fat magic: the
// reader refuses them for their architecture count).
func IsMachO(head []byte) bool {
	if len(head) < 4 {
		return false
	}
	switch binary.BigEndian.Uint32(head) {
	case magic32, magic64, cigam32, cigam64, magicFat, magicFat64:
		return true
	}
	return false
}

// Slice is one architecture's object file: the whole of a thin file, or one
// entry of a universal one.
type Slice struct {
	CPU    macho.Cpu
	SubCPU uint32
	Offset int64 // in the file
	Size   int64
}

// Arch returns the slice's architecture name as Apple's tools write it:
// x86_64, x86_64h, i386, arm64, arm64e, armv7, ...
func (s Slice) Arch() string { return archName(s.CPU, s.SubCPU) }

// ModuleArch returns the name the MODULE record uses: Breakpad's, except
// that arm64e stays arm64e (Breakpad built off macOS writes arm64) and
// i386 is x86.
func (s Slice) ModuleArch() string {
	if a := s.Arch(); a != "i386" {
		return a
	}
	return "x86"
}

// archNames are the names archName gives, and x86 (Breakpad's name of i386).
var archNames = []string{"x86_64", "x86_64h", "i386", "x86", "arm64", "arm64e", "armv6", "armv7", "armv7s", "armv7k", "arm", "arm64_32", "ppc", "ppc64"}

// IsArchName says whether s names a Mach-O architecture (x86_64, arm64e,
// i386, x86, armv7, ppc, ...), as a slice's Arch does: dump_syms's -a takes
// such a name as Mach-O's -a ARCH and anything else as Breakpad's Linux -a.
func IsArchName(s string) bool { return slices.Contains(archNames, s) }

func archName(cpu macho.Cpu, sub uint32) string {
	sub &^= 0xff000000 // capability bits (pointer authentication ABI, 64-bit libraries)
	switch cpu {
	case macho.CpuAmd64:
		if sub == 8 {
			return "x86_64h"
		}
		return "x86_64"
	case macho.Cpu386:
		return "i386"
	case macho.CpuArm64:
		if sub == 2 {
			return "arm64e"
		}
		return "arm64"
	case macho.CpuArm:
		switch sub {
		case 6:
			return "armv6"
		case 9:
			return "armv7"
		case 11:
			return "armv7s"
		case 12:
			return "armv7k"
		}
		return "arm"
	case macho.CpuArm | 0x02000000: // CPU_TYPE_ARM64_32
		return "arm64_32"
	case macho.CpuPpc:
		return "ppc"
	case macho.CpuPpc64:
		return "ppc64"
	}
	return fmt.Sprintf("cpu%#x", uint32(cpu))
}

// maxArchs bounds the entries of a universal header: real files have a
// handful; the bound keeps a damaged count (up to 2^32) from costing
// memory or time.
const maxArchs = 64

// Slices returns the architectures of the Mach-O file r of the given size:
// one for a thin file, the entries of a universal one, in file order.
func Slices(r io.ReaderAt, size int64) ([]Slice, error) {
	var h [8]byte
	if _, err := r.ReadAt(h[:], 0); err != nil {
		return nil, fmt.Errorf("Mach-O header: %w", truncated(err))
	}
	m := binary.BigEndian.Uint32(h[:])
	switch m {
	case magic32, magic64, cigam32, cigam64:
		bo := binary.ByteOrder(binary.BigEndian)
		if m == cigam32 || m == cigam64 {
			bo = binary.LittleEndian
		}
		return []Slice{{CPU: macho.Cpu(bo.Uint32(h[4:])), SubCPU: subCPU(r, bo), Offset: 0, Size: size}}, nil
	case magicFat, magicFat64:
	default:
		return nil, fmt.Errorf("not a Mach-O file (it starts with % x)", h[:4])
	}
	n := binary.BigEndian.Uint32(h[4:])
	if n == 0 {
		return nil, errors.New("universal header lists no architectures")
	}
	if n > maxArchs {
		return nil, fmt.Errorf("universal header lists %d architectures, over the limit of %d", n, maxArchs)
	}
	entSize := int64(20)
	if m == magicFat64 {
		entSize = 32
	}
	if 8+int64(n)*entSize > size {
		return nil, fmt.Errorf("universal header lists %d architectures, past the end of the %d-byte file", n, size)
	}
	buf := make([]byte, int64(n)*entSize)
	if _, err := r.ReadAt(buf, 8); err != nil {
		return nil, fmt.Errorf("universal header: %w", truncated(err))
	}
	var out []Slice
	for i := range int(n) {
		e := buf[int64(i)*entSize:]
		s := Slice{CPU: macho.Cpu(binary.BigEndian.Uint32(e)), SubCPU: binary.BigEndian.Uint32(e[4:])}
		if m == magicFat64 {
			s.Offset, s.Size = int64(binary.BigEndian.Uint64(e[8:])), int64(binary.BigEndian.Uint64(e[16:]))
		} else {
			s.Offset, s.Size = int64(binary.BigEndian.Uint32(e[8:])), int64(binary.BigEndian.Uint32(e[12:]))
		}
		if s.Offset < 0 || s.Size <= 0 || s.Offset > size || s.Size > size-s.Offset {
			return nil, fmt.Errorf("universal header: %s slice at %#x, %d bytes, is not inside the %d-byte file", s.Arch(), s.Offset, s.Size, size)
		}
		out = append(out, s)
	}
	return out, nil
}

func subCPU(r io.ReaderAt, bo binary.ByteOrder) uint32 {
	var b [4]byte
	if _, err := r.ReadAt(b[:], 8); err != nil {
		return 0
	}
	return bo.Uint32(b[:])
}

func truncated(err error) error {
	if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
		return errors.New("file truncated")
	}
	return err
}

// Select returns the slice for arch (an architecture name, "" for the
// default) and a warning when it is not an exact match. Without arch, a
// thin file's only slice, else x86_64 when present (what Breakpad's
// dump_syms does on the x86 hosts it builds on), else the first. An arm64e
// request without arm64e slice falls back to arm64, as Breakpad's does
// (x86_64h to x86_64 likewise).
func Select(slices []Slice, arch string) (Slice, string, error) {
	if arch == "" {
		if len(slices) == 1 {
			return slices[0], "", nil
		}
		for _, s := range slices {
			if s.Arch() == "x86_64" {
				return s, "", nil
			}
		}
		return slices[0], "", nil
	}
	if arch == "x86" { // Breakpad's name of i386 (its MODULE records')
		arch = "i386"
	}
	for _, s := range slices {
		if s.Arch() == arch {
			return s, "", nil
		}
	}
	// The closest matches: the same CPU without its extension; "arm"
	// (Breakpad's name off macOS of every 32-bit arm slice) the first
	// 32-bit arm slice.
	closest := map[string]string{"arm64e": "arm64", "x86_64h": "x86_64", "armv7s": "armv7", "armv7k": "armv7"}
	for _, s := range slices {
		if a := s.Arch(); closest[arch] == a || arch == "arm" && s.CPU == macho.CpuArm {
			return s, fmt.Sprintf("no %s slice: using %s, the closest match", arch, a), nil
		}
	}
	var names []string
	for _, s := range slices {
		names = append(names, s.Arch())
	}
	return Slice{}, "", fmt.Errorf("no %s slice (the file has %s)", arch, strings.Join(names, ", "))
}

// object is an opened slice: debug/macho's view of it, and what it lacks.
type object struct {
	*macho.File
	slice Slice
	r     *io.SectionReader
	uuid  []byte // LC_UUID, nil when absent
}

// maxLoadCommands bounds the load commands' size: real files have some
// kilobytes of them.
const maxLoadCommands = 16 << 20

// openSlice opens one slice of r with debug/macho, after checking what it
// would trust: the load commands' size against the slice.
func openSlice(r io.ReaderAt, s Slice) (*object, error) {
	sr := io.NewSectionReader(r, s.Offset, s.Size)
	var h [32]byte
	if _, err := sr.ReadAt(h[:28], 0); err != nil {
		return nil, fmt.Errorf("%s: Mach-O header: %w", s.Arch(), truncated(err))
	}
	m := binary.BigEndian.Uint32(h[:])
	bo := binary.ByteOrder(binary.BigEndian)
	hsize := int64(28)
	switch m {
	case cigam32:
		bo = binary.LittleEndian
	case cigam64:
		bo, hsize = binary.LittleEndian, 32
	case magic64:
		hsize = 32
	case magic32:
	default:
		return nil, fmt.Errorf("%s: not a Mach-O object (it starts with % x)", s.Arch(), h[:4])
	}
	ncmds, cmdsz := bo.Uint32(h[16:]), int64(bo.Uint32(h[20:]))
	if cmdsz > s.Size-hsize || cmdsz > maxLoadCommands {
		return nil, fmt.Errorf("%s: load commands (%d bytes) run past the end of the %d-byte object", s.Arch(), cmdsz, s.Size)
	}
	if int64(ncmds)*8 > cmdsz {
		return nil, fmt.Errorf("%s: %d load commands cannot fit in %d bytes", s.Arch(), ncmds, cmdsz)
	}
	cmds := make([]byte, cmdsz)
	if _, err := sr.ReadAt(cmds, hsize); err != nil {
		return nil, fmt.Errorf("%s: load commands: %w", s.Arch(), truncated(err))
	}
	if err := checkTables(cmds, ncmds, bo, hsize == 32, s.Size); err != nil {
		return nil, fmt.Errorf("%s: %w", s.Arch(), err)
	}
	f, err := macho.NewFile(sr)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", s.Arch(), err)
	}
	o := &object{File: f, slice: s, r: sr}
	o.slice.SubCPU = f.SubCpu
	for _, l := range f.Loads {
		b := l.Raw()
		if len(b) >= 24 && bo.Uint32(b) == 0x1b { // LC_UUID
			o.uuid = b[8:24]
		}
	}
	return o, nil
}

// checkTables refuses the tables debug/macho would read past the end of a
// size-byte object: the symbol and string tables (LC_SYMTAB), the indirect
// symbols (LC_DYSYMTAB) and the sections' relocations. debug/macho fails
// on them too, but only after allocating the size they declare (up to
// 10 MiB a table before its first read), so a damaged count cost
// milliseconds of zeroing each time; refused here, the work on such a
// file stays proportional to its size. Commands too short for their
// fields are left to debug/macho's own error.
func checkTables(cmds []byte, ncmds uint32, bo binary.ByteOrder, is64 bool, size int64) error {
	past := func(what string, off uint32, n uint64) error {
		if n > 0 && uint64(off)+n > uint64(size) {
			return fmt.Errorf("%s (%d bytes at %#x) runs past the end of the %d-byte object", what, n, off, size)
		}
		return nil
	}
	symsz := uint64(12)
	if is64 {
		symsz = 16
	}
	for i := uint32(0); i < ncmds && len(cmds) >= 8; i++ {
		cmd, n := bo.Uint32(cmds), bo.Uint32(cmds[4:])
		if n < 8 || uint64(n) > uint64(len(cmds)) {
			return nil // debug/macho says why
		}
		c := cmds[:n]
		cmds = cmds[n:]
		switch {
		case cmd == 0x2 && len(c) >= 24: // LC_SYMTAB: symoff, nsyms, stroff, strsize
			if err := past("string table", bo.Uint32(c[16:]), uint64(bo.Uint32(c[20:]))); err != nil {
				return err
			}
			if err := past("symbol table", bo.Uint32(c[8:]), uint64(bo.Uint32(c[12:]))*symsz); err != nil {
				return err
			}
		case cmd == 0xb && len(c) >= 64: // LC_DYSYMTAB: indirectsymoff, nindirectsyms
			if err := past("indirect symbol table", bo.Uint32(c[56:]), uint64(bo.Uint32(c[60:]))*4); err != nil {
				return err
			}
		case cmd == 0x1 || cmd == 0x19: // LC_SEGMENT, LC_SEGMENT_64
			head, sect, rel := 56, 68, 48
			if cmd == 0x19 {
				head, sect, rel = 72, 80, 56
			}
			if len(c) < head {
				continue
			}
			nsect := int(bo.Uint32(c[head-8:]))
			for j := 0; j < nsect && head+(j+1)*sect <= len(c); j++ {
				sc := c[head+j*sect:]
				if err := past("relocations", bo.Uint32(sc[rel:]), uint64(bo.Uint32(sc[rel+4:]))*8); err != nil {
					return err
				}
			}
		}
	}
	return nil
}

// debugID returns Breakpad's identifier of the object: its LC_UUID in
// upper-case hexadecimal followed by the age 0, or without LC_UUID the MD5
// of its sections' bytes in its place (in load-command order, S_ZEROFILL
// sections and those without bytes in the file left out), as Breakpad's
// MachoID::MD5 computes it, with Breakpad's MD5 (bpMD5: not quite MD5).
func (o *object) debugID() (string, error) {
	id := o.uuid
	if id == nil {
		h := newBPMD5()
		var buf []byte // one buffer for all the sections (io.Copy allocates 32 KiB each time)
		for _, s := range o.Sections {
			if s.Flags&0xff == 1 || s.Offset == 0 {
				continue
			}
			if int64(s.Offset)+int64(s.Size) > o.slice.Size {
				return "", fmt.Errorf("no LC_UUID, and section %s,%s runs past the end of the file", s.Seg, s.Name)
			}
			if buf == nil {
				buf = make([]byte, 32<<10)
			}
			if _, err := io.CopyBuffer(h, io.NewSectionReader(o.r, int64(s.Offset), int64(s.Size)), buf); err != nil {
				return "", err
			}
		}
		id = h.Sum()
	}
	return fmt.Sprintf("%X0", id), nil
}

// codeID returns the INFO CODE_ID Mozilla's dump_syms writes: the LC_UUID
// in upper-case hexadecimal, without the age; "" without LC_UUID.
func (o *object) codeID() string {
	if o.uuid == nil {
		return ""
	}
	return fmt.Sprintf("%X", o.uuid)
}
