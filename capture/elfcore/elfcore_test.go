package elfcore

import (
	"bytes"
	"debug/elf"
	"encoding/binary"
	"strings"
	"testing"
	"time"
)

// note encodes one ELF note with owner "CORE".
func note(typ uint32, desc []byte) []byte {
	var b bytes.Buffer
	le := binary.LittleEndian
	b.Write(le.AppendUint32(nil, 5))
	b.Write(le.AppendUint32(nil, uint32(len(desc))))
	b.Write(le.AppendUint32(nil, typ))
	b.WriteString("CORE\x00\x00\x00\x00")
	b.Write(desc)
	for b.Len()%4 != 0 {
		b.WriteByte(0)
	}
	return b.Bytes()
}

// makeCore builds a little-endian ELF64 x86-64 core with one PT_NOTE holding
// notes and one PT_LOAD holding mem at vaddr.
func makeCore(notes []byte, vaddr uint64, mem []byte) []byte {
	le := binary.LittleEndian
	const ehsize, phsize = 64, 56
	noteOff := uint64(ehsize + 2*phsize)
	memOff := noteOff + uint64(len(notes))
	var b bytes.Buffer
	h := elf.Header64{Type: uint16(elf.ET_CORE), Machine: uint16(elf.EM_X86_64), Version: 1, Phoff: ehsize, Ehsize: ehsize, Phentsize: phsize, Phnum: 2}
	copy(h.Ident[:], elf.ELFMAG)
	h.Ident[elf.EI_CLASS], h.Ident[elf.EI_DATA], h.Ident[elf.EI_VERSION] = byte(elf.ELFCLASS64), byte(elf.ELFDATA2LSB), 1
	binary.Write(&b, le, h)
	binary.Write(&b, le, elf.Prog64{Type: uint32(elf.PT_NOTE), Off: noteOff, Filesz: uint64(len(notes))})
	binary.Write(&b, le, elf.Prog64{Type: uint32(elf.PT_LOAD), Flags: uint32(elf.PF_R | elf.PF_W), Off: memOff, Vaddr: vaddr, Filesz: uint64(len(mem)), Memsz: uint64(len(mem)) + 0x1000})
	b.Write(notes)
	b.Write(mem)
	return b.Bytes()
}

func prstatus(tid uint32, sig uint16, rip uint64) []byte {
	d := make([]byte, 336)
	le := binary.LittleEndian
	le.PutUint16(d[12:], sig)
	le.PutUint32(d[32:], tid)
	le.PutUint64(d[48:], 2)      // utime.tv_sec
	le.PutUint64(d[56:], 500000) // utime.tv_usec
	le.PutUint64(d[112+16*8:], rip)
	return d
}

func sampleCore() []byte {
	le := binary.LittleEndian
	var fileNote []byte
	for _, v := range []uint64{2, 4096, 0x400000, 0x401000, 0, 0x401000, 0x403000, 1} {
		fileNote = le.AppendUint64(fileNote, v)
	}
	fileNote = append(fileNote, "/bin/prog\x00/bin/prog\x00"...)
	sig := make([]byte, 128)
	le.PutUint32(sig, 11)
	le.PutUint32(sig[8:], 1)
	le.PutUint64(sig[16:], 0xdead)
	ps := make([]byte, 136)
	le.PutUint32(ps[24:], 42)
	copy(ps[40:], "prog")
	copy(ps[56:], "prog --flag")
	var notes []byte
	notes = append(notes, note(NT_PRSTATUS, prstatus(42, 11, 0x401234))...)
	notes = append(notes, note(NT_PRPSINFO, ps)...)
	notes = append(notes, note(NT_SIGINFO, sig)...)
	notes = append(notes, note(NT_AUXV, []byte{6, 0, 0, 0, 0, 0, 0, 0, 0, 16, 0, 0, 0, 0, 0, 0})...)
	notes = append(notes, note(NT_FILE, fileNote)...)
	notes = append(notes, note(NT_PRFPREG, make([]byte, 512))...)
	notes = append(notes, note(NT_PRSTATUS, prstatus(43, 0, 0x401300))...)
	return makeCore(notes, 0x7fff0000, []byte("stack bytes here"))
}

