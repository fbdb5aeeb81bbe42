// Command mkx64 is mkx86's -sweep for the x86_64 builds of prog.exe: it
// checks walks of threads stopped at every instruction of the chains'
// functions, prologs and epilogs included, on synthetic dumps, with the
// STACK CFI of a given --cfi-style.
//
// For the first thread of each scenario (its chain known from the source)
// and each function of the chain, it writes a dump with the thread
// stopped at each instruction from the function's entry to its call of
// the next function of the chain (the leaf: to the crashing store or the
// spinning loop's backward branch) and on, as if that call had returned,
// to the function's first return (its epilog), its callers below, each
// stopped at its call. The threads' stacks and registers are those the
// real machine code leaves: each function's instructions, from its entry
// to the stopping point, in address order, run on a model of the registers
// and the stack (pushes, pops, moves between registers and to memory, rsp
// arithmetic, lea, calls of other functions, which keep rsp and clobber
// the volatile registers), values the model cannot know becoming distinct
// junk words. (These small functions' code is straight-line as far as rsp
// and the saved registers go.) Each dump is walked in-process with the
// symbols our dump_syms makes from the PDBs and the PEs' .pdata in the
// style given: the walk must give the rest of the chain, each caller found
// by STACK CFI (or, under a leaf function without unwind information, as
// its return), with every register the walk says it recovered (rip, rsp,
// rbp, rbx, rsi, rdi, r12-r15) equal to the model's.
//
// For ../chkstk (big.exe, whose deep allocates its frame through
// ___chkstk_ms), it also stops the thread at each instruction of that
// stack probe up to its first probing write, where a stack overflow stops,
// deep stopped at its call in its prolog: the probe has no unwind
// information (Windows cannot unwind it either), so deep is found by
// scanning, and the callers below it must be found by STACK CFI from
// deep's prolog state.
//
// It prints each wrong position and the counts, positions in prologs
// (before the end of the function's UNWIND_INFO prolog), bodies and
// epilogs (from the first add rsp, lea rsp, pop or return after the stop's
// limit) apart; it exits 1 when a position walks wrong and -expect-wrong
// is not given. TestWindowsPrograms runs it on the committed x86_64 builds,
// TestWindowsStackProbeSweep on ../chkstk.
//
//	go run ./cmd/dump_syms/testdata/winprogs/mkx64 [-cfi-style STYLE] [-expect-wrong] DIR
package main

import (
	"debug/pe"
	"encoding/binary"
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/gobreakpad/gobreakpad/arch"
	"github.com/gobreakpad/gobreakpad/arch/amd64"
	"github.com/gobreakpad/gobreakpad/dumpsyms"
	dspe "github.com/gobreakpad/gobreakpad/dumpsyms/pe"
	"github.com/gobreakpad/gobreakpad/internal/testkit/machine"
	"github.com/gobreakpad/gobreakpad/minidump"
	"github.com/gobreakpad/gobreakpad/minidump/synth"
	"github.com/gobreakpad/gobreakpad/moduleid"
	"github.com/gobreakpad/gobreakpad/pe/unwindinfo"
	"github.com/gobreakpad/gobreakpad/stackwalk"
	"github.com/gobreakpad/gobreakpad/symbols/breakpad"
	"github.com/gobreakpad/gobreakpad/unwind"
	"golang.org/x/arch/x86/x86asm"
)

// The chains, leaf first, of each scenario's first thread ("lib.dll:"
// names a function of the DLL), and whether the leaf crashes or spins.
type scenario struct {
	name  string
	chain []string
	crash bool
	// chkstk: the leaf is the stack probe the chain's first function
	// calls in its prolog (___chkstk_ms, without unwind information), the
	// thread stopped at each of its instructions up to its first probe.
	chkstk bool
}

