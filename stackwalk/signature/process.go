package signature

import (
	"github.com/gobreakpad/gobreakpad/minidump"
	"github.com/gobreakpad/gobreakpad/stackwalk"
	"github.com/gobreakpad/gobreakpad/symstore"
)

// windowsReasons are the Windows exception codes the marking rules look
// for, by the name rust-minidump gives them (Breakpad's CrashReason differs
// for some).
var windowsReasons = map[uint32]string{
	0xc00000fd: "EXCEPTION_STACK_OVERFLOW",
	0xc0000017: "STATUS_NO_MEMORY",
	0xc00001ad: "STATUS_FATAL_MEMORY_EXHAUSTION",
	0xc000009c: "STATUS_DEVICE_DATA_ERROR",
}

// FromProcess returns what signature generation needs of a walked process:
// the requesting thread's frames (inline frames included), the crash
// reason and what the dump's annotations (st.Annotations) say (Annotate).
// A dump without a crashing or requesting thread is signed by its thread 0,
// as Socorro does (its get_crashing_thread reads a null crashing_thread
// as 0).
func FromProcess(st *stackwalk.ProcessState) Crash {
	c := Crash{OS: st.System.OS, Reason: reason(st)}
	c.Annotate(st.Annotations)
	i := max(st.RequestingThread, 0) // an index past the threads has no frames, as in Socorro
	if i >= len(st.Threads) || st.Threads[i] == nil {
		return c
	}
	c.HasThread = true
	frames := st.Threads[i].Frames
	for _, sf := range frames[:min(len(frames), MaxFrames)] {
		if sf == nil {
			continue
		}
		f := Frame{
			// A name is read as printed: at most stackwalk.MaxPrintedName bytes
			// (a 16 MiB name took 71 s and 2.1 GB through the lists'
			// regular expressions and the normalization's copies; the
			// signature keeps 255 bytes).
			Function: stackwalk.Cap(sf.Function),
			File:     sf.SourceFile,
			Line:     sf.SourceLine,
			Offset:   sf.Instruction,
		}
		if m := sf.Module; m != nil {
			f.Module = symstore.BaseName(m.CodeFile)
			f.ModuleOffset = sf.Instruction - m.Base
		} else {
			f.Unloaded = unloadedAt(st.UnloadedModules, sf.Instruction)
		}
		c.Frames = append(c.Frames, f)
	}
	return c
}

// reason names the crash as rust-minidump's crash_info.type does for the
// cases the rules look at, else as Breakpad's crash reason.
func reason(st *stackwalk.ProcessState) string {
	if st.Crashed && minidump.PlatformID(st.System.PlatformID) == minidump.PlatformWin32NT {
		if r, ok := windowsReasons[st.ExceptionCode]; ok {
			return r
		}
	}
	return st.CrashReason
}

// unloadedAt names the first unloaded module covering addr, or "".
func unloadedAt(mods []*stackwalk.Module, addr uint64) string {
	for _, m := range mods {
		if m != nil && addr >= m.Base && addr-m.Base < m.Size {
			return symstore.BaseName(m.CodeFile)
		}
	}
	return ""
}

// Process returns the signature of a walked process, its dump's
// annotations taken into account (FromProcess).
func (g *Generator) Process(st *stackwalk.ProcessState) Result {
	if st == nil {
		return g.Generate(Crash{})
	}
	return g.Generate(FromProcess(st))
}

// Of returns the signature of a walked process with the default lists.
func Of(st *stackwalk.ProcessState) string {
	return Default().Process(st).Signature
}
