package moduleid

import (
	"bytes"
	"debug/elf"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
)

// ErrNoBuildID means the ELF image has no GNU build ID note.
var ErrNoBuildID = errors.New("no GNU build ID note")

// maxNoteSize bounds how much of one note segment is read; real build-id
// notes are a few dozen bytes.
const maxNoteSize = 1 << 16

// maxNoteTotal bounds the note bytes read from one image, however many
// PT_NOTE segments it claims.
const maxNoteTotal = 1 << 20

// maxPhdrs bounds the program header table read from untrusted images.
const maxPhdrs = 4096

// BuildID returns the GNU build ID of the ELF file read through r, looking in
// both its PT_NOTE segments and SHT_NOTE sections, or Breakpad's text-hash
// identifier when the file has no build ID. Callers that need to tell the two
// apart use [BuildIDNote] and [TextHash].
func BuildID(r io.ReaderAt) ([]byte, error) {
	f, err := elf.NewFile(r)
	if err != nil {
		return nil, fmt.Errorf("build id: %w", err)
	}
	if id, err := BuildIDNote(f); err == nil {
		return id, nil
	}
	id, err := TextHash(f)
	if err != nil {
		return nil, fmt.Errorf("build id: %w and %w", ErrNoBuildID, err)
	}
	return id, nil
}

// BuildIDNote returns the GNU build ID note of an opened ELF file.
func BuildIDNote(f *elf.File) ([]byte, error) {
	bo := f.ByteOrder
	budget := uint64(maxNoteTotal)
	for _, p := range f.Progs {
		if p.Type != elf.PT_NOTE || p.Filesz == 0 || p.Filesz > maxNoteSize {
			continue
		}
		if p.Filesz > budget {
			break
		}
		budget -= p.Filesz
		buf := make([]byte, p.Filesz)
		if _, err := p.ReadAt(buf, 0); err != nil {
			continue
		}
		if id := findNote(buf, bo); id != nil {
			return id, nil
		}
	}
	for _, s := range f.Sections {
		if s.Type != elf.SHT_NOTE || s.Size == 0 || s.Size > maxNoteSize || s.Flags&elf.SHF_COMPRESSED != 0 {
			continue
		}
		if s.Size > budget {
			break
		}
		budget -= s.Size
		buf, err := s.Data()
		if err != nil {
			continue
		}
		if id := findNote(buf, bo); id != nil {
			return id, nil
		}
	}
	return nil, ErrNoBuildID
}

// TextHash returns Breakpad's fallback identifier of an ELF file without a
// build ID: the first page of .text XORed together 16 bytes at a time.
func TextHash(f *elf.File) ([]byte, error) {
	s := f.Section(".text")
	if s == nil || s.Type == elf.SHT_NOBITS {
		return nil, errors.New("no .text section to hash")
	}
	n := min(s.Size, 4096)
	page := make([]byte, n)
	if _, err := s.ReadAt(page, 0); err != nil {
		return nil, fmt.Errorf(".text: %w", err)
	}
	id := make([]byte, 16)
	for i := 0; i < len(page); i += 16 {
		for j := 0; j < 16 && i+j < len(page); j++ {
			id[j] ^= page[i+j]
		}
	}
	return id, nil
}

