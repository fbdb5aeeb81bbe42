package macho

import (
	"debug/macho"
	"encoding/binary"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/gobreakpad/gobreakpad/cfi"
	"github.com/gobreakpad/gobreakpad/dumpsyms"
	"github.com/gobreakpad/gobreakpad/internal/testkit/corpus"
	"github.com/gobreakpad/gobreakpad/internal/testkit/machine"
	"golang.org/x/arch/x86/x86asm"
)

// x86 is a model x86_64 or i386 machine (mode): the sixteen (eight)
// registers, each starting with a distinct value (the caller's), and the
// stack memory written, a word at each address, with its junk words.
type x86 struct {
	machine.Memory
	mode *x86Mode
	regs [16]uint64
}

const (
	modelSP   = 0x7ff000000000
	modelSP32 = 0xbff00000
	modelRA   = 0xfeedf00d
)

func newX86() *x86 { return newModel(amd64Mode) }

func newModel(mode *x86Mode) *x86 {
	junk := uint64(0xbad000000)
	if mode.word == 4 {
		junk = 0x0bad0000
	}
	m := &x86{Memory: machine.NewMemory(junk), mode: mode}
	m.Words[m0SP(mode)] = modelRA
	for i := range m.regs {
		m.regs[i] = 0xca11e7000 + uint64(i)*0x100
		if mode.word == 4 {
			m.regs[i] = 0xca110000 + uint64(i)*0x100
		}
	}
	m.regs[rSP] = m0SP(mode)
	return m
}

// m0SP is the model's stack pointer at a function's entry.
func m0SP(mode *x86Mode) uint64 {
	if mode.word == 4 {
		return modelSP32
	}
	return modelSP
}

func (m *x86) mask() uint64 {
	if m.mode.word == 4 {
		return 0xffffffff
	}
	return ^uint64(0)
}

func (m *x86) clone() *x86 {
	c := *m
	c.Words = maps.Clone(m.Words)
	return &c
}

func (m *x86) val(a x86asm.Arg) (uint64, bool) {
	switch a := a.(type) {
	case x86asm.Imm:
		return uint64(int64(a)) & m.mask(), true
	case x86asm.Reg:
		if r, ok := m.mode.reg(a); ok {
			return m.regs[r], true
		}
	}
	return 0, false
}

// exec runs one instruction; it reports false at the end of a path (ret,
// jmp) and returns the target of a conditional jump.
func (m *x86) exec(in x86asm.Inst, pc uint64) (cont bool, target uint64, err error) {
	switch in.Op {
	case x86asm.PUSH:
		v, ok := m.val(in.Args[0])
		if !ok {
			v = m.Next()
		}
		m.regs[rSP] -= uint64(m.mode.word)
		m.Words[m.regs[rSP]] = v
	case x86asm.POP:
		v := m.Words[m.regs[rSP]]
		m.regs[rSP] += uint64(m.mode.word)
		if r, ok := m.mode.reg(in.Args[0]); ok {
			m.regs[r] = v
		}
	case x86asm.LEAVE:
		m.regs[rSP] = m.regs[rBP]
		m.regs[rBP] = m.Words[m.regs[rSP]]
		m.regs[rSP] += uint64(m.mode.word)
	case x86asm.RET, x86asm.JMP, x86asm.UD2:
		return false, 0, nil
	case x86asm.CALL:
		if rel, ok := in.Args[0].(x86asm.Rel); ok && rel == 0 {
			// call next; pop reg: i386's PIC base, a push.
			m.regs[rSP] -= uint64(m.mode.word)
			m.Words[m.regs[rSP]] = pc + uint64(in.Len)
			return true, 0, nil
		}
		clobbered := []int{0, 1, 2, 6, 7, 8, 9, 10, 11} // rax rcx rdx rsi rdi r8-r11
		if m.mode.word == 4 {
			clobbered = []int{0, 1, 2} // eax ecx edx
		}
		for _, r := range clobbered {
			m.regs[r] = m.Next()
		}
	default:
		if in.Op.String()[0] == 'J' {
			if rel, ok := in.Args[0].(x86asm.Rel); ok {
				return true, pc + uint64(in.Len) + uint64(int64(rel)), nil
			}
			return true, 0, nil
		}
		if !writes(in) {
			return true, 0, nil
		}
		r, isReg := m.mode.reg(in.Args[0])
		if !isReg && m.mode.word == 4 {
			// 8- and 16-bit writes: the register's value is lost.
			if reg, ok := in.Args[0].(x86asm.Reg); ok {
				switch {
				case reg >= x86asm.AL && reg <= x86asm.BL:
					m.regs[reg-x86asm.AL] = m.Next()
				case reg >= x86asm.AH && reg <= x86asm.BH:
					m.regs[reg-x86asm.AH] = m.Next()
				case reg >= x86asm.AX && reg <= x86asm.DI:
					m.regs[reg-x86asm.AX] = m.Next()
				}
			}
			return true, 0, nil
		}
		if !isReg {
			if in.Args[0] == x86asm.EAX {
				if v, ok := m.val(in.Args[1]); ok && in.Op == x86asm.MOV {
					m.regs[rAX] = v
				} else {
					m.regs[rAX] = m.Next()
				}
			}
			if reg, ok := in.Args[0].(x86asm.Reg); ok && reg >= x86asm.EAX && reg <= x86asm.R15L {
				m.regs[reg-x86asm.EAX] = m.Next() // 32-bit writes
			}
			return true, 0, nil
		}
		switch in.Op {
		case x86asm.MOV:
			if v, ok := m.val(in.Args[1]); ok {
				m.regs[r] = v
			} else {
				m.regs[r] = m.Next()
			}
		case x86asm.ADD, x86asm.SUB:
			v, ok := m.val(in.Args[1])
			if !ok {
				m.regs[r] = m.Next()
				break
			}
			if in.Op == x86asm.SUB {
				v = -v
			}
			m.regs[r] = (m.regs[r] + v) & m.mask()
		case x86asm.LEA:
			mem := in.Args[1].(x86asm.Mem)
			base, ok := m.mode.reg(mem.Base)
			if mem.Index != 0 || !ok {
				m.regs[r] = m.Next()
				break
			}
			m.regs[r] = (m.regs[base] + uint64(mem.Disp)) & m.mask()
		default:
			m.regs[r] = m.Next()
		}
		if r == rSP && m.regs[rSP] > m0SP(m.mode) {
			return false, 0, fmt.Errorf("rsp above the return address")
		}
	}
	return true, 0, nil
}

