package unwind_test

import (
	"errors"
	amd64unwind "github.com/gobreakpad/gobreakpad/unwind/amd64"
	x86unwind "github.com/gobreakpad/gobreakpad/unwind/x86"
	"testing"

	"github.com/gobreakpad/gobreakpad/arch/amd64"
	"github.com/gobreakpad/gobreakpad/arch/x86"
	"github.com/gobreakpad/gobreakpad/unwind"
	"github.com/gobreakpad/gobreakpad/unwind/unwindtest"
)

func TestTrustStrings(t *testing.T) {
	for trust, want := range map[unwind.Trust]string{
		unwind.TrustContext:  "given as instruction pointer in context",
		unwind.TrustCFI:      "call frame info",
		unwind.TrustCFIScan:  "call frame info with scanning",
		unwind.TrustFP:       "previous frame's frame pointer",
		unwind.TrustScan:     "stack scanning",
		unwind.TrustInline:   "inline record",
		unwind.TrustLeaf:     "simulating a return from leaf function",
		unwind.TrustNone:     "unknown",
		unwind.TrustTailCall: "target of the caller's call, left by a tail call",
	} {
		if got := trust.String(); got != want {
			t.Errorf("%d: %q, want %q", trust, got, want)
		}
	}
}

func TestTerminateWalk(t *testing.T) {
	for _, c := range []struct {
		ip, sp, calleeSP uint64
		first, want      bool
	}{
		{0x400000, 0x1010, 0x1000, false, false},
		{0xfff, 0x1010, 0x1000, false, true},    // return address below 4 KiB
		{0x400000, 0x1000, 0x1000, true, false}, // leaf: equal sp allowed once
		{0x400000, 0x1000, 0x1000, false, true},
		{0x400000, 0x0ff0, 0x1000, true, true}, // stack shrinks
	} {
		if got := unwind.TerminateWalk(c.ip, c.sp, c.calleeSP, c.first); got != c.want {
			t.Errorf("TerminateWalk(%#x, %#x, %#x, %v) = %v", c.ip, c.sp, c.calleeSP, c.first, got)
		}
	}
}

func TestScanForReturnAddress(t *testing.T) {
	env := unwindtest.New(amd64unwind.Unwinder{}, 0x10000)
	env.Modules = []unwindtest.Module{{Base: 0x400000, Size: 0x1000, HasSymbols: true, Funcs: [][2]uint64{{0x400100, 0x400200}}}}
	// A value just past a function's end is accepted (tested one byte
	// back); the function's start is not (one byte back is outside it).
	env.Push(0x400100, 0x999, 0x400200, 0x400150)
	loc, ip, ok := unwind.ScanForReturnAddress(env, 0x10000, 40, 8)
	if !ok || loc != 0x10010 || ip != 0x400200 {
		t.Errorf("found %#x at %#x (%v), want 0x400200 at 0x10010", ip, loc, ok)
	}
	// The bound is inclusive: words 0..n.
	if _, _, ok := unwind.ScanForReturnAddress(env, 0x10000, 1, 8); ok {
		t.Errorf("found an address beyond the second word")
	}
	if _, ip, ok := unwind.ScanForReturnAddress(env, 0x10000, 2, 8); !ok || ip != 0x400200 {
		t.Errorf("did not find the third word with an inclusive bound of 2")
	}
	// Reads past the stack end the scan.
	if _, _, ok := unwind.ScanForReturnAddress(env, 0x10020, 40, 8); ok {
		t.Errorf("found an address outside the stack")
	}
	// 32-bit scans near the top of the address space do not wrap.
	env32 := unwindtest.New(x86unwind.Unwinder{}, 0xfffffff0)
	env32.Push(0, 0, 0, 0)
	if _, _, ok := unwind.ScanForReturnAddress(env32, 0xfffffff0, 40, 4); ok {
		t.Errorf("found an address in an empty stack")
	}
	// Scans closer to the top of the address space than their reach
	// look up to its last word (32-bit: Breakpad's 64-bit build does;
	// 64-bit: Breakpad's bound wraps and it scans nothing). A stack
	// reaching past 4 GiB is no 32-bit stack beyond it.
	for _, c := range []struct {
		cpu  unwind.CPU
		base uint64
		size int
	}{{x86unwind.Unwinder{}, 1<<32 - 16, 4}, {amd64unwind.Unwinder{}, 1 << 63, 8}, {amd64unwind.Unwinder{}, ^uint64(0) - 31, 8}} {
		top := unwindtest.New(c.cpu, c.base)
		top.Modules = []unwindtest.Module{{Base: 0x400000, Size: 0x1000}}
		top.Push(0, 0, 0, 0x400010)
		if c.size == 4 {
			top.Push(0x400020) // at 4 GiB
		}
		if loc, ip, ok := unwind.ScanForReturnAddress(top, c.base, 40, c.size); !ok || ip != 0x400010 || loc != c.base+3*uint64(c.size) {
			t.Errorf("stack at %#x: found %#x at %#x (%v), want 0x400010 at the fourth word", c.base, ip, loc, ok)
		}
		if _, ip, ok := unwind.ScanForReturnAddress(top, c.base+4*uint64(c.size), 40, c.size); ok {
			t.Errorf("stack at %#x: found %#x past the end of the address space", c.base, ip)
		}
	}
}

