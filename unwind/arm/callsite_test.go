package arm_test

import (
	"encoding/binary"
	"testing"

	"github.com/gobreakpad/gobreakpad/unwind"
	armunwind "github.com/gobreakpad/gobreakpad/unwind/arm"
	"github.com/gobreakpad/gobreakpad/unwind/unwindtest"
)

// TestScanCallSite: a candidate after a mov is passed over; candidates
// after an ARM BL, an ARM BLX (register), a Thumb BL and a Thumb BLX
// (register) are taken, verified.
func TestScanCallSite(t *testing.T) {
	code := make([]byte, 0x40)
	put := func(off int, w uint32) { binary.LittleEndian.PutUint32(code[off:], w) }
	put(0x10, 0xe3a00001)                              // mov r0, #1: no call before 0x13014
	put(0x20, 0xeb000010)                              // bl
	put(0x28, 0xe12fff33)                              // blx r3
	put(0x30, 0xf800f000)                              // Thumb bl: f000 f800
	binary.LittleEndian.PutUint16(code[0x3a:], 0x4798) // Thumb blx r3
	for _, ra := range []uint64{0x13024, 0x1302c, 0x13035, 0x1303d} {
		u := armunwind.Unwinder{}
		env := newEnv(u)
		env.Code = map[uint64][]byte{0x13000: code}
		sp := env.Push(0x13014, uint64(ra), 0)
		frames := unwindtest.Walk(u, env, contextFrame(t, u, env, 0x11010, uint32(sp), 0, 0, 0), 2)
		if len(frames) != 2 {
			t.Fatalf("%#x: got %d frames", ra, len(frames))
		}
		check(t, frames[1], unwind.TrustCallSite, ra, sp+8)
	}
}

// TestScanFunctionStart: with call sites checked, a candidate at the start
// of a function (a stored function pointer) whose code is not in the dump
// is passed over; after a BL in the dump it is a return address.
func TestScanFunctionStart(t *testing.T) {
	for _, withCode := range []bool{false, true} {
		u := armunwind.Unwinder{}
		env := newEnv(u)
		env.Modules[0].Funcs = append(env.Modules[0].Funcs, [2]uint64{0x14000, 0x14100}, [2]uint64{0x14100, 0x14200})
		env.FuncStarts = map[uint64]bool{0x14000: true, 0x14100: true}
		if withCode {
			env.Code = map[uint64][]byte{0x140fc: binary.LittleEndian.AppendUint32(nil, 0xeb000010)} // bl
		}
		sp := env.Push(0x14100, 0x13050, 0)
		frames := unwindtest.Walk(u, env, contextFrame(t, u, env, 0x11010, uint32(sp), 0, 0, 0), 2)
		if len(frames) != 2 {
			t.Fatalf("code %v: got %d frames", withCode, len(frames))
		}
		if withCode {
			check(t, frames[1], unwind.TrustCallSite, 0x14100, sp+4)
		} else {
			check(t, frames[1], unwind.TrustScan, 0x13050, sp+8)
		}
	}
}
