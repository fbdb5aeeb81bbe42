// Command mkx86 is mkprogs.sh's step for the i686 builds, which cannot run
// here (32-bit wine is not installable): it writes the synthetic minidump
// a crash of prog.exe would leave, with the real code's stack state.
//
// For each thread of a scenario it knows the call chain from the source
// (prog.cpp, lib.c), finds each function in the PDBs, and executes the
// machine code of each function, from its entry to the call of the next
// function of the chain (the leaf: to the faulting store, or for a
// spinning thread to its loop's backward branch), on a model of the
// registers and the stack: pushes, pops, moves between registers and to
// esp/ebp-based memory, esp arithmetic, calls of other functions (with
// the bytes a stdcall callee pops: `ret N` in the module, a small table
// for the Windows APIs prog.cpp calls). Values the model cannot know
// become distinct junk words, so no register but those the code saves
// and restores holds a usable value. The code between a function's entry
// and its call site is read in address order, which is what the code of
// these small functions does with the stack on every path (each block
// leaves esp as it found it).
//
// The dump has the threads' stacks and contexts, the modules (prog.exe and
// lib.dll at their preferred bases, with the CodeView records of the PEs)
// and the exception (an access violation writing address 0). It prints
// the frame addresses it built, one a line (thread index, module, address,
// 1 for the leaf's instruction and 0 for a return address), for mkprogs.sh
// to symbolize with llvm-symbolizer.
//
// With -sweep it checks the walk itself instead, at every instruction
// the model reaches: for the first thread of each scenario and each
// function of its chain, a dump with the thread stopped at each
// instruction from the function's entry to its call of the next one (the
// leaf: to the crash or the loop's branch), its callers below, walked
// (in-process, with the symbols our dump_syms makes from the PDBs) must
// give the rest of the chain, each caller found by STACK WIN, with every
// register the walk says it recovered (eip, esp, ebp, ebx, esi, edi)
// equal to the model's.
// TestWindowsPrograms runs it on the committed i686 builds.
//
//	go run ./cmd/dump_syms/testdata/winprogs/mkx86 DIR SCENARIO OUT.dmp
//	go run ./cmd/dump_syms/testdata/winprogs/mkx86 -sweep DIR
package main

import (
	"debug/pe"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/gobreakpad/gobreakpad/arch"
	"github.com/gobreakpad/gobreakpad/arch/x86"
	"github.com/gobreakpad/gobreakpad/dumpsyms"
	dspe "github.com/gobreakpad/gobreakpad/dumpsyms/pe"
	"github.com/gobreakpad/gobreakpad/minidump"
	"github.com/gobreakpad/gobreakpad/minidump/synth"
	"github.com/gobreakpad/gobreakpad/moduleid"
	"github.com/gobreakpad/gobreakpad/stackwalk"
	"github.com/gobreakpad/gobreakpad/symbols/breakpad"
	"github.com/gobreakpad/gobreakpad/unwind"
	"golang.org/x/arch/x86/x86asm"
)

// A thread of a scenario: its chain, leaf first ("lib.dll:" names a
// function of the DLL), and whether the leaf crashes or spins, or (entry)
// stands at its first instruction.
type thread struct {
	chain []string
	crash bool
	entry bool
	at    uint32 // the leaf's instruction, when set (-sweep)
}

var scenarios = map[string][]thread{
	"cpp":    {{[]string{"geo::Square::area", "geo::total<geo::Shape>", "geo::Registry::measure", "run_cpp", "main"}, true, false, 0}},
	"dll":    {{[]string{"lib.dll:lib_step", "lib.dll:lib_apply", "run_dll", "main"}, true, false, 0}},
	"inline": {{[]string{"run_inline", "main"}, true, false, 0}},
	"align":  {{[]string{"align_leaf", "aligned_work", "run_align", "main"}, true, false, 0}},
	"thread": {
		{[]string{"thread_crash", "thread_work", "crash_proc"}, true, false, 0},
		{[]string{"main_wait", "run_thread", "main"}, false, false, 0},
		{[]string{"idle_loop", "idle_proc"}, false, false, 0},
	},
	// Threads at functions' first instructions, their callers' frames
	// (and parameters) below: the crashing one in the template (whose
	// parameters, 12 bytes, differ from its caller's, 4), one in the DLL,
	// one in run_cpp.
	"entry": {
		{[]string{"geo::total<geo::Shape>", "geo::Registry::measure", "run_cpp", "main"}, true, true, 0},
		{[]string{"lib.dll:lib_apply", "run_dll", "main"}, false, true, 0},
		{[]string{"run_cpp", "main"}, false, true, 0},
	},
}

