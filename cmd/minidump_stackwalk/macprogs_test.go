package main

import (
	"debug/macho"
	"encoding/binary"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/gobreakpad/gobreakpad/arch"
	"github.com/gobreakpad/gobreakpad/arch/amd64"
	"github.com/gobreakpad/gobreakpad/arch/arm64"
	"github.com/gobreakpad/gobreakpad/dumpsyms"
	dsmacho "github.com/gobreakpad/gobreakpad/dumpsyms/macho"
	"github.com/gobreakpad/gobreakpad/internal/testkit/machine"
	"github.com/gobreakpad/gobreakpad/minidump"
	"github.com/gobreakpad/gobreakpad/minidump/synth"
	"github.com/gobreakpad/gobreakpad/stackwalk"
	"github.com/gobreakpad/gobreakpad/symbols"
	"github.com/gobreakpad/gobreakpad/symbols/symsrc"
	"github.com/gobreakpad/gobreakpad/symstore"
	"github.com/gobreakpad/gobreakpad/unwind"
	"golang.org/x/arch/arm64/arm64asm"
	"golang.org/x/arch/x86/x86asm"
)

// The macOS truth cases (testdata/macprogs, built by its mkprogs.sh): the
// machine code of prog and libsys.dylib run on a model of the registers
// and the stack, as the Windows sweeps (../dump_syms/testdata/winprogs/
// mkx64) run theirs. The chain, leaf first: nofp_leaf (frameless leaf, the
// crash), fp_callback (frame pointer), libsys.dylib's sys_apply (a system
// library without symbols, calling back), dwarf_frame (its rules only in
// __eh_frame), nofp_regs (frameless with callee-saved registers),
// nofp_big (frameless, a 3000-byte frame: x86_64's frameless-indirect
// mode), nofp_huge (frameless, 6000 bytes: arm64 moves sp by a shifted
// immediate), fp_outer (frame pointer, callee-saved registers), main, whose
// return address is 0 (the thread's end, as a thread's start routine has
// it).
//
// For each function of the chain and each of its instructions from its
// entry to its return, a dump (a Crashpad-like macOS dump: MacOS platform,
// the modules with their LC_UUID as CodeView GUID and age 0, the thread's
// registers and stack) has the thread stopped there, its callers stopped at
// their calls; the stack and registers are what the real instructions
// leave, run in address order on the model (each function here is
// straight-line as far as the stack pointer and the saved registers go;
// calls keep the stack pointer and clobber the volatile registers), values
// the model cannot know being distinct junk words. The walk must give the
// chain, every caller with the registers the model has (those the walk says
// it knows), and no frame more. $MACPROGS_DUMPS, when set, names a folder
// the dumps are written to (ARCH-FUNCTION+OFFSET.dmp), to walk by hand.
var macChain = []string{"nofp_leaf", "fp_callback", "libsys.dylib!sys_apply", "dwarf_frame", "nofp_regs", "nofp_big", "nofp_huge", "fp_outer", "main"}

// macModule is a Mach-O file of testdata/macprogs loaded at base.
type macModule struct {
	name        string
	base, slide uint64
	size        uint32
	uuid        [16]byte
	text        []byte
	textAddr    uint64
	funcs       map[string][2]uint64 // loaded start and end
}

func loadMacModule(path string, slide uint64) (*macModule, error) {
	f, err := macho.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	m := &macModule{name: filepath.Base(path), slide: slide, funcs: map[string][2]uint64{}}
	seg := f.Segment("__TEXT")
	if seg == nil {
		return nil, fmt.Errorf("%s: no __TEXT", path)
	}
	m.base = seg.Addr + slide
	var end uint64
	for _, l := range f.Loads {
		if s, ok := l.(*macho.Segment); ok && s.Name != "__PAGEZERO" {
			end = max(end, s.Addr+s.Memsz+slide)
		}
		if raw := l.Raw(); len(raw) >= 24 && f.ByteOrder.Uint32(raw) == 0x1b { // LC_UUID
			copy(m.uuid[:], raw[8:24])
		}
	}
	m.size = uint32(end - m.base)
	sect := f.Section("__text")
	if sect == nil {
		return nil, fmt.Errorf("%s: no __text", path)
	}
	if m.text, err = sect.Data(); err != nil {
		return nil, err
	}
	m.textAddr = sect.Addr + slide
	var idx uint8
	for i, s := range f.Sections {
		if s == sect {
			idx = uint8(i + 1)
		}
	}
	var starts []uint64
	names := map[uint64]string{}
	for _, s := range f.Symtab.Syms {
		if s.Type&0xe0 == 0 && s.Type&0x0e == 0x0e && s.Sect == idx {
			names[s.Value+slide] = strings.TrimPrefix(s.Name, "_")
			starts = append(starts, s.Value+slide)
		}
	}
	sort.Slice(starts, func(i, j int) bool { return starts[i] < starts[j] })
	for i, s := range starts {
		e := m.textAddr + uint64(len(m.text))
		if i+1 < len(starts) {
			e = starts[i+1]
		}
		m.funcs[names[s]] = [2]uint64{s, e}
	}
	return m, nil
}

