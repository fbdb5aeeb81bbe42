package macho

import (
	"encoding/binary"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gobreakpad/gobreakpad/cfi"
	"github.com/gobreakpad/gobreakpad/dumpsyms"
	"github.com/gobreakpad/gobreakpad/internal/testkit/corpus"
	"github.com/gobreakpad/gobreakpad/internal/testkit/machine"
	"golang.org/x/arch/arm64/arm64asm"
)

// a64 is a model arm64 machine: x0..x30, sp (31) and d0..d31 (32..63),
// each starting with a distinct value (the caller's; x30 the return
// address), and the stack memory written with its junk words.
type a64 struct {
	machine.Memory
	regs [64]uint64
}

const a64SP = machine.A64SP

func newA64() *a64 {
	m := &a64{Memory: machine.NewMemory(0xbad000000)}
	for i := range m.regs {
		m.regs[i] = 0xca11e7000 + uint64(i)*0x100
	}
	m.regs[30], m.regs[a64SP] = modelRA, modelSP
	return m
}

func (m *a64) clone() *a64 {
	c := *m
	c.Words = maps.Clone(m.Words)
	return &c
}

func (m *a64) exec(in arm64asm.Inst, pc uint64) (cont bool, target uint64, taken bool) {
	args := argsOf(in)
	for _, a := range args {
		if rel, ok := a.(arm64asm.PCRel); ok && in.Op != arm64asm.BL && in.Op != arm64asm.ADR && in.Op != arm64asm.ADRP && in.Op != arm64asm.LDR {
			if in.Op == arm64asm.B {
				if _, cond := args[0].(arm64asm.Cond); !cond {
					return false, 0, false
				}
			}
			return true, pc + uint64(int64(rel)), true
		}
	}
	switch in.Op {
	case arm64asm.RET, arm64asm.BR, arm64asm.B:
		return false, 0, false
	case arm64asm.BL, arm64asm.BLR:
		for r := 0; r <= 18; r++ {
			m.regs[r] = m.Next()
		}
		m.regs[30] = m.Next()
		return true, 0, false
	case arm64asm.STP, arm64asm.STR, arm64asm.LDP, arm64asm.LDR:
		mem, ok := machine.ParseA64Mem(args[len(args)-1])
		if !ok {
			if r, ok := machine.A64Reg(args[0]); ok && (in.Op == arm64asm.LDR || in.Op == arm64asm.LDP) {
				m.regs[r] = m.Next()
			}
			return true, 0, false
		}
		addr := mem.Addr(m.regs[mem.Base])
		for i, a := range args[:len(args)-1] {
			r, ok := machine.A64Reg(a)
			if !ok {
				continue
			}
			if in.Op == arm64asm.STP || in.Op == arm64asm.STR {
				m.Words[addr+uint64(8*i)] = m.regs[r]
			} else {
				m.regs[r] = m.Words[addr+uint64(8*i)]
			}
		}
		m.regs[mem.Base] = mem.Writeback(m.regs[mem.Base])
		return true, 0, false
	}
	if len(args) == 0 {
		return true, 0, false
	}
	d, ok := machine.A64Reg(args[0])
	if !ok {
		return true, 0, false
	}
	switch v, form, known := machine.A64Move(in, m.regs[:]); {
	case form && known:
		m.regs[d] = v
	case in.Op == arm64asm.CMP || in.Op == arm64asm.CMN || in.Op == arm64asm.TST || in.Op == arm64asm.NOP || in.Op == arm64asm.HINT:
	default:
		m.regs[d] = m.Next()
	}
	return true, 0, false
}

func (m *a64) ReadMemory(addr uint64, n int) ([]byte, error) {
	v, ok := m.Words[addr]
	if !ok || n != 8 {
		return nil, fmt.Errorf("%#x not written", addr)
	}
	return binary.LittleEndian.AppendUint64(nil, v), nil
}

// a64Names are the model's registers as rule text names them: the
// walker's (x0..x30, sp) and v0..v31 (d0..d31), which the walker's register
// file does not have and its evaluator passes over.
var a64Names = func() []string {
	var n []string
	for i := range 31 {
		n = append(n, fmt.Sprintf("x%d", i))
	}
	n = append(n, "sp")
	for i := range 32 {
		n = append(n, fmt.Sprintf("v%d", i))
	}
	return n
}()