// eval evaluates a postfix rule.
func (m *x86) eval(expr string, cfa uint64) (uint64, error) {
	var st []uint64
	for _, t := range strings.Fields(expr) {
		switch {
		case t == ".cfa":
			st = append(st, cfa)
		case strings.HasPrefix(t, "$"):
			i := -1
			for r, n := range m.mode.names {
				if n == t {
					i = r
				}
			}
			if t == m.mode.spName {
				i = rSP
			}
			if i < 0 {
				return 0, fmt.Errorf("register %s", t)
			}
			st = append(st, m.regs[i])
		case t == "+" || t == "-":
			if len(st) < 2 {
				return 0, fmt.Errorf("%q: stack underflow", expr)
			}
			a, b := st[len(st)-2], st[len(st)-1]
			st = st[:len(st)-2]
			if t == "+" {
				st = append(st, (a+b)&m.mask())
			} else {
				st = append(st, (a-b)&m.mask())
			}
		case t == "^":
			if len(st) < 1 {
				return 0, fmt.Errorf("%q: stack underflow", expr)
			}
			v, ok := m.Words[st[len(st)-1]]
			if !ok {
				return 0, fmt.Errorf("%q reads unwritten memory", expr)
			}
			st[len(st)-1] = v
		default:
			n, err := strconv.ParseInt(t, 10, 64)
			if err != nil {
				return 0, err
			}
			st = append(st, uint64(n)&m.mask())
		}
	}
	if len(st) != 1 {
		return 0, fmt.Errorf("%q: %d values", expr, len(st))
	}
	return st[0], nil
}

// check returns what the rules get wrong in the model's state.
func (m *x86) check(rules map[string]string, caller *x86) error {
	cfa, err := m.eval(rules[".cfa"], 0)
	if err != nil {
		return err
	}
	if want := m0SP(m.mode) + uint64(m.mode.word); cfa != want {
		return fmt.Errorf(".cfa %#x, want %#x", cfa, want)
	}
	if ra, err := m.eval(rules[".ra"], cfa); err != nil || ra != modelRA {
		return fmt.Errorf(".ra %#x (%v)", ra, err)
	}
	for r, n := range m.mode.names {
		if n == "" {
			continue
		}
		v := m.regs[r]
		if rule, ok := rules[n]; ok {
			if v, err = m.eval(rule, cfa); err != nil {
				return fmt.Errorf("%s: %v", n, err)
			}
		}
		if v != caller.regs[r] {
			return fmt.Errorf("%s recovered as %#x, want %#x", n, v, caller.regs[r])
		}
	}
	return nil
}