// stdcallPops are the bytes the Windows APIs prog.cpp calls pop off the
// stack (their parameters); the C runtime's functions pop none.
var stdcallPops = map[string]uint32{
	"SetUnhandledExceptionFilter": 4,
	"CreateThread":                24,
	"strcmp":                      0,
}

func main() {
	if len(os.Args) == 3 && os.Args[1] == "-sweep" {
		if err := sweep(os.Args[2]); err != nil {
			fmt.Fprintln(os.Stderr, "mkx86:", err)
			os.Exit(1)
		}
		return
	}
	if len(os.Args) != 4 {
		fmt.Fprintln(os.Stderr, "usage: mkx86 DIR SCENARIO OUT.dmp | mkx86 -sweep DIR")
		os.Exit(2)
	}
	if err := run(os.Args[1], os.Args[2], os.Args[3]); err != nil {
		fmt.Fprintln(os.Stderr, "mkx86:", err)
		os.Exit(1)
	}
}

// module is one PE with its PDB's functions.
type module struct {
	name    string
	base    uint32
	size    uint32
	stamp   uint32
	rsds    moduleid.RSDS
	text    []byte // .text contents
	textVA  uint32 // its address
	funcs   map[string]dumpsyms.Function
	imports map[uint32]string // IAT slot address -> imported name
}

func loadModule(dir, name, pdbName string) (*module, error) {
	path := filepath.Join(dir, name)
	f, err := pe.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	oh, ok := f.OptionalHeader.(*pe.OptionalHeader32)
	if !ok {
		return nil, fmt.Errorf("%s: not a PE32 image", path)
	}
	m := &module{name: name, base: oh.ImageBase, size: oh.SizeOfImage, stamp: f.TimeDateStamp,
		funcs: map[string]dumpsyms.Function{}, imports: map[uint32]string{}}
	read := func(rva, n uint32) []byte {
		for _, s := range f.Sections {
			if rva >= s.VirtualAddress && rva+n <= s.VirtualAddress+s.VirtualSize {
				b, err := s.Data()
				if err != nil || int(rva-s.VirtualAddress+n) > len(b) {
					return nil
				}
				return b[rva-s.VirtualAddress : rva-s.VirtualAddress+n]
			}
		}
		return nil
	}
	cstr := func(rva uint32) string {
		var s []byte
		for {
			b := read(rva, 1)
			if b == nil || b[0] == 0 {
				return string(s)
			}
			s = append(s, b[0])
			rva++
		}
	}
	dd := oh.DataDirectory[pe.IMAGE_DIRECTORY_ENTRY_DEBUG]
	for i := uint32(0); i+28 <= dd.Size; i += 28 {
		e := read(dd.VirtualAddress+i, 28)
		if e == nil || binary.LittleEndian.Uint32(e[12:]) != 2 { // CodeView
			continue
		}
		if r, ok := moduleid.ParseRSDS(read(binary.LittleEndian.Uint32(e[20:]), binary.LittleEndian.Uint32(e[16:]))); ok {
			m.rsds = r
		}
	}
	if m.rsds.PDBFileName == "" {
		return nil, fmt.Errorf("%s: no RSDS record", path)
	}
	id := oh.DataDirectory[pe.IMAGE_DIRECTORY_ENTRY_IMPORT]
	for d := id.VirtualAddress; id.Size > 0; d += 20 {
		e := read(d, 20)
		if e == nil || binary.LittleEndian.Uint32(e[12:]) == 0 {
			break
		}
		ilt, iat := binary.LittleEndian.Uint32(e[0:]), binary.LittleEndian.Uint32(e[16:])
		for j := uint32(0); ; j += 4 {
			t := read(ilt+j, 4)
			if t == nil || binary.LittleEndian.Uint32(t) == 0 {
				break
			}
			if v := binary.LittleEndian.Uint32(t); v&0x80000000 == 0 {
				m.imports[m.base+iat+j] = cstr(v + 2)
			}
		}
	}
	s := f.Section(".text")
	if s == nil {
		return nil, fmt.Errorf("%s: no .text", path)
	}
	if m.text, err = s.Data(); err != nil {
		return nil, err
	}
	m.text = m.text[:min(len(m.text), int(s.VirtualSize))]
	m.textVA = m.base + s.VirtualAddress
	syms, err := dspe.Dump(filepath.Join(dir, pdbName), dumpsyms.Options{})
	if err != nil {
		return nil, err
	}
	for _, fn := range syms.Funcs {
		m.funcs[strings.SplitN(fn.Name, "(", 2)[0]] = fn
	}
	return m, nil
}

