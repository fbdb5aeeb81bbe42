package cfi

import (
	"errors"
	"testing"
)

func mustEvaluator(t testing.TB, size int, names ...string) *Evaluator {
	t.Helper()
	ev, err := NewEvaluator(size, names)
	if err != nil {
		t.Fatal(err)
	}
	return ev
}

// set stores named values into regs.
func set(t testing.TB, ev *Evaluator, regs *Registers, vals map[string]uint64) {
	t.Helper()
	for n, v := range vals {
		i, ok := ev.Index(n)
		if !ok {
			t.Fatalf("no register %s", n)
		}
		regs.Set(i, v)
	}
}

type evaluateCase struct {
	program string
	ok      bool
}

// runSet runs programs in order on one register file, as Breakpad's
// postfix_evaluator_unittest runs a test set on one dictionary, then checks
// the final values and which were assigned.
func runSet(t *testing.T, ev *Evaluator, regs *Registers, cases []evaluateCase, want map[string]uint64) {
	t.Helper()
	var assigned uint64
	for _, c := range cases {
		p, err := ev.Program(c.program)
		if err != nil {
			t.Fatalf("Program(%q): %v", c.program, err)
		}
		a, err := p.Run(regs, plusOneMemory{})
		assigned |= a
		if (err == nil) != c.ok {
			t.Errorf("Run(%q): err = %v, want ok = %v", c.program, err, c.ok)
		}
	}
	for n, w := range want {
		i, _ := ev.Index(n)
		if v, ok := regs.Get(i); !ok || v != w {
			t.Errorf("%s = %#x (valid %v), want %#x", n, v, ok, w)
		}
		if got, want := assigned&(1<<i) != 0, n[0] == '$'; got != want {
			t.Errorf("%s assigned = %v, want %v", n, got, want)
		}
	}
}

// The cases of Breakpad's postfix_evaluator_unittest.cc, first set: basic
// operations and failure modes.
func TestBreakpadBasicOperations(t *testing.T) {
	ev := mustEvaluator(t, 4, "$rAdd", "$rAdd2", "$rAdd3", "$rSub", "$rMul", "$rMul2",
		"$rDivQ", "$rDivM", "$rDeref", "$rAlign")
	var regs Registers
	runSet(t, ev, &regs, []evaluateCase{
		{"$rAdd 2 2 + =", true},                // $rAdd = 2 + 2 = 4
		{"$rAdd $rAdd 2 + =", true},            // $rAdd = $rAdd + 2 = 6
		{"$rAdd 2 $rAdd + =", true},            // $rAdd = 2 + $rAdd = 8
		{"99", false},                          // junk on the stack...
		{"$rAdd2 2 2 + =", true},               // ...does not stay there
		{"$rAdd2\t2\n2 + =", true},             // other white space
		{"$rAdd2 2 2 + = ", true},              // trailing white space
		{" $rAdd2 2 2 + =", true},              // leading white space
		{"$rAdd2  2 2 +   =", true},            // extra white space
		{"$T0 2 = +", false},                   // too few operands for +
		{"2 + =", false},                       // too few operands for +
		{"2 +", false},                         // too few operands for +
		{"+", false},                           // too few operands for +
		{"^", false},                           // too few operands for ^
		{"=", false},                           // too few operands for =
		{"2 =", false},                         // too few operands for =
		{"2 2 + =", false},                     // too few operands for =
		{"2 2 =", false},                       // cannot assign to a literal
		{"k 2 =", false},                       // cannot assign to a constant
		{"2", false},                           // left on the stack
		{"2 2 +", false},                       // left on the stack
		{"$rAdd", false},                       // left on the stack
		{"0 $T1 0 0 + =", false},               // left on the stack
		{"$T2 $T2 2 + =", false},               // unbound
		{"$rMul 9 6 * =", true},                // 54
		{"$rSub 9 6 - =", true},                // 3
		{"$rDivQ 9 6 / =", true},               // 1
		{"$rDivM 9 6 % =", true},               // 3
		{"$rDeref 9 ^ =", true},                // 10 from plusOneMemory
		{"$rAlign 36 8 @ =", true},             // 32
		{"$rAdd3 2 2 + =$rMul2 9 6 * =", true}, // glued "="
	}, map[string]uint64{
		"$rAdd": 8, "$rAdd2": 4, "$rSub": 3, "$rMul": 54, "$rDivQ": 1, "$rDivM": 3,
		"$rDeref": 10, "$rAlign": 32, "$rAdd3": 4, "$rMul2": 54,
	})
}

