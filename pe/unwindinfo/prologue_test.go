package unwindinfo

import (
	"debug/pe"
	"encoding/binary"
	"errors"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/gobreakpad/gobreakpad/cfi"
	"github.com/gobreakpad/gobreakpad/internal/testkit/corpus"
	"golang.org/x/arch/x86/x86asm"
)

// model is an x64 machine for prologs: the sixteen general registers and
// the memory the prolog writes, each register starting with a distinct
// value and RSP pointing at the return address.
type model struct {
	regs  [16]uint64
	entry [16]uint64
	mem   map[uint64]uint64
	junk  uint64
	calls int // calls run (__chkstk's, in prologs)
}

const (
	modelRSP = 0x7ff000
	modelRA  = 0x140001234
)

func newModel() *model {
	m := &model{mem: map[uint64]uint64{}}
	for r := range m.regs {
		m.regs[r] = 0x1000000000 + uint64(r)*0x01010101
	}
	m.regs[4] = modelRSP
	m.entry = m.regs
	m.mem[modelRSP] = modelRA
	return m
}

// gpr returns the number (0..15) of a general register of any width, and
// whether it is the 64-bit one.
func gpr(r x86asm.Reg) (int, bool, bool) {
	switch {
	case r >= x86asm.RAX && r <= x86asm.R15:
		return int(r - x86asm.RAX), true, true
	case r >= x86asm.EAX && r <= x86asm.R15L:
		return int(r - x86asm.EAX), false, true
	case r >= x86asm.AX && r <= x86asm.R15W:
		return int(r - x86asm.AX), false, true
	case r >= x86asm.AL && r <= x86asm.R15B:
		return int(r - x86asm.AL), false, true
	}
	return 0, false, false
}

func (m *model) addr(a x86asm.Mem) uint64 {
	v := uint64(a.Disp)
	if n, _, ok := gpr(a.Base); ok {
		v += m.regs[n]
	}
	if n, _, ok := gpr(a.Index); ok {
		v += m.regs[n] * uint64(a.Scale)
	}
	return v
}

func (m *model) next() uint64 { m.junk++; return 0xbad0000000 + m.junk*16 }

var errModel = errors.New("instruction the model lacks")

// exec runs one prolog instruction. Calls in prologs are __chkstk's (it
// probes the stack and keeps every register but R10 and R11).
func (m *model) exec(in x86asm.Inst) error {
	dst, dst64, dstOK := 0, false, false
	if r, ok := in.Args[0].(x86asm.Reg); ok {
		dst, dst64, dstOK = gpr(r)
	}
	src := func() (uint64, bool) {
		switch a := in.Args[1].(type) {
		case x86asm.Reg:
			if n, is64, ok := gpr(a); ok && is64 {
				return m.regs[n], true
			}
		case x86asm.Imm:
			return uint64(a), true
		}
		return 0, false
	}
	switch in.Op {
	case x86asm.PUSH:
		r, ok := in.Args[0].(x86asm.Reg)
		n, is64, ok2 := gpr(r)
		if !ok || !ok2 || !is64 {
			return errModel
		}
		m.regs[4] -= 8
		m.mem[m.regs[4]] = m.regs[n]
		return nil
	case x86asm.POP:
		if !dstOK || !dst64 {
			return errModel
		}
		v, ok := m.mem[m.regs[4]]
		if !ok {
			v = m.next()
		}
		m.regs[4] += 8
		m.regs[dst] = v
		return nil
	case x86asm.SUB, x86asm.ADD:
		if !dstOK || !dst64 {
			break
		}
		v, ok := src()
		if !ok {
			return errModel
		}
		if in.Op == x86asm.SUB {
			m.regs[dst] -= v
		} else {
			m.regs[dst] += v
		}
		return nil
	case x86asm.MOV:
		if mem, ok := in.Args[0].(x86asm.Mem); ok {
			v, ok := src()
			if !ok || in.MemBytes != 8 {
				v = m.next()
			}
			m.mem[m.addr(mem)] = v
			return nil
		}
		if v, ok := src(); ok && dstOK {
			if !dst64 { // 32-bit moves zero the upper half
				v = uint64(uint32(v))
			}
			m.regs[dst] = v
			return nil
		}
	case x86asm.LEA:
		if dstOK && dst64 {
			m.regs[dst] = m.addr(in.Args[1].(x86asm.Mem))
			return nil
		}
	case x86asm.CALL:
		m.regs[10], m.regs[11] = m.next(), m.next()
		m.calls++
		return nil
	case x86asm.MOVAPS, x86asm.MOVUPS, x86asm.MOVDQA, x86asm.MOVDQU, x86asm.MOVSS, x86asm.MOVSD_XMM, x86asm.NOP:
		// XMM saves and spills (no rule names XMM registers): the slots
		// they write hold no general register.
		if mem, ok := in.Args[0].(x86asm.Mem); ok {
			for a := m.addr(mem) &^ 7; a < m.addr(mem)+uint64(max(in.MemBytes, 1)); a += 8 {
				m.mem[a] = m.next()
			}
		}
		return nil
	case x86asm.STOSD, x86asm.STOSQ:
		// rep stos: MSVC's /RTC fill of the frame's locals.
		if in.Prefix[0]&0xff != x86asm.PrefixREP {
			return errModel
		}
		size := uint64(4)
		if in.Op == x86asm.STOSQ {
			size = 8
		}
		for k := uint64(0); k < m.regs[1]; k++ {
			m.mem[(m.regs[7]+k*size)&^7] = m.next()
		}
		m.regs[7] += m.regs[1] * size
		m.regs[1] = 0
		return nil
	}
	if !dstOK {
		if _, ok := in.Args[0].(x86asm.Mem); ok {
			return errModel
		}
		return nil
	}
	if dst == 4 {
		return errModel
	}
	m.regs[dst] = m.next()
	return nil
}