// LoadedBuildID returns the GNU build ID of an ELF image as loaded in memory: mem
// reads the process's memory with offset 0 at the image's load address (the
// start of its first mapping). Only the ELF header, program headers and
// PT_NOTE segments are read.
func LoadedBuildID(mem io.ReaderAt) ([]byte, error) {
	var ident [elf.EI_NIDENT]byte
	if _, err := mem.ReadAt(ident[:], 0); err != nil {
		return nil, fmt.Errorf("build id: ELF header: %w", err)
	}
	if !bytes.Equal(ident[:4], []byte(elf.ELFMAG)) {
		return nil, errors.New("build id: no ELF magic at image start")
	}
	var bo binary.ByteOrder
	switch elf.Data(ident[elf.EI_DATA]) {
	case elf.ELFDATA2LSB:
		bo = binary.LittleEndian
	case elf.ELFDATA2MSB:
		bo = binary.BigEndian
	default:
		return nil, fmt.Errorf("build id: unknown ELF data encoding %d", ident[elf.EI_DATA])
	}
	var phoff, phentsize, phnum uint64
	is64 := elf.Class(ident[elf.EI_CLASS]) == elf.ELFCLASS64
	switch elf.Class(ident[elf.EI_CLASS]) {
	case elf.ELFCLASS64:
		var h elf.Header64
		if err := binary.Read(io.NewSectionReader(mem, 0, 64), bo, &h); err != nil {
			return nil, fmt.Errorf("build id: ELF header: %w", err)
		}
		phoff, phentsize, phnum = h.Phoff, uint64(h.Phentsize), uint64(h.Phnum)
	case elf.ELFCLASS32:
		var h elf.Header32
		if err := binary.Read(io.NewSectionReader(mem, 0, 52), bo, &h); err != nil {
			return nil, fmt.Errorf("build id: ELF header: %w", err)
		}
		phoff, phentsize, phnum = uint64(h.Phoff), uint64(h.Phentsize), uint64(h.Phnum)
	default:
		return nil, fmt.Errorf("build id: unknown ELF class %d", ident[elf.EI_CLASS])
	}
	want := uint64(32)
	if is64 {
		want = 56
	}
	if phentsize < want || phentsize > 2*want || phnum > maxPhdrs || phoff > 1<<32 {
		return nil, fmt.Errorf("build id: implausible program headers (offset %#x, %d of size %d)", phoff, phnum, phentsize)
	}
	table := make([]byte, phnum*phentsize)
	if _, err := mem.ReadAt(table, int64(phoff)); err != nil {
		return nil, fmt.Errorf("build id: program headers: %w", err)
	}
	type seg struct{ typ, vaddr, size uint64 }
	segs := make([]seg, 0, phnum)
	firstLoad, haveLoad := uint64(0), false
	for i := uint64(0); i < phnum; i++ {
		e := table[i*phentsize:]
		var s seg
		if is64 {
			s = seg{uint64(bo.Uint32(e[0:])), bo.Uint64(e[16:]), bo.Uint64(e[32:])}
		} else {
			s = seg{uint64(bo.Uint32(e[0:])), uint64(bo.Uint32(e[8:])), uint64(bo.Uint32(e[16:]))}
		}
		if elf.ProgType(s.typ) == elf.PT_LOAD && !haveLoad {
			firstLoad, haveLoad = s.vaddr&^0xfff, true
		}
		segs = append(segs, s)
	}
	budget := uint64(maxNoteTotal)
	for _, s := range segs {
		if elf.ProgType(s.typ) != elf.PT_NOTE || s.size == 0 || s.size > maxNoteSize || s.vaddr < firstLoad {
			continue
		}
		if s.size > budget {
			break
		}
		budget -= s.size
		buf := make([]byte, s.size)
		off := s.vaddr - firstLoad
		if off > 1<<40 {
			continue
		}
		if _, err := mem.ReadAt(buf, int64(off)); err != nil {
			continue
		}
		if id := findNote(buf, bo); id != nil {
			return id, nil
		}
	}
	return nil, ErrNoBuildID
}

// findNote walks ELF notes (namesz, descsz, type, name, desc, each padded to
// 4 bytes) and returns the descriptor of the first "GNU" NT_GNU_BUILD_ID note.
func findNote(b []byte, bo binary.ByteOrder) []byte {
	const ntGNUBuildID = 3
	for len(b) >= 12 {
		namesz, descsz, typ := uint64(bo.Uint32(b)), uint64(bo.Uint32(b[4:])), bo.Uint32(b[8:])
		b = b[12:]
		nameEnd := align4(namesz)
		descEnd := nameEnd + align4(descsz)
		// The last note's padding may be missing from the segment.
		if nameEnd > uint64(len(b)) || descsz > uint64(len(b))-nameEnd {
			return nil
		}
		name := b[:namesz]
		if typ == ntGNUBuildID && bytes.Equal(bytes.TrimRight(name, "\x00"), []byte("GNU")) && descsz > 0 {
			return bytes.Clone(b[nameEnd : nameEnd+descsz])
		}
		b = b[min(descEnd, uint64(len(b))):]
	}
	return nil
}

func align4(n uint64) uint64 { return (n + 3) &^ 3 }