var scenarios = []scenario{
	{"cpp", []string{"geo::Square::area", "geo::total<geo::Shape>", "geo::Registry::measure", "run_cpp", "main"}, true, false},
	{"dll", []string{"lib.dll:lib_step", "lib.dll:lib_apply", "run_dll", "main"}, true, false},
	{"inline", []string{"run_inline", "main"}, true, false},
	{"align", []string{"align_leaf", "aligned_work", "run_align", "main"}, true, false},
	{"thread", []string{"thread_crash", "thread_work", "crash_proc"}, true, false},
	{"spin", []string{"main_wait", "run_thread", "main"}, false, false},
}

// chkstkScenarios are ../chkstk's (big.exe: main -> outer -> deep, whose
// 20000-byte frame is allocated through ___chkstk_ms): the crash in deep,
// and the probe in ___chkstk_ms, where a stack overflow stops.
var chkstkScenarios = []scenario{
	{"crash", []string{"deep", "outer", "main"}, true, false},
	{"probe", []string{"deep", "outer", "main"}, true, true},
}

var styles = map[string]unwindinfo.Style{
	"symbolic": unwindinfo.StyleSymbolic, "mozilla": unwindinfo.StyleMozilla, "breakpad": unwindinfo.StyleBreakpad,
	"mozilla-pe": unwindinfo.StyleMozillaPE, "exact": unwindinfo.StyleExact,
}

func main() {
	style := flag.String("cfi-style", "exact", "STACK CFI style of the symbols walked with")
	expectWrong := flag.Bool("expect-wrong", false, "exit 0 even when positions walk wrong")
	flag.Parse()
	st, ok := styles[*style]
	if flag.NArg() != 1 || !ok {
		fmt.Fprintln(os.Stderr, "usage: mkx64 [-cfi-style symbolic|mozilla|breakpad|mozilla-pe|exact] [-expect-wrong] DIR")
		os.Exit(2)
	}
	wrong, err := sweep(flag.Arg(0), st)
	if err != nil {
		fmt.Fprintln(os.Stderr, "mkx64:", err)
		os.Exit(1)
	}
	if wrong > 0 && !*expectWrong {
		os.Exit(1)
	}
}

// module is one PE with its PDB's functions and its unwind information.
type module struct {
	name    string
	base    uint64
	size    uint32
	stamp   uint32
	rsds    moduleid.RSDS
	text    []byte
	textVA  uint64
	funcs   map[string]dumpsyms.Function
	prologs map[uint64]uint64 // function start -> end of its prolog
}

func loadModule(dir, name, pdbName string) (*module, error) {
	path := filepath.Join(dir, name)
	f, err := pe.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	oh, ok := f.OptionalHeader.(*pe.OptionalHeader64)
	if !ok {
		return nil, fmt.Errorf("%s: not a PE32+ image", path)
	}
	m := &module{name: name, base: oh.ImageBase, size: oh.SizeOfImage, stamp: f.TimeDateStamp,
		funcs: map[string]dumpsyms.Function{}, prologs: map[uint64]uint64{}}
	dd := oh.DataDirectory[pe.IMAGE_DIRECTORY_ENTRY_DEBUG]
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
	s := f.Section(".text")
	if s == nil {
		return nil, fmt.Errorf("%s: no .text", path)
	}
	if m.text, err = s.Data(); err != nil {
		return nil, err
	}
	m.text = m.text[:min(len(m.text), int(s.VirtualSize))]
	m.textVA = m.base + uint64(s.VirtualAddress)
	tab, err := unwindinfo.New(f)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	for _, rf := range tab.Functions {
		if info, err := tab.Info(rf); err == nil {
			m.prologs[m.base+uint64(rf.Begin)] = m.base + uint64(rf.Begin) + uint64(info.PrologSize)
		}
	}
	syms, err := dspe.Dump(filepath.Join(dir, pdbName), dumpsyms.Options{})
	if err != nil {
		return nil, err
	}
	for _, fn := range syms.Funcs {
		m.funcs[strings.SplitN(fn.Name, "(", 2)[0]] = fn
	}
	return m, nil
}

func (m *module) fn(name string) (start, end uint64, err error) {
	f, ok := m.funcs[name]
	if !ok || len(f.Ranges) != 1 {
		return 0, 0, fmt.Errorf("%s: no function %s in one range", m.name, name)
	}
	return m.base + f.Ranges[0].Address, m.base + f.Ranges[0].Address + f.Ranges[0].Size, nil
}