// evalRule evaluates a postfix rule (".cfa", "$reg", numbers, + - ^).
func (m *model) evalRule(expr string, cfa uint64) (uint64, error) {
	var st []uint64
	for tok := range strings.FieldsSeq(expr) {
		switch {
		case tok == ".cfa":
			st = append(st, cfa)
		case strings.HasPrefix(tok, "$"):
			n := -1
			for i, name := range regNames {
				if name == tok {
					n = i
				}
			}
			if n < 0 {
				return 0, fmt.Errorf("register %s", tok)
			}
			st = append(st, m.regs[n])
		case tok == "+" || tok == "-":
			if len(st) < 2 {
				return 0, fmt.Errorf("%q: stack underflow", expr)
			}
			a, b := st[len(st)-2], st[len(st)-1]
			st = st[:len(st)-2]
			if tok == "+" {
				st = append(st, a+b)
			} else {
				st = append(st, a-b)
			}
		case tok == "^":
			if len(st) < 1 {
				return 0, fmt.Errorf("%q: stack underflow", expr)
			}
			v, ok := m.mem[st[len(st)-1]]
			if !ok {
				return 0, fmt.Errorf("%q: reads 0x%x, never written", expr, st[len(st)-1])
			}
			st[len(st)-1] = v
		default:
			v, err := strconv.ParseInt(tok, 10, 64)
			if err != nil {
				return 0, fmt.Errorf("%q: token %q", expr, tok)
			}
			st = append(st, uint64(v))
		}
	}
	if len(st) != 1 {
		return 0, fmt.Errorf("%q: %d values left", expr, len(st))
	}
	return st[0], nil
}

// parseRules splits "name: expr name: expr ..." into a map.
func parseRules(s string, into map[string]string) {
	var name string
	var expr []string
	flush := func() {
		if name != "" {
			into[name] = strings.Join(expr, " ")
		}
	}
	for tok := range strings.FieldsSeq(s) {
		if strings.HasSuffix(tok, ":") {
			flush()
			name, expr = strings.TrimSuffix(tok, ":"), nil
			continue
		}
		expr = append(expr, tok)
	}
	flush()
}