func (m *macModule) guid() minidump.GUID {
	u := m.uuid
	return minidump.GUID{Data1: binary.BigEndian.Uint32(u[0:]), Data2: binary.BigEndian.Uint16(u[4:]), Data3: binary.BigEndian.Uint16(u[6:]),
		Data4: [8]byte(u[8:16])}
}

// macInst is one decoded instruction of either architecture.
type macInst struct {
	pc  uint64
	len int
	x86 x86asm.Inst
	a64 arm64asm.Inst
}

// macFrame is one function of the chain.
type macFrame struct {
	m     *macModule
	name  string
	start uint64
	code  []macInst // from the entry to the first return
}

func (m *macModule) decode(isARM bool, name string) (macFrame, error) {
	r, ok := m.funcs[name]
	if !ok {
		return macFrame{}, fmt.Errorf("%s: no function %s", m.name, name)
	}
	fr := macFrame{m: m, name: name, start: r[0]}
	for pc := r[0]; pc < r[1]; {
		off := pc - m.textAddr
		in := macInst{pc: pc}
		var ret bool
		if isARM {
			a, err := arm64asm.Decode(m.text[off:])
			if err != nil {
				return fr, fmt.Errorf("%s: %#x: %w", name, pc, err)
			}
			in.a64, in.len, ret = a, 4, a.Op == arm64asm.RET
		} else {
			x, err := x86asm.Decode(m.text[off:min(uint64(len(m.text)), off+16)], 64)
			if err != nil {
				return fr, fmt.Errorf("%s: %#x: %w", name, pc, err)
			}
			in.x86, in.len, ret = x, x.Len, x.Op == x86asm.RET
		}
		fr.code = append(fr.code, in)
		pc += uint64(in.len)
		if ret {
			return fr, nil
		}
	}
	return fr, fmt.Errorf("%s: no return", name)
}

// callSite returns the call in f of callee: a direct call of its start,
// else the only call through a register.
func (f macFrame) callSite(callee uint64) (macInst, error) {
	var indirect []macInst
	for _, in := range f.code {
		switch {
		case in.x86.Op == x86asm.CALL:
			if rel, ok := in.x86.Args[0].(x86asm.Rel); ok {
				if in.pc+uint64(in.len)+uint64(int64(rel)) == callee {
					return in, nil
				}
			} else {
				indirect = append(indirect, in)
			}
		case in.a64.Op == arm64asm.BL:
			if rel, ok := in.a64.Args[0].(arm64asm.PCRel); ok && in.pc+uint64(int64(rel)) == callee {
				return in, nil
			}
		case in.a64.Op == arm64asm.BLR:
			indirect = append(indirect, in)
		}
	}
	if len(indirect) != 1 {
		return macInst{}, fmt.Errorf("%s: no call of %#x and %d indirect calls", f.name, callee, len(indirect))
	}
	return indirect[0], nil
}

// model is the register and stack model of both architectures: x86_64
// registers by x86asm's 64-bit register (machine.X64), arm64's x0-x30 and
// sp (31), one memory.
type model struct {
	machine.X64
	a64 [32]uint64
}

// xvalue is the value of an operand (machine.X64.Operand), junk when that
// is unknown.
func (st *model) xvalue(a x86asm.Arg, bytes int) uint64 {
	if v, ok := st.Operand(a, bytes); ok {
		return v
	}
	return st.Next()
}

