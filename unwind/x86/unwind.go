// Package x86 is the 32-bit x86 stack unwinder: it finds each caller frame
// the way Breakpad's processor does for this CPU, over the register file and
// names of arch/x86 and the shared machinery of package unwind.
package x86

import (
	"errors"
	"github.com/gobreakpad/gobreakpad/arch/x86"
	"strings"

	"github.com/gobreakpad/gobreakpad/cfi"
	"github.com/gobreakpad/gobreakpad/unwind"
)

// Slots past the registers hold the values Breakpad's walker gives STACK
// WIN programs.
const (
	cbCalleeParams = x86.NumRegs + iota
	cbSavedRegs
	cbLocals
	cbParams
	raSearchStart
	raSearch
)

// cfiNames are the registers' names in rule text, then the STACK WIN
// pseudo-values.
var cfiNames = append(x86.CFIRegisterNames[:len(x86.CFIRegisterNames):len(x86.CFIRegisterNames)],
	".cbCalleeParams", ".cbSavedRegs", ".cbLocals", ".cbParams", ".raSearchStart", ".raSearch")

const calleeSaved = 1<<x86.EBP | 1<<x86.EBX | 1<<x86.ESI | 1<<x86.EDI

const allValid = 1<<x86.NumRegs - 1

// maxReasonableGap bounds the distance between adjacent frames when the
// ebp chain is rebuilt after a scan (Breakpad: 128 KiB).
const maxReasonableGap = 128 * 1024

// Unwinder walks x86 stacks the way Breakpad's StackwalkerX86 does.
type Unwinder struct{}

// CFINames implements unwind.CPU.
func (Unwinder) CFINames() []string { return cfiNames }

// PC implements unwind.CPU.
func (Unwinder) PC() int { return x86.EIP }

// SP implements unwind.CPU.
func (Unwinder) SP() int { return x86.ESP }

// WordSize implements unwind.CPU.
func (Unwinder) WordSize() int { return 4 }

// InstructionAdjust implements unwind.CPU.
func (Unwinder) InstructionAdjust() uint64 { return 1 }

// ContextFrame implements unwind.CPU; raw must be a *x86.Context.
func (Unwinder) ContextFrame(raw any, _ unwind.Env) (*unwind.Frame, error) {
	c, err := unwind.ContextAs[x86.Context](raw)
	if err != nil {
		return nil, err
	}
	f := &unwind.Frame{Trust: unwind.TrustContext}
	for i, v := range []uint32{c.Eip, c.Esp, c.Ebp, c.Ebx, c.Esi, c.Edi, c.Eax, c.Ecx, c.Edx, c.EFlags} {
		f.Regs[i] = uint64(v)
	}
	f.Valid = allValid
	return f, nil
}

// Caller implements unwind.CPU: the registers a signal frame saved (when
// last is a signal trampoline), then STACK WIN, then STACK CFI, then the
// shape of __kernel_vsyscall for a frame in the vDSO without rules
// (byVsyscall), then the ebp chain (with a scan when ebp does not point into
// the stack).
func (Unwinder) Caller(env unwind.Env, frames []*unwind.Frame, scanAllowed bool) *unwind.Frame {
	last := frames[len(frames)-1]
	if f := bySignalFrame(env, last); f != nil {
		return f
	}
	addr := unwind.RuleAddress(last, x86.EIP, 1)
	var f *unwind.Frame
	if win := env.Win(addr); win != nil {
		f = byWin(env, frames, win, scanAllowed)
	}
	if f == nil {
		if rules := env.CFI(addr); unwind.Outermost(rules) {
			return nil
		} else if rules != nil {
			f = unwind.CallerByCFI(env, &last.Context, rules, x86.NumRegs, calleeSaved, x86.ESP, x86.EIP)
			if f != nil && (!f.Has(x86.EIP) || !f.Has(x86.ESP) || !f.Has(x86.EBP)) {
				f = nil
			}
			if f != nil {
				f.Trust = unwind.TrustCFI
			}
			// Rules that give no return address at a realigned frame
			// lack the expressions its CFA needs: its frame record
			// and saved CFA decide.
			if f != nil && unwind.ImplausibleCaller(env, f.Regs[x86.EIP]) {
				if g := byRealignedFrame(env, last); g != nil {
					f = g
				}
			}
		}
	}
	if f == nil {
		f = byVsyscall(env, last)
	}
	if f == nil {
		f = unwind.CallerOfNullCall(env, last, x86.EIP, x86.ESP, x86.EBP, 4)
	}
	if f == nil && !env.Windows() {
		f = byFrameState(env, last)
	}
	if f == nil {
		f = byEBP(env, last, scanAllowed)
	}
	if f == nil {
		return nil
	}
	if unwind.TerminateWalk(f.Regs[x86.EIP], f.Regs[x86.ESP], last.Regs[x86.ESP], unwind.Innermost(last)) {
		return nil
	}
	unwind.MarkTrampoline(env, f, f.Regs[x86.EIP], x86.EIP, x86.ESP, trampolines)
	return f
}