// The second set: real MSVC program strings, on one dictionary.
func TestBreakpadProgramStrings(t *testing.T) {
	ev := mustEvaluator(t, 4, "$ebp", "$eip", "$esp", ".cbSavedRegs", ".cbParams",
		".raSearchStart", "$T0", "$T1", "$T2", "$L", "$P", "$ebx")
	var regs Registers
	set(t, ev, &regs, map[string]uint64{
		"$ebp": 0xbfff0010, "$eip": 0x10000000, "$esp": 0xbfff0000,
		".cbSavedRegs": 4, ".cbParams": 4, ".raSearchStart": 0xbfff0020,
	})
	runSet(t, ev, &regs, []evaluateCase{
		{"$T0 $ebp = $eip $T0 4 + ^ = $ebp $T0 ^ = $esp $T0 8 + = " +
			"$L $T0 .cbSavedRegs - = $P $T0 8 + .cbParams + =", true},
		{"$T0 $ebp = $eip $T0 4 + ^ = $ebp $T0 ^ = $esp $T0 8 + = " +
			"$L $T0 .cbSavedRegs - = $P $T0 8 + .cbParams + = $ebx $T0 28 - ^ =", true},
		{"$T0 $ebp = $T2 $esp = $T1 .raSearchStart = $eip $T1 ^ = $ebp $T0 = " +
			"$esp $T1 4 + = $L $T0 .cbSavedRegs - = $P $T1 4 + .cbParams + = " +
			"$ebx $T0 28 - ^ =", true},
	}, map[string]uint64{
		"$T0": 0xbfff0012, "$T1": 0xbfff0020, "$T2": 0xbfff0019,
		"$eip": 0xbfff0021, "$ebp": 0xbfff0012, "$esp": 0xbfff0024,
		"$L": 0xbfff000e, "$P": 0xbfff0028, "$ebx": 0xbffefff7,
		".cbSavedRegs": 4, ".cbParams": 4,
	})
}

// The third set: EvaluateForValue.
func TestBreakpadEvaluateForValue(t *testing.T) {
	ev := mustEvaluator(t, 4, "$ebp", "$eip", "$esp", ".cbSavedRegs", ".cbParams", ".raSearchStart", "$new")
	var regs Registers
	set(t, ev, &regs, map[string]uint64{
		"$ebp": 0xbfff0010, "$eip": 0x10000000, "$esp": 0xbfff0000,
		".cbSavedRegs": 4, ".cbParams": 4, ".raSearchStart": 0xbfff0020,
	})
	for _, c := range []struct {
		expr string
		ok   bool
		want uint64
	}{
		{"28907223", true, 28907223},
		{"89854293 40010015 +", true, 89854293 + 40010015},
		{"-870245 8769343 +", true, 7899098},
		{"$ebp $esp - $eip +", true, 0x10000010},
		{"18929794 34015074", false, 0}, // too many values
		{"$ebp $ebp 4 - =", false, 0},   // too few values
		{"$new $eip = $new", true, 0x10000000},
		{".cfa 42 = 10", false, 0}, // cannot assign to a constant
	} {
		p, err := ev.Expr(c.expr)
		if err != nil {
			t.Fatal(err)
		}
		v, err := p.Value(&regs, plusOneMemory{})
		if (err == nil) != c.ok || v != c.want {
			t.Errorf("Value(%q) = %#x, %v; want %#x, ok %v", c.expr, v, err, c.want, c.ok)
		}
	}
	// Value leaves the registers alone: a CFI rule's assignments are
	// local to it (Breakpad resets its working dictionary per rule).
	if i, _ := ev.Index("$new"); regs.Has(i) {
		t.Errorf("Value stored an assignment into the registers")
	}
}