var walkerNames = []string{"$rax", "$rcx", "$rdx", "$rbx", "$rsp", "$rbp", "$rsi", "$rdi",
	"$r8", "$r9", "$r10", "$r11", "$r12", "$r13", "$r14", "$r15"}

var walkerNames32 = []string{"$eax", "$ecx", "$edx", "$ebx", "$esp", "$ebp", "$esi", "$edi"}

var evaluator, evaluator32 = func() (*cfi.Evaluator, *cfi.Evaluator) {
	e, err := cfi.NewEvaluator(8, walkerNames)
	if err != nil {
		panic(err)
	}
	e32, err := cfi.NewEvaluator(4, walkerNames32)
	if err != nil {
		panic(err)
	}
	return e, e32
}()

// ReadMemory reads the model's stack for package cfi.
func (m *x86) ReadMemory(addr uint64, n int) ([]byte, error) {
	if n != int(m.mode.word) {
		return nil, fmt.Errorf("read of %d bytes", n)
	}
	v, ok := m.Words[addr]
	if !ok {
		return nil, fmt.Errorf("%#x not written", addr)
	}
	if n == 4 {
		return binary.LittleEndian.AppendUint32(nil, uint32(v)), nil
	}
	return binary.LittleEndian.AppendUint64(nil, v), nil
}

// checkWalker is check with the walker's evaluator (package cfi): the INIT
// record's rules and those of the records at or below addr, in order.
func (m *x86) checkWalker(e dumpsyms.CFIEntry, addr uint64, caller *x86) error {
	texts := []string{e.Init.Rules}
	for _, c := range e.Changes {
		if c.Address <= addr {
			texts = append(texts, c.Rules)
		}
	}
	ev := evaluator
	if m.mode.word == 4 {
		ev = evaluator32
	}
	rs, err := ev.RuleSet(texts...)
	if err != nil {
		return err
	}
	var callee, got cfi.Registers
	for r, v := range m.regs {
		if r < 8 || m.mode.word == 8 {
			callee.Set(r, v)
		}
	}
	cfa, ra, err := rs.FindCallerRegs(&callee, m, &got)
	if err != nil {
		return err
	}
	if cfa != m0SP(m.mode)+uint64(m.mode.word) || ra != modelRA {
		return fmt.Errorf("walker: cfa %#x ra %#x", cfa, ra)
	}
	for r, n := range m.mode.names {
		if n == "" {
			continue
		}
		v, ok := got.Get(r)
		if !ok {
			v = m.regs[r]
		}
		if v != caller.regs[r] {
			return fmt.Errorf("walker: %s = %#x, want %#x", n, v, caller.regs[r])
		}
	}
	return nil
}

// TestExactOnModel runs the code of every x86_64 function of the corpus
// with compact unwind rules on the model, from its entry along every path
// (each instruction once: calls return, conditional jumps both ways,
// stopping at ret and jumps), and checks the exact rules at each
// instruction recover the caller's CFA, return address and callee-saved
// registers; the default rules are counted for comparison.
func TestExactOnModel(t *testing.T) {
	root := filepath.Join(corpus.Dir(t), "macos")
	for _, rel := range []string{"built/hello-x86_64", "built/libframeless-x86_64.dylib", "symbolic/crash"} {
		p := filepath.Join(root, rel)
		if _, err := os.Stat(p); err != nil {
			t.Logf("%s: %v: skipped", rel, err)
			continue
		}
		sweepX86(t, rel, p, amd64Mode, false)
	}
}

// epilogues returns the offsets of the instructions of code's epilogues:
// the pops, add esp/rsp, leave and ret runs that end in each ret.
func epilogues(code []byte, mode *x86Mode) map[uint64]bool {
	var starts []uint64
	var insts []x86asm.Inst
	for off := 0; off < len(code); {
		in, err := x86asm.Decode(code[off:], mode.bits)
		if err != nil {
			break
		}
		starts, insts = append(starts, uint64(off)), append(insts, in)
		off += in.Len
	}
	epi := map[uint64]bool{}
	for i, in := range insts {
		if in.Op != x86asm.RET {
			continue
		}
		for j := i; j >= 0; j-- {
			op := insts[j].Op
			if op != x86asm.RET && op != x86asm.POP && op != x86asm.LEAVE && !(op == x86asm.ADD && insts[j].Args[0] == mode.sp) {
				break
			}
			epi[starts[j]] = true
		}
	}
	return epi
}