var errNoEvaluator = errors.New("x86: no STACK WIN evaluator")

func read32(env unwind.Env, addr uint32) (uint32, bool) { return unwind.Read32(env, uint64(addr)) }

// callBefore checks i386 call instructions before scanned return addresses
// (or a signal trampoline's start, where a handler returns).
var callBefore = unwind.OrTrampoline(unwind.X86CallBefore(32), trampolines)

// scan is Breakpad's scan that passes over candidates with code bytes in
// the dump and no call instruction before them (unwind.ScanForCaller).
func scan(env unwind.Env, start uint32, words int) (loc, ip uint32, ok bool) {
	l, v, _, ok := unwind.ScanForCaller(env, uint64(start), words, 4, callBefore)
	return uint32(l), uint32(v), ok
}

func byEBP(env unwind.Env, last *unwind.Frame, scanAllowed bool) *unwind.Frame {
	esp, ebp := uint32(last.Regs[x86.ESP]), uint32(last.Regs[x86.EBP])
	var callerEIP, callerESP, callerEBP uint32
	trust := unwind.TrustFP
	eip, ok1 := read32(env, ebp+4)
	cebp, ok2 := read32(env, ebp)
	// An ebp below esp is no frame of this function's caller: junk,
	// scanned past as an unreadable one (Breakpad follows it and the walk
	// ends there, the caller's esp not above the callee's).
	if ok1 && ok2 && ebp >= esp {
		callerEIP, callerEBP, callerESP = eip, cebp, ebp+8
		if cfa, ok := realignedCFA(env, ebp, eip); ok {
			callerESP = cfa
		}
	} else {
		if !scanAllowed {
			return nil
		}
		loc, ip, ok := scan(env, esp, unwind.ScanWords(last.Trust))
		if !ok {
			return nil
		}
		callerEIP, callerESP = ip, loc+4
		// The caller's ebp is usually saved right below the return address.
		chain := callerESP - 8
		v, ok := read32(env, chain)
		if !ok || v <= chain || v-chain > maxReasonableGap {
			v = ebp
		}
		callerEBP = v
		trust = unwind.TrustScan
	}
	f := unwind.NewCaller(env, last, trust)
	f.Regs[x86.EIP], f.Regs[x86.ESP], f.Regs[x86.EBP] = uint64(callerEIP), uint64(callerESP), uint64(callerEBP)
	f.Valid = 1<<x86.EIP | 1<<x86.ESP | 1<<x86.EBP
	return f
}

