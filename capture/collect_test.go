package capture

import (
	"bytes"
	"debug/elf"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
	"testing"

	"github.com/gobreakpad/gobreakpad/arch"
	"github.com/gobreakpad/gobreakpad/arch/amd64"
	"github.com/gobreakpad/gobreakpad/arch/arm"
	"github.com/gobreakpad/gobreakpad/capture/elfcore"
	"github.com/gobreakpad/gobreakpad/capture/procfs"
)

// fakeMemory is process memory made of pages, some of them unreadable.
type fakeMemory struct {
	pages map[uint64][]byte // page address -> contents
}

func (m *fakeMemory) ReadMemory(addr uint64, n int) ([]byte, error) {
	out := make([]byte, 0, n)
	for a := addr; a < addr+uint64(n); {
		page, ok := m.pages[a&^(pageSize-1)]
		if !ok {
			return nil, fmt.Errorf("page %#x unmapped", a&^(pageSize-1))
		}
		k := min(uint64(n)-(a-addr), pageSize-a%pageSize)
		out = append(out, page[a%pageSize:a%pageSize+k]...)
		a += k
	}
	return out, nil
}

func (m *fakeMemory) fill(start, end uint64, b byte) {
	for a := start; a < end; a += pageSize {
		p := make([]byte, pageSize)
		for i := range p {
			p[i] = b
		}
		m.pages[a] = p
	}
}

func TestMergeSpans(t *testing.T) {
	got := mergeSpans([]span{{30, 40}, {0, 10}, {10, 15}, {35, 50}, {60, 60}, {5, 7}})
	want := []span{{0, 15}, {30, 50}}
	if !slices.Equal(got, want) {
		t.Errorf("mergeSpans = %v, want %v", got, want)
	}
}

func TestSubtract(t *testing.T) {
	data := []byte("0123456789")
	got := subtract([]Region{{100, data}}, []span{{102, 104}, {108, 200}, {0, 101}})
	want := []Region{{101, []byte("1")}, {104, []byte("4567")}}
	if len(got) != len(want) {
		t.Fatalf("subtract = %v, want %v", got, want)
	}
	for i := range got {
		if got[i].Addr != want[i].Addr || string(got[i].Data) != string(want[i].Data) {
			t.Errorf("region %d = %#x %q, want %#x %q", i, got[i].Addr, got[i].Data, want[i].Addr, want[i].Data)
		}
	}
}

// TestCollectMemorySkipsUnreadable: a stack whose mapping has a hole, a
// thread whose stack pointer is nowhere, and a fault address in unmapped
// memory give notes and a partial capture, not a failure.
func TestCollectMemorySkipsUnreadable(t *testing.T) {
	mem := &fakeMemory{pages: map[uint64][]byte{}}
	mem.fill(0x10000, 0x14000, 's') // stack mapping 0x10000-0x18000; its top half is unreadable
	mem.fill(0x40000, 0x41000, 'c') // code
	maps, err := procfs.ParseMaps([]byte("00010000-00018000 rw-p 00000000 00:00 0 [stack]\n00040000-00041000 r-xp 00000000 08:01 7 /bin/prog\n"))
	if err != nil {
		t.Fatal(err)
	}
	p := &Process{
		Maps: maps,
		Threads: []Thread{
			{ID: 1, SP: 0x13f00, PC: 0x40010},
			{ID: 2, SP: 0x90000, PC: 0x40800},
		},
		Crash: &Crash{ThreadID: 1, Signal: 11, Address: 0x77777},
	}
	p.collectMemory(mem)
	// The stack from sp-128 to the end of the readable part, and the code
	// windows around both PCs.
	if len(p.Memory) != 3 {
		t.Fatalf("memory regions %d, want 3", len(p.Memory))
	}
	if r := p.Memory[0]; r.Addr != 0x13f00-redZone || r.End() != 0x14000 {
		t.Errorf("stack region %#x-%#x, want %#x-%#x", r.Addr, r.End(), 0x13f00-redZone, 0x14000)
	}
	if r := p.Memory[1]; r.Addr != 0x40000 || r.End() != 0x40010+window {
		t.Errorf("code region %#x-%#x", r.Addr, r.End())
	}
	if r := p.Memory[2]; r.Addr != 0x40800-window || r.End() != 0x40800+window {
		t.Errorf("code region %#x-%#x", r.Addr, r.End())
	}
	if s := p.Threads[0].Stack; s.Addr != 0x13f00-redZone || len(s.Data) != 0x180 {
		t.Errorf("thread 1 stack %#x+%#x", s.Addr, len(s.Data))
	}
	if len(p.Threads[1].Stack.Data) != 0 {
		t.Errorf("thread 2 got a stack")
	}
	notes := strings.Join(p.Notes, "\n")
	for _, want := range []string{"memory 0x14000-0x18000 unreadable", "thread 2: stack pointer 0x90000 is in no readable mapping"} {
		if !strings.Contains(notes, want) {
			t.Errorf("notes lack %q:\n%s", want, notes)
		}
	}
}