// execX86 runs the instructions of code before stop.
func (st *model) execX86(code []macInst, stop uint64) error {
	for _, c := range code {
		if c.pc == stop {
			return nil
		}
		in := c.x86
		if st.Step(in, st.xvalue) {
			continue
		}
		dst, dst64 := machine.Dest(in)
		switch in.Op {
		case x86asm.MOV:
			if dst != 0 && dst64 {
				st.Regs[dst] = st.xvalue(in.Args[1], in.MemBytes)
				continue
			}
		case x86asm.SUB, x86asm.ADD:
			if dst == x86asm.RSP {
				v := st.xvalue(in.Args[1], 8)
				if in.Op == x86asm.SUB {
					v = -v
				}
				st.Regs[x86asm.RSP] += v
				continue
			}
		case x86asm.CALL:
			for _, r := range []x86asm.Reg{x86asm.RAX, x86asm.RCX, x86asm.RDX, x86asm.RSI, x86asm.RDI, x86asm.R8, x86asm.R9, x86asm.R10, x86asm.R11} {
				st.Regs[r] = st.Next()
			}
			continue
		case x86asm.RET, x86asm.LEAVE, x86asm.JMP:
			return fmt.Errorf("%#x: %v before the stop", c.pc, in)
		case x86asm.IMUL, x86asm.MUL, x86asm.DIV, x86asm.IDIV, x86asm.CQO:
			if in.Args[1] == nil {
				st.Regs[x86asm.RAX], st.Regs[x86asm.RDX] = st.Next(), st.Next()
				continue
			}
		}
		if dst == x86asm.RSP || dst == x86asm.RBP && in.Op != x86asm.MOV {
			return fmt.Errorf("%#x: %v: the model has no rule for it", c.pc, in)
		}
		st.Clobber(in)
	}
	return fmt.Errorf("%#x not reached", stop)
}

// execA64 runs the instructions of code before stop.
func (st *model) execA64(code []macInst, stop uint64) error {
	for _, c := range code {
		if c.pc == stop {
			return nil
		}
		in := c.a64
		args := machine.A64Args(in)
		switch in.Op {
		case arm64asm.BL, arm64asm.BLR:
			for r := 0; r <= 18; r++ {
				st.a64[r] = st.Next()
			}
			st.a64[30] = c.pc + 4 // as the callee returns
			continue
		case arm64asm.RET, arm64asm.B, arm64asm.BR:
			return fmt.Errorf("%#x: %v before the stop", c.pc, in)
		case arm64asm.NOP, arm64asm.CMP, arm64asm.CMN, arm64asm.TST:
			continue
		}
		if len(args) == 0 {
			continue
		}
		if _, ok := args[len(args)-1].(arm64asm.MemImmediate); ok {
			mem, ok := machine.ParseA64Mem(args[len(args)-1])
			if !ok {
				return fmt.Errorf("%#x: %v: memory operand", c.pc, in)
			}
			addr := mem.Addr(st.a64[mem.Base])
			store := in.Op == arm64asm.STP || in.Op == arm64asm.STR || in.Op == arm64asm.STUR
			load := in.Op == arm64asm.LDP || in.Op == arm64asm.LDR || in.Op == arm64asm.LDUR
			for i, a := range args[:len(args)-1] {
				r, ok := machine.A64GPR(a)
				if !ok {
					continue
				}
				wide := machine.A64Wide(a)
				switch {
				case store && wide:
					st.Words[addr+uint64(8*i)] = st.a64[r]
				case store:
					st.Store(addr+uint64(4*i), 4, 0)
				case load && wide:
					st.a64[r] = st.Load(addr + uint64(8*i))
				default:
					if in.Op != arm64asm.STRB && in.Op != arm64asm.STRH {
						st.a64[r] = st.Next()
					} else {
						st.Store(addr, 1, 0)
					}
				}
			}
			st.a64[mem.Base] = mem.Writeback(st.a64[mem.Base])
			continue
		}
		d, ok := machine.A64GPR(args[0])
		if !ok {
			continue
		}
		v, form, known := machine.A64Move(in, st.a64[:])
		switch {
		case form && known:
			st.a64[d] = v
		case form:
			if in.Op != arm64asm.MOV && (d == 31 || d == 29) {
				return fmt.Errorf("%#x: %v: the model has no rule for it", c.pc, in)
			}
			st.a64[d] = st.Next()
		default:
			if d == 31 {
				return fmt.Errorf("%#x: %v: the model has no rule for it", c.pc, in)
			}
			if _, isMem := args[len(args)-1].(arm64asm.MemExtend); isMem && (in.Op == arm64asm.STRB || in.Op == arm64asm.STR || in.Op == arm64asm.STRH) {
				continue // a store through an index: junk addresses
			}
			st.a64[d] = st.Next()
		}
	}
	return fmt.Errorf("%#x not reached", stop)
}

// macTruth is one frame of the chain as the model has it: its registers
// in the walker's slots (only those the truth covers).
type macTruth map[int]uint64

// macRegsX86 are the registers a caller's frame must have right on
// x86_64 (those the callee preserves), in arch/amd64's slots.
var macRegsX86 = map[int]x86asm.Reg{
	amd64.RBX: x86asm.RBX, amd64.RBP: x86asm.RBP, amd64.RSP: x86asm.RSP,
	amd64.R12: x86asm.R12, amd64.R13: x86asm.R13, amd64.R14: x86asm.R14, amd64.R15: x86asm.R15,
}

