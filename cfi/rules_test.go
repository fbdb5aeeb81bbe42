package cfi

import (
	"errors"
	"strconv"
	"testing"
)

// countingMemory fails the test on any read: the cases of Breakpad's
// cfi_frame_info_unittest.cc expect no memory references.
type noMemory struct{ t *testing.T }

func (m noMemory) ReadMemory(addr uint64, n int) ([]byte, error) {
	m.t.Errorf("unexpected memory read at %#x", addr)
	return nil, errOutside
}

// callerOf evaluates rules against callee register values given by name and
// returns the CFA, the return address and the caller's registers by name.
func callerOf(t *testing.T, ev *Evaluator, rs *RuleSet, callee map[string]uint64, mem Memory) (cfa, ra uint64, caller map[string]uint64, err error) {
	t.Helper()
	var in, out Registers
	set(t, ev, &in, callee)
	cfa, ra, err = rs.FindCallerRegs(&in, mem, &out)
	caller = map[string]uint64{}
	for i := 0; i < ev.NumRegisters(); i++ {
		if v, ok := out.Get(i); ok {
			caller[ev.Name(i)] = v
		}
	}
	return cfa, ra, caller, err
}

func TestRuleSetNeedsCFAAndRA(t *testing.T) {
	ev := mustEvaluator(t, 8)
	for _, c := range []struct {
		texts []string
		err   error
	}{
		{[]string{".ra: 0"}, ErrNoCFA},
		{[]string{".cfa: 0"}, ErrNoRA},
		{[]string{".ra: $rip"}, ErrNoCFA},
		{nil, ErrNoCFA},
		{[]string{".cfa: 0", ".ra: 0"}, nil},
	} {
		rs, err := ev.RuleSet(c.texts...)
		if err != nil {
			t.Fatalf("RuleSet(%q): %v", c.texts, err)
		}
		if err := rs.Err(); !errors.Is(err, c.err) || (c.err == nil) != (err == nil) {
			t.Errorf("RuleSet(%q).Err() = %v, want %v", c.texts, err, c.err)
		}
		var in, out Registers
		out.Valid = 1
		_, _, err = rs.FindCallerRegs(&in, nil, &out)
		if !errors.Is(err, c.err) || (c.err == nil) != (err == nil) || out.Valid != 0 {
			t.Errorf("RuleSet(%q).FindCallerRegs: %v, caller valid %b; want %v", c.texts, err, out.Valid, c.err)
		}
	}
}

func TestSetCFAAndRARule(t *testing.T) {
	ev := mustEvaluator(t, 8)
	rs, err := ev.RuleSet(".cfa: 330903416631436410 .ra: 5870666104170902211")
	if err != nil {
		t.Fatal(err)
	}
	cfa, ra, caller, err := callerOf(t, ev, rs, nil, noMemory{t})
	if err != nil || cfa != 330903416631436410 || ra != 5870666104170902211 || len(caller) != 0 {
		t.Errorf("= %d, %d, %v, %v", cfa, ra, caller, err)
	}
	if got, want := rs.String(), ".cfa: 330903416631436410 .ra: 5870666104170902211"; got != want {
		t.Errorf("String() = %q, want %q", got, want)
	}
}

func TestSetManyRules(t *testing.T) {
	ev := mustEvaluator(t, 8, "register1", "vodkathumbscrewingly", "pubvexingfjordschmaltzy", "uncopyrightables")
	rs, err := ev.RuleSet(".cfa: $temp1 68737028 = $temp2 61072337 = $temp1 $temp2 - " +
		".ra: .cfa 99804755 + " +
		"register1: .cfa 54370437 * " +
		"vodkathumbscrewingly: 24076308 .cfa + " +
		"pubvexingfjordschmaltzy: .cfa 29801007 - " +
		"uncopyrightables: 92642917 .cfa /")
	if err != nil {
		t.Fatal(err)
	}
	cfa, ra, caller, err := callerOf(t, ev, rs, nil, noMemory{t})
	if err != nil {
		t.Fatal(err)
	}
	if cfa != 7664691 || ra != 107469446 {
		t.Errorf("cfa, ra = %d, %d", cfa, ra)
	}
	want := map[string]uint64{
		"register1":               416732599139967,
		"vodkathumbscrewingly":    31740999,
		"pubvexingfjordschmaltzy": 1<<64 - 22136316,
		"uncopyrightables":        12,
	}
	for n, w := range want {
		if caller[n] != w {
			t.Errorf("%s = %d, want %d", n, caller[n], w)
		}
	}
	if len(caller) != len(want) {
		t.Errorf("caller = %v", caller)
	}
}

