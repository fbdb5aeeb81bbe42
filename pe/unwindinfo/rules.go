package unwindinfo

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
)

// Style selects how [Table.Rules] writes STACK CFI rules.
type Style int

// The styles of STACK CFI rules made from x64 unwind information.
const (
	// StyleSymbolic is Sentry symbolic's (and Mozilla dump_syms's) current
	// rules: one STACK CFI INIT record per function with the CFA after the
	// prolog, the saved registers and the return address; registers saved
	// above the CFA get negative offsets.
	StyleSymbolic Style = iota
	// StyleMozilla is StyleSymbolic with negative offsets clamped to 0, as
	// Mozilla's older reference files have them.
	StyleMozilla
	// StyleBreakpad is Google Breakpad's Windows dump_syms for PE files
	// without a PDB: a STACK CFI INIT record with the return address only,
	// then a STACK CFI record at the function's start giving the CFA as RSP
	// plus the prolog's whole allocation.
	StyleBreakpad
	// StyleMozillaPE is the rule text of Mozilla dump_syms's own older PE
	// reader (its mozwer.sym reference): Breakpad's sums, with the INIT
	// record giving the CFA at entry (".cfa: $rsp 8 + .ra: .cfa 8 - ^").
	StyleMozillaPE
	// StyleExact is ours: the rules at every instruction of the function,
	// as Windows' own unwinder (RtlVirtualUnwind) computes them there. The
	// INIT record gives the state at the function's entry
	// (".cfa: $rsp 8 + .ra: .cfa 8 - ^"; for a chained fragment, the state
	// after the prologs of the functions it is chained to); a STACK CFI
	// record at the end of each prolog instruction (its UNWIND_CODE's
	// offset) gives the rules that instruction changes, ending in
	// StyleSymbolic's state after the prolog; in each epilog, which x64
	// unwind information does not describe and Windows recognizes by its
	// code (add rsp or lea rsp, pops, ret or a jump out), a record after
	// each instruction, and after its last one the state after the prolog
	// again. Registers saved above the CFA are written ".cfa N + ^", a
	// register an epilog has popped "$reg: $reg".
	StyleExact
)

// Entry is the STACK CFI rule text of one RUNTIME_FUNCTION: the INIT
// record's address range and rules, and the STACK CFI records after it.
type Entry struct {
	Address uint32 // BeginAddress
	Size    uint32 // EndAddress - BeginAddress
	Init    string // the INIT record's rules
	Changes []Change
}

// Change is a STACK CFI record's address and rules.
type Change struct {
	Address uint32
	Rules   string
}

// maxErrors bounds the per-function problems [Table.Rules] reports.
const maxErrors = 20

// Rules returns the STACK CFI rules of every RUNTIME_FUNCTION in the
// table's order. All-zero entries and entries ending before they begin are
// skipped, as symbolic does. A function whose unwind information cannot be
// read (an address in no section, a chain that loops, a truncated or unknown
// code) is left out, and the returned error, when not nil, lists such
// problems (the first 20 and a count); the entries returned are still good.
func (t *Table) Rules(style Style) ([]Entry, error) {
	var (
		out  []Entry
		errs []error
		bad  int
	)
	// How many code bytes StyleExact may decode looking for epilogs,
	// against hostile tables of many functions over the same bytes.
	budget := t.img.Size()*4 + 1<<16
	for i, rf := range t.Functions {
		if rf == (RuntimeFunction{}) || rf.End < rf.Begin {
			continue
		}
		chain, err := t.Chain(rf)
		if err != nil {
			if bad++; bad <= maxErrors {
				errs = append(errs, fmt.Errorf("RUNTIME_FUNCTION %d (%#x): %w", i, rf.Begin, err))
			}
			continue
		}
		var e Entry
		switch style {
		case StyleBreakpad:
			e = breakpadRules(rf, chain)
		case StyleMozillaPE:
			e = breakpadRules(rf, chain)
			e.Init = ".cfa: $rsp 8 + .ra: .cfa 8 - ^"
		case StyleExact:
			e = t.exactRules(rf, chain, &budget)
		default:
			e = symbolicRules(rf, chain, style == StyleMozilla)
		}
		out = append(out, e)
	}
	if bad > maxErrors {
		errs = append(errs, fmt.Errorf("and %d more functions with bad unwind info", bad-maxErrors))
	}
	if style == StyleExact && budget < 0 {
		errs = append(errs, errors.New("epilogs: functions overlap so much that scanning their code would read the image more than 4 times: later functions' epilogs left out"))
	}
	return out, errors.Join(errs...)
}

// symbolicRules applies each structure's codes in reverse order (the order
// that undoes the prolog), primary unwind information last.
func symbolicRules(rf RuntimeFunction, chain []*Info, clamp bool) Entry {
	var cfa, saved strings.Builder
	stack := int32(8) // the return address
	machframe := false
	num := func(v int32) string {
		if clamp && v < 0 {
			v = 0
		}
		return strconv.FormatInt(int64(v), 10)
	}
	for _, info := range chain {
		for i := len(info.Codes) - 1; i >= 0; i-- {
			c := info.Codes[i]
			switch c.Op {
			case OpSaveNonvol, OpSaveNonvolFar:
				if info.FrameReg == 0 {
					fmt.Fprintf(&saved, " %s: .cfa %s - ^", RegisterName(c.Info), num(stack-int32(c.Value)))
				} else {
					fmt.Fprintf(&saved, " %s: %s %d + ^", RegisterName(c.Info), RegisterName(info.FrameReg), int32(c.Value-info.FrameOffset))
				}
			case OpPushNonvol:
				stack += 8
				fmt.Fprintf(&saved, " %s: .cfa %d - ^", RegisterName(c.Info), stack)
			case OpAllocLarge, OpAllocSmall:
				stack += int32(c.Value)
			case OpSetFPReg:
				fmt.Fprintf(&cfa, ".cfa: %s %d +", RegisterName(info.FrameReg), stack-int32(info.FrameOffset))
			case OpPushMachframe:
				fmt.Fprintf(&saved, " $rsp: .cfa %d - ^ .ra: .cfa %d - ^", stack+16, stack+40)
				stack += 40
				machframe = true
				if c.Info == 1 {
					stack += 8
				}
			}
		}
	}
	if cfa.Len() == 0 {
		fmt.Fprintf(&cfa, ".cfa: $rsp %d +", stack)
	}
	if !machframe {
		saved.WriteString(" .ra: .cfa 8 - ^")
	}
	return Entry{Address: rf.Begin, Size: rf.End - rf.Begin, Init: cfa.String() + saved.String()}
}

// breakpadRules sums the prolog's stack use as Breakpad's PrintPEFrameData
// does: pushes, allocations and machine frames; saves and the frame
// register do not count.
func breakpadRules(rf RuntimeFunction, chain []*Info) Entry {
	stack, ra := uint32(8), uint32(8)
	for _, info := range chain {
		for _, c := range info.Codes {
			switch c.Op {
			case OpPushNonvol:
				stack += 8
			case OpAllocLarge, OpAllocSmall:
				stack += c.Value
			case OpPushMachframe:
				stack += 80
				if c.Info != 0 {
					stack += 8
				}
				ra += 80
			}
		}
	}
	return Entry{
		Address: rf.Begin, Size: rf.End - rf.Begin,
		Init:    fmt.Sprintf(".cfa: $rsp .ra: .cfa %d - ^", ra),
		Changes: []Change{{Address: rf.Begin, Rules: fmt.Sprintf(".cfa: $rsp %d +", stack)}},
	}
}
