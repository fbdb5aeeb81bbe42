package amd64_test

import (
	"testing"

	"github.com/gobreakpad/gobreakpad/unwind"
	amd64unwind "github.com/gobreakpad/gobreakpad/unwind/amd64"
)

// TestScanCallSite: with the code in the dump, a scanned candidate with no
// call before it (a stored code pointer) is passed over and the next one,
// after a call, is taken with trust "after a call instruction"; without
// the code, Breakpad's scan takes the first.
func TestScanCallSite(t *testing.T) {
	code := func() map[uint64][]byte {
		b := make([]byte, 0x40)
		// 0x402010: mov eax, 1 (no call ends at 0x402015)
		copy(b[0x10:], []byte{0xb8, 0x01, 0x00, 0x00, 0x00})
		// 0x402020: call [rip+0x100] (6 bytes; ends at 0x402026)
		copy(b[0x20:], []byte{0xff, 0x15, 0x00, 0x01, 0x00, 0x00})
		return map[uint64][]byte{0x402000: b}
	}
	for _, withCode := range []bool{true, false} {
		env := newEnv()
		if withCode {
			env.Code = code()
		}
		sp := env.Push(0x402015, 0x402026, 0)
		f := contextFrame(t, env, 0x401010, sp, 1) // rbp 1: no frame chain
		c := (amd64unwind.Unwinder{}).Caller(env, []*unwind.Frame{f}, true)
		if c == nil {
			t.Fatalf("code %v: no caller", withCode)
		}
		if withCode {
			check(t, c, unwind.TrustCallSite, 0x402026, sp+16)
		} else {
			check(t, c, unwind.TrustScan, 0x402015, sp+8)
		}
	}
}

// TestScanFunctionStart: with call sites checked, a candidate at the start
// of a function (a stored function pointer) whose code is not in the dump
// is passed over; the same address after a call in the dump (a call to a
// no-return function ending the function before) is a return address.
func TestScanFunctionStart(t *testing.T) {
	for _, withCode := range []bool{false, true} {
		env := newEnv()
		env.Modules[0].Funcs = append(env.Modules[0].Funcs, [2]uint64{0x404000, 0x404100}, [2]uint64{0x404100, 0x404200})
		env.FuncStarts = map[uint64]bool{0x404000: true, 0x404100: true}
		if withCode {
			env.Code = map[uint64][]byte{0x4040fb: {0xe8, 0, 0, 0, 0}} // call rel32, ends at 0x404100
		}
		sp := env.Push(0x404100, 0x402050, 0)
		f := contextFrame(t, env, 0x401010, sp, 1) // rbp 1: no frame chain
		c := (amd64unwind.Unwinder{}).Caller(env, []*unwind.Frame{f}, true)
		if c == nil {
			t.Fatalf("code %v: no caller", withCode)
		}
		if withCode {
			check(t, c, unwind.TrustCallSite, 0x404100, sp+8)
		} else {
			check(t, c, unwind.TrustScan, 0x402050, sp+16)
		}
	}
}

// TestCallTarget: the target of a call rel32 ending at a return address,
// forward and backward; no target for an indirect call or without code.
func TestCallTarget(t *testing.T) {
	env := newEnv()
	env.Code = map[uint64][]byte{
		0x402000: {0xe8, 0xfb, 0x0f, 0x00, 0x00}, // call 0x403000 (0x402005 + 0xffb)
		0x402010: {0xe8, 0xeb, 0xef, 0xff, 0xff}, // call 0x401000 (0x402015 - 0x1015)
		0x402020: {0x90, 0xff, 0x15, 0, 0, 0, 0}, // nop; call [rip]
	}
	u := amd64unwind.Unwinder{}
	for ra, want := range map[uint64]uint64{0x402005: 0x403000, 0x402015: 0x401000, 0x402027: 0, 0x402105: 0} {
		got, ok := u.CallTarget(env, ra)
		if ok != (want != 0) || got != want {
			t.Errorf("%#x: target %#x %v; want %#x", ra, got, ok, want)
		}
	}
}