const (
	macStackTop = 0x7ff7bfe00000
	macSysSlide = 0x7ff810000000
)

// macDump encodes the dump of a thread stopped at `at` in frames[0], its
// callers stopped at their calls, and returns the frames' registers.
func macDump(isARM bool, mods []*macModule, frames []macFrame, at uint64) ([]byte, []macTruth, error) {
	st := &model{X64: machine.NewX64(0x0bad00000000)}
	for i, r := range machine.GPRs {
		st.Regs[r] = 0x1000000000 + uint64(i)*0x01010101
	}
	for i := range st.a64 {
		st.a64[i] = 0x1000000000 + uint64(i)*0x01010101
	}
	// main's caller: a thread's start, return address and frame pointer 0.
	st.Regs[x86asm.RSP], st.Regs[x86asm.RBP] = macStackTop-0x40, 0
	st.Push(0)
	st.a64[31], st.a64[29], st.a64[30] = macStackTop-0x40, 0, 0
	var truth []macTruth
	var pc uint64
	for j := len(frames) - 1; j >= 0; j-- {
		f := frames[j]
		stop, stopLen := at, 0
		if j > 0 {
			call, err := f.callSite(frames[j-1].start)
			if err != nil {
				return nil, nil, err
			}
			stop, stopLen = call.pc, call.len
		}
		var err error
		if isARM {
			err = st.execA64(f.code, stop)
		} else {
			err = st.execX86(f.code, stop)
		}
		if err != nil {
			return nil, nil, fmt.Errorf("%s: %w", f.name, err)
		}
		pc = stop + uint64(stopLen)
		tr := macTruth{}
		if isARM {
			for r := 19; r <= 29; r++ {
				tr[r] = st.a64[r]
			}
			tr[arm64.RegSP], tr[arm64.RegPC] = st.a64[31], pc
		} else {
			for slot, r := range macRegsX86 {
				tr[slot] = st.Regs[r]
			}
			tr[amd64.RIP] = pc
		}
		truth = append([]macTruth{tr}, truth...)
		if j > 0 {
			if isARM {
				st.a64[30] = pc
			} else {
				st.Push(pc)
			}
		}
	}
	pc = at
	truth[0] = nil // the context itself
	var b *synth.Builder
	var ctx *minidump.Context
	sp := st.Regs[x86asm.RSP]
	if isARM {
		sp = st.a64[31]
		b = synth.New(arch.ARM64, minidump.PlatformMacOSX)
		c := &arm64.Context{ContextFlags: arm64.ContextFull}
		copy(c.Iregs[:31], st.a64[:31])
		c.Iregs[31], c.Iregs[32] = sp, pc
		ctx = synth.ARM64(c)
	} else {
		b = synth.New(arch.AMD64, minidump.PlatformMacOSX)
		r := st.Regs
		ctx = synth.AMD64(&amd64.Context{ContextFlags: amd64.ContextFull, Rip: pc, Rsp: sp, Rbp: r[x86asm.RBP],
			Rax: r[x86asm.RAX], Rbx: r[x86asm.RBX], Rcx: r[x86asm.RCX], Rdx: r[x86asm.RDX], Rsi: r[x86asm.RSI], Rdi: r[x86asm.RDI],
			R8: r[x86asm.R8], R9: r[x86asm.R9], R10: r[x86asm.R10], R11: r[x86asm.R11],
			R12: r[x86asm.R12], R13: r[x86asm.R13], R14: r[x86asm.R14], R15: r[x86asm.R15],
			Cs: 0x2b, Fs: 0, Gs: 0, EFlags: 0x10246})
	}
	stack := synth.NewStack(sp, 8)
	for a := sp; a < macStackTop; a += 8 {
		stack.U64(st.Words[a])
	}
	b.AddThread(0x103, ctx, stack)
	// EXC_BAD_ACCESS / KERN_INVALID_ADDRESS, as Crashpad records it.
	rec := minidump.ExceptionRecord{ExceptionCode: 1, ExceptionFlags: 1, ExceptionAddress: 0, NumberParameters: 2}
	rec.ExceptionInformation[0] = 1
	b.SetExceptionRecord(0x103, rec, ctx)
	for _, m := range mods {
		path := "/Users/dev/Prog.app/Contents/MacOS/" + m.name
		if m.slide != 0 {
			path = "/usr/lib/system/" + m.name
		}
		b.AddPDBModule(path, m.base, m.size, m.guid(), 0, m.name)
	}
	data, err := b.Bytes()
	return data, truth, err
}

// macWant is a chain frame's module and function as a walk names them.
func macWant(name string) (string, string) {
	if mod, fn, ok := strings.Cut(name, "!"); ok {
		return mod, fn
	}
	return "prog", name
}