// rulesAt returns the rules in force at address pc of e (the INIT record
// and the records at or below pc, the last for a name winning).
func rulesAt(e Entry, pc uint32) map[string]string {
	r := map[string]string{}
	parseRules(e.Init, r)
	for _, c := range e.Changes {
		if c.Address <= pc {
			parseRules(c.Rules, r)
		}
	}
	return r
}

var calleeSaved = []int{3, 5, 6, 7, 12, 13, 14, 15} // rbx rbp rsi rdi r12-r15

// check returns what rules get wrong for the model's state: the CFA (the
// caller's RSP, above the return address), the return address, every
// register they recover, and each callee-saved register without a rule
// (the walk takes it as unchanged).
func (m *model) check(rules map[string]string) error {
	cfa, err := m.evalRule(rules[".cfa"], 0)
	if err != nil {
		return fmt.Errorf(".cfa: %w", err)
	}
	if cfa != modelRSP+8 {
		return fmt.Errorf(".cfa = %#x, want %#x", cfa, modelRSP+8)
	}
	ra, err := m.evalRule(rules[".ra"], cfa)
	if err != nil || ra != modelRA {
		return fmt.Errorf(".ra = %#x (%v), want %#x", ra, err, modelRA)
	}
	for _, r := range calleeSaved {
		got := m.regs[r]
		if expr, ok := rules[regNames[r]]; ok {
			if got, err = m.evalRule(expr, cfa); err != nil {
				return fmt.Errorf("%s: %w", regNames[r], err)
			}
		}
		if got != m.entry[r] {
			return fmt.Errorf("%s = %#x, want %#x", regNames[r], got, m.entry[r])
		}
	}
	return nil
}

// ReadMemory reads the model's memory for package cfi.
func (m *model) ReadMemory(addr uint64, n int) ([]byte, error) {
	v, ok := m.mem[addr]
	if !ok || n != 8 {
		return nil, fmt.Errorf("%#x: never written", addr)
	}
	return binary.LittleEndian.AppendUint64(nil, v), nil
}

var evaluator = func() *cfi.Evaluator {
	e, err := cfi.NewEvaluator(8, regNames[:])
	if err != nil {
		panic(err)
	}
	return e
}()

// checkWalker is check with the walker's own evaluator (package cfi, as
// the amd64 stack walker uses it): the INIT record's rules and those of
// the records at or below pc, in order.
func (m *model) checkWalker(e Entry, pc uint32) error {
	texts := []string{e.Init}
	for _, c := range e.Changes {
		if c.Address <= pc {
			texts = append(texts, c.Rules)
		}
	}
	rs, err := evaluator.RuleSet(texts...)
	if err != nil {
		return err
	}
	var callee, caller cfi.Registers
	for r, v := range m.regs {
		callee.Set(r, v)
	}
	cfa, ra, err := rs.FindCallerRegs(&callee, m, &caller)
	if err != nil {
		return err
	}
	if cfa != modelRSP+8 || ra != modelRA {
		return fmt.Errorf("walker: cfa %#x ra %#x", cfa, ra)
	}
	for _, r := range calleeSaved {
		got, ok := caller.Get(r)
		if !ok {
			got = m.regs[r]
		}
		if got != m.entry[r] {
			return fmt.Errorf("walker: %s = %#x, want %#x", regNames[r], got, m.entry[r])
		}
	}
	return nil
}

// prologStats counts a sweep over the prologs of an image.
type prologStats struct {
	functions, skipped int
	positions, after   int // instruction boundaries inside prologs, and prolog ends
	wrong, wrongAfter  map[Style]int
	firstWrong         map[Style][]string
	firstWrongAfter    map[Style][]string
	wrongAfterChained  map[Style]int // of wrongAfter, at chained fragments
	epilogs, inEpilog  int           // epilogs, and positions in them and just after
	chkstk             int           // prologs calling __chkstk
	wrongEpilog        map[Style]int
	firstWrongEpilog   map[Style][]string
}

func newStats() *prologStats {
	return &prologStats{wrong: map[Style]int{}, wrongAfter: map[Style]int{}, firstWrong: map[Style][]string{}, firstWrongAfter: map[Style][]string{}, wrongAfterChained: map[Style]int{},
		wrongEpilog: map[Style]int{}, firstWrongEpilog: map[Style][]string{}}
}

