package jsonout

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/gobreakpad/gobreakpad/stackwalk"
	"github.com/gobreakpad/gobreakpad/unwind"
)

// TestOverlappingModules checks that frames name the module rust-minidump
// finds, whatever the walk (Breakpad's rules) found: of overlapping modules
// the lowest base wins and the others are dropped whole, and the walk's
// symbols are kept only where both agree. The module list stays the dump's.
func TestOverlappingModules(t *testing.T) {
	const a, e = 0x7f0000000000, 0x7effffff0000
	app := &stackwalk.Module{Base: 0x400000, Size: 0x10000, CodeFile: "/bin/app"}
	libA := &stackwalk.Module{Base: a, Size: 0x30000, CodeFile: "/lib/libA.so"}
	libB := &stackwalk.Module{Base: a + 0x10000, Size: 0x10000, CodeFile: "/lib/libB.so"}
	libE := &stackwalk.Module{Base: e, Size: 0x20000, CodeFile: "/lib/libE.so"} // overlaps libA's start
	empty := &stackwalk.Module{Base: a + 0x40000, Size: 0, CodeFile: "/lib/empty.so"}
	top := &stackwalk.Module{Base: 0xffffffffffff0000, Size: 0x10000, CodeFile: "/lib/top.so"}
	st := &stackwalk.ProcessState{
		System:           stackwalk.SystemInfo{OS: "Linux", OSShort: "linux", CPU: "amd64", CPUCount: 1},
		RequestingThread: 0,
		MainModule:       0,
		Modules:          []*stackwalk.Module{app, libA, libB, libE, empty, top},
		Threads: []*stackwalk.CallStack{{
			ThreadID: 1,
			Frames: []*stackwalk.StackFrame{
				// Breakpad: libA (truncated below libB); rust-minidump: libE.
				{Instruction: a + 0x5000, Module: libA, Function: "fa", FunctionBase: a + 0x4000, Trust: unwind.TrustContext},
				{Instruction: a + 0x15000, Module: libB, Function: "fb", FunctionBase: a + 0x15000, Trust: unwind.TrustScan},
				// In libA's range above libB: in no module for either.
				{Instruction: a + 0x25000, Trust: unwind.TrustScan},
				{Instruction: 0xfffffffffffffff0, Module: top, Trust: unwind.TrustScan},
			},
		}},
	}
	var buf bytes.Buffer
	if err := Write(&buf, st, false); err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Modules []struct{ Filename string }
		Threads []struct {
			Frames []struct {
				Function       *string
				Module         *string
				ModuleOffset   *string `json:"module_offset"`
				MissingSymbols bool    `json:"missing_symbols"`
			}
		}
	}
	if err := json.Unmarshal(buf.Bytes(), &doc); err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, m := range doc.Modules {
		got = append(got, m.Filename)
	}
	if g := strings.Join(got, " "); g != "app libA.so libB.so libE.so empty.so top.so" {
		t.Errorf("modules %s", g)
	}
	got = nil
	s := func(p *string) string {
		if p == nil {
			return "-"
		}
		return *p
	}
	for _, f := range doc.Threads[0].Frames {
		got = append(got, fmt.Sprintf("%s+%s %s %v", s(f.Module), s(f.ModuleOffset), s(f.Function), f.MissingSymbols))
	}
	want := []string{
		"libE.so+0x0000000000015000 - true",
		"libB.so+0x0000000000005000 fb false",
		"-+- - true",
		"-+- - true", // rust-minidump's range of a module ending at 2^64 does not fit
	}
	if g, w := strings.Join(got, "\n"), strings.Join(want, "\n"); g != w {
		t.Errorf("frames:\n%s\nwant:\n%s", g, w)
	}
}