// fn returns a function's address range.
func (m *module) fn(name string) (start, end uint32, err error) {
	f, ok := m.funcs[name]
	if !ok || len(f.Ranges) != 1 {
		return 0, 0, fmt.Errorf("%s: no function %s in one range", m.name, name)
	}
	return m.base + uint32(f.Ranges[0].Address), m.base + uint32(f.Ranges[0].Address+f.Ranges[0].Size), nil
}

// insts decodes the instructions of [start, end).
func (m *module) insts(start, end uint32) ([]inst, error) {
	var out []inst
	for pc := start; pc < end; {
		off := int(pc - m.textVA)
		if pc < m.textVA || off >= len(m.text) {
			return nil, fmt.Errorf("%s: 0x%x outside .text", m.name, pc)
		}
		in, err := x86asm.Decode(m.text[off:min(len(m.text), off+16)], 32)
		if err != nil {
			return nil, fmt.Errorf("%s: 0x%x: %w", m.name, pc, err)
		}
		out = append(out, inst{pc, in})
		pc += uint32(in.Len)
	}
	return out, nil
}

type inst struct {
	pc uint32
	x86asm.Inst
}

// machine is the model of the registers and the stack.
type machine struct {
	regs map[x86asm.Reg]uint32
	mem  map[uint32]uint32
	junk uint32
	mods []*module
}

func (st *machine) next() uint32 { st.junk++; return 0x0bad0000 + st.junk*0x10 }

func (st *machine) push(v uint32) {
	st.regs[x86asm.ESP] -= 4
	st.mem[st.regs[x86asm.ESP]] = v
}

// addr returns the address of a memory operand based on esp or ebp (or
// no register), false for others.
func (st *machine) addr(a x86asm.Mem) (uint32, bool) {
	if a.Index != 0 {
		return 0, false
	}
	switch a.Base {
	case x86asm.ESP, x86asm.EBP:
		return st.regs[a.Base] + uint32(a.Disp), true
	case 0:
		return uint32(a.Disp), true
	}
	return 0, false
}

func (st *machine) value(a x86asm.Arg) uint32 {
	switch a := a.(type) {
	case x86asm.Reg:
		if v, ok := st.regs[a]; ok {
			return v
		}
	case x86asm.Imm:
		return uint32(a)
	case x86asm.Mem:
		if p, ok := st.addr(a); ok && (a.Base == x86asm.ESP || a.Base == x86asm.EBP) {
			if v, ok := st.mem[p]; ok {
				return v
			}
		}
	}
	return st.next()
}

// pops returns the bytes a call's callee pops (stdcall), from its `ret N`
// or the API table.
func (st *machine) pops(m *module, in inst) (uint32, error) {
	switch a := in.Args[0].(type) {
	case x86asm.Rel:
		target := in.pc + uint32(in.Len) + uint32(a)
		for _, name := range sortedNames(m.funcs) {
			start, end, _ := m.fn(name)
			if target == start {
				code, err := m.insts(start, end)
				if err != nil {
					return 0, err
				}
				for _, c := range code {
					if c.Op == x86asm.RET {
						if imm, ok := c.Args[0].(x86asm.Imm); ok {
							return uint32(imm), nil
						}
						return 0, nil
					}
				}
			}
		}
		return 0, nil // the C runtime's and import thunks: cdecl here
	case x86asm.Mem:
		if a.Base == 0 && a.Index == 0 {
			name, ok := m.imports[uint32(a.Disp)]
			if !ok {
				return 0, fmt.Errorf("0x%x: call through 0x%x, no import there", in.pc, uint32(a.Disp))
			}
			n, ok := stdcallPops[name]
			if !ok {
				return 0, fmt.Errorf("0x%x: call of %s: unknown convention", in.pc, name)
			}
			return n, nil
		}
	}
	return 0, fmt.Errorf("0x%x: %v: indirect call off the chain", in.pc, in.Inst)
}