// macCounts are a sweep's figures.
type macCounts struct {
	positions, right, frames, framesTrue, spurious int
	// in libsys.dylib's prologue and epilogue (no symbols, so no rules:
	// frame pointers, which are not set up there, or scanning)
	sysPositions, sysRight int
}

func (c macCounts) String() string {
	return fmt.Sprintf("%d positions (%d in libsys.dylib's prologue, epilogue or past its call on arm64), walked right at %d (%d of those in libsys.dylib); "+
		"%d true frames, %d found, %d spurious frames",
		c.positions, c.sysPositions, c.right, c.sysRight, c.frames, c.framesTrue, c.spurious)
}

// macSweep walks the positions of one architecture's build with src, reporting each wrong one through bad.
func macSweep(t *testing.T, dir string, isARM bool, walk macWalker, bad func(inSys bool, why string)) macCounts {
	t.Helper()
	mods, frames := macLoad(t, dir, isARM)
	sys := mods[1]
	var c macCounts
	for k := range frames {
		f := frames[k]
		body := [2]uint64{f.start, f.start} // libsys.dylib: where its frame record is set
		if f.m == sys {
			body = sysBody(f, isARM)
		}
		for _, in := range f.code {
			data, truth, err := macDump(isARM, mods, frames[k:], in.pc)
			if err != nil {
				t.Fatalf("%s+%#x: %v", f.name, in.pc-f.start, err)
			}
			if d := os.Getenv("MACPROGS_DUMPS"); d != "" {
				_ = os.WriteFile(filepath.Join(d, fmt.Sprintf("%s-%s+%x.dmp", filepath.Base(dir), f.name, in.pc-f.start)), data, 0o644)
			}
			why := walk(data, macChain[k:], truth, &c)
			inSys := f.m == sys && (in.pc < body[0] || in.pc >= body[1])
			c.positions++
			if inSys {
				c.sysPositions++
			}
			if why == "" {
				c.right++
				if inSys {
					c.sysRight++
				}
			} else {
				bad(inSys, fmt.Sprintf("%s+%#x (%s): %s", f.name, in.pc-f.start, macInstString(in, isARM), why))
			}
		}
	}
	return c
}

// macLoad loads prog and libsys.dylib of an architecture's build and
// decodes the chain's functions.
func macLoad(t *testing.T, dir string, isARM bool) ([]*macModule, []macFrame) {
	t.Helper()
	prog, err := loadMacModule(filepath.Join(dir, "app", "prog"), 0)
	if err != nil {
		t.Fatal(err)
	}
	sys, err := loadMacModule(filepath.Join(dir, "system", "libsys.dylib"), macSysSlide)
	if err != nil {
		t.Fatal(err)
	}
	var frames []macFrame
	for _, n := range macChain {
		m := prog
		mod, fn := macWant(n)
		if mod != "prog" {
			m = sys
		}
		f, err := m.decode(isARM, fn)
		if err != nil {
			t.Fatal(err)
		}
		frames = append(frames, f)
	}
	return []*macModule{prog, sys}, frames
}

// sysBody returns where a walk can leave a frame-pointer function without
// unwind information stopped there: from the instruction after the one
// setting the frame pointer up to its restoring pop (x86_64), or up to its
// call (arm64).
func sysBody(f macFrame, isARM bool) [2]uint64 {
	var b [2]uint64
	for _, in := range f.code {
		s := macInstString(in, isARM)
		switch {
		case b[0] == 0 && (strings.HasPrefix(s, "MOV RBP, RSP") || strings.HasPrefix(s, "ADD X29, SP")):
			b[0] = in.pc + uint64(in.len)
		case b[0] != 0 && b[1] == 0 && (strings.HasPrefix(s, "POP RBP") || strings.HasPrefix(s, "ADD RSP")):
			b[1] = in.pc
		case b[0] != 0 && b[1] == 0 && strings.HasPrefix(s, "BLR"):
			// arm64: after its call, lr is the return address into
			// itself, which the frame-pointer step takes as the caller's
			// pc (Breakpad's rule for the context's frame).
			b[1] = in.pc + 4
		}
	}
	return b
}

func macInstString(in macInst, isARM bool) string {
	if isARM {
		return in.a64.String()
	}
	return in.x86.String()
}

// macWalker walks a dump and compares its first thread with the chain
// (and the model's registers, when it has them), counting into c; it
// returns what is wrong, "" when nothing is.
type macWalker func(data []byte, chain []string, truth []macTruth, c *macCounts) string

// inProcess is the macWalker of our walker with src.
func inProcess(src symbols.Source, isARM bool) macWalker {
	return func(data []byte, chain []string, truth []macTruth, c *macCounts) string {
		return macWalk(data, src, chain, truth, isARM, c)
	}
}