func TestOperators(t *testing.T) {
	for _, c := range []struct {
		size int
		expr string
		want uint64
		err  error
	}{
		{8, "3 4 +", 7, nil},
		{8, "18446744073709551615 1 +", 0, nil},
		{4, "4294967295 1 +", 0, nil},
		{4, "4294967295 2 *", 0xfffffffe, nil},
		{8, "4294967295 2 *", 0x1fffffffe, nil},
		{8, "3 4 -", 0xffffffffffffffff, nil},
		{4, "3 4 -", 0xffffffff, nil},
		{8, "6 7 *", 42, nil},
		{8, "7 2 /", 3, nil},
		{4, "-8 2 /", 0x7ffffffc, nil}, // unsigned division
		{8, "-8 2 /", 0x7ffffffffffffffc, nil},
		{8, "7 2 %", 1, nil},
		{4, "-1 10 %", 5, nil}, // 4294967295 % 10
		{8, "7 0 /", 0, ErrDivideByZero},
		{8, "7 0 %", 0, ErrDivideByZero},
		{8, "37 16 @", 32, nil},
		{8, "37 1 @", 37, nil},
		{8, "37 0 @", 0, nil}, // Breakpad: 37 & (~0 ^ (0 - 1)) = 0
		{4, "4294967295 4096 @", 0xfffff000, nil},
		{8, "5 ^", 6, nil},
		{4, "4294967295 ^", 0, nil}, // plusOneMemory at 2^32-1, truncated to 32 bits
		{8, "-5", 0xfffffffffffffffb, nil},
		{4, "-5", 0xfffffffb, nil},
		{8, "--5", 5, nil}, // C++ stream extraction accepts a second sign
		{8, "-+5", 0xfffffffffffffffb, nil},
		{8, "+5", 5, nil},
		{8, "007", 7, nil},
		{8, "0x10", 0, ErrUnbound},                 // decimal only
		{8, "5x", 0, ErrUnbound},                   // one word: an identifier
		{8, "2 3+", 0, ErrIncomplete},              // "3+" is one word
		{8, "2 3+ +", 0, ErrUnbound},               // ...an identifier
		{4, "4294967296", 0, ErrUnbound},           // too big: an identifier
		{8, "4294967296", 4294967296, nil},         // fits in 64 bits
		{8, "18446744073709551616", 0, ErrUnbound}, // too big
		{8, "$a 3 = $b 4 = $a $b *", 12, nil},      // temporaries
		{8, "$a $a 7 = 1 +", 8, nil},               // names resolve when popped
		{8, "1 =$x", 0, ErrStackUnderflow},         // glued "=" splits
		{8, "$y 2 ==$x", 0, ErrUnbound},            // "==$x" is "=", then the identifier "=$x"
		{8, "$y $z 2 ==$x $z +", 0, ErrUnbound},    // ...which is not split again
		{8, "$y 2 =+", 0, ErrStackUnderflow},
		{8, "$y 2 =$z 3 = $y $z +", 5, nil}, // "=+" is "=", then "+"
		{8, "1 2 3 =", 0, ErrNotAssignable}, // "2" is a value
		{8, "x 1 =", 0, ErrNotAssignable},   // no '$'
		{8, "", 0, ErrIncomplete},
		{8, "1 2", 0, ErrIncomplete},
		{8, "^", 0, ErrStackUnderflow},
		{8, "1 /", 0, ErrStackUnderflow},
		{8, "$nothing", 0, ErrUnbound},
		{8, "$nothing 1 +", 0, ErrUnbound},
	} {
		ev := mustEvaluator(t, c.size)
		p, err := ev.Expr(c.expr)
		if err != nil {
			t.Fatalf("Expr(%q): %v", c.expr, err)
		}
		v, err := p.Value(&Registers{}, plusOneMemory{})
		if c.err != nil {
			if !errors.Is(err, c.err) {
				t.Errorf("%d-byte %q: err = %v, want %v", c.size, c.expr, err, c.err)
			}
			continue
		}
		if err != nil || v != c.want {
			t.Errorf("%d-byte %q = %#x, %v; want %#x", c.size, c.expr, v, err, c.want)
		}
	}
}

