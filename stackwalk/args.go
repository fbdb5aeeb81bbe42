package stackwalk

import (
	"encoding/binary"
	"fmt"
	"slices"
	"strings"

	"github.com/gobreakpad/gobreakpad/unwind"
)

// FunctionArgs are the arguments of an x86 frame's function as
// rust-minidump's --recover-function-args guesses them
// (minidump-processor/src/arg_recovery.rs): the function's name gives the
// number of arguments (its parameter list: a C++ name with one), each
// assumed pointer-sized and read from the stack between the caller's stack
// pointer and its caller's, in order.
type FunctionArgs struct {
	// Convention is rust-minidump's summary of the calling convention
	// assumed: "cdecl [static function]" for a name without "::",
	// "windows thiscall [C++ member function]" for one with.
	Convention string
	Args       []FunctionArg
}

// FunctionArg is one recovered argument; Known is false when the stack did
// not hold it.
type FunctionArg struct {
	Name  string
	Value uint64
	Known bool
}

// RecoverArgs returns the arguments of frame i of t, as rust-minidump
// recovers them: x86 frames with a function name holding a parameter list
// only. A member function's "this" is the frame's eax, as rust-minidump
// reads it.
func RecoverArgs(t *CallStack, i int) (FunctionArgs, bool) {
	var phys []*StackFrame // rust-minidump's frames: no inline frames
	at := -1
	for j, f := range t.Frames {
		if f.Trust == unwind.TrustInline {
			continue
		}
		if j == i {
			at = len(phys)
		}
		phys = append(phys, f)
	}
	if at < 0 || t.Memory == nil {
		return FunctionArgs{}, false
	}
	f := phys[at]
	if f.layout() == nil || !slices.Contains(f.layout().names, "eip") || f.Function == "" {
		return FunctionArgs{}, false
	}
	member, names, ok := parseX86ArgList(f.Function)
	if !ok {
		return FunctionArgs{}, false
	}
	r, ok := t.Memory.(interface{ Bounds() (lo, hi uint64) })
	if !ok {
		return FunctionArgs{}, false
	}
	_, base := r.Bounds()
	sp := func(k int) uint64 {
		if k < len(phys) {
			if v, ok := phys[k].StackPointer(); ok {
				return v
			}
			return 0
		}
		return base
	}
	head, end := sp(at+1), sp(at+2)
	pop := func() (uint64, bool) {
		if head >= end {
			return 0, false
		}
		b, err := t.Memory.ReadMemory(head, 4)
		head += 4
		if err != nil || len(b) != 4 {
			return 0, false
		}
		return uint64(binary.LittleEndian.Uint32(b)), true
	}
	out := FunctionArgs{Convention: "cdecl [static function]"}
	if member {
		out.Convention = "windows thiscall [C++ member function]"
		a := FunctionArg{Name: "this"}
		for _, reg := range f.Registers() {
			if reg.Name == "eax" {
				a.Value, a.Known = reg.Value, true
			}
		}
		out.Args = append(out.Args, a)
	}
	for _, n := range names {
		v, ok := pop()
		out.Args = append(out.Args, FunctionArg{Name: n, Value: v, Known: ok})
	}
	return out, true
}

// parseX86ArgList splits a function name's parameter list at its top-level
// commas, as rust-minidump's parse_x86_arg_list; member reports a "::" in
// the name before the list.
func parseX86ArgList(name string) (member bool, args []string, ok bool) {
	fn, list, found := strings.Cut(name, "(")
	if !found {
		return false, nil, false
	}
	i := strings.LastIndexByte(list, ')')
	if i < 0 {
		return false, nil, false
	}
	list = list[:i]
	start, tmpl, paren := 0, 0, 0
	for j := 0; j < len(list); j++ {
		switch list[j] {
		case '<':
			tmpl++
		case '>':
			if tmpl == 0 {
				return false, nil, false
			}
			tmpl--
		case '(':
			paren++
		case ')':
			if paren == 0 {
				return false, nil, false
			}
			paren--
		case ',':
			if tmpl == 0 && paren == 0 {
				args = append(args, strings.TrimSpace(list[start:j]))
				start = j + 1
			}
		}
	}
	args = append(args, strings.TrimSpace(list[start:]))
	if tmpl != 0 || paren != 0 {
		return false, nil, false
	}
	return strings.Contains(fn, "::"), args, true
}

// printArgs prints a frame's recovered arguments as rust-minidump's human
// report does, followed by an empty line.
func printArgs(b interface{ WriteString(string) (int, error) }, a FunctionArgs) {
	b.WriteString("    Arguments (assuming " + a.Convention + ")\n")
	for i, arg := range a.Args {
		if arg.Known {
			b.WriteString(fmt.Sprintf("        arg %d (%s) = 0x%08x\n", i, Escape(arg.Name), arg.Value))
		} else {
			b.WriteString(fmt.Sprintf("        arg %d (%s) = <unknown>\n", i, Escape(arg.Name)))
		}
	}
	b.WriteString("\n")
}