// elfImage returns the first page of a 64-bit ELF image whose PT_NOTE
// holds a GNU build ID.
func elfImage(id []byte) []byte {
	b := make([]byte, pageSize)
	le := binary.LittleEndian
	copy(b, "\x7fELF\x02\x01\x01")
	le.PutUint64(b[32:], 64) // e_phoff
	le.PutUint16(b[54:], 56) // e_phentsize
	le.PutUint16(b[56:], 2)  // e_phnum
	ph := b[64:]
	le.PutUint32(ph, 1) // PT_LOAD at 0
	le.PutUint64(ph[32:], pageSize)
	ph = b[120:]
	le.PutUint32(ph, 4)          // PT_NOTE
	le.PutUint64(ph[16:], 0x200) // p_vaddr
	le.PutUint64(ph[32:], uint64(16+len(id)))
	n := b[0x200:]
	le.PutUint32(n, 4)
	le.PutUint32(n[4:], uint32(len(id)))
	le.PutUint32(n[8:], 3)
	copy(n[12:], "GNU\x00")
	copy(n[16:], id)
	return b
}

func TestCollectModules(t *testing.T) {
	mem := &fakeMemory{pages: map[uint64][]byte{}}
	mem.pages[0x400000] = elfImage([]byte{1, 2, 3, 4})
	mem.pages[0x700000] = elfImage([]byte{9, 9})
	maps, err := procfs.ParseMaps([]byte(`00400000-00401000 r--p 00000000 08:01 7 /bin/prog
00401000-00403000 r-xp 00001000 08:01 7 /bin/prog
00403000-00404000 rw-p 00000000 00:00 0
00404000-00405000 rw-p 00003000 08:01 7 /bin/prog
00500000-00600000 r--p 00000000 08:01 8 /usr/lib/locale/locale-archive
00600000-00601000 r-xp 00000000 08:01 9 /lib/gone.so
00700000-00702000 r-xp 00000000 00:00 0 [vdso]
`))
	if err != nil {
		t.Fatal(err)
	}
	p := &Process{Maps: maps}
	p.collectModules(mem, func(path string) (io.ReaderAt, io.Closer, error) {
		return nil, nil, errors.New("no such file")
	})
	want := []Module{
		{Base: 0x400000, Size: 0x5000, Path: "/bin/prog", BuildID: []byte{1, 2, 3, 4}},
		{Base: 0x600000, Size: 0x1000, Path: "/lib/gone.so"},
		{Base: 0x700000, Size: 0x2000, Path: "linux-gate.so", BuildID: []byte{9, 9}},
	}
	if len(p.Modules) != len(want) {
		t.Fatalf("modules %+v, want %+v", p.Modules, want)
	}
	for i, m := range p.Modules {
		if m.Base != want[i].Base || m.Size != want[i].Size || m.Path != want[i].Path || string(m.BuildID) != string(want[i].BuildID) {
			t.Errorf("module %d = %+v, want %+v", i, m, want[i])
		}
	}
	if len(p.Notes) != 1 || !strings.Contains(p.Notes[0], "/lib/gone.so: no identifier") {
		t.Errorf("notes %q", p.Notes)
	}
}

