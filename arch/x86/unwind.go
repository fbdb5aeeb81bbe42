package x86

import (
	"strings"

	"github.com/gobreakpad/gobreakpad/arch/unwind"
)

// Register slots of an unwind.Context for x86, in Breakpad's print order.
const (
	EIP = iota
	ESP
	EBP
	EBX
	ESI
	EDI
	EAX
	ECX
	EDX
	EFL
	NumRegs
)

var names = []string{"eip", "esp", "ebp", "ebx", "esi", "edi", "eax", "ecx", "edx", "efl"}

// cfiNames are the registers' names in STACK CFI rules ("" for eflags,
// which CFI never mentions).
var cfiNames = []string{"$eip", "$esp", "$ebp", "$ebx", "$esi", "$edi", "$eax", "$ecx", "$edx", ""}

const calleeSaved = 1<<EBP | 1<<EBX | 1<<ESI | 1<<EDI

const allValid = 1<<NumRegs - 1

// maxReasonableGap bounds the distance between adjacent frames when the
// ebp chain is rebuilt after a scan (Breakpad: 128 KiB).
const maxReasonableGap = 128 * 1024

// Unwinder walks x86 stacks the way Breakpad's StackwalkerX86 does.
type Unwinder struct{}

// Names implements unwind.CPU.
func (Unwinder) Names() []string { return names }

// PrintAlways implements unwind.CPU: eax, ecx, edx and eflags are printed
// only for frames with every register known.
func (Unwinder) PrintAlways() uint64 {
	return 1<<EIP | 1<<ESP | 1<<EBP | 1<<EBX | 1<<ESI | 1<<EDI
}

// PC implements unwind.CPU.
func (Unwinder) PC() int { return EIP }

// SP implements unwind.CPU.
func (Unwinder) SP() int { return ESP }

// WordSize implements unwind.CPU.
func (Unwinder) WordSize() int { return 4 }

// InstructionAdjust implements unwind.CPU.
func (Unwinder) InstructionAdjust() uint64 { return 1 }

// ContextFrame implements unwind.CPU; raw must be a *Context.
func (Unwinder) ContextFrame(raw any, _ unwind.Env) (*unwind.Frame, error) {
	c, ok := raw.(*Context)
	if !ok || c == nil {
		return nil, unwind.ErrContextType{Got: raw}
	}
	f := &unwind.Frame{Trust: unwind.TrustContext}
	for i, v := range []uint32{c.Eip, c.Esp, c.Ebp, c.Ebx, c.Esi, c.Edi, c.Eax, c.Ecx, c.Edx, c.EFlags} {
		f.Regs[i] = uint64(v)
	}
	f.Valid = allValid
	return f, nil
}

// Caller implements unwind.CPU: STACK WIN, then STACK CFI, then the ebp
// chain (with a scan when ebp does not point into the stack).
func (Unwinder) Caller(env unwind.Env, frames []*unwind.Frame, scanAllowed bool) *unwind.Frame {
	last := frames[len(frames)-1]
	addr := last.Regs[EIP]
	if last.Trust != unwind.TrustContext {
		addr--
	}
	var f *unwind.Frame
	if win := env.Win(addr); win != nil {
		f = byWin(env, frames, win, scanAllowed)
	}
	if f == nil {
		if rules := env.CFI(addr); rules != nil {
			f = unwind.CallerByCFI(env, &last.Context, rules, cfiNames, calleeSaved, ESP, EIP)
			if f != nil && (!f.Has(EIP) || !f.Has(ESP) || !f.Has(EBP)) {
				f = nil
			}
			if f != nil {
				f.Trust = unwind.TrustCFI
			}
		}
	}
	if f == nil {
		f = byEBP(env, last, scanAllowed)
	}
	if f == nil {
		return nil
	}
	if unwind.TerminateWalk(f.Regs[EIP], f.Regs[ESP], last.Regs[ESP], last.Trust == unwind.TrustContext) {
		return nil
	}
	return f
}

func read32(env unwind.Env, addr uint32) (uint32, bool) { return unwind.Read32(env, uint64(addr)) }

func scan(env unwind.Env, start uint32, words int) (loc, ip uint32, ok bool) {
	l, v, ok := unwind.ScanForReturnAddress(env, uint64(start), words, 4)
	return uint32(l), uint32(v), ok
}

