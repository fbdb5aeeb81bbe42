package stackwalk_test

import (
	"testing"

	"github.com/gobreakpad/gobreakpad/arch"
	"github.com/gobreakpad/gobreakpad/arch/amd64"
	"github.com/gobreakpad/gobreakpad/minidump"
	"github.com/gobreakpad/gobreakpad/minidump/synth"
	"github.com/gobreakpad/gobreakpad/unwind"
)

// rxAMD64 returns an amd64 case on Linux (rust-minidump's amd64 fixture)
// with the context's rip, rsp and rbp.
func rxAMD64(name string, st *synth.Stack, rip, rsp, rbp uint64) rxCase {
	ctx := &amd64.Context{ContextFlags: amd64.ContextFull, Rip: rip, Rsp: rsp, Rbp: rbp}
	return rxCase{name: name, cpu: arch.AMD64, os: minidump.PlatformLinux, ctx: synth.AMD64(ctx), st: st}
}

// rxRepeat appends n bytes of value v (test_assembler's append_repeated);
// n is a multiple of 8.
func rxRepeat(st *synth.Stack, n int, v byte) {
	for range n / 8 {
		st.U64(0x0101010101010101 * uint64(v))
	}
}

// rxAMD64Frame0 is the amd64 context frame as rust-minidump's tests check it.
func rxAMD64Frame0(rip, rsp, rbp uint64) rxFrame {
	return rxFrame{trust: unwind.TrustContext, regs: map[int]uint64{amd64.RIP: rip, amd64.RSP: rsp, amd64.RBP: rbp}}
}

