// Package cfi compiles and evaluates the unwinding rules of Breakpad symbol
// files: the rule sets of STACK CFI records and the postfix program strings
// of STACK WIN records, with Breakpad's semantics (its
// processor/postfix_evaluator-inl.h and processor/cfi_frame_info.cc).
//
// # Use
//
// Create one Evaluator per CPU, naming its registers as rule text spells
// them; a register's index in Registers is its position in the list:
//
//	ev, err := cfi.NewEvaluator(8, []string{"$rax", "$rdx", ..., "$rsp", "$rip"})
//
// For a STACK CFI frame, pass the rule text of the INIT record covering the
// address and of its delta records up to the address. Compiled rule sets are
// memoized by their text, so the hot path parses nothing:
//
//	rs, err := ev.RuleSet(initRules, delta1, delta2)
//	var callee, caller cfi.Registers
//	callee.Set(rsp, sp) // ... every valid register of the frame
//	cfa, ra, err := rs.FindCallerRegs(&callee, mem, &caller)
//
// FindCallerRegs returns the canonical frame address (.cfa) and the return
// address (.ra) and fills caller with every register whose rule evaluates.
// Mapping .cfa and .ra to the caller's stack pointer and program counter,
// and deciding what happens to registers without rules, is the walker's.
//
// For a STACK WIN frame (x86, address size 4), name the pseudo-values the
// walker supplies as registers too (".cbCalleeParams", ".cbSavedRegs",
// ".cbLocals", ".cbParams", ".raSearchStart", ".raSearch"), set them with
// the frame's registers, and run the program on a copy of the callee's
// registers:
//
//	p, err := ev.Program(programString)
//	regs := callee // then regs.Set(cbSavedRegs, ...) and so on
//	assigned, err := p.Run(&regs, mem)
//
// Run leaves the caller's registers the program assigned in regs and
// reports them as a bit set; temporaries such as $T0 stay local.
//
// # Language
//
// Expressions are postfix (reverse Polish), tokenized on white space only.
// A token is an operator, a decimal literal (with an optional leading '-'),
// or a name. Operators pop their operands and push their result:
//
//	a b +   a b -   a b *   sum, difference, product (wrapping)
//	a b /   a b %   unsigned quotient and remainder; b = 0 is ErrDivideByZero
//	a b @   a aligned down to b: a & ^(b-1)  (b = 0 gives 0, as in Breakpad)
//	a ^     the address-size little-endian word at address a
//	$v a =  assign a to the $-variable $v (pops both, pushes nothing)
//
// An "=" glued to the next word ("=$eip"), as MSVC writes in LTO builds,
// is split as Breakpad splits it. Names are pushed unresolved and take their
// value when an operator pops them, so an assignment made later in the same
// program is seen, exactly as in Breakpad. Reading a name without a value
// is ErrUnbound; a failed memory read is ErrMemory; an operator without
// operands is ErrStackUnderflow. Arithmetic wraps at the address size: a
// 4-byte Evaluator computes as Breakpad's PostfixEvaluator<uint32_t>, and a
// literal too large for the address size is, as there, a name that nothing
// binds.
//
// A STACK CFI rule set is "NAME: EXPR NAME: EXPR ...": a word ending in ':'
// starts a rule. .cfa is evaluated first from the callee's registers, then
// .ra and the register rules from the callee's registers and .cfa. A rule
// whose expression is ".undef" marks the register unrecoverable. Malformed
// rule text (words before the first name, an empty name or expression) is
// an error of RuleSet (ErrSyntax). Rules in force that can never unwind (no
// .cfa or no .ra, as for signal trampolines and _start, or a .cfa or .ra
// expression that fails whatever the registers) compile, and RuleSet.Err
// says why.
//
// # Cost
//
// Compilation uses the participle parser and happens once per distinct
// text per Evaluator; errors are memoized too. Evaluation allocates nothing:
// the operand stack and the program's names (at most MaxNames) live in
// fixed arrays, and a failure is formatted into an error only when it is
// returned (a register rule that fails just leaves its register invalid).
// Evaluation is bounded by the program's length (at most MaxTokens tokens).
//
// Beyond Breakpad, division by zero is an error instead of undefined
// behavior, and .undef for .cfa or .ra is reported as ErrUndefined.
package cfi