func byEBP(env unwind.Env, last *unwind.Frame, scanAllowed bool) *unwind.Frame {
	esp, ebp := uint32(last.Regs[ESP]), uint32(last.Regs[EBP])
	var callerEIP, callerESP, callerEBP uint32
	trust := unwind.TrustFP
	eip, ok1 := read32(env, ebp+4)
	cebp, ok2 := read32(env, ebp)
	if ok1 && ok2 {
		callerEIP, callerEBP, callerESP = eip, cebp, ebp+8
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
	f := &unwind.Frame{Context: last.Context, Trust: trust}
	f.Regs[EIP], f.Regs[ESP], f.Regs[EBP] = uint64(callerEIP), uint64(callerESP), uint64(callerEBP)
	f.Valid = 1<<EIP | 1<<ESP | 1<<EBP
	return f
}

// byWin follows Breakpad's GetCallerByWindowsFrameInfo, heuristics included.
func byWin(env unwind.Env, frames []*unwind.Frame, info *unwind.WinInfo, scanAllowed bool) *unwind.Frame {
	last := frames[len(frames)-1]
	last.Win = info
	if !info.ValidAll {
		return nil
	}
	var calleeParams uint32
	for i := len(frames) - 2; i >= 0; i-- {
		if w := frames[i].Win; w != nil {
			calleeParams = w.ParameterSize
		}
	}
	esp, ebp := uint32(last.Regs[ESP]), uint32(last.Regs[EBP])
	vars := map[string]uint32{
		"$ebp":            ebp,
		"$esp":            esp,
		".cbCalleeParams": calleeParams,
		".cbSavedRegs":    info.SavedRegisterSize,
		".cbLocals":       info.LocalSize,
		".cbParams":       info.ParameterSize,
	}
	if last.Has(EBX) {
		vars["$ebx"] = uint32(last.Regs[EBX])
	}
	raSearchStart := esp + calleeParams + info.LocalSize + info.SavedRegisterSize
	old := raSearchStart
	if loc, found, ok := scan(env, raSearchStart, 3); ok {
		raSearchStart = loc
		if last.Trust == unwind.TrustContext && info.Type == unwind.WinFPO &&
			old == raSearchStart && found == uint32(last.Regs[EIP]) {
			// An FPO system call whose callee returned but left the return
			// address on top of the stack: skip it and look again.
			raSearchStart += 4
			if loc, _, ok := scan(env, raSearchStart, 3); ok {
				raSearchStart = loc
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
			if last.Has(EBX) {
				program += " $ebx $ebx ="
			}
			recoverEBP = false
		}
	}
	// An alignment operator makes esp-based arithmetic unreliable: the saved
	// return address is then just above the frame pointer.
	if last.Has(EBP) && strings.Contains(program, "@") {
		raSearchStart = ebp + 4
	}
	vars[".raSearchStart"] = raSearchStart
	vars[".raSearch"] = raSearchStart
	out, err := env.EvalPostfix(program, vars, env)
	if out == nil {
		out = map[string]uint32{}
	}
	_, hasEIP := out["$eip"]
	_, hasESP := out["$esp"]
	if err != nil || !hasEIP || !hasESP {
		if !scanAllowed {
			return nil
		}
		loc, ip, ok := scan(env, esp, unwind.ScanWords(last.Trust))
		if !ok {
			return nil
		}
		out["$eip"], out["$esp"] = ip, loc+4
		trust = unwind.TrustScan
	}
	val := func(n string) uint32 {
		if v, ok := out[n]; ok {
			return v
		}
		return vars[n]
	}
	if out["$eip"] != 0 || val("$ebp") != 0 {
		var offset uint32
		eip := out["$eip"]
		if !env.InModule(uint64(eip)) {
			start := raSearchStart + 4
			if scanAllowed {
				if loc, ip, ok := scan(env, start, unwind.ScanWords(last.Trust)); ok {
					out["$eip"], out["$esp"] = ip, loc+4
					offset = loc - start
					trust = unwind.TrustCFIScan
				}
			}
		}
		if recoverEBP {
			// Look for the caller's ebp in the saved-register area, highest
			// address first, when the program's value is not a stack address
			// or frames may have been skipped.
			e := val("$ebp")
			skipped := trust != unwind.TrustCFI && e <= raSearchStart+offset
			if _, ok := read32(env, e); skipped || !ok {
				searchBytes := info.SavedRegisterSize + offset
				end := esp + calleeParams
				for l := end + searchBytes; l >= end; l -= 4 {
					v, ok := read32(env, l)
					if !ok {
						break
					}
					if _, ok := read32(env, v); ok {
						out["$ebp"] = v
						break
					}
					if l < 4 {
						break
					}
				}
			}
		}
	}
	f := &unwind.Frame{Context: last.Context, Trust: trust}
	f.Regs[EIP], f.Regs[ESP], f.Regs[EBP] = uint64(out["$eip"]), uint64(out["$esp"]), uint64(val("$ebp"))
	f.Valid = 1<<EIP | 1<<ESP | 1<<EBP
	for _, r := range []struct {
		name string
		slot int
	}{{"$ebx", EBX}, {"$esi", ESI}, {"$edi", EDI}} {
		if v, ok := out[r.name]; ok {
			f.Set(r.slot, uint64(v))
		}
	}
	return f
}