var a64Evaluator = func() *cfi.Evaluator {
	e, err := cfi.NewEvaluator(8, a64Names)
	if err != nil {
		panic(err)
	}
	return e
}()

func (m *a64) check(e dumpsyms.CFIEntry, addr uint64, caller *a64) error {
	texts := []string{e.Init.Rules}
	for _, c := range e.Changes {
		if c.Address <= addr {
			texts = append(texts, c.Rules)
		}
	}
	rs, err := a64Evaluator.RuleSet(texts...)
	if err != nil {
		return err
	}
	var callee, got cfi.Registers
	for r, v := range m.regs {
		callee.Set(r, v)
	}
	cfa, ra, err := rs.FindCallerRegs(&callee, m, &got)
	if err != nil {
		return err
	}
	if cfa != modelSP || ra != modelRA {
		return fmt.Errorf("cfa %#x ra %#x", cfa, ra)
	}
	for _, r := range []int{19, 20, 21, 22, 23, 24, 25, 26, 27, 28, 29, 40, 41, 42, 43, 44, 45, 46, 47} {
		v, ok := got.Get(r)
		if !ok {
			v = m.regs[r]
		}
		if v != caller.regs[r] {
			return fmt.Errorf("%s = %#x, want %#x", a64Names[r], v, caller.regs[r])
		}
	}
	return nil
}

// TestExactARM64OnModel is TestExactOnModel for the arm64 functions of
// the corpus with compact unwind rules (frame and frameless) or FDEs
// (DWARF mode).
func TestExactARM64OnModel(t *testing.T) {
	root := filepath.Join(corpus.Dir(t), "macos")
	for _, rel := range []string{"built/hello-arm64", "built/libdemo-arm64.dylib", "built/libframeless-arm64.dylib"} {
		p := filepath.Join(root, rel)
		if _, err := os.Stat(p); err != nil {
			t.Logf("%s: %v: skipped", rel, err)
			continue
		}
		sweepARM64(t, p, rel)
	}
}

// pairsDylib is the arm64 library of register-pair saves (make-pairs.sh).
const pairsDylib = "testdata/libpairs-arm64.dylib"

// TestExactARM64Pairs is the sweep over testdata/libpairs-arm64.dylib:
// frameless and frame functions whose encodings save x19..x28 and d8..d15
// in pairs (0x02001001 ... 0x04000f1f), none of which clang leaves in
// compact unwind in the corpus. Its default rules are the encodings' (the
// layout pairs-arm64.S saves: LLVM MC's), right at every instruction of
// the bodies; the exact rules are right at every instruction.
func TestExactARM64Pairs(t *testing.T) {
	funcs, insns, wrong, plainWrong := sweepARM64(t, pairsDylib, pairsDylib)
	if funcs != 8 || insns < 160 || wrong != 0 {
		t.Errorf("%d functions, %d instructions, %d wrong: want 8 functions, 160 instructions or more, 0 wrong", funcs, insns, wrong)
	}
	if plainWrong == 0 {
		t.Error("the encoding's rules are right at every instruction: the prologues and epilogues were not reached")
	}
	// Every function followed (none kept its encoding's rules): the state
	// its prologue ends in is the encoding's, so the 0 wrong above holds
	// for the encoding's rules in the bodies.
	ex, err := Dump(pairsDylib, Options{Exact: true, Options: dumpsyms.Options{Warn: func(f string, a ...any) { t.Errorf("exact: "+f, a...) }}})
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range ex.CFI {
		if len(c.Changes) == 0 {
			t.Errorf("%#x: no rules of its own at any instruction", c.Init.Address)
		}
	}
	m, err := Dump(pairsDylib, Options{})
	if err != nil {
		t.Fatal(err)
	}
	x := func(top int64, regs ...string) string {
		var b strings.Builder
		for i, r := range regs {
			fmt.Fprintf(&b, " %s: .cfa %d + ^", r, top-8*int64(i+1))
		}
		return b.String()
	}
	fl := func(size int) string { return fmt.Sprintf(".cfa: sp %d + .ra: x30", size) }
	fr := ".cfa: x29 16 + .ra: .cfa -8 + ^"
	want := map[uint64]string{
		0x2a0: fl(16) + x(0, "x19", "x20"),
		0x2c8: fl(64) + x(0, "x19", "x20", "x21", "x22"),
		0x304: fl(16) + x(0, "x21", "x22"),
		0x31c: fl(32) + " v8: .cfa -24 + ^ v9: .cfa -32 + ^" + x(0, "x19", "x20"),
		0x35c: fl(144) + " v10: .cfa -104 + ^ v11: .cfa -112 + ^ v12: .cfa -120 + ^ v13: .cfa -128 + ^ v14: .cfa -136 + ^ v15: .cfa -144 + ^ v8: .cfa -88 + ^ v9: .cfa -96 + ^" +
			x(0, "x19", "x20", "x21", "x22", "x23", "x24", "x25", "x26", "x27", "x28"),
		0x3f4: fr + x(-16, "x19", "x20", "x21", "x22") + " x29: .cfa -16 + ^",
		0x448: fr + " v8: .cfa -40 + ^ v9: .cfa -48 + ^" + x(-16, "x19", "x20") + " x29: .cfa -16 + ^",
		0x494: fr + " v10: .cfa -120 + ^ v11: .cfa -128 + ^ v12: .cfa -136 + ^ v13: .cfa -144 + ^ v14: .cfa -152 + ^ v15: .cfa -160 + ^ v8: .cfa -104 + ^ v9: .cfa -112 + ^" +
			x(-16, "x19", "x20", "x21", "x22", "x23", "x24", "x25", "x26", "x27", "x28") + " x29: .cfa -16 + ^",
	}
	got := map[uint64]string{}
	for _, c := range m.CFI {
		got[c.Init.Address] = c.Init.Rules
	}
	for a, w := range want {
		if got[a] != w {
			t.Errorf("%#x: rules\n %q\nwant\n %q", a, got[a], w)
		}
	}
	if len(got) != len(want) {
		t.Errorf("%d STACK CFI INIT records, want %d", len(got), len(want))
	}
}