func sortedNames(m map[string]dumpsyms.Function) []string {
	var s []string
	for k := range m {
		s = append(s, k)
	}
	sort.Strings(s)
	return s
}

// exec runs the instructions of code before stop on the model.
func (st *machine) exec(m *module, code []inst, stop uint32) error {
	for _, in := range code {
		if in.pc == stop {
			return nil
		}
		esp := st.regs[x86asm.ESP]
		dst, _ := in.Args[0].(x86asm.Reg)
		switch in.Op {
		case x86asm.PUSH:
			st.push(st.value(in.Args[0]))
		case x86asm.POP:
			v, ok := st.mem[esp]
			if !ok {
				v = st.next()
			}
			st.regs[x86asm.ESP] += 4
			if dst != 0 {
				st.regs[dst] = v
			}
		case x86asm.MOV:
			if mem, ok := in.Args[0].(x86asm.Mem); ok {
				if p, ok := st.addr(mem); ok && mem.Base != 0 {
					st.mem[p] = st.value(in.Args[1])
				}
				continue
			}
			st.regs[dst] = st.value(in.Args[1])
		case x86asm.SUB, x86asm.ADD, x86asm.AND:
			if dst != x86asm.ESP {
				if dst != 0 {
					st.regs[dst] = st.next()
				}
				continue
			}
			imm, ok := in.Args[1].(x86asm.Imm)
			if !ok {
				return fmt.Errorf("0x%x: %v: esp changed by a register", in.pc, in.Inst)
			}
			switch in.Op {
			case x86asm.SUB:
				st.regs[x86asm.ESP] -= uint32(imm)
			case x86asm.ADD:
				st.regs[x86asm.ESP] += uint32(imm)
			case x86asm.AND:
				st.regs[x86asm.ESP] &= uint32(imm)
			}
		case x86asm.LEA:
			mem := in.Args[1].(x86asm.Mem)
			if p, ok := st.addr(mem); ok && mem.Base != 0 {
				st.regs[dst] = p
			} else {
				st.regs[dst] = st.next()
			}
		case x86asm.CALL:
			n, err := st.pops(m, in)
			if err != nil {
				return err
			}
			st.regs[x86asm.ESP] += n
			for _, r := range []x86asm.Reg{x86asm.EAX, x86asm.ECX, x86asm.EDX} {
				st.regs[r] = st.next()
			}
		case x86asm.CMP, x86asm.TEST, x86asm.NOP:
		case x86asm.RET, x86asm.LEAVE:
			return fmt.Errorf("0x%x: %v before the call site", in.pc, in.Inst)
		default:
			if isJump(in.Op) {
				continue
			}
			if dst == x86asm.ESP {
				return fmt.Errorf("0x%x: %v: esp changed by an instruction the model lacks", in.pc, in.Inst)
			}
			if dst != 0 {
				st.regs[dst] = st.next()
			}
			if in.Op == x86asm.CDQ || in.Op == x86asm.IMUL && in.Args[1] == nil || in.Op == x86asm.MUL || in.Op == x86asm.DIV || in.Op == x86asm.IDIV {
				st.regs[x86asm.EAX], st.regs[x86asm.EDX] = st.next(), st.next()
			}
		}
	}
	return fmt.Errorf("0x%x not reached", stop)
}

// leafPC returns the leaf's stopping instruction: the first store through
// a register other than esp and ebp (the crash) or the first backward
// branch (a spinning loop).
func leafPC(code []inst, crash bool) (uint32, error) {
	for _, in := range code {
		if crash && in.Op == x86asm.MOV {
			if mem, ok := in.Args[0].(x86asm.Mem); ok && mem.Base != 0 && mem.Base != x86asm.ESP && mem.Base != x86asm.EBP {
				return in.pc, nil
			}
		}
		if !crash && isJump(in.Op) {
			if rel, ok := in.Args[0].(x86asm.Rel); ok && int32(rel) < 0 {
				return in.pc, nil
			}
		}
	}
	return 0, errors.New("no crash or loop instruction")
}

