package unwindinfo

import (
	"fmt"
	"slices"
	"strings"
)

// frameState is a function's frame as its prolog has built it so far, in
// terms of the canonical frame address (the CFA: the caller's RSP, the
// address above the return address).
type frameState struct {
	sp    int32 // CFA - RSP
	fpSet bool  // UWOP_SET_FPREG has run
	fpReg uint8
	fpOff int32 // frame register + fpOff = CFA
	est   int32 // CFA - establisher frame, once the frame register is set
}

func (s *frameState) cfa() string {
	if s.fpSet {
		return fmt.Sprintf(".cfa: %s %d +", RegisterName(s.fpReg), s.fpOff)
	}
	return fmt.Sprintf(".cfa: $rsp %d +", s.sp)
}

// slotRule is the rule of a register saved at CFA - off.
func slotRule(reg string, off int32) string {
	if off < 0 {
		return fmt.Sprintf("%s: .cfa %d + ^", reg, -off)
	}
	return fmt.Sprintf("%s: .cfa %d - ^", reg, off)
}

// ruleSet collects rules by register name, the last one for a name
// winning, and writes them with the CFA first.
type ruleSet struct {
	names []string
	rules map[string]string
}

func (r *ruleSet) set(rule string) {
	name, _, _ := strings.Cut(rule, ":")
	if r.rules == nil {
		r.rules = map[string]string{}
	}
	if _, ok := r.rules[name]; !ok {
		r.names = append(r.names, name)
	}
	r.rules[name] = rule
}

// setAll sets each rule of a rule text ("name: expr name: expr ...").
func (r *ruleSet) setAll(text string) {
	var rule []string
	for tok := range strings.FieldsSeq(text) {
		if strings.HasSuffix(tok, ":") && len(rule) > 0 {
			r.set(strings.Join(rule, " "))
			rule = rule[:0]
		}
		rule = append(rule, tok)
	}
	if len(rule) > 0 {
		r.set(strings.Join(rule, " "))
	}
}

func (r *ruleSet) String() string {
	names := slices.Clone(r.names)
	slices.SortStableFunc(names, func(a, b string) int {
		switch {
		case a == ".cfa" && b != ".cfa":
			return -1
		case b == ".cfa" && a != ".cfa":
			return 1
		}
		return 0
	})
	parts := make([]string, len(names))
	for i, n := range names {
		parts[i] = r.rules[n]
	}
	return strings.Join(parts, " ")
}

// applyGroup runs the instructions of one prolog offset (the unwind codes
// sharing it, given in the stored order) on the state, adding the rules
// they change to out. The codes' effects are taken in execution order
// (the reverse of the stored order); saves are placed after the group's
// stack adjustments, relative to the establisher frame as Windows' unwinder
// reads UWOP_SAVE_NONVOL: RSP, or when the code's unwind information names
// a frame register and it is set, the frame register less its offset.
func (s *frameState) applyGroup(info *Info, group []Code, out *ruleSet) {
	for i := len(group) - 1; i >= 0; i-- {
		c := group[i]
		switch c.Op {
		case OpPushNonvol:
			s.sp += 8
			if !s.fpSet {
				out.set(s.cfa())
			}
			out.set(slotRule(RegisterName(c.Info), s.sp))
		case OpAllocLarge, OpAllocSmall:
			s.sp += int32(c.Value)
			if !s.fpSet {
				out.set(s.cfa())
			}
		case OpSetFPReg:
			s.fpSet, s.fpReg = true, info.FrameReg
			s.fpOff = s.sp - int32(info.FrameOffset)
			s.est = s.sp
			out.set(s.cfa())
		case OpPushMachframe:
			// As symbolic reads it: the machine frame's RSP and RIP, 40
			// bytes pushed (48 with an error code).
			out.set(slotRule("$rsp", s.sp+16))
			out.set(slotRule(".ra", s.sp+40))
			s.sp += 40
			if c.Info == 1 {
				s.sp += 8
			}
			if !s.fpSet {
				out.set(s.cfa())
			}
		}
	}
	for i := len(group) - 1; i >= 0; i-- {
		c := group[i]
		if c.Op != OpSaveNonvol && c.Op != OpSaveNonvolFar {
			continue
		}
		est := s.sp
		if s.fpSet && info.FrameReg != 0 {
			est = s.est
		}
		out.set(slotRule(RegisterName(c.Info), est-int32(c.Value)))
	}
}

