package stackwalk_test

import (
	"fmt"
	"maps"
	"math/bits"
	"slices"
	"strings"
	"testing"

	"github.com/gobreakpad/gobreakpad/arch"
	"github.com/gobreakpad/gobreakpad/arch/amd64"
	"github.com/gobreakpad/gobreakpad/arch/x86"
	"github.com/gobreakpad/gobreakpad/minidump"
	"github.com/gobreakpad/gobreakpad/minidump/synth"
	"github.com/gobreakpad/gobreakpad/stackwalk"
	symbreakpad "github.com/gobreakpad/gobreakpad/symbols/breakpad"
	"github.com/gobreakpad/gobreakpad/unwind"
)

// The helpers of this file (rx*) run rust-minidump's x86 and amd64
// unwinder unit tests (minidump-unwind/src/x86_unittest.rs,
// amd64_unittest.rs) as synthetic dumps: each case is one of its tests,
// its stack laid out word for word with minidump/synth, its modules at the
// fixture's addresses (module1, module2) with the fixture's symbol text,
// and rust-minidump's expected frames. Where ours differs on purpose
// (Breakpad's rule), the case also holds our frames and the reason, which
// docs/compat.md states once (its rows R*).

// rxFrame is what a case expects of one frame: how it was found, the
// registers it must know with their values, those it must not know, and
// (nvalid > 0) how many it knows in all, as rust-minidump's tests count
// them (which.len()).
type rxFrame struct {
	trust   unwind.Trust
	regs    map[int]uint64
	unknown []int
	nvalid  int
	module  string // the frame's module code file, checked when set
}

// rxCase is one of rust-minidump's unwinder tests.
type rxCase struct {
	name string
	cpu  arch.CPU
	os   minidump.PlatformID
	ctx  *minidump.Context
	st   *synth.Stack
	// syms are the .sym texts of module1 and module2 ("": none), "ID"
	// replaced by the module's debug identifier.
	syms [2]string
	// rust are rust-minidump's expected frames, frame 0 first; the walk
	// must give exactly these frames (every one listed).
	rust []rxFrame
	// ours, when set, replaces rust on purpose: why says how and why, and
	// names its docs/compat.md row.
	ours []rxFrame
	why  string
}

// rxModules are the fixture's two modules per CPU: base addresses of
// module1 and module2 (each 0x10000 bytes).
var rxModules = map[arch.CPU][2]uint64{
	arch.X86:   {0x40000000, 0x50000000},
	arch.AMD64: {0x00007400c0000000, 0x00007500b0000000},
}

// rxRun walks c's dump and checks its frames.
func rxRun(t *testing.T, c rxCase) {
	t.Helper()
	for _, m := range rxMismatches(rxWalk(t, c), c.want(t)) {
		t.Error(m)
	}
}

// want returns the frames the walk must give: ours where the case differs
// on purpose, else rust-minidump's.
func (c rxCase) want(t *testing.T) []rxFrame {
	if c.ours == nil {
		return c.rust
	}
	if c.why == "" {
		t.Fatal("a case differing from rust-minidump must say why")
	}
	return c.ours
}