func isJump(op x86asm.Op) bool {
	switch op {
	case x86asm.JMP, x86asm.JE, x86asm.JNE, x86asm.JL, x86asm.JLE, x86asm.JG, x86asm.JGE, x86asm.JB, x86asm.JBE,
		x86asm.JA, x86asm.JAE, x86asm.JS, x86asm.JNS:
		return true
	}
	return false
}

// callSite returns the address of the call of callee in code: a direct
// call to it, else the only indirect call.
func callSite(code []inst, callee uint32) (uint32, error) {
	var indirect []uint32
	for _, in := range code {
		if in.Op != x86asm.CALL {
			continue
		}
		if rel, ok := in.Args[0].(x86asm.Rel); ok {
			if in.pc+uint32(in.Len)+uint32(rel) == callee {
				return in.pc, nil
			}
			continue
		}
		indirect = append(indirect, in.pc)
	}
	if len(indirect) != 1 {
		return 0, fmt.Errorf("no direct call of 0x%x and %d indirect calls", callee, len(indirect))
	}
	return indirect[0], nil
}

func run(dir, scenario, out string) error {
	threads, ok := scenarios[scenario]
	if !ok {
		return fmt.Errorf("no scenario %q", scenario)
	}
	exe, dll, err := loadModules(dir)
	if err != nil {
		return err
	}
	data, _, err := makeDump(exe, dll, threads, os.Stdout)
	if err != nil {
		return err
	}
	return os.WriteFile(out, data, 0o644)
}

func loadModules(dir string) (exe, dll *module, err error) {
	if exe, err = loadModule(dir, "prog.exe", "prog.pdb"); err != nil {
		return nil, nil, err
	}
	if dll, err = loadModule(dir, "lib.dll", "lib.pdb"); err != nil {
		return nil, nil, err
	}
	return exe, dll, nil
}

// chainFrame is a function of a thread's chain.
type chainFrame struct {
	m          *module
	start, end uint32
	code       []inst
}

func (th thread) frames(exe, dll *module) ([]chainFrame, error) {
	var frames []chainFrame
	for _, name := range th.chain {
		m := exe
		if n, ok := strings.CutPrefix(name, "lib.dll:"); ok {
			m, name = dll, n
		}
		start, end, err := m.fn(name)
		if err != nil {
			return nil, err
		}
		code, err := m.insts(start, end)
		if err != nil {
			return nil, err
		}
		frames = append(frames, chainFrame{m, start, end, code})
	}
	return frames, nil
}

// regState is a frame's registers as the model has them: eip, esp, ebp,
// ebx, esi, edi (a caller's at its call, esp above the return address).
type regState [6]uint32

func (st *machine) state(eip uint32) regState {
	r := st.regs
	return regState{eip, r[x86asm.ESP], r[x86asm.EBP], r[x86asm.EBX], r[x86asm.ESI], r[x86asm.EDI]}
}