// prologueCodes returns the codes of info that describe prolog
// instructions (version 2's epilog descriptions and spare codes left out),
// each with its effective offset, in descending offset order (stable: codes
// of one offset keep the stored order). Windows' unwinder applies a code
// when the instruction pointer's offset in the function is at least the
// code's offset, or in any case once past the prolog (PrologSize).
func prologueCodes(info *Info) []Code {
	var out []Code
	for _, c := range info.Codes {
		if info.Version == 2 && (c.Op == OpEpilog || c.Op == OpSpareCode) {
			continue
		}
		c.PrologOffset = min(c.PrologOffset, info.PrologSize)
		out = append(out, c)
	}
	slices.SortStableFunc(out, func(a, b Code) int { return int(b.PrologOffset) - int(a.PrologOffset) })
	return out
}

// offsetGroups calls f for each run of codes sharing an offset, lowest
// offset (the end of codes) first.
func offsetGroups(codes []Code, f func(off uint8, group []Code)) {
	for end := len(codes); end > 0; {
		start := end - 1
		for start > 0 && codes[start-1].PrologOffset == codes[end-1].PrologOffset {
			start--
		}
		f(codes[end-1].PrologOffset, codes[start:end])
		end = start
	}
}

// exactRules gives the rules at every instruction of the function: the
// INIT record has the state at the function's entry (for a chained
// fragment: after the prologs of the functions it is chained to, whose
// codes all apply in it), a STACK CFI record at the end of each prolog
// instruction that changes a rule gives the rules it changes (the state
// after the last is symbolic's, StyleSymbolic, for unchained functions),
// and the epilogs found in the function's code get records as Windows'
// unwinder reads them (epilogChanges). Scanning the code takes its size
// from *budget; when that is spent, *budget is set to -1 and epilogs are
// left out.
func (t *Table) exactRules(rf RuntimeFunction, chain []*Info, budget *int64) Entry {
	e := Entry{Address: rf.Begin, Size: rf.End - rf.Begin}
	s := frameState{sp: 8}
	var init, post ruleSet
	both := func(rule string) { init.set(rule); post.set(rule) }
	both(s.cfa())
	both(slotRule(".ra", 8))
	// The functions this one is chained to, primary first: their prologs
	// have run.
	for k := len(chain) - 1; k >= 1; k-- {
		offsetGroups(prologueCodes(chain[k]), func(_ uint8, group []Code) {
			var rs ruleSet
			s.applyGroup(chain[k], group, &rs)
			for _, n := range rs.names {
				both(rs.rules[n])
			}
		})
	}
	info := chain[0]
	offsetGroups(prologueCodes(info), func(off uint8, group []Code) {
		var ch ruleSet
		s.applyGroup(info, group, &ch)
		for _, n := range ch.names {
			post.set(ch.rules[n])
		}
		switch {
		case off == 0:
			for _, n := range ch.names {
				init.set(ch.rules[n])
			}
		case uint32(off) >= e.Size:
			// Never reached inside the function: Windows never applies it.
		default:
			if len(ch.names) > 0 {
				e.Changes = append(e.Changes, Change{Address: rf.Begin + uint32(off), Rules: ch.String()})
			}
		}
	})
	e.Init = init.String()
	from := min(uint32(info.PrologSize), e.Size)
	code := t.codeAt(rf.Begin, min(e.Size, maxEpilogScan))
	if len(code) > 0 && *budget >= int64(len(code)) {
		*budget -= int64(len(code))
		e.Changes = append(e.Changes, epilogChanges(rf.Begin, e.Size, findEpilogs(code, from), &post)...)
	} else if len(code) > 0 {
		*budget = -1
	}
	return e
}