// Later texts (delta records) override earlier rules.
func TestRulesOverride(t *testing.T) {
	ev := mustEvaluator(t, 8, "$rbp", "$rbx")
	rs, err := ev.RuleSet(".cfa: 330903416631436410 .ra: 5870666104170902211 $rbx: 1",
		".cfa: 2828089117179001", "$rbx: 2 $rbp: 3", "$rbx: .undef")
	if err != nil {
		t.Fatal(err)
	}
	cfa, ra, caller, err := callerOf(t, ev, rs, nil, noMemory{t})
	if err != nil || cfa != 2828089117179001 || ra != 5870666104170902211 {
		t.Errorf("= %d, %d, %v", cfa, ra, err)
	}
	if len(caller) != 1 || caller["$rbp"] != 3 {
		t.Errorf("caller = %v, want $rbp only", caller)
	}
	if got, want := rs.String(), ".cfa: 2828089117179001 .ra: 5870666104170902211 $rbp: 3 $rbx: .undef"; got != want {
		t.Errorf("String() = %q, want %q", got, want)
	}
}

func TestScope(t *testing.T) {
	const (
		bara  = 0x06a7bc63e4f13893
		ornit = 0x5e0bf850bafce9d2
		noach = 0x54dc4a5d8e5eb503
		r1    = 0x6ed3582c4bedb9ad
		r2    = 0xd27d9e742b8df6d0
	)
	ev := mustEvaluator(t, 8, ".baraminology", ".ornithorhynchus", "noachian", "rogerian", "$r1", "$r2")
	regs := map[string]uint64{".baraminology": bara, ".ornithorhynchus": ornit, "noachian": noach, "$r1": r1, "$r2": r2}
	for _, c := range []struct {
		name   string
		rules  string
		ok     bool
		cfa    uint64
		ra     uint64
		caller map[string]uint64
	}{
		{"CFALacksCFA", ".cfa: .cfa .ra: 0", false, 0, 0, nil},
		{"CFALacksRA", ".cfa: .ra .ra: 0", false, 0, 0, nil},
		{"CFASeesCurrentRegs", ".cfa: .baraminology .ornithorhynchus + .ra: 0", true, bara + ornit, 0, nil},
		{"RASeesCFA", ".cfa: 48364076 .ra: .cfa", true, 48364076, 48364076, nil},
		{"RALacksRA", ".cfa: 0 .ra: .ra", false, 0, 0, nil},
		{"RASeesCurrentRegs", ".cfa: 10359370 .ra: noachian", true, 10359370, noach, nil},
		{"RegistersSeeCFA", ".cfa: 6515179 .ra: .cfa rogerian: .cfa", true, 6515179, 6515179,
			map[string]uint64{"rogerian": 6515179}},
		{"RegsLackRA", ".cfa: 42740329 .ra: 27045204 rogerian: .ra", true, 42740329, 27045204, nil},
		{"RegsSeeRegs", ".cfa: 88239303 .ra: 30503835 $r1: $r1 42175211 = $r2 $r2: $r2 21357221 = $r1",
			true, 88239303, 30503835, map[string]uint64{"$r1": r2, "$r2": r1}},
		{"SeparateTemps", ".cfa: $temp1 76569129 = $temp1 .ra: 0", true, 76569129, 0, nil},
		{"SeparateTempsRA", ".cfa: $temp1 76569129 = $temp1 .ra: $temp1", false, 0, 0, nil},
		{"CFAUndef", ".cfa: .undef .ra: 0", false, 0, 0, nil},
		{"RAUndef", ".cfa: 0 .ra: .undef", false, 0, 0, nil},
		{"RegUndef", ".cfa: 1 .ra: 2 noachian: .undef", true, 1, 2, nil},
		{"UndefInExpression", ".cfa: 1 .ra: 2 noachian: .undef 4 +", true, 1, 2, nil},
	} {
		rs, err := ev.RuleSet(c.rules)
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		cfa, ra, caller, err := callerOf(t, ev, rs, regs, noMemory{t})
		if (err == nil) != c.ok {
			t.Errorf("%s: err = %v, want ok = %v", c.name, err, c.ok)
			continue
		}
		if !c.ok {
			continue
		}
		if cfa != c.cfa || ra != c.ra {
			t.Errorf("%s: cfa, ra = %#x, %#x; want %#x, %#x", c.name, cfa, ra, c.cfa, c.ra)
		}
		if len(caller) != len(c.caller) {
			t.Errorf("%s: caller = %v, want %v", c.name, caller, c.caller)
		}
		for n, w := range c.caller {
			if caller[n] != w {
				t.Errorf("%s: %s = %#x, want %#x", c.name, n, caller[n], w)
			}
		}
	}
}

