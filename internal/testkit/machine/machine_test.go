package machine

import (
	"encoding/binary"
	"testing"

	"golang.org/x/arch/arm64/arm64asm"
	"golang.org/x/arch/x86/x86asm"
)

func TestFull64(t *testing.T) {
	for _, c := range []struct {
		r         x86asm.Reg
		full      x86asm.Reg
		whole, ok bool
	}{
		{x86asm.RAX, x86asm.RAX, true, true},
		{x86asm.R15, x86asm.R15, true, true},
		{x86asm.EAX, x86asm.RAX, false, true},
		{x86asm.R12L, x86asm.R12, false, true},
		{x86asm.BP, x86asm.RBP, false, true},
		{x86asm.BL, x86asm.RBX, false, true},
		{x86asm.AH, x86asm.RAX, false, true},
		{x86asm.BH, x86asm.RBX, false, true},
		{x86asm.SPB, x86asm.RSP, false, true},
		{x86asm.DIB, x86asm.RDI, false, true},
		{x86asm.R8B, x86asm.R8, false, true},
		{x86asm.R15B, x86asm.R15, false, true},
		{x86asm.RIP, 0, false, false},
		{x86asm.X0, 0, false, false},
	} {
		full, whole, ok := Full64(c.r)
		if full != c.full || whole != c.whole || ok != c.ok {
			t.Errorf("Full64(%v) = %v, %v, %v; want %v, %v, %v", c.r, full, whole, ok, c.full, c.whole, c.ok)
		}
	}
}

func x86Inst(t *testing.T, code ...byte) x86asm.Inst {
	t.Helper()
	in, err := x86asm.Decode(code, 64)
	if err != nil {
		t.Fatalf("% x: %v", code, err)
	}
	return in
}

func TestX64(t *testing.T) {
	m := NewX64(0x0bad00000000)
	m.Regs[x86asm.RSP], m.Regs[x86asm.RBP], m.Regs[x86asm.RCX] = 0x1000, 0x2000, 3
	value := func(a x86asm.Arg, bytes int) uint64 {
		if r, whole, ok := Full64(a.(x86asm.Reg)); ok && whole {
			return m.Regs[r]
		}
		return m.Next()
	}
	// push rbp; lea rax, [rbp+rcx*8-8]; mov [rsp-8], rax; mov eax, 1 (not
	// one of Step's); cmp rax, rcx; pop rdx; pop rdx (never written: junk).
	if !m.Step(x86Inst(t, 0x55), value) || m.Regs[x86asm.RSP] != 0xff8 || m.Words[0xff8] != 0x2000 {
		t.Fatalf("push rbp: rsp %#x, [rsp] %#x", m.Regs[x86asm.RSP], m.Words[0xff8])
	}
	if !m.Step(x86Inst(t, 0x48, 0x8d, 0x44, 0xcd, 0xf8), value) || m.Regs[x86asm.RAX] != 0x2010 {
		t.Fatalf("lea: rax %#x, want 0x2010", m.Regs[x86asm.RAX])
	}
	if !m.Step(x86Inst(t, 0x48, 0x89, 0x44, 0x24, 0xf8), value) || m.Words[0xff0] != 0x2010 {
		t.Fatalf("mov [rsp-8], rax: %#x", m.Words[0xff0])
	}
	if m.Step(x86Inst(t, 0xb8, 1, 0, 0, 0), value) {
		t.Fatal("mov eax, 1: run by Step")
	}
	if !m.Step(x86Inst(t, 0x48, 0x39, 0xc8), value) || m.Regs[x86asm.RAX] != 0x2010 {
		t.Fatal("cmp rax, rcx: not run or wrote rax")
	}
	if !m.Step(x86Inst(t, 0x5a), value) || m.Regs[x86asm.RDX] != 0x2000 || m.Regs[x86asm.RSP] != 0x1000 {
		t.Fatalf("pop rdx: rdx %#x rsp %#x", m.Regs[x86asm.RDX], m.Regs[x86asm.RSP])
	}
	if !m.Step(x86Inst(t, 0x5a), value) || m.Regs[x86asm.RDX] != 0x0bad00000010 {
		t.Fatalf("pop rdx of unwritten memory: %#x, want the first junk word", m.Regs[x86asm.RDX])
	}
	// rsp is 0x1008 now: mov rax, [rsp-16] (the pushed rbp), mov eax,
	// [rsp-16], mov rax, [rsp+8] (never written), mov rax, rcx, mov eax,
	// ecx, mov eax, 1.
	for _, c := range []struct {
		in   x86asm.Inst
		v    uint64
		want bool
	}{
		{x86Inst(t, 0x48, 0x8b, 0x44, 0x24, 0xf0), 0x2000, true},
		{x86Inst(t, 0x8b, 0x44, 0x24, 0xf0), 0, false},
		{x86Inst(t, 0x48, 0x8b, 0x44, 0x24, 0x08), 0, false},
		{x86Inst(t, 0x48, 0x89, 0xc8), 3, true},
		{x86Inst(t, 0x89, 0xc8), 0, false},
		{x86Inst(t, 0xb8, 1, 0, 0, 0), 1, true},
	} {
		if v, ok := m.Operand(c.in.Args[1], c.in.MemBytes); v != c.v || ok != c.want {
			t.Errorf("%v: operand %#x, %v; want %#x, %v", c.in, v, ok, c.v, c.want)
		}
	}
	if _, ok := m.Addr(x86Inst(t, 0x48, 0x8b, 0x05, 0, 0, 0, 0).Args[1].(x86asm.Mem)); ok {
		t.Error("rip-relative address known")
	}
	// A 4-byte store: junk over the word it touches; 8 bytes at an
	// unaligned address: over both.
	m.Store(0x2000, 4, 7)
	m.Store(0x3004, 8, 7)
	if m.Words[0x2000] != 0x0bad00000020 || m.Words[0x3000] != 0x0bad00000030 || m.Words[0x3008] != 0x0bad00000040 {
		t.Errorf("partial stores: %#x %#x %#x", m.Words[0x2000], m.Words[0x3000], m.Words[0x3008])
	}
	// add eax, 1: rax junk; add [rbp-8], 1: that word junk.
	m.Clobber(x86Inst(t, 0x83, 0xc0, 0x01))
	m.Clobber(x86Inst(t, 0x48, 0x83, 0x45, 0xf8, 0x01))
	if m.Regs[x86asm.RAX] != 0x0bad00000050 || m.Words[0x1ff8] != 0x0bad00000060 {
		t.Errorf("clobbers: rax %#x, [rbp-8] %#x", m.Regs[x86asm.RAX], m.Words[0x1ff8])
	}
}

