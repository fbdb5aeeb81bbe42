package x86_test

import (
	"testing"

	"github.com/gobreakpad/gobreakpad/arch/x86"
	"github.com/gobreakpad/gobreakpad/unwind"
	x86unwind "github.com/gobreakpad/gobreakpad/unwind/x86"
)

// TestBeforeFramePointer: a context eip in a function (no CFI, not
// Windows) that has not made its frame pointer yet takes its caller from
// the return address its code says is on the stack (pushes and
// subtractions decoded from the function's start), not from ebp, which
// still holds the caller's frame pointer and would skip the caller;
// pushed registers are restored. Without the code bytes (and not at the
// function's start), the ebp chain decides as in Breakpad.
func TestBeforeFramePointer(t *testing.T) {
	code := []byte{
		0x53,             // 401000: push ebx
		0x83, 0xec, 0x08, // 401001: sub esp, 8
		0x90, // 401004: nop
	}
	for _, tc := range []struct {
		name   string
		pc     uint32
		noCode bool
		pushed int
		trust  unwind.Trust
	}{
		{"at the start", 0x401000, true, 0, unwind.TrustPrologue},
		{"after push and sub", 0x401004, false, 3, unwind.TrustPrologue},
		{"code not in the dump", 0x401004, true, 3, unwind.TrustFP},
	} {
		t.Run(tc.name, func(t *testing.T) {
			env := newEnv()
			env.IsWindows = false
			if !tc.noCode {
				env.Code = map[uint64][]byte{0x401000: code}
			}
			callerFP := stackBase + uint64(tc.pushed+2)*4
			outerFP := callerFP + 16
			words := []uint64{0, 0, 0x5a7ed}[3-tc.pushed:]
			sp := env.Push(append(words, 0x402050, 0)...)
			env.Push(outerFP, 0x403050, 0, 0, 0, 0x404050)
			c := (x86unwind.Unwinder{}).Caller(env, []*unwind.Frame{contextFrame(t, env, tc.pc, uint32(sp), uint32(callerFP))}, true)
			if c == nil {
				t.Fatal("no caller")
			}
			if tc.trust == unwind.TrustFP {
				if c.Trust != unwind.TrustFP || c.Regs[x86.EIP] != 0x403050 {
					t.Errorf("trust %v eip %#x; want the ebp chain's 0x403050", c.Trust, c.Regs[x86.EIP])
				}
				return
			}
			check(t, c, tc.trust, 0x402050, sp+uint64(tc.pushed+1)*4, callerFP)
			wantEBX := uint64(0xb0b)
			if tc.pushed > 0 {
				wantEBX = 0x5a7ed
			}
			if c.Regs[x86.EBX] != wantEBX {
				t.Errorf("ebx %#x; want %#x", c.Regs[x86.EBX], wantEBX)
			}
		})
	}
}