func TestAMD64Context(t *testing.T) {
	r := make([]uint64, amd64NumRegs)
	for i := range r {
		r[i] = uint64(0x1000 + i)
	}
	fx := make([]byte, fxsaveSize)
	binary.LittleEndian.PutUint32(fx[24:], 0x1f80) // mxcsr
	c, err := amd64Context(r, fx)
	if err != nil {
		t.Fatal(err)
	}
	if c.Rip != 0x1000+amd64Rip || c.Rsp != 0x1000+amd64Rsp || c.R15 != 0x1000 || c.Rax != 0x1000+amd64Rax || c.MxCsr != 0x1f80 {
		t.Errorf("context %+v", c)
	}
	if c.ContextFlags&amd64.ContextFloatingPoint != amd64.ContextFloatingPoint {
		t.Errorf("flags %#x lack floating point", c.ContextFlags)
	}
	c, _ = amd64Context(r, nil)
	if c.ContextFlags&0x08 != 0 {
		t.Errorf("flags %#x claim floating point without it", c.ContextFlags)
	}
	if _, err := amd64Context(r[:5], nil); err == nil {
		t.Error("short register set accepted")
	}
	x := x86FromAMD64Regs(r)
	xc, err := x86Context(x, nil, fx)
	if err != nil {
		t.Fatal(err)
	}
	if xc.Eip != 0x1000+amd64Rip || xc.Esp != 0x1000+amd64Rsp || xc.Ebx != 0x1000+amd64Rbx || xc.ExtendedRegisters[24] != 0x80 {
		t.Errorf("x86 context %+v", xc)
	}
}

func TestARM64Context(t *testing.T) {
	r := make([]uint64, arm64NumRegs)
	for i := range r {
		r[i] = uint64(i)
	}
	c, err := arm64Context(r, nil)
	if err != nil {
		t.Fatal(err)
	}
	if c.Iregs[29] != 29 || c.Iregs[31] != 31 || c.Iregs[32] != 32 || c.Cpsr != 33 {
		t.Errorf("context %+v", c)
	}
}

// TestARMContext: 32-bit arm's r0-r15 and cpsr, written as an arm context
// of a dump whose machine is armv7l.
func TestARMContext(t *testing.T) {
	r := make([]uint64, 18)
	for i := range r {
		r[i] = uint64(0x100 + i)
	}
	c, err := armContext(r)
	if err != nil {
		t.Fatal(err)
	}
	if c.Iregs[13] != 0x10d || c.Iregs[15] != 0x10f || c.Cpsr != 0x110 || c.ContextFlags != arm.ContextInteger {
		t.Errorf("context %+v", c)
	}
	if _, err := armContext(r[:16]); err == nil {
		t.Errorf("16 registers accepted")
	}
	mc, err := mdContext(arch.ARM, c)
	if err != nil || mc.ARM != c {
		t.Errorf("mdContext: %+v, %v", mc, err)
	}
	if m := machineName(arch.ARM); m != "armv7l" {
		t.Errorf("machine %q", m)
	}
}

// FuzzFromCore converts arbitrary core files: no panic, no endless loop, and
// what converts can be written.
func FuzzFromCore(f *testing.F) {
	for _, seed := range fuzzCoreSeeds() {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		c, err := elfcore.NewFile(bytes.NewReader(data))
		if err != nil {
			return
		}
		p, err := FromCore(c, CoreOptions{})
		if err != nil {
			return
		}
		if err := p.WriteMinidump(io.Discard); err != nil {
			t.Fatalf("writing a converted core: %v", err)
		}
	})
}