func TestUndefinedIsReported(t *testing.T) {
	ev := mustEvaluator(t, 8)
	rs, err := ev.RuleSet(".cfa: 16 .ra: .undef")
	if err != nil {
		t.Fatal(err)
	}
	var in, out Registers
	if _, _, err := rs.FindCallerRegs(&in, nil, &out); !errors.Is(err, ErrUndefined) {
		t.Errorf("err = %v, want ErrUndefined", err)
	}
}

// The cases of Breakpad's CFIRuleParser tests.
func TestRuleSetSyntax(t *testing.T) {
	ev := mustEvaluator(t, 8, "nemo", "galba", "otho", "r1", "r2")
	for _, text := range []string{
		"", ":", ".cfa:", ".cfa", ".ra:", ".ra", "reg:", "expr", "expr1 expr2",
		"expr1 reg: expr2", "  \n:\t  ", "reg: expr1 : expr2", " r1:   expr   :",
		"r0: r1:   expr",
	} {
		if _, err := ev.RuleSet(text); !errors.Is(err, ErrSyntax) {
			t.Errorf("RuleSet(%q): err = %v, want ErrSyntax", text, err)
		}
		// A malformed delta spoils the whole set, as in Breakpad.
		if _, err := ev.RuleSet(".cfa: 1 .ra: 2", text); !errors.Is(err, ErrSyntax) {
			t.Errorf("RuleSet(_, %q): err = %v, want ErrSyntax", text, err)
		}
	}
	for _, c := range []struct{ text, want string }{
		{".cfa: spleen .ra: notoriety nemo: mellifluous", ".cfa: spleen .ra: notoriety nemo: mellifluous"},
		{".cfa: cfa_expression .ra: ra_expression galba: praetorian otho: vitellius",
			".cfa: cfa_expression .ra: ra_expression galba: praetorian otho: vitellius"},
		// A register rule that always fails stays; it just never recovers.
		{".cfa: 1 .ra: 2 galba: 1 2 otho: +", ".cfa: 1 .ra: 2 galba: 1 2 otho: +"},
		{" .cfa: 1 .ra: 2 r1:\tr1\nexpression \tr2:\t\rr2\r\n expression  \n",
			".cfa: 1 .ra: 2 r1: r1 expression r2: r2 expression"},
		// Words with a colon inside are not names.
		{".cfa: a:b .ra: c", ".cfa: a:b .ra: c"},
		{".cfa: 1 .ra: 2 unknown: 3", ".cfa: 1 .ra: 2"}, // registers the CPU lacks are dropped
	} {
		rs, err := ev.RuleSet(c.text)
		if err != nil {
			t.Errorf("RuleSet(%q): %v", c.text, err)
			continue
		}
		if got := rs.String(); got != c.want {
			t.Errorf("RuleSet(%q) = %q, want %q", c.text, got, c.want)
		}
	}
}