// sweepARM64 runs the code of every function of the arm64 file p with
// frame, frameless or DWARF-mode (FDE) unwind from its entry along every path on the
// model and checks the exact rules at each instruction (errors for wrong
// ones); it counts the instructions where the encoding's rules alone are
// wrong.
func sweepARM64(t *testing.T, p, rel string) (funcs, insns, wrong, plainWrong int) {
	t.Helper()
	exact, plainAt, text, code, base, compact := loadOnModel(t, p, func(m uint32) bool { return m == arm64Frame || m == arm64Frameless || m == arm64DWARF })
	for _, e := range exact.CFI {
		if !compact[e.Init.Address] {
			continue
		}
		funcs++
		start := base + e.Init.Address - text.Addr
		fcode := code[start:min(start+e.Init.Size, uint64(len(code)))]
		seen := map[uint64]bool{}
		type path struct {
			m  *a64
			pc uint64
		}
		work := []path{{newA64(), 0}}
		caller := newA64()
		for len(work) > 0 {
			p := work[len(work)-1]
			work = work[:len(work)-1]
			for p.pc+4 <= uint64(len(fcode)) && !seen[p.pc] {
				seen[p.pc] = true
				in, err := arm64asm.Decode(fcode[p.pc:])
				if err != nil {
					break
				}
				insns++
				if err := p.m.check(e, e.Init.Address+p.pc, caller); err != nil {
					if wrong++; wrong <= 10 {
						t.Errorf("%s: %#x (%v): %v", rel, e.Init.Address+p.pc, in, err)
					}
				}
				if p.m.check(plainAt[e.Init.Address], e.Init.Address+p.pc, caller) != nil {
					plainWrong++
				}
				cont, target, taken := p.m.exec(in, e.Init.Address+p.pc)
				if taken && target >= e.Init.Address && target-e.Init.Address < uint64(len(fcode)) {
					work = append(work, path{p.m.clone(), target - e.Init.Address})
				}
				if !cont {
					break
				}
				p.pc += 4
			}
		}
	}
	t.Logf("%s: %d functions, %d instructions reached: exact rules wrong at %d, the encoding's or FDE's rules alone at %d", rel, funcs, insns, wrong, plainWrong)
	return funcs, insns, wrong, plainWrong
}
