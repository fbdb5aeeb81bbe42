package signature_test

import (
	"fmt"

	"github.com/gobreakpad/gobreakpad/stackwalk"
	"github.com/gobreakpad/gobreakpad/stackwalk/signature"
)

// A walked process (here built by hand; stackwalk.Process gives one from a
// dump) and its signature: the abort machinery is kept as prefix frames, the
// template arguments and parameters of the first frame that says something
// are dropped.
func ExampleOf() {
	libc := &stackwalk.Module{Base: 0x7f0000000000, Size: 0x200000, CodeFile: "/lib/x86_64-linux-gnu/libc.so.6"}
	app := &stackwalk.Module{Base: 0x400000, Size: 0x10000, CodeFile: "/usr/bin/app"}
	st := &stackwalk.ProcessState{
		System:           stackwalk.SystemInfo{OS: "Linux"},
		RequestingThread: 0,
		Threads: []*stackwalk.CallStack{{Frames: []*stackwalk.StackFrame{
			{Module: libc, Instruction: 0x7f0000045678, Function: "raise"},
			{Module: libc, Instruction: 0x7f0000021234, Function: "abort"},
			{Module: app, Instruction: 0x401234, Function: "Cache<std::string>::Get(std::string const&)", SourceFile: "/src/cache.h", SourceLine: 42},
			{Module: app, Instruction: 0x400abc, Function: "main", SourceFile: "/src/main.cc", SourceLine: 7},
		}}},
	}
	fmt.Println(signature.Of(st))
	// Output: raise | abort | Cache<T>::Get
}