func TestParseHandlerRegisterRules(t *testing.T) {
	ev := mustEvaluator(t, 8, "reg-for-cfa", "reg-for-ra", "reg-for-reg1", "reg-for-reg2", "reg1", "reg2", "reg3")
	rs, err := ev.RuleSet(".cfa: reg-for-cfa .ra: reg-for-ra reg1: reg-for-reg1 reg2: reg-for-reg2 reg3: reg3")
	if err != nil {
		t.Fatal(err)
	}
	cfa, ra, caller, err := callerOf(t, ev, rs, map[string]uint64{
		"reg-for-cfa": 0x268a9a4a3821a797, "reg-for-ra": 0x6301b475b8b91c02,
		"reg-for-reg1": 0x06cde8e2ff062481, "reg-for-reg2": 0xff0c4f76403173e2,
	}, noMemory{t})
	if err != nil || cfa != 0x268a9a4a3821a797 || ra != 0x6301b475b8b91c02 {
		t.Errorf("= %#x, %#x, %v", cfa, ra, err)
	}
	want := map[string]uint64{"reg1": 0x06cde8e2ff062481, "reg2": 0xff0c4f76403173e2}
	if len(caller) != len(want) || caller["reg1"] != want["reg1"] || caller["reg2"] != want["reg2"] {
		t.Errorf("caller = %v, want %v (reg3 unrecoverable)", caller, want)
	}
}

// Breakpad's SimpleCFIWalker test frame: r0 saved on the stack, r1 saved in
// r2, the return address below the CFA.
func TestSimpleWalkerFrame(t *testing.T) {
	ev := mustEvaluator(t, 8, "r0", "r1", "r2", "r3", "r4", "sp", "pc")
	const (
		stackTop = 0x98ecadc3
		ret      = 0x7a12dd85f8ea3d61
		r0Saved  = 0xdc1975eba8602302
	)
	mem := newStack(stackTop, 8, r0Saved, 0xf18fc7d4ed3f9a12, ret)
	rs, err := ev.RuleSet(".cfa: sp 24 + .ra: .cfa 8 - ^ r0: .cfa 24 - ^ r1: r2",
		"r2: .undef r3: .undef r4: .undef")
	if err != nil {
		t.Fatal(err)
	}
	cfa, ra, caller, err := callerOf(t, ev, rs, map[string]uint64{
		"r0": 0x5a5beeb38de23be8, "r1": 0xf6f4aa0f2cc5c00a, "r2": 0xe0dfc3a7a34c7f37,
		"r3": 0x73dd1c15cbb10ce5, "r4": 0x3c6cf72bb4cb0c6f, "sp": stackTop, "pc": 0x7ac6ccd63bc3adfe,
	}, mem)
	if err != nil {
		t.Fatal(err)
	}
	if cfa != stackTop+24 || ra != ret {
		t.Errorf("cfa, ra = %#x, %#x", cfa, ra)
	}
	want := map[string]uint64{"r0": r0Saved, "r1": 0xe0dfc3a7a34c7f37}
	if len(caller) != len(want) || caller["r0"] != want["r0"] || caller["r1"] != want["r1"] {
		t.Errorf("caller = %#v, want %#v", caller, want)
	}
}

// A frame whose .ra cannot be read is not unwound by these rules; a
// register whose saved slot cannot be read is just not recovered.
func TestMemoryFailures(t *testing.T) {
	ev := mustEvaluator(t, 8, "$rsp", "$rbp")
	rs, err := ev.RuleSet(".cfa: $rsp 16 + .ra: .cfa 8 - ^ $rbp: .cfa 16 - ^")
	if err != nil {
		t.Fatal(err)
	}
	var in, out Registers
	in.Set(0, 0x1000)
	if _, _, err := rs.FindCallerRegs(&in, newStack(0x2000, 8, 1), &out); !errors.Is(err, ErrMemory) {
		t.Errorf(".ra unreadable: err = %v, want ErrMemory", err)
	}
	_, ra, err := rs.FindCallerRegs(&in, newStack(0x1008, 8, 0x4242), &out)
	if err != nil || ra != 0x4242 || out.Has(1) {
		t.Errorf("$rbp unreadable: ra = %#x, err = %v, $rbp valid = %v", ra, err, out.Has(1))
	}
	// .cfa of a frame without $rsp fails.
	if _, _, err := rs.FindCallerRegs(&Registers{}, nil, &out); !errors.Is(err, ErrUnbound) {
		t.Errorf("no $rsp: err = %v, want ErrUnbound", err)
	}
}