// macWalk walks a dump and compares its first thread with the chain and
// the model's registers; it returns what is wrong, "" when nothing is.
func macWalk(data []byte, src symbols.Source, chain []string, truth []macTruth, isARM bool, c *macCounts) string {
	f, err := minidump.NewFileBytes(data)
	if err != nil {
		return err.Error()
	}
	ps, err := stackwalk.Read(f)
	if err != nil {
		return err.Error()
	}
	ps.Walk(stackwalk.Options{Symbols: src})
	if len(ps.Threads) == 0 {
		return "no thread"
	}
	var got []*stackwalk.StackFrame
	for _, fr := range ps.Threads[0].Frames {
		if fr.Trust != unwind.TrustInline {
			got = append(got, fr)
		}
	}
	var why []string
	c.frames += len(chain)
	for i, fr := range got {
		name := "?"
		if fr.Module != nil {
			name = symstore.BaseName(fr.Module.CodeFile) + "!" + fr.Function
		}
		if i >= len(chain) {
			c.spurious++
			why = append(why, fmt.Sprintf("frame %d: spurious %s (found by %s)", i, name, fr.Trust))
			continue
		}
		mod, fn := macWant(chain[i])
		if mod != "prog" && name == mod+"!" {
			fn = "" // no symbols (unless its binary is in the folders: its export)
		}
		if name != mod+"!"+fn {
			c.spurious++
			why = append(why, fmt.Sprintf("frame %d: %s (found by %s), want %s", i, name, fr.Trust, chain[i]))
			continue
		}
		if i > 0 && (fr.Trust == unwind.TrustScan || fr.Trust == unwind.TrustCFIScan) {
			c.spurious++
			why = append(why, fmt.Sprintf("frame %d: %s found by %s", i, name, fr.Trust))
			continue
		}
		wrongReg := ""
		regs := fr.Context()
		for slot, v := range truth[i] {
			if regs.Has(slot) && regs.Regs[slot] != v {
				names := amd64.RegisterNames
				if isARM {
					names = arm64.RegisterNames
				}
				wrongReg = fmt.Sprintf("frame %d %s: %s = %#x, want %#x", i, name, names[slot], regs.Regs[slot], v)
			}
		}
		if wrongReg != "" {
			c.spurious++
			why = append(why, wrongReg)
			continue
		}
		c.framesTrue++
	}
	if len(got) < len(chain) {
		why = append(why, fmt.Sprintf("%d frames of %d", len(got), len(chain)))
	}
	return strings.Join(why, "; ")
}

// macSources are the symbol sources the sweeps walk with: the folder of
// prog and its dSYM (symbols/machosyms, as minidump_stackwalk DIR), and
// stores of dump_syms' output for prog.dSYM + prog with the default rules
// and with --cfi-style exact. libsys.dylib is in none.
func macSources(t *testing.T, dir string) (map[string]symbols.Source, map[string]string) {
	t.Helper()
	out, stores := map[string]symbols.Source{}, map[string]string{}
	open := func(name string, paths ...string) {
		s, err := symsrc.Open(symsrc.Config{Paths: paths, CacheDir: t.TempDir()})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { s.Close() })
		out[name] = s
	}
	open("folder", filepath.Join(dir, "app"))
	open("folder+system", filepath.Join(dir, "app"), filepath.Join(dir, "system"))
	for _, style := range []string{"default", "exact"} {
		m, err := dsmacho.Dump(filepath.Join(dir, "app", "prog"), dsmacho.Options{
			Options: dumpsyms.Options{Inlines: true}, DSYM: filepath.Join(dir, "app", "prog.dSYM"), Exact: style == "exact"})
		if err != nil {
			t.Fatal(err)
		}
		store := t.TempDir()
		p := filepath.Join(store, m.Module.Name, m.Module.ID, m.Module.Name+".sym")
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		f, err := os.Create(p)
		if err != nil {
			t.Fatal(err)
		}
		err = m.Write(f)
		if cerr := f.Close(); err == nil {
			err = cerr
		}
		if err != nil {
			t.Fatal(err)
		}
		open(style, store)
		stores[style] = store
	}
	return out, stores
}

