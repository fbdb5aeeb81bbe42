package x86_test

import (
	"testing"

	"github.com/gobreakpad/gobreakpad/arch/x86"
	"github.com/gobreakpad/gobreakpad/unwind"
	x86unwind "github.com/gobreakpad/gobreakpad/unwind/x86"
)

// TestScanCallSite: with the code in the dump, a scanned candidate with no
// call before it is passed over for the next one, after call eax.
func TestScanCallSite(t *testing.T) {
	code := make([]byte, 0x40)
	copy(code[0x10:], []byte{0xb8, 0x01, 0x00, 0x00, 0x00}) // mov eax, 1: no call before 0x402015
	copy(code[0x20:], []byte{0x90, 0x90, 0xff, 0xd0})       // nop; nop; call eax: ends at 0x402024
	env := newEnv()
	env.IsWindows = false
	env.Code = map[uint64][]byte{0x402000: code}
	sp := env.Push(0x402015, 0x402024, 0)
	c := (x86unwind.Unwinder{}).Caller(env, []*unwind.Frame{contextFrame(t, env, 0x401010, uint32(sp), 1)}, true)
	if c == nil {
		t.Fatal("no caller")
	}
	if c.Regs[x86.EIP] != 0x402024 || c.Regs[x86.ESP] != sp+8 {
		t.Errorf("caller eip %#x esp %#x; want 0x402024 %#x", c.Regs[x86.EIP], c.Regs[x86.ESP], sp+8)
	}
}

// TestScanFunctionStart: with call sites checked, a candidate at the start
// of a function (a stored function pointer) whose code is not in the dump
// is passed over; after a call in the dump it is a return address.
func TestScanFunctionStart(t *testing.T) {
	for _, withCode := range []bool{false, true} {
		env := newEnv()
		env.IsWindows = false
		env.Modules[0].Funcs = append(env.Modules[0].Funcs, [2]uint64{0x404000, 0x404100}, [2]uint64{0x404100, 0x404200})
		env.FuncStarts = map[uint64]bool{0x404000: true, 0x404100: true}
		if withCode {
			env.Code = map[uint64][]byte{0x4040fb: {0xe8, 0, 0, 0, 0}} // call rel32, ends at 0x404100
		}
		sp := env.Push(0x404100, 0x402050, 0)
		c := (x86unwind.Unwinder{}).Caller(env, []*unwind.Frame{contextFrame(t, env, 0x401010, uint32(sp), 1)}, true)
		if c == nil {
			t.Fatalf("code %v: no caller", withCode)
		}
		want, wantSP := uint64(0x402050), sp+8
		if withCode {
			want, wantSP = 0x404100, sp+4
		}
		if c.Regs[x86.EIP] != want || c.Regs[x86.ESP] != wantSP {
			t.Errorf("code %v: caller eip %#x esp %#x; want %#x %#x", withCode, c.Regs[x86.EIP], c.Regs[x86.ESP], want, wantSP)
		}
	}
}

// TestCallTarget: the target of a call rel32 ending at a return address,
// wrapping at 4 GiB as the CPU does.
func TestCallTarget(t *testing.T) {
	env := newEnv()
	env.Code = map[uint64][]byte{
		0x402000: {0xe8, 0xfb, 0x0f, 0x00, 0x00}, // call 0x403000
		0x402010: {0xe8, 0x00, 0x00, 0x00, 0x80}, // call 0x402015 - 2 GiB, wrapped
		0x402020: {0x90, 0x90, 0xff, 0xd0},       // call eax
	}
	u := x86unwind.Unwinder{}
	for ra, want := range map[uint64]uint64{0x402005: 0x403000, 0x402015: 0x80402015, 0x402024: 0} {
		got, ok := u.CallTarget(env, ra)
		if ok != (want != 0) || got != want {
			t.Errorf("%#x: target %#x %v; want %#x", ra, got, ok, want)
		}
	}
}
