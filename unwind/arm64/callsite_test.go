package arm64_test

import (
	"encoding/binary"
	"testing"

	"github.com/gobreakpad/gobreakpad/unwind"
	arm64unwind "github.com/gobreakpad/gobreakpad/unwind/arm64"
	"github.com/gobreakpad/gobreakpad/unwind/unwindtest"
)

// TestScanCallSite: a candidate after an add (a stored code pointer) is
// passed over; candidates after BL, BLR and BLRAA are taken, verified.
func TestScanCallSite(t *testing.T) {
	code := make([]byte, 0x40)
	put := func(off int, w uint32) { binary.LittleEndian.PutUint32(code[off:], w) }
	put(0x10, 0x91000400) // add x0, x0, #1: no call before 0x403014
	put(0x20, 0x94000010) // bl
	put(0x28, 0xd63f0100) // blr x8
	put(0x30, 0xd73f0911) // blraa x8, x17
	for _, ra := range []uint64{0x403024, 0x40302c, 0x403034} {
		u := arm64unwind.NewUnwinder(modBase + modSize)
		env := newEnv(u)
		env.Code = map[uint64][]byte{0x403000: code}
		sp := env.Push(0x403014, ra, 0)
		frames := unwindtest.Walk(u, env, contextFrame(t, u, env, 0x401010, sp, 0x10, 0), 2)
		if len(frames) != 2 {
			t.Fatalf("%#x: got %d frames", ra, len(frames))
		}
		check(t, frames[1], unwind.TrustCallSite, ra, sp+16)
	}
}

// TestScanFunctionStart: with call sites checked, a candidate at the start
// of a function (a stored function pointer) whose code is not in the dump
// is passed over; after a BL in the dump (a call to a no-return function
// ending the function before) it is a return address.
func TestScanFunctionStart(t *testing.T) {
	for _, withCode := range []bool{false, true} {
		u := arm64unwind.NewUnwinder(modBase + modSize)
		env := newEnv(u)
		env.Modules[0].Funcs = append(env.Modules[0].Funcs, [2]uint64{0x404000, 0x404100}, [2]uint64{0x404100, 0x404200})
		env.FuncStarts = map[uint64]bool{0x404000: true, 0x404100: true}
		if withCode {
			env.Code = map[uint64][]byte{0x4040fc: binary.LittleEndian.AppendUint32(nil, 0x94000010)} // bl
		}
		sp := env.Push(0x404100, 0x403050, 0)
		frames := unwindtest.Walk(u, env, contextFrame(t, u, env, 0x401010, sp, 0x10, 0), 2)
		if len(frames) != 2 {
			t.Fatalf("code %v: got %d frames", withCode, len(frames))
		}
		if withCode {
			check(t, frames[1], unwind.TrustCallSite, 0x404100, sp+8)
		} else {
			check(t, frames[1], unwind.TrustScan, 0x403050, sp+16)
		}
	}
}

// TestCallTarget: the target of the BL before a return address, forward
// and backward; none after BLR or without code.
func TestCallTarget(t *testing.T) {
	u := arm64unwind.NewUnwinder(modBase + modSize)
	env := newEnv(u)
	code := make([]byte, 0x20)
	binary.LittleEndian.PutUint32(code[0x00:], 0x94000400) // bl +0x1000
	binary.LittleEndian.PutUint32(code[0x08:], 0x97fffc00) // bl -0x1000
	binary.LittleEndian.PutUint32(code[0x10:], 0xd63f0100) // blr x8
	env.Code = map[uint64][]byte{0x402000: code}
	for ra, want := range map[uint64]uint64{0x402004: 0x403000, 0x40200c: 0x401008, 0x402014: 0, 0x402104: 0} {
		got, ok := u.CallTarget(env, ra)
		if ok != (want != 0) || got != want {
			t.Errorf("%#x: target %#x %v; want %#x", ra, got, ok, want)
		}
	}
}
