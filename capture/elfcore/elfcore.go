// Package elfcore reads Linux ELF core files: the threads' register notes
// (NT_PRSTATUS, NT_PRFPREG, NT_PRXFPREG), the process notes (NT_PRPSINFO,
// NT_SIGINFO, NT_AUXV, NT_FILE) and the memory the PT_LOAD segments hold.
//
// Cores of x86-64, i386, AArch64 and 32-bit arm processes are understood, whether the
// kernel or qemu-user wrote them. The ELF headers are read with debug/elf;
// the notes are decoded here, bounds-checked, since core files are untrusted
// input.
package elfcore

import (
	"cmp"
	"debug/elf"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"time"
)

// Note types of Linux core files, as in <linux/elf.h>.
const (
	NT_PRSTATUS  = 1
	NT_PRFPREG   = 2
	NT_PRPSINFO  = 3
	NT_AUXV      = 6
	NT_PRXFPREG  = 0x46e62b7f
	NT_SIGINFO   = 0x53494749
	NT_FILE      = 0x46494c45
	maxNoteBytes = 64 << 20 // bounds one PT_NOTE segment
	maxFiles     = 1 << 20  // bounds NT_FILE's entry count
)

// Thread is one thread of the dumped process: its NT_PRSTATUS and the
// register notes that follow it.
type Thread struct {
	ID         int32         // pr_pid: the thread's kernel task id
	Signal     int           // pr_cursig: the signal the thread was stopped by, or 0
	UserTime   time.Duration // pr_utime
	SystemTime time.Duration // pr_stime
	// Regs holds the general registers (pr_reg) as words, in the order of the
	// kernel's user_regs_struct for the machine: on x86-64 r15, r14, r13,
	// r12, rbp, rbx, r11, r10, r9, r8, rax, rcx, rdx, rsi, rdi, orig_rax,
	// rip, cs, eflags, rsp, ss, fs_base, gs_base, ds, es, fs, gs; on i386
	// ebx, ecx, edx, esi, edi, ebp, eax, ds, es, fs, gs, orig_eax, eip, cs,
	// eflags, esp, ss; on AArch64 x0-x30, sp, pc, pstate.
	Regs []uint64
	// FPRegs is the raw NT_PRFPREG note (fxsave area on x86-64, fsave on
	// i386, user_fpsimd_state on AArch64), or nil.
	FPRegs []byte
	// XFPRegs is the raw NT_PRXFPREG note (fxsave area of an i386 thread), or nil.
	XFPRegs []byte
}

// Siginfo is the NT_SIGINFO note: the signal that made the kernel dump core.
type Siginfo struct {
	Signo, Errno, Code int32
	Addr               uint64 // si_addr, for faults
}

// Psinfo is the NT_PRPSINFO note.
type Psinfo struct {
	PID   int32
	PPID  int32
	Fname string // program name, at most 16 bytes
	Args  string // start of the command line, at most 80 bytes
}

// MappedFile is one NT_FILE entry: a file mapped at [Start, End) from
// byte Offset of the file.
type MappedFile struct {
	Start, End, Offset uint64
	Path               string
}

// Segment is a PT_LOAD segment: process memory [Vaddr, Vaddr+Memsz), of which
// the first Filesz bytes were dumped into the core.
type Segment struct {
	Vaddr, Memsz, Filesz uint64
	Flags                elf.ProgFlag
	prog                 *elf.Prog
}

// File is an opened core file.
type File struct {
	Class     elf.Class        // ELFCLASS32 or ELFCLASS64: the word size of the notes
	Machine   elf.Machine      // EM_X86_64, EM_386, EM_AARCH64 or EM_ARM
	ByteOrder binary.ByteOrder // of the core and of the dumped process
	Threads   []Thread         // in note order: the kernel puts the dumping thread first
	Psinfo    *Psinfo          // nil without an NT_PRPSINFO note
	Siginfo   *Siginfo         // nil without an NT_SIGINFO note (qemu-user writes none)
	Auxv      []byte           // the raw NT_AUXV note: (type, value) word pairs; nil without one
	Files     []MappedFile     // NT_FILE's entries; nil without one
	Segments  []Segment        // sorted by Vaddr

	closer io.Closer
}