// sweepImage runs the prolog of every function of an image on the model
// and checks, at every instruction boundary inside it (the function's
// entry included) and just after it, the rules of each style. A chained
// fragment starts from the state its primary function's prolog leaves.
func sweepImage(t *testing.T, path string, styles []Style, st *prologStats) {
	f, err := pe.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	tab, err := New(f)
	if err != nil {
		t.Fatal(err)
	}
	text := map[uint32][]byte{}
	for _, s := range f.Sections {
		if s.Characteristics&pe.IMAGE_SCN_MEM_EXECUTE != 0 {
			b, err := s.Data()
			if err != nil {
				t.Fatal(err)
			}
			text[s.VirtualAddress] = b[:min(len(b), int(s.VirtualSize))]
		}
	}
	code := func(rva uint32) []byte {
		for va, b := range text {
			if rva >= va && rva < va+uint32(len(b)) {
				return b[rva-va:]
			}
		}
		return nil
	}
	byStyle := map[Style]map[uint32]Entry{}
	for _, s := range styles {
		entries, _ := tab.Rules(s)
		byStyle[s] = map[uint32]Entry{}
		for _, e := range entries {
			byStyle[s][e.Address] = e
		}
	}
	// runProlog runs the instructions of [begin, begin+size) on m, calling
	// at (when not nil) at each boundary before size and at size.
	runProlog := func(m *model, begin uint32, size uint32, at func(off uint32)) error {
		b := code(begin)
		off := uint32(0)
		for off < uint32(size) {
			if at != nil {
				at(off)
			}
			if int(off) >= len(b) {
				return errors.New("prolog past its section")
			}
			in, err := x86asm.Decode(b[off:], 64)
			if err != nil {
				return err
			}
			if err := m.exec(in); err != nil {
				return fmt.Errorf("+%#x %v: %w", off, in, err)
			}
			off += uint32(in.Len)
		}
		if off != uint32(size) {
			return fmt.Errorf("instructions end at +%#x, prolog at +%#x", off, size)
		}
		if at != nil {
			at(off)
		}
		return nil
	}
	for _, rf := range tab.Functions {
		if rf == (RuntimeFunction{}) || rf.End <= rf.Begin {
			continue
		}
		chain, err := tab.Chain(rf)
		if err != nil {
			continue
		}
		st.functions++
		m := newModel()
		// The chained-to functions' prologs first, primary first.
		for k := len(chain) - 1; k >= 1 && err == nil; k-- {
			err = runProlog(m, chain[k-1].Chained.Begin, uint32(chain[k].PrologSize), nil)
		}
		if err == nil && len(chain) > 1 && chain[0].PrologSize == 0 {
			// A fragment's codes at offset 0 record saves its primary
			// function's body made before it (shrink-wrapping): the model
			// does not run that body, so it makes those stores itself
			// (mov [rsp+offset], reg, RSP as the primary's prolog left it).
			for _, c := range chain[0].Codes {
				if c.Op == OpSaveNonvol || c.Op == OpSaveNonvolFar {
					m.mem[m.regs[4]+uint64(c.Value)] = m.regs[c.Info]
				}
			}
		}
		size := min(uint32(chain[0].PrologSize), rf.End-rf.Begin)
		var record []func()
		if err == nil {
			err = runProlog(m, rf.Begin, size, func(off uint32) {
				if off >= rf.End-rf.Begin {
					return // the prolog ends with the function's range
				}
				inside := off < size
				record = append(record, func() {
					if inside {
						st.positions++
					} else {
						st.after++
					}
				})
				for _, s := range styles {
					e, ok := byStyle[s][rf.Begin]
					if !ok {
						continue
					}
					err := m.check(rulesAt(e, rf.Begin+off))
					if err == nil && s == StyleExact {
						err = m.checkWalker(e, rf.Begin+off)
					}
					if err != nil {
						msg := fmt.Sprintf("%s %#x+%#x: %v", filepath.Base(path), rf.Begin, off, err)
						record = append(record, func() {
							if inside {
								st.wrong[s]++
								if len(st.firstWrong[s]) < 8 {
									st.firstWrong[s] = append(st.firstWrong[s], msg)
								}
							} else {
								st.wrongAfter[s]++
								if len(chain) > 1 {
									st.wrongAfterChained[s]++
								}
								if len(st.firstWrongAfter[s]) < 8 {
									st.firstWrongAfter[s] = append(st.firstWrongAfter[s], msg)
								}
							}
						})
					}
				}
			})
		}
		if err != nil {
			st.skipped++
			if testing.Verbose() {
				t.Logf("%s %#x: not modelled: %v", filepath.Base(path), rf.Begin, err)
			}
			continue
		}
		for _, f := range record {
			f()
		}
		if m.calls > 0 {
			st.chkstk++
		}
		// The epilogs, from the state after the prolog: at each
		// instruction of each (its ret or jump included) and at the
		// instruction after it, when in the function (the body's state).
		for _, ep := range findEpilogs(code(rf.Begin)[:rf.End-rf.Begin], size) {
			em := *m
			em.mem = maps.Clone(m.mem)
			if !ep.adjRS {
				// Pops alone: the code before them set RSP to the saved
				// registers (MSVC: mov rsp, r11), which the model, not
				// running the body, does here.
				em.regs[4] = modelRSP - 8*uint64(len(ep.pops))
			}
			st.epilogs++
			offs := append([]uint32{ep.start}, ep.ends...)
			b := code(rf.Begin)
			for i, off := range offs {
				probe := &em
				if i == len(offs)-1 {
					if off >= rf.End-rf.Begin {
						break
					}
					probe = m // after the ret: the body's state
				}
				st.inEpilog++
				for _, s := range styles {
					e, ok := byStyle[s][rf.Begin]
					if !ok {
						continue
					}
					err := probe.check(rulesAt(e, rf.Begin+off))
					if err == nil && s == StyleExact {
						err = probe.checkWalker(e, rf.Begin+off)
					}
					if err != nil {
						st.wrongEpilog[s]++
						if len(st.firstWrongEpilog[s]) < 8 {
							st.firstWrongEpilog[s] = append(st.firstWrongEpilog[s], fmt.Sprintf("%s %#x+%#x (epilog at +%#x): %v", filepath.Base(path), rf.Begin, off, ep.start, err))
						}
					}
				}
				if i < len(offs)-2 { // not through the ret or jump
					in, err := x86asm.Decode(b[off:], 64)
					if err == nil {
						err = em.exec(in)
					}
					if err != nil {
						t.Errorf("%s %#x+%#x: epilog: %v", filepath.Base(path), rf.Begin, off, err)
						break
					}
				}
			}
		}
	}
}