// makeDump encodes the dump of threads, writing their frames' addresses
// to w; it returns the first thread's frames' registers.
func makeDump(exe, dll *module, threads []thread, w io.Writer) ([]byte, []regState, error) {
	b := synth.New(arch.X86, minidump.PlatformWin32NT)
	var first []regState
	for i, th := range threads {
		var truth []regState
		top := uint32(0x00300000 + i*0x100000)
		st := &machine{regs: map[x86asm.Reg]uint32{
			x86asm.EAX: 0xa0a0a0a0, x86asm.ECX: 0xc0c0c0c0, x86asm.EDX: 0xd0d0d0d0, x86asm.EBX: 0xb0b0b0b0,
			x86asm.ESI: 0x51515151, x86asm.EDI: 0xd1d1d1d1, x86asm.EBP: top - 0x10, x86asm.ESP: top - 0x40,
		}, mem: map[uint32]uint32{}}
		frames, err := th.frames(exe, dll)
		if err != nil {
			return nil, nil, err
		}
		// The outermost function's caller: the C runtime's call of main,
		// or for a thread procedure none (its return address 0).
		outer := frames[len(frames)-1]
		ret := uint32(0)
		if th.chain[len(th.chain)-1] == "main" {
			// The C runtime's direct call: E8 and a displacement.
			for o := 0; o+5 <= len(exe.text); o++ {
				if exe.text[o] == 0xe8 && exe.textVA+uint32(o)+5+binary.LittleEndian.Uint32(exe.text[o+1:]) == outer.start {
					ret = exe.textVA + uint32(o) + 5
				}
			}
			if ret == 0 {
				return nil, nil, errors.New("no call of main")
			}
		}
		st.push(ret)
		pcs := []uint32{}
		for j := len(frames) - 1; j >= 0; j-- {
			f := frames[j]
			var stop uint32
			if j == 0 && th.at != 0 {
				stop = th.at
			} else if j == 0 && th.entry {
				stop = f.start
			} else if j == 0 {
				stop, err = leafPC(f.code, th.crash)
			} else {
				stop, err = callSite(f.code, frames[j-1].start)
			}
			if err != nil {
				return nil, nil, fmt.Errorf("%s: %w", th.chain[j], err)
			}
			if err := st.exec(f.m, f.code, stop); err != nil {
				return nil, nil, fmt.Errorf("%s: %w", th.chain[j], err)
			}
			if j > 0 {
				var call inst
				for _, in := range f.code {
					if in.pc == stop {
						call = in
					}
				}
				truth = append([]regState{st.state(stop + uint32(call.Len))}, truth...)
				st.push(stop + uint32(call.Len))
				pcs = append([]uint32{stop + uint32(call.Len)}, pcs...)
			} else {
				truth = append([]regState{st.state(stop)}, truth...)
				pcs = append([]uint32{stop}, pcs...)
			}
		}
		if i == 0 {
			first = truth
		}
		esp := st.regs[x86asm.ESP]
		stack := synth.NewStack(uint64(esp), 4)
		for a := esp; a < top; a += 4 {
			stack.U32(st.mem[a])
		}
		ctx := &x86.Context{ContextFlags: 0x1003f, Eip: pcs[0], Esp: esp, Ebp: st.regs[x86asm.EBP],
			Eax: st.regs[x86asm.EAX], Ebx: st.regs[x86asm.EBX], Ecx: st.regs[x86asm.ECX], Edx: st.regs[x86asm.EDX],
			Esi: st.regs[x86asm.ESI], Edi: st.regs[x86asm.EDI], Cs: 0x23, Ss: 0x2b, Ds: 0x2b, Es: 0x2b, Fs: 0x53, Gs: 0x2b, EFlags: 0x10246}
		tid := uint32(0x100 + 4*i)
		b.AddThread(tid, synth.X86(ctx), stack)
		if th.crash {
			rec := minidump.ExceptionRecord{ExceptionCode: 0xc0000005, ExceptionAddress: uint64(pcs[0]), NumberParameters: 2}
			rec.ExceptionInformation[0] = 1 // a write
			b.SetExceptionRecord(tid, rec, synth.X86(ctx))
		}
		for j, pc := range pcs {
			fmt.Fprintf(w, "%d %s 0x%x %d\n", i, frames[j].m.name, pc, map[bool]int{true: 1}[j == 0])
		}
	}
	for _, m := range []*module{exe, dll} {
		md := b.AddPDBModule(`C:\prog\`+m.name, uint64(m.base), m.size, minidump.GUID(m.rsds.GUID), m.rsds.Age, m.rsds.PDBFileName)
		md.TimeDateStamp = m.stamp
	}
	data, err := b.Bytes()
	return data, first, err
}

// sweep is -sweep (see the command's documentation).
func sweep(dir string) error {
	exe, dll, err := loadModules(dir)
	if err != nil {
		return err
	}
	store, err := os.MkdirTemp("", "mkx86-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(store)
	for _, pdb := range []string{"prog.pdb", "lib.pdb"} {
		syms, err := dspe.Dump(filepath.Join(dir, pdb), dumpsyms.Options{})
		if err != nil {
			return err
		}
		p := filepath.Join(store, syms.Module.Name, syms.Module.ID, strings.TrimSuffix(syms.Module.Name, ".pdb")+".sym")
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			return err
		}
		f, err := os.Create(p)
		if err != nil {
			return err
		}
		err = syms.Write(f)
		if cerr := f.Close(); err == nil {
			err = cerr
		}
		if err != nil {
			return err
		}
	}
	src := breakpad.NewDirs(store)
	defer src.Close()
	positions, wrong, wrongRegs := 0, 0, 0
	for _, name := range []string{"cpp", "dll", "inline", "thread", "align"} {
		th := scenarios[name][0]
		frames, err := th.frames(exe, dll)
		if err != nil {
			return err
		}
		for k := range frames {
			var limit uint32
			if k == 0 {
				limit, err = leafPC(frames[0].code, th.crash)
			} else {
				limit, err = callSite(frames[k].code, frames[k-1].start)
			}
			if err != nil {
				return fmt.Errorf("%s: %w", th.chain[k], err)
			}
			for _, in := range frames[k].code {
				if in.pc > limit {
					break
				}
				data, truth, err := makeDump(exe, dll, []thread{{chain: th.chain[k:], crash: true, at: in.pc}}, io.Discard)
				if err != nil {
					return fmt.Errorf("%s+0x%x: %w", th.chain[k], in.pc-frames[k].start, err)
				}
				got, regs, err := walkNames(data, src)
				if err != nil {
					return err
				}
				if bad := checkRegs(regs, truth); bad != "" {
					wrongRegs++
					fmt.Printf("%s %s+0x%x: %s\n", dir, th.chain[k], in.pc-frames[k].start, bad)
				}
				positions++
				want := th.chain[k:]
				ok := len(got) >= len(want)
				for i := 0; ok && i < len(want); i++ {
					ok = got[i] == strings.TrimPrefix(want[i], "lib.dll:")
				}
				if !ok {
					wrong++
					fmt.Printf("%s %s+0x%x: walked %q\n", dir, th.chain[k], in.pc-frames[k].start, got)
				}
			}
		}
	}
	fmt.Printf("%s: %d positions walked, %d wrong, %d with a wrong register\n", dir, positions, wrong, wrongRegs)
	if wrong > 0 || wrongRegs > 0 {
		return fmt.Errorf("%d positions walked wrong, %d with a wrong register", wrong, wrongRegs)
	}
	return nil
}

// walkNames walks a dump's first thread and returns its physical frames'
// function names (without argument lists), each caller marked when not
// found by STACK WIN.
func walkNames(data []byte, src *breakpad.Dirs) ([]string, []unwind.Context, error) {
	f, err := minidump.NewFileBytes(data)
	if err != nil {
		return nil, nil, err
	}
	ps, err := stackwalk.Read(f)
	if err != nil {
		return nil, nil, err
	}
	ps.Walk(stackwalk.Options{Symbols: src})
	if len(ps.Threads) == 0 {
		return nil, nil, errors.New("no thread")
	}
	var names []string
	var regs []unwind.Context
	for i, fr := range ps.Threads[0].Frames {
		if fr.Trust == unwind.TrustInline {
			continue
		}
		n, _, _ := strings.Cut(fr.Function, "(")
		if i > 0 && fr.Trust != unwind.TrustCFI {
			n += " (not by STACK WIN)"
		}
		names = append(names, n)
		regs = append(regs, fr.Context())
	}
	return names, regs, nil
}

// checkRegs compares the registers the walk recovered (those it says it
// knows) for the chain's frames with the model's.
func checkRegs(got []unwind.Context, want []regState) string {
	names := []string{"eip", "esp", "ebp", "ebx", "esi", "edi"}
	slots := []int{x86.EIP, x86.ESP, x86.EBP, x86.EBX, x86.ESI, x86.EDI}
	for j := 1; j < len(want) && j < len(got); j++ {
		for k, r := range slots {
			if got[j].Has(r) && uint32(got[j].Regs[r]) != want[j][k] {
				return fmt.Sprintf("frame %d: %s = 0x%x, want 0x%x", j, names[k], got[j].Regs[r], want[j][k])
			}
		}
	}
	return ""
}