// TestExactI386OnModel is TestExactOnModel for the i386 executables of
// testdata/mach32 (EBP-frame, frameless immediate and indirect modes) on
// the model in 32-bit mode.
func TestExactI386OnModel(t *testing.T) {
	funcs, insns, wrong, plainWrong := 0, 0, 0, 0
	for _, name := range []string{"link-i386", "link-i386-fp"} {
		f, i, w, pw := sweepX86(t, name, mach32(name), i386Mode, false)
		funcs, insns, wrong, plainWrong = funcs+f, insns+i, wrong+w, plainWrong+pw
	}
	if funcs != 8 || insns < 100 || wrong != 0 || plainWrong == 0 {
		t.Errorf("%d functions, %d instructions, exact rules wrong at %d, the encoding's at %d; want 8, 100 or more, 0 and some", funcs, insns, wrong, plainWrong)
	}
	// The __eh_frame rules of the i386 objects (Darwin's register
	// numbers), every function, at every instruction but those of the
	// epilogues, which clang's FDEs do not describe.
	funcs, insns, wrong = 0, 0, 0
	for _, name := range []string{"prog-i386.o", "prog-i386-fl.o", "prog-i386-ind.o"} {
		f, i, w, _ := sweepX86(t, name, mach32(name), i386Mode, true)
		funcs, insns, wrong = funcs+f, insns+i, wrong+w
	}
	if funcs != 12 || insns < 200 || wrong != 0 {
		t.Errorf("__eh_frame: %d functions, %d instructions, rules wrong at %d outside epilogues; want 12, 200 or more, 0", funcs, insns, wrong)
	}
}

// sweepX86 runs the code of every function of the file at p whose compact
// unwind encoding has rules (not DWARF mode) on the model in mode, from its
// entry along every path (each instruction once: calls return,
// conditional jumps both ways, stopping at ret and jumps), and checks the
// exact rules at each instruction recover the caller's CFA, return address
// and callee-saved registers; the default rules are counted for comparison.
// With all, every function with STACK CFI is run (an object's __eh_frame
// FDEs).
func sweepX86(t *testing.T, rel, p string, mode *x86Mode, all bool) (funcs, insns, wrong, plainWrong int) {
	// x86_64's DWARF-mode functions get exact rules too (exactFDEs); i386's
	// keep their FDEs' rules, which describe no epilogue.
	last := uint32(x86StackInd)
	if mode == amd64Mode {
		last = x86DWARF
	}
	exact, plainAt, text, code, base, compact := loadOnModel(t, p, func(m uint32) bool { return m >= x86RBPFrame && m <= last })
	var fallback, epiWrong int
	for _, e := range exact.CFI {
		if !compact[e.Init.Address] && !all {
			continue // __eh_frame's
		}
		if pl := plainAt[e.Init.Address]; !all && len(e.Changes) == 0 && e.Init.Rules == pl.Init.Rules && !strings.Contains(pl.Init.Rules, fmt.Sprintf(".cfa: %s %d +", mode.spName, mode.word)) {
			fallback++
			continue
		}
		funcs++
		start := base + e.Init.Address - text.Addr
		fcode := code[start:min(start+e.Init.Size, uint64(len(code)))]
		seen := map[uint64]bool{}
		var epi map[uint64]bool
		if all {
			epi = epilogues(fcode, mode)
		}
		type path struct {
			m  *x86
			pc uint64
		}
		work := []path{{newModel(mode), 0}}
		caller := newModel(mode)
		for len(work) > 0 && len(seen) < 100000 {
			p := work[len(work)-1]
			work = work[:len(work)-1]
			for p.pc < uint64(len(fcode)) && !seen[p.pc] {
				seen[p.pc] = true
				in, err := x86asm.Decode(fcode[p.pc:], mode.bits)
				if err != nil {
					break
				}
				insns++
				err = p.m.check(rulesAt(e, e.Init.Address+p.pc), caller)
				if err == nil {
					err = p.m.checkWalker(e, e.Init.Address+p.pc, caller)
				}
				if err != nil && epi[p.pc] {
					epiWrong++ // clang's __eh_frame does not describe epilogues
				} else if err != nil {
					wrong++
					if wrong <= 10 {
						t.Errorf("%s: %#x (%v): %v", rel, e.Init.Address+p.pc, in, err)
					}
				}
				if p.m.check(rulesAt(plainAt[e.Init.Address], e.Init.Address+p.pc), caller) != nil {
					plainWrong++
				}
				cont, target, err := p.m.exec(in, p.pc)
				if err != nil {
					t.Errorf("%s: %#x: %v", rel, e.Init.Address+p.pc, err)
					break
				}
				if !cont {
					break
				}
				if target != 0 && target < uint64(len(fcode)) {
					work = append(work, path{p.m.clone(), target})
				}
				p.pc += uint64(in.Len)
			}
		}
	}
	if all {
		t.Logf("%s: %d functions, %d instructions reached: rules wrong at %d outside epilogues, at %d in epilogues", rel, funcs, insns, wrong, epiWrong)
	} else {
		t.Logf("%s: %d functions (%d more keep the encoding's rules), %d instructions reached: exact rules wrong at %d, the encoding's or FDE's rules alone at %d", rel, funcs, fallback, insns, wrong, plainWrong)
	}
	return funcs, insns, wrong, plainWrong
}

