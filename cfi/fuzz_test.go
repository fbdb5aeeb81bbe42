package cfi

import (
	"errors"
	"testing"
)

// fuzzNames are the registers of the fuzz evaluators.
var fuzzNames = []string{"$a", "$b", "$sp", "$pc", ".p", ".q", "r", "x:y"}

// fuzzState builds the callee registers (some valid, some not) and the
// memory: 64 bytes of words at 0x1000.
func fuzzState(a, b uint64, valid uint8) (Registers, Memory) {
	var regs Registers
	vals := []uint64{a, b, 0x1000 + b%64, a ^ b, 4, 8, a + b, b - a}
	for i, v := range vals {
		if valid&(1<<i) != 0 {
			regs.Set(i, v)
		}
	}
	words := make([]uint64, 8)
	for i := range words {
		words[i] = a*uint64(i+1) + b
	}
	return regs, newStack(0x1000, 8, words...)
}

func regMap(names []string, regs *Registers, size int) map[string]uint64 {
	m := map[string]uint64{}
	for i, n := range names {
		if v, ok := regs.Get(i); ok {
			if size == 4 {
				v &= 0xffffffff
			}
			m[n] = v
		}
	}
	return m
}

// FuzzEval compiles text as a STACK WIN program, a postfix expression and
// a STACK CFI rule text (alone and as a delta of a usable INIT), evaluates
// each for 4- and 8-byte addresses, and checks the results against
// refEvaluator, a literal transcription of Breakpad's evaluator, and
// against the static checks.
func FuzzEval(f *testing.F) {
	for _, s := range []string{
		"$T0 $a = $pc $T0 4 + ^ = $a $T0 ^ = $sp $T0 8 + =",
		"$T0 .p = $pc $T0 ^ = $sp $T0 4 + =  $b $T0 16 - ^ =",
		"$T0 $a 128 + =$pc $T0 4 + ^ =$a $T0 ^ =",
		"$sp 8 @ ^ 3 / 7 % -5 * .q +",
		".cfa: $sp 8 + .ra: .cfa -8 + ^ $a: .cfa -16 + ^",
		".cfa: $sp 16 + $b: .cfa -24 + ^ r: .undef",
		"x:y: x:y 4 + $a: $b",
		"$x 4294967296 = $x --3 -+2 + 0 / 1 =",
		".cfa: : .ra: 1",
		"a\v b\f= 1",
	} {
		f.Add(s, uint64(0x1010), uint64(0x22), uint8(0xff))
	}
	f.Fuzz(func(t *testing.T, text string, a, b uint64, valid uint8) {
		if len(text) > 1024 {
			return
		}
		for _, size := range []int{4, 8} {
			// A fresh Evaluator: its caches would otherwise grow
			// with every input.
			ev := mustEvaluator(t, size, fuzzNames...)
			callee, mem := fuzzState(a, b, valid)
			checkProgram(t, ev, text, callee, mem)
			checkRules(t, ev, callee, mem, text)
			checkRules(t, ev, callee, mem, ".cfa: $sp 8 + .ra: .cfa -8 + ^", text)
		}
	})
}

// checkProgram compiles text with ev and checks Run and Value on callee's
// registers against refEvaluator.
func checkProgram(t testing.TB, ev *Evaluator, text string, callee Registers, mem Memory) {
	size, names := ev.size, ev.names
	p, err := ev.Program(text)
	if err != nil {
		if !errors.Is(err, ErrTooComplex) {
			t.Fatalf("Program(%q): %v", text, err)
		}
		return
	}
	// Run against Breakpad's Evaluate.
	regs := callee
	assigned, err := p.Run(&regs, mem)
	ref := &refEvaluator{size: size, dict: regMap(names, &callee, size), assigned: map[string]bool{}, mem: mem}
	ok := ref.evaluate(text)
	if ok != (err == nil) {
		t.Fatalf("%d-byte Run(%q): err = %v, Breakpad ok = %v", size, text, err, ok)
	}
	if err == nil && p.Check() != nil {
		t.Fatalf("%d-byte Run(%q) succeeded but Check says %v", size, text, p.Check())
	}
	for i, n := range names {
		want, wantOK := ref.dict[n]
		got, gotOK := regs.Get(i)
		if wantOK != gotOK || (gotOK && got != want && (size == 8 || assigned&(1<<i) != 0)) {
			t.Fatalf("%d-byte Run(%q): %s = %#x, %v; Breakpad %#x, %v", size, text, n, got, gotOK, want, wantOK)
		}
		if (assigned&(1<<i) != 0) != ref.assigned[n] {
			t.Fatalf("%d-byte Run(%q): %s assigned = %v, Breakpad %v", size, text, n, assigned&(1<<i) != 0, ref.assigned[n])
		}
	}
	// Value against Breakpad's EvaluateForValue.
	v, err := p.Value(&callee, mem)
	ref = &refEvaluator{size: size, dict: regMap(names, &callee, size), assigned: map[string]bool{}, mem: mem}
	want, ok := ref.evaluateForValue(text)
	if ok != (err == nil) || v != want {
		t.Fatalf("%d-byte Value(%q) = %#x, %v; Breakpad %#x, %v", size, text, v, err, want, ok)
	}
	if err == nil && p.CheckValue() != nil {
		t.Fatalf("%d-byte Value(%q) succeeded but CheckValue says %v", size, text, p.CheckValue())
	}
}

// checkRules compiles texts as a STACK CFI rule set with ev and checks
// FindCallerRegs on callee's registers against refFindCallerRegs.
func checkRules(t testing.TB, ev *Evaluator, callee Registers, mem Memory, texts ...string) {
	size, names := ev.size, ev.names
	rs, err := ev.RuleSet(texts...)
	rules := map[string]string{}
	parsed := true
	for _, text := range texts {
		parsed = parsed && refParseRules(text, rules)
	}
	if err != nil {
		if errors.Is(err, ErrTooComplex) {
			return
		}
		if !errors.Is(err, ErrSyntax) || parsed {
			t.Fatalf("RuleSet(%q): %v; Breakpad parses: %v", texts, err, parsed)
		}
		return
	}
	if !parsed {
		t.Fatalf("RuleSet(%q) compiled; Breakpad's parser rejects it", texts)
	}
	var caller Registers
	cfa, ra, err := rs.FindCallerRegs(&callee, mem, &caller)
	want, ok := refFindCallerRegs(size, rules, regMap(names, &callee, size), mem)
	if ok != (err == nil) {
		t.Fatalf("%d-byte FindCallerRegs(%q): err = %v; Breakpad ok = %v", size, texts, err, ok)
	}
	if rs.Err() != nil && err == nil {
		t.Fatalf("FindCallerRegs(%q) succeeded but Err says %v", texts, rs.Err())
	}
	if !ok {
		return
	}
	if cfa != want[".cfa"] || ra != want[".ra"] {
		t.Fatalf("%d-byte FindCallerRegs(%q): cfa, ra = %#x, %#x; Breakpad %#x, %#x", size, texts, cfa, ra, want[".cfa"], want[".ra"])
	}
	for i, n := range names {
		w, wok := want[n]
		g, gok := caller.Get(i)
		if wok != gok || g != w {
			t.Fatalf("%d-byte FindCallerRegs(%q): %s = %#x, %v; Breakpad %#x, %v", size, texts, n, g, gok, w, wok)
		}
	}
}