func TestRuleSetCache(t *testing.T) {
	ev := mustEvaluator(t, 8, "$rsp")
	a, err := ev.RuleSet(".cfa: $rsp 8 + .ra: .cfa -8 + ^", "$rsp: .cfa")
	if err != nil {
		t.Fatal(err)
	}
	b, _ := ev.RuleSet(".cfa: $rsp 8 + .ra: .cfa -8 + ^", "$rsp: .cfa")
	if a != b {
		t.Errorf("the same texts compiled twice")
	}
	// Texts are kept apart in the cache key: one text with a newline is
	// not the two texts.
	c, err := ev.RuleSet(".cfa: $rsp 8 + .ra: .cfa -8 + ^\n$rsp: .cfa")
	if err != nil || c == a {
		t.Errorf("joined text: %p %p %v", c, a, err)
	}
	if _, err1 := ev.RuleSet("x"); err1 == nil {
		t.Fatal("bad text compiled")
	} else if _, err2 := ev.RuleSet("x"); err2 == nil || err2.Error() != err1.Error() {
		t.Errorf("cached error %v, then %v", err1, err2)
	}
}

// .cfa and .ra rules that fail whatever the frame make the rule set
// unusable, which Err says at once.
func TestRuleSetStaticErrors(t *testing.T) {
	ev := mustEvaluator(t, 8, "$rsp")
	for _, c := range []struct {
		text string
		err  error
	}{
		{".cfa: cfa expression .ra: 0", ErrIncomplete},
		{".cfa: 0 .ra: ra expression", ErrIncomplete},
		{".cfa: $rsp + .ra: 0", ErrStackUnderflow},
		{".cfa: 0 .ra: ^", ErrStackUnderflow},
		{".cfa: 0 .ra: 1 2 = 3", ErrNotAssignable},
		{".cfa: $rsp 8 = .ra: 0", ErrIncomplete},
	} {
		rs, err := ev.RuleSet(c.text)
		if err != nil {
			t.Fatalf("RuleSet(%q): %v", c.text, err)
		}
		if err := rs.Err(); !errors.Is(err, c.err) {
			t.Errorf("RuleSet(%q).Err() = %v, want %v", c.text, err, c.err)
		}
	}
}

func TestCheck(t *testing.T) {
	ev := mustEvaluator(t, 4, "$eip", "$esp")
	for _, c := range []struct {
		text         string
		check, value error
	}{
		{"$eip $esp ^ =", nil, ErrIncomplete},
		{"$esp 4 +", ErrIncomplete, nil},
		{"$T0 $esp = $T0", ErrIncomplete, nil},
		{"", nil, ErrIncomplete},
		{"$eip ^ ^ =", ErrStackUnderflow, ErrStackUnderflow},
		{"+", ErrStackUnderflow, ErrStackUnderflow},
		{"1 2 =", ErrNotAssignable, ErrNotAssignable},
		{"eip 2 =", ErrNotAssignable, ErrNotAssignable},
		{"$eip $nobody =", nil, ErrIncomplete}, // unbound only at run time
		{"$eip 1 0 / =", nil, ErrIncomplete},   // division by zero only at run time
	} {
		p, err := ev.Program(c.text)
		if err != nil {
			t.Fatal(err)
		}
		if err := p.Check(); !errors.Is(err, c.check) || (c.check == nil) != (err == nil) {
			t.Errorf("Check(%q) = %v, want %v", c.text, err, c.check)
		}
		if err := p.CheckValue(); !errors.Is(err, c.value) || (c.value == nil) != (err == nil) {
			t.Errorf("CheckValue(%q) = %v, want %v", c.text, err, c.value)
		}
	}
}