// coreNote encodes one ELF note with owner "CORE".
func coreNote(typ uint32, desc []byte) []byte {
	le := binary.LittleEndian
	b := le.AppendUint32(nil, 5)
	b = le.AppendUint32(b, uint32(len(desc)))
	b = le.AppendUint32(b, typ)
	b = append(b, "CORE\x00\x00\x00\x00"...)
	b = append(b, desc...)
	for len(b)%4 != 0 {
		b = append(b, 0)
	}
	return b
}

// fuzzCoreSeeds returns small synthetic cores of an x86-64 and an arm64
// process: one thread whose stack and code segments are dumped, the code
// segment holding an ELF image named by NT_FILE.
func fuzzCoreSeeds() [][]byte {
	le := binary.LittleEndian
	const code, stack = 0x400000, 0x7ff000
	var seeds [][]byte
	for _, machine := range []elf.Machine{elf.EM_X86_64, elf.EM_AARCH64} {
		var prstatus []byte
		if machine == elf.EM_X86_64 {
			prstatus = make([]byte, 336)
			le.PutUint64(prstatus[112+amd64Rip*8:], code+0x100)
			le.PutUint64(prstatus[112+amd64Rsp*8:], stack+0x800)
		} else {
			prstatus = make([]byte, 392)
			le.PutUint64(prstatus[112+32*8:], code+0x100)
			le.PutUint64(prstatus[112+31*8:], stack+0x800)
		}
		le.PutUint16(prstatus[12:], 11)
		le.PutUint32(prstatus[32:], 1000)
		sig := make([]byte, 128)
		le.PutUint32(sig, 11)
		le.PutUint32(sig[8:], 1)
		var files []byte
		for _, v := range []uint64{1, pageSize, code, code + pageSize, 0} {
			files = le.AppendUint64(files, v)
		}
		files = append(files, "/nonexistent/prog\x00"...)
		var auxv []byte
		for _, v := range []uint64{atEntry, code + 0x80, atExecFn, stack + 0xc00, 0, 0} {
			auxv = le.AppendUint64(auxv, v)
		}
		notes := slices.Concat(coreNote(elfcore.NT_PRSTATUS, prstatus), coreNote(elfcore.NT_SIGINFO, sig),
			coreNote(elfcore.NT_FILE, files), coreNote(elfcore.NT_AUXV, auxv))
		// The initial stack: argc, argv, envp and auxv at 0x900, strings at 0xc00.
		stackPage := bytes.Repeat([]byte{0xaa}, pageSize)
		var initial []byte
		for _, v := range []uint64{1, stack + 0xc00, 0, stack + 0xc20, 0} {
			initial = le.AppendUint64(initial, v)
		}
		copy(stackPage[0x900:], append(initial, auxv...))
		copy(stackPage[0xc00:], "/nonexistent/prog\x00")
		copy(stackPage[0xc20:], "HOME=/\x00")
		segs := []struct {
			vaddr uint64
			flags elf.ProgFlag
			data  []byte
		}{
			{code, elf.PF_R | elf.PF_X, elfImage([]byte{1, 2, 3, 4, 5, 6, 7, 8})},
			{stack, elf.PF_R | elf.PF_W, stackPage},
		}
		const ehsize, phsize = 64, 56
		off := uint64(ehsize + phsize*(1+len(segs)))
		h := elf.Header64{Type: uint16(elf.ET_CORE), Machine: uint16(machine), Version: 1, Phoff: ehsize, Ehsize: ehsize, Phentsize: phsize, Phnum: uint16(1 + len(segs))}
		copy(h.Ident[:], elf.ELFMAG)
		h.Ident[elf.EI_CLASS], h.Ident[elf.EI_DATA], h.Ident[elf.EI_VERSION] = byte(elf.ELFCLASS64), byte(elf.ELFDATA2LSB), 1
		var b bytes.Buffer
		binary.Write(&b, le, h)
		binary.Write(&b, le, elf.Prog64{Type: uint32(elf.PT_NOTE), Off: off, Filesz: uint64(len(notes))})
		off += uint64(len(notes))
		for _, s := range segs {
			binary.Write(&b, le, elf.Prog64{Type: uint32(elf.PT_LOAD), Flags: uint32(s.flags), Off: off, Vaddr: s.vaddr, Filesz: uint64(len(s.data)), Memsz: uint64(len(s.data))})
			off += uint64(len(s.data))
		}
		b.Write(notes)
		for _, s := range segs {
			b.Write(s.data)
		}
		seeds = append(seeds, b.Bytes())
	}
	return seeds
}