// TestMacPrograms sweeps testdata/macprogs' chain (see macChain) on both
// architectures with each symbol source: with the folder of native files
// and with dump_syms --cfi-style exact every position outside
// libsys.dylib's prologue, epilogue and (arm64) post-call instructions
// walks right, and with libsys.dylib's binary in the folders too every
// position; the default rules' wrong positions are counted (logged). Every
// instruction of the chain's functions is a position (313 dumps, each
// walked with the four sources in 0.7 s).
func TestMacPrograms(t *testing.T) {
	for _, a := range []string{"x86_64", "arm64"} {
		dir := filepath.Join("testdata", "macprogs", a)
		srcs, _ := macSources(t, dir)
		for _, name := range []string{"folder", "folder+system", "exact", "default"} {
			var wrong []string
			c := macSweep(t, dir, a == "arm64", inProcess(srcs[name], a == "arm64"), func(inSys bool, s string) {
				// libsys.dylib's prologue and epilogue are right only
				// with its binary in the folders (its unwind information).
				if !inSys || name == "folder+system" {
					wrong = append(wrong, s)
				}
			})
			t.Logf("%s, %s: %v", a, name, c)
			if c.positions < 100 || c.frames < 4*c.positions {
				t.Errorf("%s, %s: %d positions, %d frames: the chain was not swept", a, name, c.positions, c.frames)
			}
			if name == "default" && len(wrong) == 0 {
				// The encoding's rules are wrong in prologues and
				// epilogues: a sweep that finds nothing missed them.
				t.Errorf("%s, default rules: no wrong position", a)
			}
			for i, w := range wrong {
				if name == "default" {
					if i < 3 {
						t.Logf("%s, %s: %s", a, name, w)
					}
					continue
				}
				if i < 20 {
					t.Errorf("%s, %s: %s", a, name, w)
				}
			}
		}
	}
}

// TestMacProgramsCommand walks the crash of each build (nofp_leaf's
// store) with the command, `minidump_stackwalk DUMP FOLDER`, the folder
// holding prog and prog.dSYM: the whole chain, the system library's frame
// by its frame pointer, every other caller by CFI, nothing more.
func TestMacProgramsCommand(t *testing.T) {
	for _, a := range []string{"x86_64", "arm64"} {
		dir := filepath.Join("testdata", "macprogs", a)
		mods, frames := macLoad(t, dir, a == "arm64")
		var at uint64
		for _, in := range frames[0].code {
			if s := macInstString(in, a == "arm64"); strings.HasPrefix(s, "MOV [RDI]") || strings.HasPrefix(s, "STR X1, [X0]") {
				at = in.pc
			}
		}
		data, _, err := macDump(a == "arm64", mods, frames, at)
		if err != nil || at == 0 {
			t.Fatalf("%s: the crash at %#x: %v", a, at, err)
		}
		dump := filepath.Join(t.TempDir(), "crash.dmp")
		if err := os.WriteFile(dump, data, 0o644); err != nil {
			t.Fatal(err)
		}
		out := runCmd(t, "--symbols-cache", t.TempDir(), dump, filepath.Join(dir, "app"))
		rest := out
		for i, want := range []string{"prog!nofp_leaf [nofp.c : 9 + 0x0]", "prog!fp_callback [fp.c : 11 + 0x",
			"libsys.dylib + 0x", "prog!dwarf_frame + 0x", "prog!nofp_regs [nofp.c : 16 + 0x", "prog!nofp_big [nofp.c : 26 + 0x",
			"prog!nofp_huge [nofp.c : 35 + 0x", "prog!fp_outer [fp.c : 17 + 0x", "prog!main [fp.c : 21 + 0x"} {
			trust := "call frame info"
			switch i {
			case 0:
				trust = "given as instruction pointer in context"
			case 3:
				trust = "previous frame's frame pointer"
			}
			j := strings.Index(rest, fmt.Sprintf("%2d  %s", i, want))
			k := strings.Index(rest, "Found by: ")
			if j < 0 || k < j || !strings.HasPrefix(rest[k+len("Found by: "):], trust) {
				t.Fatalf("%s: no frame %d %q found by %s in:\n%s", a, i, want, trust, out)
			}
			rest = rest[k+1:]
		}
		if strings.Contains(rest, " 9  ") {
			t.Errorf("%s: frames after main:\n%s", a, out)
		}
	}
}

// macBreakpadRight are the positions of the sweep Breakpad's processor
// walks right, and of how many, by architecture and symbols, as
// docs/stackwalk.md gives them.
var macBreakpadRight = map[string][2]int{
	"x86_64/default": {143, 161}, "arm64/default": {107, 152},
	"x86_64/exact": {158, 161}, "arm64/exact": {125, 152},
	"x86_64/dump_syms_mac": {23, 161}, "arm64/dump_syms_mac": {12, 152},
}