// byWin follows Breakpad's GetCallerByWindowsFrameInfo, heuristics included.
func byWin(env unwind.Env, frames []*unwind.Frame, info *unwind.WinInfo, scanAllowed bool) *unwind.Frame {
	last := frames[len(frames)-1]
	last.Win = info
	if !info.ValidAll {
		return nil
	}
	// The parameters the callee (the frame walked just before last, if it
	// had STACK WIN information) popped: only that frame's, as Breakpad.
	var calleeParams uint32
	if n := len(frames); n >= 2 && frames[n-2].Win != nil {
		calleeParams = frames[n-2].Win.ParameterSize
	}
	esp, ebp := uint32(last.Regs[x86.ESP]), uint32(last.Regs[x86.EBP])
	// The program sees only ebp, esp and (when known) ebx of the callee.
	var regs cfi.Registers
	regs.Set(x86.EBP, uint64(ebp))
	regs.Set(x86.ESP, uint64(esp))
	if last.Has(x86.EBX) {
		regs.Set(x86.EBX, last.Regs[x86.EBX])
	}
	regs.Set(cbCalleeParams, uint64(calleeParams))
	regs.Set(cbSavedRegs, uint64(info.SavedRegisterSize))
	regs.Set(cbLocals, uint64(info.LocalSize))
	regs.Set(cbParams, uint64(info.ParameterSize))
	raStart := esp + calleeParams + info.LocalSize + info.SavedRegisterSize
	old := raStart
	if loc, found, ok := scan(env, raStart, 3); ok {
		raStart = loc
		if last.Trust == unwind.TrustContext && info.Type == unwind.WinFPO &&
			old == raStart && found == uint32(last.Regs[x86.EIP]) {
			// An FPO system call whose callee returned but left the return
			// address on top of the stack: skip it and look again.
			raStart += 4
			if loc, _, ok := scan(env, raStart, 3); ok {
				raStart = loc
			}
		}
	}
	program := info.ProgramString
	recoverEBP := true
	trust := unwind.TrustCFI
	if program == "" {
		if info.AllocatesBasePointer {
			program = "$eip .raSearchStart ^ = $ebp $esp .cbCalleeParams + .cbSavedRegs + 8 - ^ = $esp .raSearchStart 4 + ="
		} else {
			program = "$eip .raSearchStart ^ = $esp .raSearchStart 4 + ="
			if last.Has(x86.EBX) {
				program += " $ebx $ebx ="
			}
			recoverEBP = false
		}
	}
	// An alignment operator makes esp-based arithmetic unreliable: the saved
	// return address is then just above the frame pointer.
	if last.Has(x86.EBP) && strings.Contains(program, "@") {
		raStart = ebp + 4
	}
	regs.Set(raSearchStart, uint64(raStart))
	regs.Set(raSearch, uint64(raStart))
	var assigned uint64
	err := errNoEvaluator
	if ev := env.Evaluator(); ev != nil {
		var prog *cfi.Program
		if prog, err = ev.Program(program); err == nil {
			assigned, err = prog.Run(&regs, env)
		}
	}
	get := func(i int) uint32 { return uint32(regs.Values[i]) }
	if err != nil || assigned&(1<<x86.EIP) == 0 || assigned&(1<<x86.ESP) == 0 {
		if !scanAllowed {
			return nil
		}
		loc, ip, ok := scan(env, esp, unwind.ScanWords(last.Trust))
		if !ok {
			return nil
		}
		regs.Set(x86.EIP, uint64(ip))
		regs.Set(x86.ESP, uint64(loc+4))
		trust = unwind.TrustScan
	}
	if get(x86.EIP) != 0 || get(x86.EBP) != 0 {
		var offset uint32
		if !env.InModule(uint64(get(x86.EIP))) {
			start := raStart + 4
			if scanAllowed {
				if loc, ip, ok := scan(env, start, unwind.ScanWords(last.Trust)); ok {
					regs.Set(x86.EIP, uint64(ip))
					regs.Set(x86.ESP, uint64(loc+4))
					offset = loc - start
					trust = unwind.TrustCFIScan
				}
			}
		}
		if recoverEBP {
			// Look for the caller's ebp in the saved-register area, highest
			// address first, when the program's value is not a stack address
			// or frames may have been skipped.
			e := get(x86.EBP)
			skipped := trust != unwind.TrustCFI && e <= raStart+offset
			if _, ok := read32(env, e); skipped || !ok {
				searchBytes := info.SavedRegisterSize + offset
				end := esp + calleeParams
				for l := end + searchBytes; l >= end; l -= 4 {
					v, ok := read32(env, l)
					if !ok {
						break
					}
					if _, ok := read32(env, v); ok {
						regs.Set(x86.EBP, uint64(v))
						break
					}
					if l < 4 {
						break
					}
				}
			}
		}
	}
	f := unwind.NewCaller(env, last, trust)
	f.Regs[x86.EIP], f.Regs[x86.ESP], f.Regs[x86.EBP] = uint64(get(x86.EIP)), uint64(get(x86.ESP)), uint64(get(x86.EBP))
	f.Valid = 1<<x86.EIP | 1<<x86.ESP | 1<<x86.EBP
	for _, r := range []int{x86.EBX, x86.ESI, x86.EDI} {
		if assigned&(1<<uint(r)) != 0 {
			f.Set(r, regs.Values[r])
		}
	}
	return f
}

// CallTarget returns the target of the direct call ending at ra
// (unwind.CPU).
func (Unwinder) CallTarget(env unwind.Env, ra uint64) (uint64, bool) {
	return unwind.X86CallTarget(env, ra, 32)
}