// TestFromSyntheticCore checks the conversion of the fuzz seeds.
func TestFromSyntheticCore(t *testing.T) {
	for i, seed := range fuzzCoreSeeds() {
		c, err := elfcore.NewFile(bytes.NewReader(seed))
		if err != nil {
			t.Fatalf("seed %d: %v", i, err)
		}
		p, err := FromCore(c, CoreOptions{})
		if err != nil {
			t.Fatalf("seed %d: %v", i, err)
		}
		if len(p.Threads) != 1 || p.Threads[0].PC != 0x400100 || p.Crash == nil || p.Crash.Signal != 11 || p.Crash.Code != 1 {
			t.Errorf("seed %d: threads %+v crash %+v", i, p.Threads, p.Crash)
		}
		if len(p.Modules) != 1 || p.Modules[0].Path != "/nonexistent/prog" || len(p.Modules[0].BuildID) != 8 {
			t.Errorf("seed %d: modules %+v", i, p.Modules)
		}
		if s := p.Threads[0].Stack; s.Addr != 0x7ff800-redZone || s.End() != 0x800000 {
			t.Errorf("seed %d: stack %#x-%#x", i, s.Addr, s.End())
		}
		if !strings.Contains(string(p.ProcMaps), "00400000-00401000 r-xp 00000000 00:00 0 /nonexistent/prog") {
			t.Errorf("seed %d: maps\n%s", i, p.ProcMaps)
		}
		if string(p.CmdLine) != "/nonexistent/prog\x00" || string(p.Environ) != "HOME=/\x00" {
			t.Errorf("seed %d: arguments %q, environment %q", i, p.CmdLine, p.Environ)
		}
		if err := p.WriteMinidump(io.Discard); err != nil {
			t.Error(err)
		}
	}
}

// BenchmarkFromCore converts a small synthetic core and writes its minidump.
func BenchmarkFromCore(b *testing.B) {
	seed := fuzzCoreSeeds()[0]
	b.SetBytes(int64(len(seed)))
	b.ReportAllocs()
	for b.Loop() {
		c, err := elfcore.NewFile(bytes.NewReader(seed))
		if err != nil {
			b.Fatal(err)
		}
		p, err := FromCore(c, CoreOptions{})
		if err != nil {
			b.Fatal(err)
		}
		if err := p.WriteMinidump(io.Discard); err != nil {
			b.Fatal(err)
		}
	}
}

func TestFsaveFromFxsave(t *testing.T) {
	fx := make([]byte, fxsaveSize)
	le := binary.LittleEndian
	le.PutUint16(fx[0:], 0x037f)     // fcw
	le.PutUint16(fx[2:], 6<<11)      // fsw: top = 6
	fx[4] = 1<<6 | 1<<7              // physical registers 6 and 7 in use: st0 and st1
	le.PutUint16(fx[6:], 0x123)      // fop
	le.PutUint32(fx[8:], 0x08049000) // fip
	le.PutUint16(fx[12:], 0x23)      // fcs
	le.PutUint64(fx[32:], 1<<63)     // st0 = 1.0: valid
	le.PutUint16(fx[40:], 0x3fff)    //
	le.PutUint64(fx[48:], 0)         // st1 = +0: zero
	f := fsaveFromFxsave(fx)
	if f.ControlWord&0xffff != 0x037f || f.StatusWord&0xffff != 6<<11 || f.ErrorOffset != 0x08049000 || f.ErrorSelector != 0x123<<16|0x23 {
		t.Errorf("fsave %+v", f)
	}
	// Physical 6 (st0) valid = 00, physical 7 (st1) zero = 01, the rest empty.
	if want := uint32(0xffff0000 | 0x0fff | 0<<12 | 1<<14); f.TagWord != want {
		t.Errorf("tag word %#x, want %#x", f.TagWord, want)
	}
	if f.RegisterArea[7] != 0x80 || f.RegisterArea[9] != 0x3f {
		t.Errorf("st0 bytes % x", f.RegisterArea[:10])
	}
}