// loadOnModel reads what TestExactOnModel and TestExactARM64OnModel run
// of the corpus file at p: its exact rules, its plain rules by function
// address, its __text section and code, the __TEXT segment's address, and
// the functions whose compact unwind encoding has a mode compact keeps.
func loadOnModel(t *testing.T, p string, keep func(mode uint32) bool) (exact *dumpsyms.Model, plainAt map[uint64]dumpsyms.CFIEntry, text *macho.Section, code []byte, base uint64, compact map[uint64]bool) {
	t.Helper()
	exact, err := Dump(p, Options{Exact: true, Options: dumpsyms.Options{Warn: t.Logf}})
	if err != nil {
		t.Fatal(err)
	}
	plain, err := Dump(p, Options{})
	if err != nil {
		t.Fatal(err)
	}
	f, err := macho.Open(p)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	text = f.Section("__text")
	code, _ = text.Data()
	if seg := f.Segment("__TEXT"); seg != nil {
		base = seg.Addr
	} // else an object: the records are relative to 0
	compact = map[uint64]bool{}
	if f.Section("__unwind_info") == nil { // an object: __eh_frame only
		return exact, cfiByAddr(plain), text, code, base, compact
	}
	ub, err := f.Section("__unwind_info").Data()
	if err != nil {
		t.Fatal(err)
	}
	ents, _ := ParseUnwindInfo(ub)
	for _, e := range ents {
		if keep(e.Encoding & modeMask) {
			compact[uint64(e.Func)] = true
		}
	}
	return exact, cfiByAddr(plain), text, code, base, compact
}

// cfiByAddr indexes a model's STACK CFI entries by address.
func cfiByAddr(m *dumpsyms.Model) map[uint64]dumpsyms.CFIEntry {
	at := map[uint64]dumpsyms.CFIEntry{}
	for _, e := range m.CFI {
		at[e.Init.Address] = e
	}
	return at
}

// FuzzExactX86 follows arbitrary code as x86_64, i386 and arm64: errors, never a panic, and work
// bounded by the code's size.
func FuzzExactX86(f *testing.F) {
	f.Add([]byte{0x55, 0x48, 0x89, 0xe5, 0x53, 0x50, 0x48, 0x83, 0xc4, 0x08, 0x5b, 0x5d, 0xc3})
	f.Add([]byte{0xb8, 0x00, 0x10, 0x00, 0x00, 0xe8, 0, 0, 0, 0, 0x48, 0x29, 0xc4, 0xc9, 0xc3})
	f.Add([]byte{0xfd, 0x7b, 0xbf, 0xa9, 0xfd, 0x03, 0x00, 0x91, 0xfd, 0x7b, 0xc1, 0xa8, 0xc0, 0x03, 0x5f, 0xd6})
	f.Fuzz(func(t *testing.T, code []byte) {
		exactX86(code, 0x1000, fixed(".cfa: $rsp 16 + .ra: .cfa -8 + ^"))
		exactX86(code, 0x1000, fixed("$rbp: .cfa -16 + ^ .cfa: $rbp 16 + .ra: .cfa -8 + ^"))
		exactI386(code, 0x1000, fixed("$ebp: .cfa -8 + ^ .cfa: $ebp 8 + .ra: .cfa -4 + ^"))
		exactI386(code, 0x1000, fixed(".cfa: $esp 16 + .ra: .cfa -4 + ^"))
		exactARM64(code, 0x1000, fixed(".cfa: x29 16 + .ra: .cfa -8 + ^ x29: .cfa -16 + ^"))
		exactARM64(code, 0x1000, fixed(".cfa: sp 0 + .ra: x30"))
	})
}