func TestNewFile(t *testing.T) {
	f, err := NewFile(bytes.NewReader(sampleCore()))
	if err != nil {
		t.Fatal(err)
	}
	if f.Machine != elf.EM_X86_64 || len(f.Threads) != 2 {
		t.Fatalf("machine %v, %d threads", f.Machine, len(f.Threads))
	}
	t0 := f.Threads[0]
	if t0.ID != 42 || t0.Signal != 11 || t0.Regs[16] != 0x401234 || len(t0.FPRegs) != 512 || t0.UserTime != 2500*time.Millisecond {
		t.Errorf("thread 0 = id %d sig %d rip %#x fp %d utime %v", t0.ID, t0.Signal, t0.Regs[16], len(t0.FPRegs), t0.UserTime)
	}
	if f.Threads[1].FPRegs != nil || f.Threads[1].Regs[16] != 0x401300 {
		t.Errorf("thread 1 = %+v", f.Threads[1])
	}
	if f.Siginfo == nil || *f.Siginfo != (Siginfo{Signo: 11, Code: 1, Addr: 0xdead}) {
		t.Errorf("siginfo = %+v", f.Siginfo)
	}
	if f.Psinfo == nil || f.Psinfo.PID != 42 || f.Psinfo.Fname != "prog" || f.Psinfo.Args != "prog --flag" {
		t.Errorf("psinfo = %+v", f.Psinfo)
	}
	want := []MappedFile{{0x400000, 0x401000, 0, "/bin/prog"}, {0x401000, 0x403000, 4096, "/bin/prog"}}
	if len(f.Files) != 2 || f.Files[0] != want[0] || f.Files[1] != want[1] {
		t.Errorf("files = %+v, want %+v", f.Files, want)
	}
	if len(f.Auxv) != 16 {
		t.Errorf("auxv %d bytes", len(f.Auxv))
	}
	got, err := f.ReadMemory(0x7fff0006, 5)
	if err != nil || string(got) != "bytes" {
		t.Errorf("ReadMemory = %q, %v", got, err)
	}
	// Inside the segment but past what was dumped; and outside any segment.
	for _, a := range []uint64{0x7fff0010, 0x7fff0800, 0x1000, 0xffffffffffffffff} {
		if _, err := f.ReadMemory(a, 4); err == nil {
			t.Errorf("ReadMemory(%#x) succeeded", a)
		}
	}
}

func TestNewFileErrors(t *testing.T) {
	good := sampleCore()
	cases := map[string]func([]byte){
		"not ELF":        func(b []byte) { b[0] = 'X' },
		"executable":     func(b []byte) { b[16] = byte(elf.ET_EXEC) },
		"machine":        func(b []byte) { b[18] = byte(elf.EM_PPC) },
		"note overrun":   func(b []byte) { binary.LittleEndian.PutUint32(b[64+56*2+4:], 1<<30) },
		"short prstatus": func(b []byte) { binary.LittleEndian.PutUint32(b[64+56*2+4:], 16) },
	}
	if _, err := NewFile(bytes.NewReader(makeCore(note(NT_AUXV, make([]byte, 16)), 0x1000, nil))); err == nil || !strings.Contains(err.Error(), "no NT_PRSTATUS") {
		t.Errorf("core without threads: %v", err)
	}
	if _, err := NewFile(bytes.NewReader(makeCore(note(NT_PRFPREG, make([]byte, 512)), 0x1000, nil))); err == nil {
		t.Error("register note before NT_PRSTATUS accepted")
	}
	for name, mutate := range cases {
		b := bytes.Clone(good)
		mutate(b)
		if _, err := NewFile(bytes.NewReader(b)); err == nil {
			t.Errorf("%s: accepted", name)
		} else if !strings.HasPrefix(err.Error(), "core: ") {
			t.Errorf("%s: error %q lacks context", name, err)
		}
	}
}

func FuzzNewFile(f *testing.F) {
	f.Add(sampleCore())
	f.Fuzz(func(t *testing.T, data []byte) {
		c, err := NewFile(bytes.NewReader(data))
		if err != nil {
			return
		}
		for _, s := range c.Segments {
			_, _ = c.ReadMemory(s.Vaddr, 16)
		}
	})
}

// TestNewFileARM: a 32-bit arm core (ELF32, EM_ARM) whose NT_PRSTATUS
// holds r0-r15, cpsr and orig_r0 at i386's offsets.
func TestNewFileARM(t *testing.T) {
	le := binary.LittleEndian
	st := make([]byte, 148)
	le.PutUint16(st[12:], 11) // pr_cursig
	le.PutUint32(st[24:], 77) // pr_pid
	for i := range 18 {
		le.PutUint32(st[72+4*i:], uint32(0x100+i))
	}
	notes := note(NT_PRSTATUS, st)
	const ehsize, phsize = 52, 32
	var b bytes.Buffer
	h := elf.Header32{Type: uint16(elf.ET_CORE), Machine: uint16(elf.EM_ARM), Version: 1, Phoff: ehsize, Ehsize: ehsize, Phentsize: phsize, Phnum: 1}
	copy(h.Ident[:], elf.ELFMAG)
	h.Ident[elf.EI_CLASS], h.Ident[elf.EI_DATA], h.Ident[elf.EI_VERSION] = byte(elf.ELFCLASS32), byte(elf.ELFDATA2LSB), 1
	binary.Write(&b, le, h)
	binary.Write(&b, le, elf.Prog32{Type: uint32(elf.PT_NOTE), Off: ehsize + phsize, Filesz: uint32(len(notes))})
	b.Write(notes)
	f, err := NewFile(bytes.NewReader(b.Bytes()))
	if err != nil {
		t.Fatal(err)
	}
	if f.Machine != elf.EM_ARM || len(f.Threads) != 1 {
		t.Fatalf("machine %v, %d threads", f.Machine, len(f.Threads))
	}
	th := f.Threads[0]
	if th.ID != 77 || th.Signal != 11 || len(th.Regs) != 18 || th.Regs[15] != 0x10f || th.Regs[16] != 0x110 {
		t.Errorf("thread = id %d sig %d regs %#x", th.ID, th.Signal, th.Regs)
	}
}