func TestDereference(t *testing.T) {
	ev := mustEvaluator(t, 8, "$rsp")
	mem := newStack(0x1000, 8, 0x1122334455667788, 0x99)
	var regs Registers
	regs.Set(0, 0x1000)
	for _, c := range []struct {
		expr string
		mem  Memory
		want uint64
		err  error
	}{
		{"$rsp ^", mem, 0x1122334455667788, nil},
		{"$rsp 8 + ^", mem, 0x99, nil},
		{"$rsp 16 + ^", mem, 0, ErrMemory}, // outside the dump
		{"$rsp 4 + ^", mem, 0x0000009911223344, nil},
		{"$rsp ^", nil, 0, ErrMemory},
		{"$rsp ^", shortMemory{}, 0, ErrMemory},
	} {
		p, err := ev.Expr(c.expr)
		if err != nil {
			t.Fatal(err)
		}
		v, err := p.Value(&regs, c.mem)
		if c.err != nil {
			if !errors.Is(err, c.err) {
				t.Errorf("%q: err = %v, want %v", c.expr, err, c.err)
			}
			continue
		}
		if err != nil || v != c.want {
			t.Errorf("%q = %#x, %v; want %#x", c.expr, v, err, c.want)
		}
	}
	// The memory's own error stays visible through the wrapping.
	p, _ := ev.Expr("$rsp 64 + ^")
	if _, err := p.Value(&regs, mem); !errors.Is(err, errOutside) {
		t.Errorf("err = %v, want it to wrap %v", err, errOutside)
	}
	// 32-bit dereferences read 4 bytes.
	ev4 := mustEvaluator(t, 4, "$esp")
	var regs4 Registers
	regs4.Set(0, 0x2000)
	p4, _ := ev4.Expr("$esp ^")
	if v, err := p4.Value(&regs4, newStack(0x2000, 4, 0xdeadbeef)); err != nil || v != 0xdeadbeef {
		t.Errorf("32-bit ^ = %#x, %v", v, err)
	}
}

// A 32-bit evaluator sees only the low 32 bits of registers.
func TestRegisterWidth(t *testing.T) {
	ev := mustEvaluator(t, 4, "$esp")
	var regs Registers
	regs.Set(0, 0x1_0000_0010)
	p, _ := ev.Expr("$esp 4 +")
	if v, err := p.Value(&regs, nil); err != nil || v != 0x14 {
		t.Errorf("= %#x, %v; want 0x14", v, err)
	}
}

// Run keeps the assignments made before a failure, as Breakpad's x86
// walker goes on with the dictionary after a failed program.
func TestRunPartial(t *testing.T) {
	ev := mustEvaluator(t, 4, "$ebp", "$esp", "$eip")
	var regs Registers
	regs.Set(0, 0x100)
	regs.Set(1, 0x200)
	p, err := ev.Program("$T0 $ebp = $ebp $T0 4 + = $eip $T0 ^ = $esp $T0 8 + =")
	if err != nil {
		t.Fatal(err)
	}
	assigned, err := p.Run(&regs, newStack(0x1000, 4, 1))
	if !errors.Is(err, ErrMemory) {
		t.Fatalf("err = %v, want ErrMemory", err)
	}
	if assigned != 1<<0 {
		t.Errorf("assigned = %b, want only $ebp", assigned)
	}
	if v, _ := regs.Get(0); v != 0x104 {
		t.Errorf("$ebp = %#x, want 0x104", v)
	}
	if v, _ := regs.Get(1); v != 0x200 {
		t.Errorf("$esp = %#x, want it unchanged", v)
	}
	if regs.Has(2) {
		t.Errorf("$eip became valid")
	}
}