// rxAMD64Cases are amd64_unittest.rs's tests but test_cfi_at_4000 ... 4006
// (TestRustAMD64CFI), test_caller_pushed_rbp and test_windows_rbp_scan
// (TestRustAMD64FramePointer), in its order.
func rxAMD64Cases() []rxCase {
	var cs []rxCase

	{ // test_simple: no symbols and no stack contents (rsp is 0): one frame.
		st := synth.NewStack(0x80000000, 8)
		c := rxAMD64("simple", st, 0x00007400c0000200, 0, 0x8000000080000000)
		c.rust = []rxFrame{{trust: unwind.TrustContext, regs: map[int]uint64{amd64.RIP: 0x00007400c0000200}, module: "module1"}}
		cs = append(cs, c)
	}

	{ // test_windows_rbp_scan_large_frames: Windows, an rbp chain through
		// frames of 32 and 768 bytes whose rbp points 16 bytes below,
		// and 240 above, the saved rbp; the context's frame has a junk
		// word (module2's base address) below its frame record.
		const sp = 0x8000000080000000
		const rip1, rip2, rip3 = 0x00007500b0000110, 0x00007500b0000120, 0x00007500b0000130
		st := synth.NewStack(sp, 8)
		rxRepeat(st, 16, 1)
		st.U64(0x00007500b0000000) // junk
		frame0RBP := st.Here()
		frame1SP := frame0RBP + 16
		frame1RBP := frame1SP + 32
		frame2SP := frame1RBP + 32
		frame2RBP := frame2SP + 512
		frame3SP := frame2RBP + 240 + 16
		frame3RBP := frame3SP
		st.U64(frame1RBP)
		st.U64(rip1)
		rxRepeat(st, 32, 2)
		st.U64(0xa)
		st.U64(0xb)
		st.U64(frame2RBP)
		st.U64(rip2)
		st.Zeros(512 + 240)
		st.U64(frame3RBP)
		st.U64(rip3)
		st.U64(0)
		c := rxAMD64("windows_rbp_scan_large_frames", st, 0x00007400c0000200, sp, frame0RBP)
		c.os = minidump.PlatformWin32NT
		fp := func(rip, rsp, rbp uint64) rxFrame {
			return rxFrame{trust: unwind.TrustFP, regs: map[int]uint64{amd64.RIP: rip, amd64.RSP: rsp, amd64.RBP: rbp}}
		}
		c.rust = []rxFrame{rxAMD64Frame0(0x00007400c0000200, sp, frame0RBP),
			fp(rip1, frame1SP, frame1RBP), fp(rip2, frame2SP, frame2RBP), fp(rip3, frame3SP, frame3RBP)}
		c.ours = []rxFrame{rxAMD64Frame0(0x00007400c0000200, sp, frame0RBP),
			{trust: unwind.TrustScan, regs: map[int]uint64{amd64.RIP: rip1, amd64.RSP: frame1SP, amd64.RBP: frame1RBP}},
			{trust: unwind.TrustScan, regs: map[int]uint64{amd64.RIP: rip2, amd64.RSP: frame2SP}, unknown: []int{amd64.RBP}}}
		c.why = "R6: no rbp chain on Windows (Breakpad's rule: Windows code need not keep rbp as a frame pointer); " +
			"scans find frames 1 and 2 (frame 1's rbp from the word below its return address, frame 2's unknown), " +
			"frame 3's return address lies 94 words above frame 2's rsp, beyond a caller's 40-word scan"
		cs = append(cs, c)
	}

	{ // test_scan_without_symbols: scans through two frames, only
		// addresses in modules taken as return addresses; the context's
		// rbp points at a bogus saved rbp (the stack's start) below the
		// second return address, so it is no frame pointer.
		const sp = 0x8000000080000000
		const ra1, ra2 = 0x00007500b0000100, 0x00007500b0000900
		st := synth.NewStack(sp, 8)
		st.Zeros(16)
		st.U64(0x00007400b0000000) // junk that is not
		st.U64(0x00007500d0000000) // a return address
		st.U64(ra1)
		frame1SP := st.Here()
		st.Zeros(16)
		st.U64(0x00007400b0000000)
		st.U64(0x00007500d0000000)
		frame1RBP := st.U64(sp) // a saved rbp, bogus
		st.U64(ra2)
		frame2SP := st.Here()
		st.Zeros(32)
		c := rxAMD64("scan_without_symbols", st, 0x00007400c0000200, sp, frame1RBP)
		c.rust = []rxFrame{
			{trust: unwind.TrustContext},
			{trust: unwind.TrustScan, regs: map[int]uint64{amd64.RIP: ra1, amd64.RSP: frame1SP, amd64.RBP: frame1RBP}},
			{trust: unwind.TrustScan, regs: map[int]uint64{amd64.RIP: ra2, amd64.RSP: frame2SP}},
		}
		cs = append(cs, c)
	}

	{ // test_scan_with_symbols: with symbols, addresses in modules but in
		// no function are no return addresses either.
		const sp = 0x8000000080000000
		const ra = 0x00007500b0000110
		st := synth.NewStack(sp, 8)
		st.Zeros(16)
		st.U64(0x00007400b0000000) // junk that is not
		st.U64(0x00007500b0000000) // a return address
		st.U64(0x00007400c0001000) // plausible addresses
		st.U64(0x00007500b000aaaa) // in no function
		st.U64(ra)
		frame1RSP := st.Here()
		st.Zeros(32)
		frame1RBP := st.Here() // the stack's end
		c := rxAMD64("scan_with_symbols", st, 0x00007400c0000200, sp, frame1RBP)
		c.syms[0] = "MODULE Linux x86_64 ID module1\nFUNC 100 400 10 monotreme\n"
		c.syms[1] = "MODULE Linux x86_64 ID module2\nFUNC 100 400 10 marsupial\n"
		c.rust = []rxFrame{
			{trust: unwind.TrustContext},
			{trust: unwind.TrustScan, regs: map[int]uint64{amd64.RIP: ra, amd64.RSP: frame1RSP, amd64.RBP: frame1RBP}, nvalid: 3},
		}
		cs = append(cs, c)
	}

	{ // test_scan_with_symbols_sandwiched: frame 1 by CFI (the fixture of
		// test_cfi_at_4000), then four "JIT" frames without unwind
		// information, then a return address in module2.
		const sp = 0x8000000080000000
		const ra = 0x00007500b0000110
		const (
			rbp0, rbx0, r120, r130 = 0x68995b1de4700266, 0x5a5beeb38de23be8, 0xed1b02e8cc0fc79c, 0x1d20ad8acacbe930
			r140, r150             = 0xe94cffc2f7adaa28, 0xb638d17d8da413b5
		)
		st := synth.NewStack(sp, 8)
		st.U64(0x00007400c0005510)
		frame1RSP := st.Here()
		for i, w := range []uint64{0x000090000000000a, 0x00009000000000a0, 0x0000900000000a00, 0x000090000000a000} {
			rxRepeat(st, 256, byte(i))
			st.U64(w)
		}
		st.U64(0x0000900000000001) // random values
		st.U64(0x0000900000000002)
		st.U64(0x0000900000000003)
		st.U64(ra)
		frame2RSP := st.Here()
		st.Zeros(1000)
		c := rxAMD64("scan_with_symbols_sandwiched", st, 0x00007400c0004000, sp, rbp0)
		ctx := c.ctx.AMD64
		ctx.Rbx, ctx.R12, ctx.R13, ctx.R14, ctx.R15 = rbx0, r120, r130, r140, r150
		c.syms[0] = rustAMD64CFISyms
		frame1 := rxFrame{trust: unwind.TrustCFI, nvalid: 8, regs: map[int]uint64{amd64.RIP: 0x00007400c0005510, amd64.RSP: frame1RSP,
			amd64.RBP: rbp0, amd64.RBX: rbx0, amd64.R12: r120, amd64.R13: r130, amd64.R14: r140, amd64.R15: r150}}
		// rust-minidump checks frames 0 to 2 only; frame2RSP is where the
		// scan leaves the stack pointer.
		c.rust = []rxFrame{{trust: unwind.TrustContext}, frame1,
			{trust: unwind.TrustScan, regs: map[int]uint64{amd64.RIP: ra, amd64.RSP: frame2RSP}}}
		c.ours = c.rust[:2]
		c.why = "R16: a scan from a frame found by CFI looks 40 words, as from any caller (Breakpad's kRASearchWords); " +
			"rust-minidump looks 160 words (as from the context frame) to pass over JIT frames; " +
			"frame 1's CFI has no .ra rule, rbp is no frame pointer, and the 40 words hold no return address"
		cs = append(cs, c)
	}

	{ // test_frame_pointer_overflow: rbp at 2^64-1, junk up to there.
		const size = 1000
		st := synth.NewStack(^uint64(0)-size, 8)
		st.Zeros(size)
		c := rxAMD64("frame_pointer_overflow", st, 0x00007400c0000200, ^uint64(0)-size, ^uint64(0))
		c.rust = []rxFrame{{trust: unwind.TrustContext}}
		cs = append(cs, c)
	}

	{ // test_frame_pointer_barely_no_overflow: test_caller_pushed_rbp at
		// the top of the address space.
		const ra = 0x00007500b0000110
		start := ^uint64(0) - 3*8
		st := synth.NewStack(start, 8)
		frame0FP := st.Here()
		frame1SP := frame0FP + 16
		st.U64(frame1SP) // the caller's rbp: the stack's end
		st.U64(ra)
		st.U64(0)
		c := rxAMD64("frame_pointer_barely_no_overflow", st, 0x00007400c0000200, start, frame0FP)
		c.rust = []rxFrame{
			{trust: unwind.TrustContext, regs: map[int]uint64{amd64.RBP: frame0FP}},
			{trust: unwind.TrustFP, regs: map[int]uint64{amd64.RIP: ra, amd64.RSP: frame1SP, amd64.RBP: frame1SP}},
		}
		c.ours = []rxFrame{c.rust[0],
			{trust: unwind.TrustScan, regs: map[int]uint64{amd64.RIP: ra, amd64.RSP: frame1SP, amd64.RBP: frame1SP}}}
		c.why = "R17: rbp (2^64-25) is not a multiple of 8, so no frame pointer (Breakpad's check); the same caller " +
			"is found by scanning, its rbp from the word below the return address. (Breakpad itself finds no caller: " +
			"its scan bound wraps past 2^64; B18)"
		cs = append(cs, c)
	}

	{ // test_scan_walk_overflow: the stack at address 0, the return
		// address its first word: no rbp recovered from the word below it
		// (there is none: the address would wrap).
		const ra = 0x00007500b0000100
		st := synth.NewStack(0, 8)
		st.U64(ra)
		frame1SP := st.Here()
		st.Zeros(16)
		st.U64(0x00007400b0000000)
		st.U64(0x00007500d0000000)
		frame1RBP := st.Here()
		c := rxAMD64("scan_walk_overflow", st, 0x00007400c0000200, 0, frame1RBP)
		c.rust = []rxFrame{
			{trust: unwind.TrustContext},
			// rust-minidump: rbp unknown (its value 0).
			{trust: unwind.TrustScan, regs: map[int]uint64{amd64.RIP: ra, amd64.RSP: frame1SP}, unknown: []int{amd64.RBP}},
		}
		c.ours = []rxFrame{c.rust[0],
			{trust: unwind.TrustScan, regs: map[int]uint64{amd64.RIP: ra, amd64.RSP: frame1SP, amd64.RBP: frame1RBP}}}
		c.why = "R18: the callee's rbp (0x28), at or above the return address' slot + 8, is kept as the caller's " +
			"(Breakpad's rule); rust-minidump recovers no rbp when the return address is the stack's first word " +
			"(its guard against reading below address 0, which this rule does not read)"
		cs = append(cs, c)
	}
	return cs
}

// TestRustAMD64 holds rust-minidump's amd64 unwinder tests
// (amd64_unittest.rs) but those of TestRustAMD64CFI and
// TestRustAMD64FramePointer: scans with and without symbols, Windows' rbp
// chain through large frames, the overflow guards at the top and bottom of
// the address space.
func TestRustAMD64(t *testing.T) {
	for _, c := range rxAMD64Cases() {
		t.Run(c.name, func(t *testing.T) { rxRun(t, c) })
	}
}
