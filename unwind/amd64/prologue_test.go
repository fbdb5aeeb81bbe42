package amd64_test

import (
	"testing"

	"github.com/gobreakpad/gobreakpad/arch/amd64"
	"github.com/gobreakpad/gobreakpad/unwind"
	amd64unwind "github.com/gobreakpad/gobreakpad/unwind/amd64"
)

// TestBeforeFramePointer: a context pc in a function (no CFI) that has not
// made its frame pointer yet takes its caller from the return address its
// code says is on the stack (pushes and subtractions decoded from the
// function's start), not from rbp, which still holds the caller's frame
// pointer and would skip the caller; pushed registers are restored. Once
// the function has made its frame pointer (mov rbp, rsp), or when its
// code is not in the dump, the frame pointer decides as in Breakpad.
func TestBeforeFramePointer(t *testing.T) {
	code := []byte{
		0x53,                   // 401000: push rbx
		0x48, 0x83, 0xec, 0x10, // 401001: sub rsp, 0x10
		0x90,             // 401005: nop
		0x55,             // 401006: push rbp
		0x48, 0x89, 0xe5, // 401007: mov rbp, rsp
		0x90, // 40100a: nop
	}
	for _, tc := range []struct {
		name   string
		pc     uint64
		noCode bool
		pushed int // words above rsp before the return address
		trust  unwind.Trust
	}{
		{"at the start", 0x401000, true, 0, unwind.TrustPrologue},
		{"after push and sub", 0x401005, false, 3, unwind.TrustPrologue},
		{"after push rbp", 0x401007, false, 4, unwind.TrustPrologue},
		{"frame made", 0x40100a, false, 4, unwind.TrustFP},
		{"code not in the dump", 0x401005, true, 3, unwind.TrustFP},
	} {
		t.Run(tc.name, func(t *testing.T) {
			env := newEnv()
			if !tc.noCode {
				env.Code = map[uint64][]byte{0x401000: code}
			}
			// Stack: what the function pushed (rbp, two words of
			// locals, rbx), the return address, then the caller's frame
			// record (rbp points at it) and the outer one.
			callerFP := stackBase + uint64(tc.pushed+2)*8
			outerFP := callerFP + 32
			words := []uint64{callerFP, 0, 0, 0x5a7ed}[4-tc.pushed:]
			sp := env.Push(append(words, 0x402050, 0)...)
			env.Push(outerFP, 0x403050, 0, 0, 0, 0x404050)
			rbp := callerFP
			if tc.name == "frame made" {
				rbp = sp // mov rbp, rsp: rbp points at the pushed rbp
			}
			c := (amd64unwind.Unwinder{}).Caller(env, []*unwind.Frame{contextFrame(t, env, tc.pc, sp, rbp)}, true)
			if tc.name == "frame made" {
				// Breakpad's rules from here on (this code's frame
				// record is not where rbp points, so none succeeds).
				if c != nil && c.Trust == unwind.TrustPrologue {
					t.Errorf("trust %v after mov rbp, rsp", c.Trust)
				}
				return
			}
			if c == nil {
				t.Fatal("no caller")
			}
			wantRBX := uint64(0xb0b) // the context's: not pushed
			if tc.pushed >= 1 && tc.pc != 0x401000 {
				wantRBX = 0x5a7ed
			}
			switch tc.trust {
			case unwind.TrustPrologue:
				check(t, c, tc.trust, 0x402050, sp+uint64(tc.pushed+1)*8)
				if c.Regs[amd64.RBP] != callerFP || c.Regs[amd64.RBX] != wantRBX {
					t.Errorf("rbp %#x rbx %#x; want %#x %#x", c.Regs[amd64.RBP], c.Regs[amd64.RBX], callerFP, wantRBX)
				}
			case unwind.TrustFP:
				// The frame pointer: past the caller (Breakpad's).
				want := uint64(0x403050)
				if c.Trust != unwind.TrustFP || c.Regs[amd64.RIP] != want {
					t.Errorf("trust %v rip %#x; want the frame pointer's %#x", c.Trust, c.Regs[amd64.RIP], want)
				}
			}
		})
	}
}

// TestMadeFramePointer: a function whose code shows it made its frame
// pointer (push rbp; mov rbp, rsp) has its return address at rbp+8 and
// its caller's rbp at rbp even when that saved value is no stack address
// (its caller, built without frame pointers, kept another value in rbp),
// where Breakpad's rule takes the chain for broken and scans.
func TestMadeFramePointer(t *testing.T) {
	env := newEnv()
	env.Code = map[uint64][]byte{0x401000: {
		0x55,             // push rbp
		0x48, 0x89, 0xe5, // mov rbp, rsp
		0x90, // nop
	}}
	sp := env.Push(0x402123, 1, 0x402050, 0)
	rbp := sp + 8
	c := (amd64unwind.Unwinder{}).Caller(env, []*unwind.Frame{contextFrame(t, env, 0x401004, sp, rbp)}, true)
	if c == nil {
		t.Fatal("no caller")
	}
	check(t, c, unwind.TrustFP, 0x402050, rbp+16)
	if c.Regs[amd64.RBP] != 1 {
		t.Errorf("rbp %#x; want the saved 0x1", c.Regs[amd64.RBP])
	}
	// Without the code, Breakpad's rule refuses the chain and scans
	// (finding the word at sp first).
	env.Code = nil
	c = (amd64unwind.Unwinder{}).Caller(env, []*unwind.Frame{contextFrame(t, env, 0x401004, sp, rbp)}, true)
	if c == nil || c.Trust != unwind.TrustScan {
		t.Errorf("without code: %+v; want a scanned frame", c)
	}
}

// TestBeforeFramePointerTrampoline: a signal handler returns to the start
// of the signal trampoline, which no call precedes: the return address the
// handler's code points at is taken there too (and the trampoline's frame
// then leads to the interrupted code).
func TestBeforeFramePointerTrampoline(t *testing.T) {
	env := newEnv()
	env.Modules[0].Funcs = append(env.Modules[0].Funcs, [2]uint64{0x404f00, 0x405100})
	restore := []byte{0x48, 0xc7, 0xc0, 0x0f, 0x00, 0x00, 0x00, 0x0f, 0x05} // mov rax, 15; syscall
	code := make([]byte, 16)                                                // no call before the trampoline
	env.Code = map[uint64][]byte{
		0x401000: {0x53, 0x90}, // push rbx; nop
		0x404ff0: append(code, restore...),
	}
	sp := env.Push(0x5a7ed, 0x405000, 0)
	c := (amd64unwind.Unwinder{}).Caller(env, []*unwind.Frame{contextFrame(t, env, 0x401001, sp, 0)}, true)
	if c == nil {
		t.Fatal("no caller")
	}
	check(t, c, unwind.TrustPrologue, 0x405000, sp+16)
}