type inst struct {
	pc uint64
	x86asm.Inst
}

func (m *module) insts(start, end uint64) ([]inst, error) {
	var out []inst
	for pc := start; pc < end; {
		off := int(pc - m.textVA)
		if pc < m.textVA || off >= len(m.text) {
			return nil, fmt.Errorf("%s: 0x%x outside .text", m.name, pc)
		}
		in, err := x86asm.Decode(m.text[off:min(len(m.text), off+16)], 64)
		if err != nil {
			return nil, fmt.Errorf("%s: 0x%x: %w", m.name, pc, err)
		}
		out = append(out, inst{pc, in})
		pc += uint64(in.Len)
	}
	return out, nil
}

// model is the model of the registers and the stack (8-byte words).
type model struct {
	machine.X64
}

// value is the value of an operand (machine.X64.Operand, and a 32-bit
// register's, zero-extended), junk when that is unknown.
func (st *model) value(a x86asm.Arg, bytes int) uint64 {
	if v, ok := st.Operand(a, bytes); ok {
		return v
	}
	if r, ok := a.(x86asm.Reg); ok && r >= x86asm.EAX && r <= x86asm.R15L {
		return uint64(uint32(st.Regs[machine.GPRs[r-x86asm.EAX]]))
	}
	return st.Next()
}

var volatile = []x86asm.Reg{x86asm.RAX, x86asm.RCX, x86asm.RDX, x86asm.R8, x86asm.R9, x86asm.R10, x86asm.R11}

// exec runs the instructions of code before stop on the model.
func (st *model) exec(code []inst, stop uint64) error {
	for i, in := range code {
		if in.pc == stop {
			return nil
		}
		if st.Step(in.Inst, st.value) {
			continue
		}
		dst, dst64 := machine.Dest(in.Inst)
		switch in.Op {
		case x86asm.MOV:
			if dst != 0 {
				st.Regs[dst] = st.value(in.Args[1], in.MemBytes)
				continue
			}
		case x86asm.SUB, x86asm.ADD, x86asm.AND:
			if dst == x86asm.RSP {
				if !dst64 {
					return fmt.Errorf("0x%x: %v: esp", in.pc, in.Inst)
				}
				v := st.value(in.Args[1], 8)
				switch in.Op {
				case x86asm.SUB:
					st.Regs[x86asm.RSP] -= v
				case x86asm.ADD:
					st.Regs[x86asm.RSP] += v
				case x86asm.AND:
					st.Regs[x86asm.RSP] &= v
				}
				continue
			}
		case x86asm.CALL:
			if i+1 < len(code) && code[i+1].Op == x86asm.SUB && code[i+1].Args[0] == x86asm.RSP && code[i+1].Args[1] == x86asm.RAX {
				// The stack probe of a prolog (mov eax, N; call
				// ___chkstk_ms; sub rsp, rax) keeps every register.
				continue
			}
			for _, r := range volatile {
				st.Regs[r] = st.Next()
			}
			continue
		case x86asm.RET, x86asm.LEAVE:
			return fmt.Errorf("0x%x: %v before the stop", in.pc, in.Inst)
		}
		if isJump(in.Op) {
			continue
		}
		if dst == x86asm.RSP {
			return fmt.Errorf("0x%x: %v: rsp changed by an instruction the model lacks", in.pc, in.Inst)
		}
		st.Clobber(in.Inst)
		switch in.Op {
		case x86asm.CDQ, x86asm.CQO, x86asm.MUL, x86asm.DIV, x86asm.IDIV:
			st.Regs[x86asm.RAX], st.Regs[x86asm.RDX] = st.Next(), st.Next()
		}
	}
	return fmt.Errorf("0x%x not reached", stop)
}