// TestProloguesOnModel runs the prolog of every x64 function of the
// corpus's images (MSVC-built) and of testdata/winprogs' (clang-built) on
// a model of the registers and memory and checks each style's rules at
// every instruction boundary of every prolog: the CFA, the return address
// and every callee-saved register (for StyleExact also with package
// cfi's evaluator, the stack walker's). StyleExact must be right
// everywhere; the styles describing the state after the prolog are right
// only there.
//
// The figures (go test -v): 16 573 of 19 178 positions inside prologs walk
// wrong with symbolic's rules (the default style), none with ours.
func TestProloguesOnModel(t *testing.T) {
	winprogs := filepath.Join("..", "..", "cmd", "dump_syms", "testdata", "winprogs")
	var images []string
	for _, b := range []string{"x64-O0", "x64-O2"} {
		images = append(images, filepath.Join(winprogs, b, "prog.exe"), filepath.Join(winprogs, b, "lib.dll"))
	}
	if root := corpus.Path(); dirExists(root) {
		for _, p := range []string{
			"windows/breakpad/pe_only_symbol_test.dll", "windows/breakpad/dump_syms_regtest64.exe",
			"windows/symbolic/CrashWithException.exe", "windows/mozilla/dump_syms_regtest64.exe",
			"windows/mozilla/basic64.dll", "windows/mozilla/basic-opt64.dll", "windows/mozilla/mozwer.dll",
		} {
			images = append(images, filepath.Join(root, p))
		}
	} else {
		t.Logf("shared corpus not found at %s: its images left out", root)
	}
	styles := []Style{StyleExact, StyleSymbolic, StyleBreakpad}
	names := map[Style]string{StyleExact: "exact", StyleSymbolic: "symbolic", StyleBreakpad: "breakpad"}
	total := newStats()
	for _, img := range images {
		if _, err := os.Stat(img); err != nil {
			t.Logf("%s: %v", img, err)
			continue
		}
		st := newStats()
		sweepImage(t, img, styles, st)
		t.Logf("%s: %d functions (%d not modelled), %d positions inside prologs: wrong exact %d, symbolic %d, breakpad %d; %d prolog ends: wrong %d, %d, %d; %d epilogs, %d positions in and just after them: wrong %d, %d, %d",
			filepath.Base(filepath.Dir(img))+"/"+filepath.Base(img), st.functions, st.skipped, st.positions,
			st.wrong[StyleExact], st.wrong[StyleSymbolic], st.wrong[StyleBreakpad],
			st.after, st.wrongAfter[StyleExact], st.wrongAfter[StyleSymbolic], st.wrongAfter[StyleBreakpad],
			st.epilogs, st.inEpilog, st.wrongEpilog[StyleExact], st.wrongEpilog[StyleSymbolic], st.wrongEpilog[StyleBreakpad])
		total.functions += st.functions
		total.skipped += st.skipped
		total.positions += st.positions
		total.after += st.after
		total.epilogs += st.epilogs
		total.chkstk += st.chkstk
		total.inEpilog += st.inEpilog
		for _, s := range styles {
			total.wrong[s] += st.wrong[s]
			total.wrongAfter[s] += st.wrongAfter[s]
			total.wrongAfterChained[s] += st.wrongAfterChained[s]
			total.wrongEpilog[s] += st.wrongEpilog[s]
			if len(total.firstWrongEpilog[s]) < 8 {
				total.firstWrongEpilog[s] = append(total.firstWrongEpilog[s], st.firstWrongEpilog[s]...)
			}
			if len(total.firstWrong[s]) < 8 {
				total.firstWrong[s] = append(total.firstWrong[s], st.firstWrong[s]...)
			}
			if len(total.firstWrongAfter[s]) < 8 {
				total.firstWrongAfter[s] = append(total.firstWrongAfter[s], st.firstWrongAfter[s]...)
			}
		}
	}
	t.Logf("all: %d functions (%d not modelled, %d calling __chkstk in their prologs), %d positions inside prologs, %d prolog ends, %d epilogs with %d positions in and just after them",
		total.functions, total.skipped, total.chkstk, total.positions, total.after, total.epilogs, total.inEpilog)
	for _, s := range styles {
		t.Logf("%s: wrong at %d positions inside prologs, %d prolog ends (%d of chained fragments), %d positions of epilogs; first inside: %q; first at the end: %q; first in epilogs: %q",
			names[s], total.wrong[s], total.wrongAfter[s], total.wrongAfterChained[s], total.wrongEpilog[s], total.firstWrong[s], total.firstWrongAfter[s], total.firstWrongEpilog[s])
	}
	if n := total.wrong[StyleExact] + total.wrongAfter[StyleExact] + total.wrongEpilog[StyleExact]; n > 0 {
		t.Errorf("exact style wrong at %d positions", n)
	}
	// Symbolic replays a chained fragment's codes before its primary
	// function's, so the registers a fragment saves come out at the wrong
	// slots (45 fragments of the corpus's MSVC images); elsewhere its
	// state after the prolog is right, and equal to ours.
	if n := total.wrongAfter[StyleSymbolic] - total.wrongAfterChained[StyleSymbolic]; n > 0 {
		t.Errorf("symbolic style wrong at %d prolog ends of unchained functions", n)
	}
}

func dirExists(p string) bool {
	st, err := os.Stat(p)
	return err == nil && st.IsDir()
}