func TestRunAssignsRegisters(t *testing.T) {
	ev := mustEvaluator(t, 4, "$eip", "$esp", "$ebp", ".raSearch", "$ebx")
	mem := newStack(0x1000, 4, 0x401000, 0x2000)
	var regs Registers
	set(t, ev, &regs, map[string]uint64{"$esp": 0xff0, "$ebp": 0x2000, ".raSearch": 0x1000})
	p, err := ev.Program("$T0 .raSearch = $eip $T0 ^ = $esp $T0 4 + =")
	if err != nil {
		t.Fatal(err)
	}
	assigned, err := p.Run(&regs, mem)
	if err != nil {
		t.Fatal(err)
	}
	if assigned != 1<<0|1<<1 {
		t.Errorf("assigned = %b, want $eip and $esp", assigned)
	}
	want := map[string]uint64{"$eip": 0x401000, "$esp": 0x1004, "$ebp": 0x2000}
	for n, w := range want {
		i, _ := ev.Index(n)
		if v, ok := regs.Get(i); !ok || v != w {
			t.Errorf("%s = %#x, %v; want %#x", n, v, ok, w)
		}
	}
	if i, _ := ev.Index("$ebx"); regs.Has(i) {
		t.Errorf("$ebx became valid")
	}
}

func TestNewEvaluatorErrors(t *testing.T) {
	for _, c := range []struct {
		size  int
		names []string
	}{
		{2, nil},
		{16, nil},
		{8, []string{"$rsp", "$rsp"}},
		{8, []string{".cfa"}},
		{8, []string{".ra"}},
		{8, []string{""}},
		{8, []string{"a b"}},
		{8, make([]string, MaxRegisters+1)},
	} {
		if _, err := NewEvaluator(c.size, c.names); err == nil {
			t.Errorf("NewEvaluator(%d, %q) succeeded", c.size, c.names)
		}
	}
}

func TestLimits(t *testing.T) {
	ev := mustEvaluator(t, 8)
	text := ""
	for i := 0; i <= MaxNames; i++ {
		text += " $v" + string(rune('A'+i%26)) + string(rune('A'+i/26)) + " 1 ="
	}
	if _, err := ev.Program(text); !errors.Is(err, ErrTooComplex) {
		t.Errorf("%d names: err = %v, want ErrTooComplex", MaxNames+1, err)
	}
	// A deep stack is fine, within the token limit.
	deep := ""
	for i := 0; i < 1000; i++ {
		deep += "1 "
	}
	for i := 0; i < 999; i++ {
		deep += "+ "
	}
	p, err := ev.Expr(deep)
	if err != nil {
		t.Fatal(err)
	}
	if v, err := p.Value(&Registers{}, nil); err != nil || v != 1000 {
		t.Errorf("deep = %d, %v; want 1000", v, err)
	}
}

func TestProgramCache(t *testing.T) {
	ev := mustEvaluator(t, 4, "$eip")
	p1, err := ev.Program("$eip 1 =")
	if err != nil {
		t.Fatal(err)
	}
	p2, _ := ev.Program("$eip 1 =")
	if p1 != p2 {
		t.Errorf("the same text compiled twice")
	}
	if p1.String() != "$eip 1 =" {
		t.Errorf("String() = %q", p1.String())
	}
}