// Open opens the named core file.
func Open(name string) (*File, error) {
	f, err := os.Open(name)
	if err != nil {
		return nil, err
	}
	c, err := NewFile(f)
	if err != nil {
		f.Close()
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	c.closer = f
	return c, nil
}

// Close closes the file if it was opened by Open.
func (f *File) Close() error {
	if f.closer == nil {
		return nil
	}
	return f.closer.Close()
}

// NewFile reads a core file through r.
func NewFile(r io.ReaderAt) (*File, error) {
	ef, err := elf.NewFile(r)
	if err != nil {
		return nil, fmt.Errorf("core: %w", err)
	}
	if ef.Type != elf.ET_CORE {
		return nil, fmt.Errorf("core: ELF type is %v, not ET_CORE", ef.Type)
	}
	f := &File{Class: ef.Class, Machine: ef.Machine, ByteOrder: ef.ByteOrder}
	switch ef.Machine {
	case elf.EM_X86_64, elf.EM_386, elf.EM_AARCH64, elf.EM_ARM:
	default:
		return nil, fmt.Errorf("core: unsupported machine %v", ef.Machine)
	}
	for i, p := range ef.Progs {
		switch p.Type {
		case elf.PT_LOAD:
			if p.Filesz > p.Memsz {
				return nil, fmt.Errorf("core: segment %d: file size %#x exceeds memory size %#x", i, p.Filesz, p.Memsz)
			}
			f.Segments = append(f.Segments, Segment{Vaddr: p.Vaddr, Memsz: p.Memsz, Filesz: p.Filesz, Flags: p.Flags, prog: p})
		case elf.PT_NOTE:
			if p.Filesz > maxNoteBytes {
				return nil, fmt.Errorf("core: note segment %d: %d bytes is too large", i, p.Filesz)
			}
			// Check that the segment's end is in the file before allocating for it.
			var last [1]byte
			if _, err := p.ReadAt(last[:], int64(p.Filesz)-1); p.Filesz > 0 && err != nil {
				return nil, fmt.Errorf("core: note segment %d: %w", i, err)
			}
			buf := make([]byte, p.Filesz)
			if _, err := p.ReadAt(buf, 0); err != nil {
				return nil, fmt.Errorf("core: note segment %d: %w", i, err)
			}
			if err := f.parseNotes(buf); err != nil {
				return nil, fmt.Errorf("core: note segment %d: %w", i, err)
			}
		}
	}
	slices.SortFunc(f.Segments, func(a, b Segment) int { return cmp.Compare(a.Vaddr, b.Vaddr) })
	if len(f.Threads) == 0 {
		return nil, errors.New("core: no NT_PRSTATUS note")
	}
	return f, nil
}

func (f *File) parseNotes(b []byte) error {
	bo := f.ByteOrder
	for n := 0; len(b) > 0; n++ {
		if len(b) < 12 {
			return fmt.Errorf("note %d: truncated header", n)
		}
		namesz, descsz, typ := uint64(bo.Uint32(b)), uint64(bo.Uint32(b[4:])), bo.Uint32(b[8:])
		b = b[12:]
		nameEnd := align4(namesz)
		if nameEnd > uint64(len(b)) || descsz > uint64(len(b))-nameEnd {
			return fmt.Errorf("note %d (type %#x): name %d and descriptor %d bytes overrun the segment", n, typ, namesz, descsz)
		}
		desc := b[nameEnd : nameEnd+descsz]
		next := nameEnd + align4(descsz)
		if next > uint64(len(b)) {
			next = uint64(len(b))
		}
		b = b[next:]
		if err := f.parseNote(typ, desc); err != nil {
			return fmt.Errorf("note %d (type %#x): %w", n, typ, err)
		}
	}
	return nil
}

// layout describes the word size dependent offsets of prstatus and prpsinfo.
type layout struct {
	word                   int // bytes per long
	regOff, nregs          int // pr_reg offset and register count
	pidOff, timeOff        int // pr_pid, pr_utime
	psPID, psFname, psArgs int
	sigAddr                int // si_addr in siginfo
}

func (f *File) layout() layout {
	switch f.Machine {
	case elf.EM_386:
		return layout{word: 4, regOff: 72, nregs: 17, pidOff: 24, timeOff: 40, psPID: 12, psFname: 28, psArgs: 44, sigAddr: 12}
	case elf.EM_ARM: // i386's, with 18 registers: r0-r15, cpsr, orig_r0
		return layout{word: 4, regOff: 72, nregs: 18, pidOff: 24, timeOff: 40, psPID: 12, psFname: 28, psArgs: 44, sigAddr: 12}
	case elf.EM_AARCH64:
		return layout{word: 8, regOff: 112, nregs: 34, pidOff: 32, timeOff: 48, psPID: 24, psFname: 40, psArgs: 56, sigAddr: 16}
	default: // EM_X86_64
		return layout{word: 8, regOff: 112, nregs: 27, pidOff: 32, timeOff: 48, psPID: 24, psFname: 40, psArgs: 56, sigAddr: 16}
	}
}

func (f *File) parseNote(typ uint32, d []byte) error {
	bo := f.ByteOrder
	l := f.layout()
	switch typ {
	case NT_PRSTATUS:
		end := l.regOff + l.nregs*l.word
		if len(d) < end {
			return fmt.Errorf("prstatus: %d bytes, want at least %d", len(d), end)
		}
		t := Thread{
			ID:     int32(bo.Uint32(d[l.pidOff:])),
			Signal: int(bo.Uint16(d[12:])),
			Regs:   make([]uint64, l.nregs),
		}
		t.UserTime = f.timeval(d[l.timeOff:])
		t.SystemTime = f.timeval(d[l.timeOff+2*l.word:])
		for i := range t.Regs {
			t.Regs[i] = f.word(d[l.regOff+i*l.word:])
		}
		f.Threads = append(f.Threads, t)
	case NT_PRFPREG, NT_PRXFPREG:
		if len(f.Threads) == 0 {
			return errors.New("register note before any NT_PRSTATUS")
		}
		t := &f.Threads[len(f.Threads)-1]
		if typ == NT_PRFPREG {
			t.FPRegs = d
		} else {
			t.XFPRegs = d
		}
	case NT_PRPSINFO:
		if len(d) < l.psArgs+80 {
			return fmt.Errorf("prpsinfo: %d bytes, want %d", len(d), l.psArgs+80)
		}
		f.Psinfo = &Psinfo{
			PID:   int32(bo.Uint32(d[l.psPID:])),
			PPID:  int32(bo.Uint32(d[l.psPID+4:])),
			Fname: cString(d[l.psFname : l.psFname+16]),
			Args:  cString(d[l.psArgs : l.psArgs+80]),
		}
	case NT_SIGINFO:
		if len(d) < l.sigAddr+l.word {
			return fmt.Errorf("siginfo: %d bytes, want at least %d", len(d), l.sigAddr+l.word)
		}
		f.Siginfo = &Siginfo{
			Signo: int32(bo.Uint32(d)),
			Errno: int32(bo.Uint32(d[4:])),
			Code:  int32(bo.Uint32(d[8:])),
			Addr:  f.word(d[l.sigAddr:]),
		}
	case NT_AUXV:
		f.Auxv = d
	case NT_FILE:
		files, err := f.parseFileNote(d)
		if err != nil {
			return fmt.Errorf("file note: %w", err)
		}
		f.Files = files
	}
	return nil
}

// parseFileNote decodes NT_FILE: count and page size, count (start, end,
// page offset) triples, then count NUL-terminated paths.
func (f *File) parseFileNote(d []byte) ([]MappedFile, error) {
	w := uint64(f.layout().word)
	if uint64(len(d)) < 2*w {
		return nil, errors.New("truncated header")
	}
	count, pageSize := f.word(d), f.word(d[w:])
	if count > maxFiles || count*3*w > uint64(len(d))-2*w {
		return nil, fmt.Errorf("%d entries do not fit in %d bytes", count, len(d))
	}
	files := make([]MappedFile, count)
	p := 2 * w
	for i := range files {
		files[i] = MappedFile{Start: f.word(d[p:]), End: f.word(d[p+w:]), Offset: f.word(d[p+2*w:]) * pageSize}
		p += 3 * w
	}
	names := d[p:]
	for i := range files {
		j := slices.Index(names, 0)
		if j < 0 {
			return nil, fmt.Errorf("entry %d: path not NUL-terminated", i)
		}
		files[i].Path = string(names[:j])
		names = names[j+1:]
	}
	return files, nil
}

func (f *File) word(b []byte) uint64 {
	if f.layout().word == 4 {
		return uint64(f.ByteOrder.Uint32(b))
	}
	return f.ByteOrder.Uint64(b)
}

func (f *File) timeval(b []byte) time.Duration {
	w := f.layout().word
	sec, usec := f.word(b), f.word(b[w:])
	return time.Duration(sec)*time.Second + time.Duration(usec)*time.Microsecond
}

func cString(b []byte) string {
	if i := slices.Index(b, 0); i >= 0 {
		b = b[:i]
	}
	return string(b)
}

func align4(n uint64) uint64 { return (n + 3) &^ 3 }

// ReadMemory returns n bytes of the process's memory at addr, as far as the
// core holds them: the range must lie within the dumped part of one segment.
func (f *File) ReadMemory(addr uint64, n int) ([]byte, error) {
	s := f.segment(addr)
	if s == nil {
		return nil, fmt.Errorf("core: address %#x is in no segment", addr)
	}
	off := addr - s.Vaddr
	if n < 0 || uint64(n) > s.Filesz || off > s.Filesz-uint64(n) {
		return nil, fmt.Errorf("core: %d bytes at %#x are not all in the core (segment %#x holds %#x bytes)", n, addr, s.Vaddr, s.Filesz)
	}
	buf := make([]byte, n)
	if _, err := s.prog.ReadAt(buf, int64(off)); err != nil {
		return nil, fmt.Errorf("core: reading %d bytes at %#x: %w", n, addr, err)
	}
	return buf, nil
}

// segment returns the segment whose memory range holds addr, or nil.
func (f *File) segment(addr uint64) *Segment {
	i, _ := slices.BinarySearchFunc(f.Segments, addr, func(s Segment, a uint64) int {
		switch {
		case s.Vaddr+s.Memsz <= a:
			return -1
		case s.Vaddr > a:
			return 1
		}
		return 0
	})
	if i < len(f.Segments) && f.Segments[i].Vaddr <= addr && addr-f.Segments[i].Vaddr < f.Segments[i].Memsz {
		return &f.Segments[i]
	}
	return nil
}