// TestMacProgramsBreakpad sweeps the chain as TestMacPrograms does with
// Breakpad's minidump_stackwalk ($GOBREAKPAD_BREAKPAD_STACKWALK;
// tools/breakpad/build.sh) walking each dump from a file, with our
// dump_syms' symbols (default and exact rules) and, when
// $GOBREAKPAD_BREAKPAD_DUMP_SYMS_MAC names Breakpad's dump_syms_mac,
// with its symbols (no compact unwind: __eh_frame's rules only), and our
// walker with those too. Only the frames' modules and functions are
// compared (-m prints no registers). Breakpad is the comparison, not the
// truth: what is checked is that its processor ran on every dump and that
// its figures are those docs/stackwalk.md gives (macBreakpadRight; a change
// of our exact rules or of the dumps shows there; it used to log them and
// fail on nothing).
func TestMacProgramsBreakpad(t *testing.T) {
	bp := os.Getenv("GOBREAKPAD_BREAKPAD_STACKWALK")
	if bp == "" {
		t.Skip("$GOBREAKPAD_BREAKPAD_STACKWALK is not set (tools/breakpad/build.sh builds Breakpad's minidump_stackwalk)")
	}
	for _, a := range []string{"x86_64", "arm64"} {
		dir := filepath.Join("testdata", "macprogs", a)
		_, stores := macSources(t, dir)
		if dsm := os.Getenv("GOBREAKPAD_BREAKPAD_DUMP_SYMS_MAC"); dsm != "" {
			out, err := exec.Command(dsm, "-g", filepath.Join(dir, "app", "prog.dSYM"), filepath.Join(dir, "app", "prog")).Output()
			if err != nil {
				t.Fatalf("%s: %v", dsm, err)
			}
			f := strings.Fields(strings.SplitN(string(out), "\n", 2)[0])
			if len(f) != 5 {
				t.Fatalf("%s: MODULE line %q", dsm, f)
			}
			store := t.TempDir()
			p := filepath.Join(store, f[4], f[3], f[4]+".sym")
			if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(p, out, 0o644); err != nil {
				t.Fatal(err)
			}
			stores["dump_syms_mac"] = store
			s, err := symsrc.Open(symsrc.Config{Paths: []string{store}, CacheDir: t.TempDir()})
			if err != nil {
				t.Fatal(err)
			}
			c := macSweep(t, dir, a == "arm64", inProcess(s, a == "arm64"), func(bool, string) {})
			s.Close()
			t.Logf("%s, ours with dump_syms_mac's symbols: %v", a, c)
		}
		for _, name := range []string{"default", "exact", "dump_syms_mac"} {
			store, ok := stores[name]
			if !ok {
				continue
			}
			tmp := t.TempDir()
			failed := 0
			walk := func(data []byte, chain []string, _ []macTruth, c *macCounts) string {
				dump := filepath.Join(tmp, "mac.dmp")
				if err := os.WriteFile(dump, data, 0o644); err != nil {
					t.Fatal(err)
				}
				out, err := exec.Command(bp, "-m", dump, store).Output()
				if err != nil {
					failed++
					return fmt.Sprintf("%s: %v", bp, err)
				}
				var got []string
				for l := range strings.SplitSeq(string(out), "\n") {
					// thread|frame|module|function|file|line|offset
					if f := strings.Split(l, "|"); len(f) == 7 && f[0] == "0" {
						got = append(got, f[2]+"!"+f[3])
					}
				}
				var why []string
				c.frames += len(chain)
				for i, g := range got {
					want := ""
					if i < len(chain) {
						mod, fn := macWant(chain[i])
						if mod != "prog" {
							fn = ""
						}
						want = mod + "!" + fn
					}
					if g != want {
						c.spurious++
						why = append(why, fmt.Sprintf("frame %d: %s, want %q", i, g, want))
						continue
					}
					c.framesTrue++
				}
				if len(got) < len(chain) {
					why = append(why, fmt.Sprintf("%d frames of %d", len(got), len(chain)))
				}
				return strings.Join(why, "; ")
			}
			var wrong []string
			c := macSweep(t, dir, a == "arm64", walk, func(inSys bool, s string) {
				if !inSys {
					wrong = append(wrong, s)
				}
			})
			t.Logf("%s, Breakpad's processor with %s symbols: %v", a, name, c)
			if failed > 0 {
				t.Errorf("%s, %s symbols: Breakpad's processor failed on %d dumps", a, name, failed)
			}
			if want, ok := macBreakpadRight[a+"/"+name]; ok && (c.positions != want[1] || c.right != want[0]) {
				t.Errorf("%s, Breakpad's processor with %s symbols: %d of %d positions right, docs/stackwalk.md says %d/%d", a, name, c.right, c.positions, want[0], want[1])
			}
			for i, w := range wrong {
				if i < 3 {
					t.Logf("%s, Breakpad, %s: %s", a, name, w)
				}
			}
		}
	}
}