func a64Inst(t *testing.T, word uint32) arm64asm.Inst {
	t.Helper()
	in, err := arm64asm.Decode(binary.LittleEndian.AppendUint32(nil, word))
	if err != nil {
		t.Fatalf("%#08x: %v", word, err)
	}
	return in
}

func TestA64(t *testing.T) {
	for _, c := range []struct {
		word uint32
		mem  A64Mem
	}{
		{0xa9bf7bfd, A64Mem{Base: A64SP, Imm: -16, Pre: true}}, // stp x29, x30, [sp, #-16]!
		{0xa8c17bfd, A64Mem{Base: A64SP, Imm: 16, Post: true}}, // ldp x29, x30, [sp], #16
		{0xa9014ff4, A64Mem{Base: A64SP, Imm: 16}},             // stp x20, x19, [sp, #16]
		{0x6d0127e8, A64Mem{Base: A64SP, Imm: 16}},             // stp d8, d9, [sp, #16]
		{0xf9400be0, A64Mem{Base: 31, Imm: 16}},                // ldr x0, [sp, #16]
		{0xb9400421, A64Mem{Base: 1, Imm: 4}},                  // ldr w1, [x1, #4]
	} {
		in := a64Inst(t, c.word)
		args := A64Args(in)
		got, ok := ParseA64Mem(args[len(args)-1])
		if !ok || got != c.mem {
			t.Errorf("%v: %+v, %v; want %+v", in, got, ok, c.mem)
		}
	}
	pre := A64Mem{Base: A64SP, Imm: -16, Pre: true}
	post := A64Mem{Base: A64SP, Imm: 16, Post: true}
	if pre.Addr(0x100) != 0xf0 || pre.Writeback(0x100) != 0xf0 || post.Addr(0x100) != 0x100 || post.Writeback(0x100) != 0x110 {
		t.Error("pre- or post-index addresses wrong")
	}
	if r, ok := A64Reg(a64Inst(t, 0x6d0127e8).Args[1]); !ok || r != A64D0+9 {
		t.Errorf("d9: %d, %v", r, ok)
	}
	if _, ok := A64GPR(a64Inst(t, 0x6d0127e8).Args[1]); ok {
		t.Error("d9 a general register")
	}
	regs := make([]uint64, 32)
	regs[A64SP], regs[1] = 0x1000, 5
	for _, c := range []struct {
		word        uint32
		v           uint64
		form, known bool
	}{
		{0x910043fd, 0x1010, true, true}, // add x29, sp, #0x10
		{0xd14007ff, 0, true, true},      // sub sp, sp, #1, lsl #12
		{0x910003fd, 0x1000, true, true}, // mov x29, sp
		{0xaa0103e0, 5, true, true},      // mov x0, x1
		{0xd2800020, 0, true, false},     // mov x0, #1
		{0x8b010000, 0, true, false},     // add x0, x0, x1: not an immediate
		{0xeb01001f, 0, false, false},    // cmp x0, x1
	} {
		in := a64Inst(t, c.word)
		v, form, known := A64Move(in, regs)
		if v != c.v || form != c.form || known != c.known {
			t.Errorf("%v: %#x, %v, %v; want %#x, %v, %v", in, v, form, known, c.v, c.form, c.known)
		}
	}
}