func TestReadWord(t *testing.T) {
	env := unwindtest.New(amd64unwind.Unwinder{}, 0x10000)
	env.Push(0x1122334455667788)
	if v, ok := unwind.ReadWord(env, 0x10000, 8); !ok || v != 0x1122334455667788 {
		t.Errorf("64-bit read: %#x %v", v, ok)
	}
	if v, ok := unwind.ReadWord(env, 0x10000, 4); !ok || v != 0x55667788 {
		t.Errorf("32-bit read: %#x %v", v, ok)
	}
	if _, ok := unwind.ReadWord(env, 0x10004, 8); ok {
		t.Errorf("read past the end succeeded")
	}
	if _, ok := unwind.Read64(nil, 0); ok {
		t.Errorf("read from no memory succeeded")
	}
}

func TestRuleAddress(t *testing.T) {
	f := &unwind.Frame{Trust: unwind.TrustContext}
	f.Set(3, 0x1000)
	if got := unwind.RuleAddress(f, 3, 4); got != 0x1000 {
		t.Errorf("context frame: %#x, want its pc 0x1000", got)
	}
	f.Trust = unwind.TrustCFI
	if got := unwind.RuleAddress(f, 3, 4); got != 0xffc {
		t.Errorf("caller frame: %#x, want its return address less 4", got)
	}
}

func TestCallerOfNullCall(t *testing.T) {
	env := unwindtest.New(amd64unwind.Unwinder{}, 0x10000)
	env.Modules = []unwindtest.Module{{Base: 0x400000, Size: 0x1000, HasSymbols: true, Funcs: [][2]uint64{{0x400100, 0x400200}}}}
	env.Push(0x400150)
	f := &unwind.Frame{Trust: unwind.TrustContext}
	f.Set(amd64.RIP, 0)
	f.Set(amd64.RSP, 0x10000)
	f.Set(amd64.RBP, 0x20000)
	c := unwind.CallerOfNullCall(env, f, amd64.RIP, amd64.RSP, amd64.RBP, 8)
	if c == nil || c.Regs[amd64.RIP] != 0x400150 || c.Regs[amd64.RSP] != 0x10008 || c.Trust != unwind.TrustScan ||
		c.Valid != 1<<amd64.RIP|1<<amd64.RSP|1<<amd64.RBP {
		t.Fatalf("caller = %+v", c)
	}
	f.Trust = unwind.TrustCFI
	if c := unwind.CallerOfNullCall(env, f, amd64.RIP, amd64.RSP, amd64.RBP, 8); c != nil {
		t.Errorf("caller of a frame not from the context: %+v", c)
	}
	f.Trust = unwind.TrustContext
	f.Set(amd64.RIP, 0x400150)
	if c := unwind.CallerOfNullCall(env, f, amd64.RIP, amd64.RSP, amd64.RBP, 8); c != nil {
		t.Errorf("caller of a pc past the first page: %+v", c)
	}
}

func TestContextAs(t *testing.T) {
	c := &amd64.Context{Rip: 1}
	if got, err := unwind.ContextAs[amd64.Context](c); got != c || err != nil {
		t.Errorf("ContextAs(amd64) = %v, %v", got, err)
	}
	for _, raw := range []any{(*amd64.Context)(nil), &x86.Context{}, nil} {
		if got, err := unwind.ContextAs[amd64.Context](raw); got != nil || !errors.As(err, new(unwind.ErrContextType)) {
			t.Errorf("ContextAs(%T) = %v, %v", raw, got, err)
		}
	}
}

func TestCallerByScan(t *testing.T) {
	env := unwindtest.New(amd64unwind.Unwinder{}, 0x10000)
	env.Modules = []unwindtest.Module{{Base: 0x400000, Size: 0x1000, HasSymbols: true, Funcs: [][2]uint64{{0x400100, 0x400200}}}}
	env.Push(0x999, 0x400150)
	f := &unwind.Frame{Trust: unwind.TrustCFI}
	f.Set(amd64.RSP, 0x10000)
	f.Set(amd64.RBX, 7)
	c := unwind.CallerByScan(env, f, amd64.RIP, amd64.RSP, 1, 8, unwind.TrustScan)
	if c == nil || c.Regs[amd64.RIP] != 0x400150 || c.Regs[amd64.RSP] != 0x10010 || c.Regs[amd64.RBX] != 7 ||
		c.Trust != unwind.TrustScan || c.Valid != 1<<amd64.RIP|1<<amd64.RSP {
		t.Fatalf("caller = %+v", c)
	}
	if c := unwind.CallerByScan(env, f, amd64.RIP, amd64.RSP, 0, 8, unwind.TrustScan); c != nil {
		t.Errorf("found a return address beyond the words scanned: %+v", c)
	}
}