// isRSPAdjust reports whether in is add rsp, imm or lea rsp, [...] (an
// epilog's first instruction) or a pop (one of its others).
func isRSPAdjust(in x86asm.Inst) bool {
	if in.Op == x86asm.POP {
		return true
	}
	r, ok := in.Args[0].(x86asm.Reg)
	return ok && r == x86asm.RSP && (in.Op == x86asm.ADD || in.Op == x86asm.LEA)
}

func isJump(op x86asm.Op) bool {
	switch op {
	case x86asm.JMP, x86asm.JE, x86asm.JNE, x86asm.JL, x86asm.JLE, x86asm.JG, x86asm.JGE, x86asm.JB, x86asm.JBE,
		x86asm.JA, x86asm.JAE, x86asm.JS, x86asm.JNS:
		return true
	}
	return false
}

// leafPC returns the leaf's stopping instruction: the first store through
// a register other than rsp and rbp (the crash) or the first backward
// branch (a spinning loop).
func leafPC(code []inst, crash bool) (uint64, error) {
	for _, in := range code {
		if crash && in.Op == x86asm.MOV {
			if mem, ok := in.Args[0].(x86asm.Mem); ok && mem.Base != 0 && mem.Base != x86asm.RSP && mem.Base != x86asm.RBP && mem.Base != x86asm.RIP {
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

// callSite returns the address of the call of callee in code: a direct
// call to it, a call through the import table (lib.dll's lib_apply), else
// the only indirect call through a register.
func callSite(code []inst, callee uint64, imported bool) (uint64, error) {
	var indirect []uint64
	for _, in := range code {
		if in.Op != x86asm.CALL {
			continue
		}
		switch a := in.Args[0].(type) {
		case x86asm.Rel:
			if in.pc+uint64(in.Len)+uint64(int64(a)) == callee {
				return in.pc, nil
			}
		case x86asm.Mem:
			if imported && a.Base == x86asm.RIP {
				indirect = append(indirect, in.pc)
			} else if !imported && a.Base != x86asm.RIP {
				indirect = append(indirect, in.pc)
			}
		case x86asm.Reg:
			if !imported {
				indirect = append(indirect, in.pc)
			}
		}
	}
	if len(indirect) != 1 {
		return 0, fmt.Errorf("no direct call of 0x%x and %d indirect calls", callee, len(indirect))
	}
	return indirect[0], nil
}

type chainFrame struct {
	m          *module
	name       string
	start, end uint64
	code       []inst
}

// regState is a frame's registers as the model has them, in arch/amd64's
// slots.
type regState [amd64.NumRegs]uint64

var slotRegs = map[int]x86asm.Reg{
	amd64.RBX: x86asm.RBX, amd64.RSI: x86asm.RSI, amd64.RDI: x86asm.RDI, amd64.RBP: x86asm.RBP, amd64.RSP: x86asm.RSP,
	amd64.R12: x86asm.R12, amd64.R13: x86asm.R13, amd64.R14: x86asm.R14, amd64.R15: x86asm.R15,
}

func (st *model) state(rip uint64) regState {
	var s regState
	for slot, r := range slotRegs {
		s[slot] = st.Regs[r]
	}
	s[amd64.RIP] = rip
	return s
}

// makeDump encodes the dump of a thread stopped at `at` in frames[0],
// its callers at their calls, and returns the frames' registers.
func makeDump(mods []*module, frames []chainFrame, outerRet, at uint64) ([]byte, []regState, error) {
	b := synth.New(arch.AMD64, minidump.PlatformWin32NT)
	top := uint64(0x00300000)
	st := &model{X64: machine.NewX64(0x0bad00000000)}
	for i, r := range machine.GPRs {
		st.Regs[r] = 0x1000000000 + uint64(i)*0x01010101
	}
	st.Regs[x86asm.RBP], st.Regs[x86asm.RSP] = top-0x20, top-0x80
	st.Push(outerRet)
	var truth []regState
	var pcs []uint64
	for j := len(frames) - 1; j >= 0; j-- {
		f := frames[j]
		stop := at
		if j > 0 {
			var err error
			if stop, err = callSite(f.code, frames[j-1].start, f.m != frames[j-1].m); err != nil {
				return nil, nil, fmt.Errorf("%s: %w", f.name, err)
			}
		}
		if err := st.exec(f.code, stop); err != nil {
			return nil, nil, fmt.Errorf("%s: %w", f.name, err)
		}
		if j > 0 {
			var call inst
			for _, in := range f.code {
				if in.pc == stop {
					call = in
				}
			}
			ret := stop + uint64(call.Len)
			truth = append([]regState{st.state(ret)}, truth...)
			st.Push(ret)
			pcs = append([]uint64{ret}, pcs...)
		} else {
			truth = append([]regState{st.state(stop)}, truth...)
			pcs = append([]uint64{stop}, pcs...)
		}
	}
	rsp := st.Regs[x86asm.RSP]
	stack := synth.NewStack(rsp, 8)
	for a := rsp; a < top; a += 8 {
		stack.U64(st.Words[a])
	}
	r := st.Regs
	ctx := &amd64.Context{ContextFlags: 0x10001f, Rip: pcs[0], Rsp: rsp, Rbp: r[x86asm.RBP],
		Rax: r[x86asm.RAX], Rbx: r[x86asm.RBX], Rcx: r[x86asm.RCX], Rdx: r[x86asm.RDX], Rsi: r[x86asm.RSI], Rdi: r[x86asm.RDI],
		R8: r[x86asm.R8], R9: r[x86asm.R9], R10: r[x86asm.R10], R11: r[x86asm.R11],
		R12: r[x86asm.R12], R13: r[x86asm.R13], R14: r[x86asm.R14], R15: r[x86asm.R15],
		Cs: 0x33, Ss: 0x2b, Ds: 0x2b, Es: 0x2b, Fs: 0x53, Gs: 0x2b, EFlags: 0x10246}
	b.AddThread(0x100, synth.AMD64(ctx), stack)
	rec := minidump.ExceptionRecord{ExceptionCode: 0xc0000005, ExceptionAddress: pcs[0], NumberParameters: 2}
	rec.ExceptionInformation[0] = 1
	b.SetExceptionRecord(0x100, rec, synth.AMD64(ctx))
	for _, m := range mods {
		md := b.AddPDBModule(`C:\prog\`+m.name, m.base, m.size, minidump.GUID(m.rsds.GUID), m.rsds.Age, m.rsds.PDBFileName)
		md.TimeDateStamp = m.stamp
	}
	data, err := b.Bytes()
	return data, truth, err
}

// mainCaller returns the return address of the C runtime's direct call of
// main.
func mainCaller(exe *module, main uint64) (uint64, error) {
	for o := 0; o+5 <= len(exe.text); o++ {
		if exe.text[o] == 0xe8 && exe.textVA+uint64(o)+5+uint64(int64(int32(binary.LittleEndian.Uint32(exe.text[o+1:])))) == main {
			return exe.textVA + uint64(o) + 5, nil
		}
	}
	return 0, errors.New("no call of main")
}

func sweep(dir string, style unwindinfo.Style) (int, error) {
	scs, pdbs := scenarios, []string{"prog.pdb", "lib.pdb"}
	exeName := "prog"
	if _, err := os.Stat(filepath.Join(dir, "big.exe")); err == nil {
		scs, pdbs, exeName = chkstkScenarios, []string{"big.pdb"}, "big"
	}
	exe, err := loadModule(dir, exeName+".exe", exeName+".pdb")
	if err != nil {
		return 0, err
	}
	mods := []*module{exe}
	var dll *module
	if len(pdbs) > 1 {
		if dll, err = loadModule(dir, "lib.dll", "lib.pdb"); err != nil {
			return 0, err
		}
		mods = append(mods, dll)
	}
	store, err := os.MkdirTemp("", "mkx64-")
	if err != nil {
		return 0, err
	}
	defer os.RemoveAll(store)
	for _, pdb := range pdbs {
		syms, err := dspe.DumpWith(filepath.Join(dir, pdb), dspe.Options{CFIStyle: style})
		if err != nil {
			return 0, err
		}
		if len(syms.CFI) == 0 {
			return 0, fmt.Errorf("%s: no STACK CFI (the PE beside it?)", pdb)
		}
		p := filepath.Join(store, syms.Module.Name, syms.Module.ID, strings.TrimSuffix(syms.Module.Name, ".pdb")+".sym")
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			return 0, err
		}
		f, err := os.Create(p)
		if err != nil {
			return 0, err
		}
		err = syms.Write(f)
		if cerr := f.Close(); err == nil {
			err = cerr
		}
		if err != nil {
			return 0, err
		}
	}
	src := breakpad.NewDirs(store)
	defer src.Close()
	count, wrong := map[string]int{}, map[string]int{}
	for _, sc := range scs {
		var frames []chainFrame
		for _, name := range sc.chain {
			m := exe
			if n, ok := strings.CutPrefix(name, "lib.dll:"); ok {
				m, name = dll, n
			}
			start, end, err := m.fn(name)
			if err != nil {
				return 0, err
			}
			code, err := m.insts(start, end)
			if err != nil {
				return 0, err
			}
			frames = append(frames, chainFrame{m, name, start, end, code})
		}
		if sc.chkstk {
			// The probe: the target of the first call of the chain's
			// first function, to its first return.
			f := frames[0]
			var target uint64
			for _, in := range f.code {
				if rel, ok := in.Args[0].(x86asm.Rel); ok && in.Op == x86asm.CALL {
					target = in.pc + uint64(in.Len) + uint64(int64(rel))
					break
				}
			}
			code, err := exe.insts(target, target+64)
			if err != nil {
				return 0, fmt.Errorf("stack probe: %w", err)
			}
			for i, in := range code {
				if in.Op == x86asm.RET {
					code = code[:i+1]
					break
				}
			}
			frames = append([]chainFrame{{exe, "___chkstk_ms", target, code[len(code)-1].pc + 1, code}}, frames...)
		}
		outerRet := uint64(0)
		if sc.chain[len(sc.chain)-1] == "main" {
			if outerRet, err = mainCaller(exe, frames[len(frames)-1].start); err != nil {
				return 0, err
			}
		}
		for k := range frames {
			f := frames[k]
			var limit uint64
			switch {
			case k == 0 && sc.chkstk:
				// Up to its first probe (or [rcx], 0: a write through rcx).
				for _, in := range f.code {
					if in.Op == x86asm.OR {
						if m, ok := in.Args[0].(x86asm.Mem); ok && m.Base == x86asm.RCX {
							limit = in.pc
							break
						}
					}
				}
				if limit == 0 {
					err = errors.New("no probe")
				}
			case k == 0:
				limit, err = leafPC(f.code, sc.crash)
			default:
				limit, err = callSite(f.code, frames[k-1].start, f.m != frames[k-1].m)
			}
			if err != nil {
				return 0, fmt.Errorf("%s: %w", f.name, err)
			}
			prologEnd := f.m.prologs[f.start]
			epilog, past := false, false
			for _, in := range f.code {
				if past {
					break
				}
				kind := "body"
				switch {
				case sc.chkstk && k == 0:
					kind = "probe"
				case in.pc < prologEnd:
					kind = "prolog"
				case in.pc > limit && (in.Op == x86asm.JMP || in.Op == x86asm.RET || isRSPAdjust(in.Inst)) || epilog:
					// From the stop's limit on, up to the function's first
					// return: its epilog (add rsp or lea rsp, pops, ret).
					kind, epilog = "epilog", true
				}
				if in.pc > limit && (in.Op == x86asm.RET || in.Op == x86asm.JMP) {
					past = true
					if in.Op == x86asm.JMP {
						break
					}
				}
				if sc.chkstk && k > 0 {
					break // the chain's sweep is the other scenario's
				}
				data, truth, err := makeDump(mods, frames[k:], outerRet, in.pc)
				if err != nil {
					return 0, fmt.Errorf("%s+0x%x: %w", f.name, in.pc-f.start, err)
				}
				got, regs, trusts, err := walkNames(data, src)
				if err != nil {
					return 0, err
				}
				// Callers are found by STACK CFI, except under a function
				// without unwind information (a leaf's return, or when
				// that function pushed words, ___chkstk_ms, by scanning:
				// Windows' own unwinder cannot do better there).
				for i := 1; i < len(got) && i < len(trusts); i++ {
					noInfo := false
					if i-1 < len(frames)-k {
						callee := frames[k+i-1]
						_, hasInfo := callee.m.prologs[callee.start]
						noInfo = !hasInfo
					}
					switch {
					case trusts[i] == unwind.TrustCFI:
					case noInfo && (trusts[i] == unwind.TrustLeaf || trusts[i] == unwind.TrustScan || trusts[i] == unwind.TrustCallSite):
					default:
						got[i] += " (found by " + trusts[i].String() + ")"
					}
				}
				count[kind]++
				want := sc.chain[k:]
				if sc.chkstk {
					want = append([]string{"___chkstk_ms"}, sc.chain...) // x64 names keep their underscores
				}
				ok := len(got) >= len(want)
				for i := 0; ok && i < len(want); i++ {
					ok = got[i] == strings.TrimPrefix(want[i], "lib.dll:")
				}
				bad := ""
				if !ok {
					bad = fmt.Sprintf("walked %q", got)
				} else {
					bad = checkRegs(regs, truth)
				}
				if bad != "" {
					wrong[kind]++
					fmt.Printf("%s %s+0x%x (%s): %s\n", dir, f.name, in.pc-f.start, kind, bad)
				}
			}
		}
	}
	probes, probesWrong := "", ""
	if count["probe"] > 0 {
		probes, probesWrong = fmt.Sprintf(", %d in the stack probe", count["probe"]), fmt.Sprintf(", %d in the stack probe", wrong["probe"])
	}
	fmt.Printf("%s: %d positions walked (%d in prologs, %d in bodies, %d in epilogs%s): %d wrong (%d in prologs, %d in bodies, %d in epilogs%s)\n", dir,
		count["prolog"]+count["body"]+count["epilog"]+count["probe"], count["prolog"], count["body"], count["epilog"], probes,
		wrong["prolog"]+wrong["body"]+wrong["epilog"]+wrong["probe"], wrong["prolog"], wrong["body"], wrong["epilog"], probesWrong)
	return wrong["prolog"] + wrong["body"] + wrong["epilog"] + wrong["probe"], nil
}

// walkNames walks a dump's first thread and returns its physical frames'
// function names (without argument lists), registers and trust.
func walkNames(data []byte, src *breakpad.Dirs) ([]string, []unwind.Context, []unwind.Trust, error) {
	f, err := minidump.NewFileBytes(data)
	if err != nil {
		return nil, nil, nil, err
	}
	ps, err := stackwalk.Read(f)
	if err != nil {
		return nil, nil, nil, err
	}
	ps.Walk(stackwalk.Options{Symbols: src})
	if len(ps.Threads) == 0 {
		return nil, nil, nil, errors.New("no thread")
	}
	var names []string
	var regs []unwind.Context
	var trusts []unwind.Trust
	for _, fr := range ps.Threads[0].Frames {
		if fr.Trust == unwind.TrustInline {
			continue
		}
		n, _, _ := strings.Cut(fr.Function, "(")
		names = append(names, n)
		regs = append(regs, fr.Context())
		trusts = append(trusts, fr.Trust)
	}
	return names, regs, trusts, nil
}

// checkRegs compares the registers the walk recovered (those it says it
// knows) for the chain's callers with the model's.
func checkRegs(got []unwind.Context, want []regState) string {
	for j := 1; j < len(want) && j < len(got); j++ {
		for r := range amd64.NumRegs {
			if _, ok := slotRegs[r]; !ok && r != amd64.RIP {
				continue
			}
			if got[j].Has(r) && got[j].Regs[r] != want[j][r] {
				return fmt.Sprintf("frame %d: %s = 0x%x, want 0x%x", j, amd64.RegisterNames[r], got[j].Regs[r], want[j][r])
			}
		}
	}
	return ""
}