// Breakpad's rule parser splits on " \t\r\n" only; its evaluator then
// splits each expression on all C white space, \v and \f included.
func TestRuleTextWhiteSpace(t *testing.T) {
	ev := mustEvaluator(t, 8, "r1")
	for _, c := range []struct {
		text     string
		cfa, ra  uint64
		r1       uint64
		r1OK     bool
		err      error
		unusable error
	}{
		{text: ".cfa: 1\v2 + .ra: 7", cfa: 3, ra: 7},
		{text: ".cfa: 1\f\f2\v+ .ra: 7 r1: \v", cfa: 3, ra: 7}, // r1's expression is blank
		{text: ".cfa: 1 .ra: 2 a\vb: 5", cfa: 1, ra: 2},        // a name with \v in it
		{text: ".cfa: 1 .ra: 2 r1: 1\v\v1 +", cfa: 1, ra: 2, r1: 2, r1OK: true},
		{text: ".cfa: \v .ra: 2", unusable: ErrIncomplete}, // blank .cfa
		{text: ".cfa:\v1 .ra: 2", err: ErrSyntax},          // ".cfa:\v1" is one word, not a name
		{text: "\v .cfa: 1 .ra: 2", err: ErrSyntax},        // a blank word before the first name
	} {
		rs, err := ev.RuleSet(c.text)
		if c.err != nil {
			if !errors.Is(err, c.err) {
				t.Errorf("RuleSet(%q): err = %v, want %v", c.text, err, c.err)
			}
			continue
		}
		if err != nil {
			t.Errorf("RuleSet(%q): %v", c.text, err)
			continue
		}
		var in, out Registers
		cfa, ra, err := rs.FindCallerRegs(&in, nil, &out)
		if c.unusable != nil {
			if !errors.Is(err, c.unusable) || !errors.Is(rs.Err(), c.unusable) {
				t.Errorf("RuleSet(%q): err = %v, Err() = %v, want %v", c.text, err, rs.Err(), c.unusable)
			}
			continue
		}
		r1, ok := out.Get(0)
		if err != nil || cfa != c.cfa || ra != c.ra || ok != c.r1OK || r1 != c.r1 {
			t.Errorf("RuleSet(%q) = %d, %d, r1 %d %v, %v", c.text, cfa, ra, r1, ok, err)
		}
	}
}

func TestRegisters(t *testing.T) {
	var r Registers
	r.Set(3, 42)
	r.Set(63, 7)
	if v, ok := r.Get(3); !ok || v != 42 || !r.Has(3) || !r.Has(63) {
		t.Errorf("Get(3) = %d, %v", v, ok)
	}
	r.Clear(3)
	if _, ok := r.Get(3); ok || r.Has(3) {
		t.Errorf("register 3 valid after Clear")
	}
	for _, i := range []int{-1, 64, 1000} {
		if _, ok := r.Get(i); ok || r.Has(i) {
			t.Errorf("Get(%d) valid", i)
		}
	}
}

// A full cache is emptied and refilled; what it compiled stays usable.
func TestMemoLimit(t *testing.T) {
	ev := mustEvaluator(t, 8, "$rsp")
	ev.limit = 4
	var sets []*RuleSet
	for i := range 10 {
		rs, err := ev.RuleSet(".cfa: $rsp " + strconv.Itoa(i) + " + .ra: .cfa")
		if err != nil {
			t.Fatal(err)
		}
		sets = append(sets, rs)
	}
	if len(ev.sets) > 4 || len(ev.lines) > 4 || len(ev.exprs) > 4 {
		t.Errorf("caches hold %d, %d, %d entries, limit 4", len(ev.sets), len(ev.lines), len(ev.exprs))
	}
	var in, out Registers
	in.Set(0, 100)
	for i, rs := range sets {
		if cfa, ra, err := rs.FindCallerRegs(&in, nil, &out); err != nil || cfa != uint64(100+i) || ra != cfa {
			t.Errorf("set %d: %d, %d, %v", i, cfa, ra, err)
		}
	}
}