// TestReadDSODebugLoop: a link_map list that points back at itself ends
// after one entry instead of looping.
func TestReadDSODebugLoop(t *testing.T) {
	le := binary.LittleEndian
	page := make([]byte, pageSize)
	put := func(off int, vals ...uint64) {
		for i, v := range vals {
			le.PutUint64(page[off+8*i:], v)
		}
	}
	le.PutUint32(page[0x100:], ptPhdr) // program headers at 0x1100
	put(0x100+16, 0x1100)
	le.PutUint32(page[0x138:], ptDynamic)
	put(0x138+16, 0x1200)
	put(0x138+40, 32)
	put(0x200, dtDebug, 0x1300, dtNull, 0)   // dynamic section
	put(0x300, 1, 0x1400, 0x1234, 0, 0x7000) // r_debug
	put(0x400, 0, 0x1500, 0x1200, 0x1400, 0) // link_map whose l_next is itself
	copy(page[0x500:], "self\x00")
	mem := &fakeMemory{pages: map[uint64][]byte{0x1000: page}}
	var auxv []byte
	for _, v := range []uint64{atPhdr, 0x1100, atPhent, 56, atPhnum, 2, 0, 0} {
		auxv = le.AppendUint64(auxv, v)
	}
	d, err := readDSODebug(mem, auxv, 8)
	if err != nil {
		t.Fatal(err)
	}
	if d.Version != 1 || d.Brk != 0x1234 || d.LDBase != 0x7000 || d.Dynamic != 0x1200 || len(d.LinkMaps) != 1 || d.LinkMaps[0].Name != "self" {
		t.Errorf("dso debug %+v", d)
	}
	// Without DT_DEBUG set, an error and no state.
	put(0x200, dtDebug, 0)
	if d, err := readDSODebug(mem, auxv, 8); err == nil {
		t.Errorf("unset DT_DEBUG gave %+v", d)
	}
}

// TestCodeWindowsDistinct: a code address repeated down the stack (a deep
// recursion's return address) takes one window, so the windows reach the
// callers beyond it.
func TestCodeWindowsDistinct(t *testing.T) {
	const sp, code = 0x7000_0000, 0x40_0000
	p := &Process{CPU: arch.AMD64, Maps: []procfs.Mapping{{Start: code, End: code + pageSize, Perms: "r-xp"}}}
	var stack []byte
	for range 2 * maxCodeWindows {
		stack = binary.LittleEndian.AppendUint64(stack, code+0x100)
	}
	stack = binary.LittleEndian.AppendUint64(stack, code+0x800)
	mem := &fakeMemory{pages: map[uint64][]byte{}}
	mem.fill(sp, sp+pageSize, 0)
	copy(mem.pages[sp], stack)
	clip := func(addr, below, above uint64) (span, bool) { return span{addr - below, addr + above}, true }
	got := p.codeWindows(mem, sp, sp+uint64(len(stack)), clip)
	want := []span{{code + 0x100 - codeWindow, code + 0x100 + codeWindow}, {code + 0x800 - codeWindow, code + 0x800 + codeWindow}}
	if !slices.Equal(got, want) {
		t.Errorf("windows %#x; want %#x", got, want)
	}
}