// rxWalk makes c's dump, stores its modules' symbol texts (if any) in a
// Breakpad store and walks the dump.
func rxWalk(t *testing.T, c rxCase) *stackwalk.ProcessState {
	t.Helper()
	f, err := rxBuild(c).File()
	if err != nil {
		t.Fatal(err)
	}
	root := t.TempDir()
	rxStoreSyms(t, f, c.syms, root)
	dirs := symbreakpad.NewDirs(root)
	t.Cleanup(func() { dirs.Close() })
	p, err := stackwalk.Process(f, stackwalk.Options{Symbols: dirs})
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// rxBuild makes c's dump: the fixture's modules, c's context and stack.
func rxBuild(c rxCase) *synth.Builder {
	b := synth.New(c.cpu, c.os)
	b.AddThread(1, c.ctx, c.st)
	for i, base := range rxModules[c.cpu] {
		name := fmt.Sprintf("module%d", i+1)
		if c.os == minidump.PlatformWin32NT {
			b.AddPDBModule(name, base, 0x10000, minidump.GUID{Data1: uint32(i + 1)}, 1, name+".pdb")
		} else {
			b.AddELFModule(name, base, 0x10000, []byte{byte(i + 1), 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16})
		}
	}
	b.SetException(1, 0xc0000005, 0, c.ctx)
	return b
}

// rxStoreSyms writes the symbol texts of f's modules ("ID" replaced by
// each one's debug identifier) into a Breakpad store at root.
func rxStoreSyms(t *testing.T, f *minidump.File, syms [2]string, root string) {
	t.Helper()
	mods, err := f.ModuleList()
	if err != nil || len(mods) != len(syms) {
		t.Fatalf("module list: %d modules, %v", len(mods), err)
	}
	for i, text := range syms {
		if text == "" {
			continue
		}
		m := &mods[i]
		storeSymText(t, root, m, strings.ReplaceAll(text, "ID", m.DebugIdentifier()))
	}
}

// rxMismatches compares the crashing thread's frames with want: their
// number, and for each its trust, registers and module; a caller's
// Instruction must be its return address less one (rust-minidump's
// instruction + 1 == resume address). It returns one line per mismatch.
func rxMismatches(p *stackwalk.ProcessState, want []rxFrame) []string {
	var bad []string
	fail := func(format string, args ...any) { bad = append(bad, fmt.Sprintf(format, args...)) }
	fr := p.Threads[p.RequestingThread].Frames
	if len(fr) != len(want) {
		var got []string
		for _, f := range fr {
			got = append(got, fmt.Sprintf("%#x %v", f.ReturnAddress(), f.Trust))
		}
		fail("%d frames (%s), want %d", len(fr), strings.Join(got, ", "), len(want))
	}
	names := x86.RegisterNames
	pcReg := x86.EIP
	if p.System.CPU == "amd64" {
		names, pcReg = amd64.RegisterNames, amd64.RIP
	}
	for i := range min(len(fr), len(want)) {
		f, w := fr[i], want[i]
		ctx := f.Context()
		if f.Trust != w.trust {
			fail("frame %d: found by %v, want %v", i, f.Trust, w.trust)
		}
		for r, v := range w.regs {
			if !ctx.Has(r) || ctx.Regs[r] != v {
				fail("frame %d: %s = %#x (known %v), want %#x", i, names[r], ctx.Regs[r], ctx.Has(r), v)
			}
		}
		for _, r := range w.unknown {
			if ctx.Has(r) {
				fail("frame %d: %s known (%#x), want unknown", i, names[r], ctx.Regs[r])
			}
		}
		if n := bits.OnesCount64(ctx.Valid); w.nvalid > 0 && n != w.nvalid {
			fail("frame %d: %d registers known (%#b), want %d", i, n, ctx.Valid, w.nvalid)
		}
		if w.module != "" && (f.Module == nil || f.Module.CodeFile != w.module) {
			fail("frame %d: module %v, want %s", i, f.Module, w.module)
		}
		if i > 0 && f.Instruction+1 != ctx.Regs[pcReg] {
			fail("frame %d: instruction %#x, want the return address %#x less 1", i, f.Instruction, ctx.Regs[pcReg])
		}
	}
	return bad
}

// rxMutants returns want changed in one expectation each: one frame more,
// the last frame dropped, and per frame its trust, each register's value,
// its register count, its module, a register that must be unknown; every
// one must fail (TestRustX86CanFail).
func rxMutants(want []rxFrame) map[string][]rxFrame {
	clone := func() []rxFrame {
		w := make([]rxFrame, len(want))
		for i, f := range want {
			w[i] = f
			w[i].regs = maps.Clone(f.regs)
			w[i].unknown = slices.Clone(f.unknown)
		}
		return w
	}
	out := map[string][]rxFrame{}
	out["one frame more"] = append(clone(), rxFrame{trust: unwind.TrustScan})
	out["last frame dropped"] = clone()[:len(want)-1]
	for i, f := range want {
		w := clone()
		w[i].trust = unwind.TrustPrewalked
		out[fmt.Sprintf("frame %d trust", i)] = w
		for r := range f.regs {
			w := clone()
			w[i].regs[r]++
			out[fmt.Sprintf("frame %d register %d", i, r)] = w
		}
		if f.nvalid > 0 {
			w := clone()
			w[i].nvalid++
			out[fmt.Sprintf("frame %d register count", i)] = w
		}
		if f.module != "" {
			w := clone()
			w[i].module += "x"
			out[fmt.Sprintf("frame %d module", i)] = w
		}
		if len(f.unknown) == 0 && len(f.regs) > 0 {
			w := clone()
			for r := range f.regs {
				w[i].unknown = append(w[i].unknown, r)
				break
			}
			out[fmt.Sprintf("frame %d known register as unknown", i)] = w
		}
	}
	return out
}

// rxX86 returns an x86 case on Windows (rust-minidump's x86 fixture) with
// the context's eip, esp and ebp.
func rxX86(name string, st *synth.Stack, eip, esp, ebp uint32) rxCase {
	ctx := &x86.Context{ContextFlags: x86.ContextFull, Eip: eip, Esp: esp, Ebp: ebp}
	return rxCase{name: name, cpu: arch.X86, os: minidump.PlatformWin32NT, ctx: synth.X86(ctx), st: st}
}

// The x86 context frame as rust-minidump's tests check it.
func rxX86Frame0(eip, esp, ebp uint64) rxFrame {
	return rxFrame{trust: unwind.TrustContext, regs: map[int]uint64{x86.EIP: eip, x86.ESP: esp, x86.EBP: ebp}}
}

// rxX86StackWin is the STACK WIN record of test_stack_win_frame_data_basic
// (Breakpad's WindowsFrameData fixture): 4 bytes of locals, 16 of saved
// registers (ebx, edi, esi, ebp below them), the return address found by
// .raSearchStart.
const rxX86StackWin = "STACK WIN 4 aa85 176 0 0 4 10 4 0 1 $T2 $esp .cbSavedRegs + = $T0 .raSearchStart = " +
	"$eip $T0 ^ = $esp $T0 4 + = $ebx $T2 4  - ^ = $edi $T2 8  - ^ = $esi $T2 12 - ^ = $ebp $T2 16 - ^ =\n"

// rxX86FrameData builds the stack of test_stack_win_frame_data_basic and
// _overlapping: saved ebp, esi, edi, ebx, a local, the return address
// 0x40001350; the caller's ebp frame ends the stack.
func rxX86FrameData(name, syms string) rxCase {
	const sp = 0x80000000
	st := synth.NewStack(sp, 4)
	frame1ESP := uint64(sp + 6*4)
	frame1EBP := frame1ESP + 12
	st.U32(uint32(frame1EBP)) // saved ebp
	st.U32(0xa7120d1a)        // esi
	st.U32(0x630891be)        // edi
	st.U32(0x9068a878)        // ebx
	st.U32(0xa08ea45f)        // a local
	st.U32(0x40001350)        // return address
	st.Zeros(12)
	st.U32(0) // saved ebp (stack end)
	st.U32(0) // return address (stack end)
	c := rxX86(name, st, 0x4000aa85, sp, 0xf052c1de)
	c.syms[0] = "MODULE windows x86 ID module1.pdb\n" + syms
	c.rust = []rxFrame{
		rxX86Frame0(0x4000aa85, sp, 0xf052c1de),
		{trust: unwind.TrustCFI, regs: map[int]uint64{x86.EIP: 0x40001350, x86.ESP: frame1ESP, x86.EBP: frame1EBP,
			x86.EBX: 0x9068a878, x86.ESI: 0xa7120d1a, x86.EDI: 0x630891be}},
	}
	return c
}

// rxX86Cases are x86_unittest.rs's tests but test_cfi_at_4000 ... 4006
// (TestRustX86CFI), in its order.
func rxX86Cases() []rxCase {
	var cs []rxCase

	{ // test_simple: no symbols, the ebp chain ends at once (esp is 0).
		st := synth.NewStack(0x80000000, 4)
		st.U32(0)
		st.U32(0)
		c := rxX86("simple", st, 0x40000200, 0, 0x80000000)
		c.rust = []rxFrame{{trust: unwind.TrustContext, regs: map[int]uint64{x86.EIP: 0x40000200}, module: "module1"}}
		cs = append(cs, c)
	}

	{ // test_traditional: ebp points at the saved ebp below the return address.
		const sp = 0x80000000
		st := synth.NewStack(sp, 4)
		st.Zeros(12)
		frame0EBP := st.Here()
		frame1EBP := frame0EBP + 8 + 8
		st.U32(uint32(frame1EBP))
		st.U32(0x40008679)
		st.Zeros(8)
		st.U32(0)
		st.U32(0)
		c := rxX86("traditional", st, 0x4000c7a5, sp, uint32(frame0EBP))
		c.rust = []rxFrame{
			rxX86Frame0(0x4000c7a5, sp, frame0EBP),
			// rust-minidump checks trust and instruction only; its
			// registers are Breakpad's TraditionalFrame test's.
			{trust: unwind.TrustFP, regs: map[int]uint64{x86.EIP: 0x40008679, x86.ESP: frame0EBP + 8, x86.EBP: frame1EBP}},
		}
		cs = append(cs, c)
	}

	// test_traditional_scan and test_traditional_scan_long_way: a bogus
	// ebp, so the return address is found by scanning (after 3 words of
	// garbage and, the long way, 20 more); the caller's ebp is the word
	// below it.
	for _, long := range []bool{false, true} {
		const sp = 0x80000000
		st := synth.NewStack(sp, 4)
		st.U32(0xf065dc76)
		st.U32(0x46ee2167)
		st.U32(0xbab023ec)
		name := "traditional_scan"
		if long {
			st.Zeros(20 * 4)
			name += "_long_way"
		}
		frame1ESP := st.Here() + 8
		frame1EBP := frame1ESP + 8
		st.U32(uint32(frame1EBP))
		st.U32(0x4000129d)
		st.Zeros(8)
		st.U32(0)
		st.U32(0)
		c := rxX86(name, st, 0x4000f49d, sp, 0xd43eed6e)
		c.rust = []rxFrame{
			rxX86Frame0(0x4000f49d, sp, 0xd43eed6e),
			{trust: unwind.TrustScan, regs: map[int]uint64{x86.EIP: 0x4000129d, x86.ESP: frame1ESP, x86.EBP: frame1EBP}},
		}
		cs = append(cs, c)
	}

	// test_stack_win_frame_data_basic: one STACK WIN record.
	cs = append(cs, rxX86FrameData("stack_win_frame_data_basic", rxX86StackWin))

	// test_stack_win_frame_data_overlapping: records starting before the
	// pc (wider ones, holding it) and after it; the one starting nearest
	// below (or at) the pc is the one to use.
	const junk = " $eip .raSearchStart =\n"
	cs = append(cs, rxX86FrameData("stack_win_frame_data_overlapping",
		"STACK WIN 4 aa80 181 0 0 4 10 4 0 1"+junk+
			"STACK WIN 4 aa84 177 0 0 4 10 4 0 1"+junk+
			rxX86StackWin+
			"STACK WIN 4 aa86 175 0 0 4 10 4 0 1"+junk))

	{ // test_stack_win_frame_data_parameter_size: frame 0 (module1::wheedle,
		// 12 bytes of parameters) by its ebp frame; module2::whine's STACK
		// WIN record finds its return address above the grand-callee's
		// parameters (the FUNC's bogus parameter size 0xbeef is not used).
		const sp = 0x80000000
		st := synth.NewStack(sp, 4)
		st.Zeros(16)
		frame0EBP := st.Here()
		st.U32(0x6fa902e0) // saved ebp: not a frame pointer
		st.U32(0x5000aa95) // return address in module2::whine
		frame1ESP := st.Here()
		frame2ESP := frame1ESP + 9*4
		frame2EBP := frame2ESP + 12
		for _, w := range []uint32{0xbaa0cb7a, 0xbdc92f9f, 0x0b1d8442, // wheedle's arguments 3, 2, 1
			uint32(frame2EBP), 0xb1b90a15, 0xf18e072d, 0x2558c7f3 /* saved ebx */, 0x0365e25e,
			0x2a179e38} { // return address (in no module): $T0 points here
			st.U32(w)
		}
		st.Zeros(12)
		st.U32(0)
		st.U32(0)
		c := rxX86("stack_win_frame_data_parameter_size", st, 0x40001004, sp, uint32(frame0EBP))
		c.syms[0] = "MODULE windows x86 ID module1.pdb\nFUNC 1000 100 c module1::wheedle\n"
		c.syms[1] = "MODULE windows x86 ID module2.pdb\nFUNC aa85 176 beef module2::whine\n" +
			"STACK WIN 4 aa85 176 0 0 4 10 4 0 1 $T2 $esp .cbLocals + .cbSavedRegs + = $T0 .raSearchStart = " +
			"$eip $T0 ^ = $esp $T0 4 + = $ebp $T0 20 - ^ = $ebx $T0 8 - ^ =\n"
		c.rust = []rxFrame{
			rxX86Frame0(0x40001004, sp, frame0EBP),
			{trust: unwind.TrustFP, regs: map[int]uint64{x86.EIP: 0x5000aa95, x86.ESP: frame1ESP, x86.EBP: 0x6fa902e0}},
			{trust: unwind.TrustCFI, regs: map[int]uint64{x86.EIP: 0x2a179e38, x86.ESP: frame2ESP, x86.EBP: frame2EBP, x86.EBX: 0x2558c7f3}},
		}
		cs = append(cs, c)
	}

	{ // test_frame_pointer_overflow: ebp at 0xffffffff, junk up to there;
		// one frame, no wrap-around.
		const size = 1000
		st := synth.NewStack(0xffffffff-size, 4)
		st.Zeros(size)
		c := rxX86("frame_pointer_overflow", st, 0x7a100000, 0xffffffff-size, 0xffffffff)
		c.rust = []rxFrame{{trust: unwind.TrustContext}}
		cs = append(cs, c)
	}

	{ // test_frame_pointer_overflow_nonsense_32bit_stack: stack memory
		// reaching past 4 GiB (a dump may say so), ebp 0xfffffffb: the
		// word at ebp+4 lies across 4 GiB, where 32-bit arithmetic wraps.
		const size = 1000
		start := uint64(0xffffffff) + 8 - size
		st := synth.NewStack(start, 4)
		st.Zeros(size)
		c := rxX86("frame_pointer_overflow_nonsense_32bit_stack", st, 0x7a100000, uint32(start), 0xffffffff-4)
		c.rust = []rxFrame{{trust: unwind.TrustContext}}
		cs = append(cs, c)
	}

	{ // test_frame_pointer_barely_no_overflow: test_traditional at the top
		// of the address space: the frame record's last byte is 0xfffffffe.
		start := uint32(0xffffffff - 3*4)
		st := synth.NewStack(uint64(start), 4)
		frame0FP := st.Here()
		frame1SP := frame0FP + 8
		st.U32(uint32(frame1SP)) // the caller's ebp: the stack's end
		st.U32(0x7b302000)
		st.U32(0)
		c := rxX86("frame_pointer_barely_no_overflow", st, 0x7a100000, start, uint32(frame0FP))
		c.rust = []rxFrame{
			{trust: unwind.TrustContext, regs: map[int]uint64{x86.EBP: frame0FP}},
			{trust: unwind.TrustFP, regs: map[int]uint64{x86.EIP: 0x7b302000, x86.ESP: frame1SP, x86.EBP: frame1SP}},
		}
		cs = append(cs, c)
	}
	return cs
}

// TestRustX86 holds rust-minidump's x86 unwinder tests (x86_unittest.rs)
// but the CFI prologue ones (TestRustX86CFI): frame-pointer walks, scans,
// STACK WIN frame data and the overflow guards at the top of the 32-bit
// address space.
func TestRustX86(t *testing.T) {
	for _, c := range rxX86Cases() {
		t.Run(c.name, func(t *testing.T) { rxRun(t, c) })
	}
}

// TestRustX86CanFail checks that each expectation of TestRustX86 and
// TestRustAMD64 can fail: every mutant of a case's frames (rxMutants) is
// told apart from the walk.
func TestRustX86CanFail(t *testing.T) {
	for _, c := range slices.Concat(rxX86Cases(), rxAMD64Cases()) {
		t.Run(c.name, func(t *testing.T) {
			p := rxWalk(t, c)
			want := c.want(t)
			if bad := rxMismatches(p, want); len(bad) > 0 {
				t.Skipf("the case fails: %v", bad)
			}
			for name, m := range rxMutants(want) {
				if len(rxMismatches(p, m)) == 0 {
					t.Errorf("mutant %q passes", name)
				}
			}
		})
	}
}

// TestScanNearAddressSpaceTop: a context frame's scan from a stack within
// its reach (160 words) of the top of the address space finds a return
// address there. On x86 Breakpad's does too (its bound is computed in 64
// bits; ours wrapped at 4 GiB and found nothing); on amd64 Breakpad's
// bound wraps past 2^64 and it finds nothing (docs/compat.md B18). The
// frame pointer is junk, so the caller is scanned for.
func TestScanNearAddressSpaceTop(t *testing.T) {
	st32 := synth.NewStack(0xfffffff0, 4)
	for _, w := range []uint32{0, 0, 0x40001234, 0} {
		st32.U32(w)
	}
	x := rxX86("x86", st32, 0x40000200, 0xfffffff0, 0x1234567)
	x.rust = []rxFrame{rxX86Frame0(0x40000200, 0xfffffff0, 0x1234567),
		{trust: unwind.TrustScan, regs: map[int]uint64{x86.EIP: 0x40001234, x86.ESP: 0xfffffffc, x86.EBP: 0x1234567}}}
	st64 := synth.NewStack(^uint64(0)-31, 8)
	for _, w := range []uint64{0, 0, 0x00007400c0001234, 0} {
		st64.U64(w)
	}
	a := rxAMD64("amd64", st64, 0x00007400c0000200, ^uint64(0)-31, 0x1234567)
	a.rust = []rxFrame{rxAMD64Frame0(0x00007400c0000200, ^uint64(0)-31, 0x1234567),
		{trust: unwind.TrustScan, regs: map[int]uint64{amd64.RIP: 0x00007400c0001234, amd64.RSP: ^uint64(0) - 7}, unknown: []int{amd64.RBP}}}
	for _, c := range []rxCase{x, a} {
		t.Run(c.name, func(t *testing.T) { rxRun(t, c) })
	}
}
