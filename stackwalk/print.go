package stackwalk

import (
	"bufio"
	"fmt"
	"io"
	"slices"
	"strconv"
	"sync/atomic"
	"unicode"

	"github.com/gobreakpad/gobreakpad/symbols"
	"github.com/gobreakpad/gobreakpad/symstore"
	"github.com/gobreakpad/gobreakpad/unwind"
)

// PrintOptions selects what Print writes.
type PrintOptions struct {
	// StackContents adds each frame's raw stack words and the return
	// addresses among them (Breakpad's -s).
	StackContents bool
	// RequestingThreadOnly prints only the crashed or dump-requesting
	// thread (Breakpad's -c).
	RequestingThreadOnly bool
	// Symbols resolves addresses found in stack contents; may be nil.
	Symbols symbols.Source
	// OnlyThread prints, after the requesting thread, only the thread of
	// index ThreadIndex (Breakpad's -t INDEX) and no module list; an index
	// out of range is an error, after the requesting thread.
	OnlyThread  bool
	ThreadIndex int
	// StackPointers prints, instead of each thread's frames, the words of
	// its stack from the stack pointer up that point into functions or into
	// the stack itself (Breakpad's -d); with StackContents, the other words
	// as hex and ASCII too.
	StackPointers bool
	// FunctionArgs adds, after each x86 frame whose function name has a
	// parameter list, the arguments rust-minidump's
	// --recover-function-args guesses (RecoverArgs), in its words.
	FunctionArgs bool
}

// baseName returns the last path element, accepting both / and \ as
// separators, as Breakpad's PathnameStripper does.
func baseName(p string) string {
	if len(p) > 4096 {
		// A long name (hostile: megabytes in a symbol file) is shared by
		// every frame in its function: its last element is found once.
		if c := lastBase.Load(); c != nil && c.in == p {
			return c.out
		}
	}
	out := symstore.BaseName(p)
	if len(p) > 4096 {
		lastBase.Store(&baseCache{p, out})
	}
	return out
}

// baseCache is baseName's last long input and result.
type baseCache struct{ in, out string }

var lastBase atomic.Pointer[baseCache]

// stripSeparator removes the machine-readable separator and newlines, as
// Breakpad does, then escapes what is left (see Escape).
func stripSeparator(s string) string { return escape(s, "|\n") }

// Print writes the human-readable report of Breakpad's minidump_stackwalk.
func Print(w io.Writer, p *ProcessState, opt PrintOptions) error {
	b := bufio.NewWriterSize(w, 64<<10)
	s := &p.System
	fmt.Fprintf(b, "Operating system: %s\n", Escape(s.OS))
	fmt.Fprintf(b, "                  %s\n", Escape(s.OSVersion))
	fmt.Fprintf(b, "CPU: %s\n", Escape(s.CPU))
	if s.CPUInfo != "" {
		fmt.Fprintf(b, "     %s\n", Escape(s.CPUInfo))
	}
	plural := "s"
	if s.CPUCount == 1 {
		plural = ""
	}
	fmt.Fprintf(b, "     %d CPU%s\n\n", s.CPUCount, plural)
	b.WriteString("GPU:")
	if s.GLVersion != "" || s.GLVendor != "" || s.GLRenderer != "" {
		fmt.Fprintf(b, " %s\n     %s\n     %s\n", Escape(s.GLVersion), Escape(s.GLVendor), Escape(s.GLRenderer))
	} else {
		b.WriteString(" UNKNOWN\n")
	}
	b.WriteString("\n")
	if p.Crashed {
		fmt.Fprintf(b, "Crash reason:  %s\n", Escape(p.CrashReason))
		fmt.Fprintf(b, "Crash address: 0x%x\n", p.CrashAddress)
		if len(p.CrashParameters) > 0 {
			b.WriteString("Crash parameters:\n")
			for _, v := range p.CrashParameters {
				fmt.Fprintf(b, "    value: 0x%016x  description: \n", v)
			}
		}
	} else {
		b.WriteString("No crash\n")
	}
	if p.Assertion != "" {
		fmt.Fprintf(b, "Assertion: %s\n", Escape(p.Assertion))
	}
	if up, ok := p.Uptime(); ok {
		fmt.Fprintf(b, "Process uptime: %d seconds\n", up)
	} else {
		b.WriteString("Process uptime: not available\n")
	}
	var sym *symbolizer
	if opt.StackContents || opt.StackPointers {
		sym = newSymbolizer(opt.Symbols, p.moduleMap())
		sym.quiet = true
	}
	req := p.RequestingThread
	if req >= 0 && req < len(p.Threads) {
		status := "crashed"
		if !p.Crashed {
			status = "requested dump, did not crash"
		}
		fmt.Fprintf(b, "\nThread %d (%s)\n", req, status)
		printThread(b, p, p.Threads[req], req, sym, opt)
	}
	if opt.OnlyThread {
		if opt.ThreadIndex < 0 || opt.ThreadIndex >= len(p.Threads) {
			if err := b.Flush(); err != nil {
				return err
			}
			return fmt.Errorf("thread index %d is out of range (the dump has %d threads)", opt.ThreadIndex, len(p.Threads))
		}
		fmt.Fprintf(b, "\nThread %d\n", opt.ThreadIndex)
		printThread(b, p, p.Threads[opt.ThreadIndex], opt.ThreadIndex, sym, opt)
		return b.Flush()
	}
	if !opt.RequestingThreadOnly {
		for i, t := range p.Threads {
			if i == req {
				continue
			}
			fmt.Fprintf(b, "\nThread %d\n", i)
			printThread(b, p, t, i, sym, opt)
		}
	}
	printModules(b, p)
	return b.Flush()
}

// printedModule is the module a frame is printed in: its module, else the
// unloaded module Breakpad attributes it to, else nil.
func printedModule(f *StackFrame) *Module {
	if f.Module != nil {
		return f.Module
	}
	return f.UnloadedModule
}

// frameLocation writes a frame's "module!function [file : line + off]" text.
func frameLocation(b *bufio.Writer, f *StackFrame) {
	addr := f.ReturnAddress()
	m := printedModule(f)
	if m == nil {
		fmt.Fprintf(b, "0x%x", addr)
		return
	}
	b.WriteString(Escape(baseName(m.CodeFile)))
	switch {
	case f.Function == "":
		fmt.Fprintf(b, " + 0x%x", addr-m.Base)
	case f.SourceFile != "":
		fmt.Fprintf(b, "!%s [%s : %d + 0x%x]", Escape(f.Function), Escape(baseName(f.SourceFile)), f.SourceLine, addr-f.SourceLineBase)
	default:
		fmt.Fprintf(b, "!%s + 0x%x", Escape(f.Function), addr-f.FunctionBase)
	}
}

// dumpedRange is stack memory whose words -d printed, with the thread
// printed with them.
type dumpedRange struct {
	lo, hi uint64
	thread int
}

// printThread prints a thread's frames, or its stack pointers.
func printThread(b *bufio.Writer, p *ProcessState, t *CallStack, index int, sym *symbolizer, opt PrintOptions) {
	if opt.StackPointers {
		printStackPointers(b, p, t, index, sym, opt.StackContents)
		return
	}
	if !opt.StackContents {
		sym = nil
	}
	printStack(b, t, sym, opt.FunctionArgs)
}

// wordLength is the size of a stack word for Breakpad's CPU names (0 when
// unknown), as its -d and -s outputs take it.
func wordLength(cpu string) int {
	switch cpu {
	case "x86", "arm", "riscv":
		return 4
	case "amd64", "arm64", "riscv64", "x86_64":
		return 8
	}
	return 0
}

// printStackPointers prints the words of a thread's stack, from the
// innermost physical frame's stack pointer up, that point into functions or
// into the stack (following chains of the latter), as Breakpad's
// DumpStackPointers does. Stack memory is printed once: a thread whose
// range to dump lies within a range printed for an earlier thread (threads
// sharing stack memory, seen only in hostile dumps) gets a line naming that
// thread instead of its words, so that the output is bounded by the dump's
// distinct stack bytes (4,096 threads over one 64 KiB stack printed 2 GB).
func printStackPointers(b *bufio.Writer, p *ProcessState, t *CallStack, index int, sym *symbolizer, contents bool) {
	if len(t.Frames) == 0 {
		b.WriteString(" <no frames>\n")
	}
	bounds, ok := t.Memory.(interface{ Bounds() (lo, hi uint64) })
	if t.Memory == nil || !ok {
		b.WriteString(" <no stack memory>\n")
		return
	}
	base, end := bounds.Bounds()
	var top *StackFrame
	for _, f := range t.Frames {
		top = f
		if f.Trust != unwind.TrustInline {
			break
		}
	}
	fmt.Fprintf(b, "stack begin:    0x%016x\n", base)
	fmt.Fprintf(b, "stack end:      0x%016x\n", end)
	word := wordLength(p.System.CPU)
	var begin uint64
	if top != nil {
		if sp, ok := top.StackPointer(); ok {
			begin = sp
		}
	}
	if begin == 0 {
		begin = base
	}
	fmt.Fprintf(b, "stack pointer:  0x%016x\n", begin)
	if word == 0 || begin == 0 || end == 0 {
		b.WriteString("\nUnable to identifiy stack range.\n")
		return
	}
	fmt.Fprintf(b, "\nStack range to dump: 0x%016x - 0x%016x\n", begin, end)
	b.WriteString("\nPossible instruction pointers:\n")
	chain := map[uint64]uint64{} // a pointer into the stack -> where it was found
	start := begin
	if start < base { // words below the stack cannot be read: skip them
		start += (base - begin + uint64(word) - 1) / uint64(word) * uint64(word)
	}
	for _, r := range sym.dumped {
		if start >= r.lo && end <= r.hi {
			fmt.Fprintf(b, " (shared stack memory: the words from 0x%016x to 0x%016x are printed with thread %d)\n\n", start, end, r.thread)
			return
		}
	}
	sym.dumped = append(sym.dumped, dumpedRange{start, end, index})
	for addr := start; addr < end; addr += uint64(word) {
		raw, err := t.Memory.ReadMemory(addr, word)
		if err != nil || len(raw) != word {
			continue
		}
		var v uint64
		for i := word - 1; i >= 0; i-- {
			v = v<<8 | uint64(raw[i])
		}
		if word == 4 {
			fmt.Fprintf(b, " *(0x%08x) = 0x%08x", uint32(addr), uint32(v))
		} else {
			fmt.Fprintf(b, " *(0x%016x) = 0x%016x", addr, v)
		}
		pf := &StackFrame{Instruction: v}
		sym.fill(pf, false)
		switch {
		case pf.Function != "":
			// Escaped and cut as every printed name (a 16 MiB name wrote
			// 4 GB: the stack holds many words pointing into it).
			fmt.Fprintf(b, " %s [%s : %d + 0x%x]\n", Escape(pf.Function), Escape(baseName(pf.SourceFile)), pf.SourceLine, v-pf.SourceLineBase)
		case v >= begin && v < end:
			b.WriteString(" -- stack_address")
			if from, ok := chain[addr]; ok {
				fmt.Fprintf(b, "  (part of a chain: 0x%016x --> 0x%016x)", from, addr)
			}
			chain[v] = addr
			b.WriteString("\n")
		default:
			if contents {
				text := make([]byte, 0, word)
				for _, c := range raw {
					fmt.Fprintf(b, " %02x", c)
					if c < 0x80 && unicode.IsPrint(rune(c)) {
						text = append(text, c)
					} else {
						text = append(text, '.')
					}
				}
				fmt.Fprintf(b, "  %s", text)
			}
			b.WriteString("\n")
		}
	}
	b.WriteString("\n")
}

// registerBytes is the width Breakpad prints a frame's registers in.
func registerBytes(f *StackFrame) int {
	if f.layout() == nil {
		return 0
	}
	return f.layout().registerBytes
}

// appendRegister appends a register as fmt's " %5s = 0x%0*x" with the
// given digits would, without fmt's interface conversions (an allocation
// each for a frame's dozen registers).
func appendRegister(dst []byte, r Register, digits int) []byte {
	dst = append(dst, ' ')
	for n := len(r.Name); n < 5; n++ {
		dst = append(dst, ' ')
	}
	dst = append(dst, r.Name...)
	dst = append(dst, " = 0x"...)
	var buf [16]byte
	h := strconv.AppendUint(buf[:0], r.Value, 16)
	for n := len(h); n < digits; n++ {
		dst = append(dst, '0')
	}
	return append(dst, h...)
}

// printStack prints a thread's frames; with sym set, also the stack
// contents between frames.
func printStack(b *bufio.Writer, t *CallStack, sym *symbolizer, args bool) {
	if len(t.Frames) == 0 {
		b.WriteString(" <no frames>\n")
	}
	// Made once for all frames: a frame's registers and each one's text
	// were a third of a 401-thread walk's allocations.
	regs := make([]Register, 0, 32)
	var cell []byte
	for i, f := range t.Frames {
		fmt.Fprintf(b, "%2d  ", i)
		frameLocation(b, f)
		b.WriteString("\n ")
		col := 0
		regs = f.appendRegisters(regs[:0])
		digits := 2 * registerBytes(f)
		for _, r := range regs {
			cell = appendRegister(cell[:0], r, digits)
			if col+len(cell) > 80 {
				col = 0
				b.WriteString("\n ")
			}
			b.Write(cell)
			col += len(cell)
		}
		fmt.Fprintf(b, "\n    Found by: %s\n", f.Trust)
		if args {
			if a, ok := RecoverArgs(t, i); ok {
				printArgs(b, a)
			}
		}
		if sym != nil && i+1 < len(t.Frames) {
			// A tail call frame has no stack of its own: the
			// contents run to the next frame that has.
			next := t.Frames[i+1]
			for j := i + 2; next.Trust == unwind.TrustTailCall && j < len(t.Frames); j++ {
				next = t.Frames[j]
			}
			printStackContents(b, f, next, t.Memory, sym)
		}
	}
}

// printStackContents dumps the stack between a frame and its caller, then
// the words in it that symbolize to functions.
func printStackContents(b *bufio.Writer, f, caller *StackFrame, mem StackMemory, sym *symbolizer) {
	word := 0
	if f.layout() != nil {
		word = f.layout().stackWordBytes
	}
	begin, ok1 := f.StackPointer()
	end, ok2 := caller.StackPointer()
	if word == 0 || !ok1 || !ok2 || begin == 0 || end == 0 || mem == nil {
		return
	}
	// Rows wholly outside the thread's stack would print blank; leave them
	// out so that a wild stack pointer cannot make the report huge.
	if r, ok := mem.(interface{ Bounds() (lo, hi uint64) }); ok {
		lo, hi := r.Bounds()
		if begin < lo {
			begin += (lo - begin) / 16 * 16
		}
		end = min(end, hi)
	}
	const indent = "    "
	fmt.Fprintf(b, "\n%sStack contents:", indent)
	for addr := begin; addr < end; {
		if word == 4 {
			fmt.Fprintf(b, "\n%s %08x", indent, uint32(addr))
		} else {
			fmt.Fprintf(b, "\n%s %016x", indent, addr)
		}
		// Every row is 16 bytes, the last one too, read past the caller's
		// stack pointer where the memory holds them, as current Breakpad's
		// PrintMemoryRowHexAndAscii prints them (since a37883d6, January
		// 2026; before, bytes from the caller's stack pointer on were
		// blank).
		var text [16]byte
		for i := 0; i < 16; i, addr = i+1, addr+1 {
			text[i] = ' '
			if v, err := mem.ReadMemory(addr, 1); err == nil && len(v) == 1 {
				fmt.Fprintf(b, " %02x", v[0])
				if v[0] < 0x80 && unicode.IsPrint(rune(v[0])) {
					text[i] = v[0]
				} else {
					text[i] = '.'
				}
				continue
			}
			b.WriteString("   ")
		}
		fmt.Fprintf(b, "  %s", text[:])
	}
	fmt.Fprintf(b, "\n%sPossible instruction pointers:\n", indent)
	for addr := begin; addr < end; addr += uint64(word) {
		var v uint64
		if raw, err := mem.ReadMemory(addr, word); err == nil && len(raw) == word {
			for i := word - 1; i >= 0; i-- {
				v = v<<8 | uint64(raw[i])
			}
		}
		// Breakpad names a word only from the symbols its resolver holds:
		// those of the modules the walk loaded (a frame's or a scan's).
		if m := sym.mods.at(v); m == nil || !m.SymbolsLoaded {
			continue
		}
		pf := &StackFrame{Instruction: v}
		inl := sym.fill(pf, true)
		for _, g := range append([]*StackFrame{pf}, inl...) {
			if g.Function == "" {
				continue
			}
			if word == 4 {
				fmt.Fprintf(b, "%s *(0x%08x) = 0x%08x", indent, uint32(addr), uint32(g.Instruction))
			} else {
				fmt.Fprintf(b, "%s *(0x%016x) = 0x%016x", indent, addr, g.Instruction)
			}
			fmt.Fprintf(b, " <%s> [%s : %d + 0x%x]\n", Escape(g.Function), Escape(baseName(g.SourceFile)), g.SourceLine, g.Instruction-g.SourceLineBase)
		}
	}
	b.WriteString("\n")
}

// mainBase returns the main module's base address, if there is one.
func (p *ProcessState) mainBase() (uint64, bool) {
	if p.MainModule < 0 || p.MainModule >= len(p.Modules) {
		return 0, false
	}
	return p.Modules[p.MainModule].Base, true
}

func printModules(b *bufio.Writer, p *ProcessState) {
	if p.Modules == nil || p.moduleMerge == mergeRefused {
		return // Breakpad has no module list
	}
	b.WriteString("\nLoaded modules:\n")
	main, hasMain := p.mainBase()
	// Breakpad matches flagged modules by debug file and identifier, so a
	// flag spreads to every module sharing them (such as empty ones).
	type ident struct{ file, id string }
	missing, corrupt := map[ident]bool{}, map[ident]bool{}
	// Unloaded modules (empty debug file and identifier) count too.
	for _, m := range slices.Concat(p.Modules, p.UnloadedModules) {
		if m.MissingSymbols {
			missing[ident{m.DebugFile, m.DebugID}] = true
		}
		if m.CorruptSymbols {
			corrupt[ident{m.DebugFile, m.DebugID}] = true
		}
	}
	for _, m := range p.ModulesByAddress() {
		version := m.Version
		if version == "" {
			version = "???"
		}
		mark := ""
		if hasMain && main != 0 && m.Base == main {
			mark = "  (main)"
		}
		issue := ""
		if id := (ident{m.DebugFile, m.DebugID}); missing[id] {
			issue = fmt.Sprintf("  (WARNING: No symbols, %s, %s)", Escape(baseName(m.DebugFile)), Escape(m.DebugID))
		} else if corrupt[id] {
			issue = fmt.Sprintf("  (WARNING: Corrupt symbols, %s, %s)", Escape(baseName(m.DebugFile)), Escape(m.DebugID))
		}
		fmt.Fprintf(b, "0x%08x - 0x%08x  %s  %s%s%s\n", m.Base, m.Base+m.Size-1, Escape(baseName(m.CodeFile)), Escape(version), mark, issue)
	}
}

// PrintMachineReadable writes Breakpad's pipe-delimited -m report.
func PrintMachineReadable(w io.Writer, p *ProcessState) error {
	b := bufio.NewWriterSize(w, 64<<10)
	s := &p.System
	fmt.Fprintf(b, "OS|%s|%s\n", stripSeparator(s.OS), stripSeparator(s.OSVersion))
	fmt.Fprintf(b, "CPU|%s|%s|%d\n", stripSeparator(s.CPU), stripSeparator(s.CPUInfo), s.CPUCount)
	fmt.Fprintf(b, "GPU|%s|%s|%s\n", stripSeparator(s.GLVersion), stripSeparator(s.GLVendor), stripSeparator(s.GLRenderer))
	b.WriteString("Crash|")
	switch {
	case p.Crashed:
		fmt.Fprintf(b, "%s|0x%x|", stripSeparator(p.CrashReason), p.CrashAddress)
	case p.Assertion != "":
		fmt.Fprintf(b, "%s||", stripSeparator(p.Assertion))
	default:
		b.WriteString("No crash||")
	}
	req := p.RequestingThread
	if req >= 0 {
		fmt.Fprintf(b, "%d\n", req)
	} else {
		b.WriteString("\n")
	}
	main, hasMain := p.mainBase()
	for _, m := range p.ModulesByAddress() {
		isMain := 0
		if hasMain && m.Base == main {
			isMain = 1
		}
		fmt.Fprintf(b, "Module|%s|%s|%s|%s|0x%08x|0x%08x|%d\n",
			stripSeparator(baseName(m.CodeFile)), stripSeparator(m.Version),
			stripSeparator(baseName(m.DebugFile)), stripSeparator(m.DebugID),
			m.Base, m.Base+m.Size-1, isMain)
	}
	b.WriteString("\n")
	if req >= 0 && req < len(p.Threads) {
		printStackMachineReadable(b, req, p.Threads[req])
	}
	for i, t := range p.Threads {
		if i != req {
			printStackMachineReadable(b, i, t)
		}
	}
	return b.Flush()
}

func printStackMachineReadable(b *bufio.Writer, n int, t *CallStack) {
	for i, f := range t.Frames {
		fmt.Fprintf(b, "%d|%d|", n, i)
		addr := f.ReturnAddress()
		switch m := printedModule(f); {
		case m == nil:
			fmt.Fprintf(b, "||||0x%x", addr)
		case f.Function == "":
			fmt.Fprintf(b, "%s||||0x%x", stripSeparator(baseName(m.CodeFile)), addr-m.Base)
		case f.SourceFile != "":
			fmt.Fprintf(b, "%s|%s|%s|%d|0x%x", stripSeparator(baseName(f.Module.CodeFile)),
				stripSeparator(f.Function), stripSeparator(f.SourceFile), f.SourceLine, addr-f.SourceLineBase)
		default:
			fmt.Fprintf(b, "%s|%s|||0x%x", stripSeparator(baseName(f.Module.CodeFile)),
				stripSeparator(f.Function), addr-f.FunctionBase)
		}
		b.WriteString("\n")
	}
}

// PrintBrief writes the requesting thread's frames without registers.
func PrintBrief(w io.Writer, p *ProcessState) error {
	b := bufio.NewWriter(w)
	req := p.RequestingThread
	if req < 0 || req >= len(p.Threads) {
		b.WriteString(" <no crashing or requesting dump thread identified>\n")
		return b.Flush()
	}
	status := "crashed"
	if !p.Crashed {
		status = "requested dump, did not crash"
	}
	fmt.Fprintf(b, "Thread %d (%s)\n", req, status)
	for i, f := range p.Threads[req].Frames {
		fmt.Fprintf(b, "%2d  ", i)
		frameLocation(b, f)
		b.WriteString("\n")
	}
	return b.Flush()
}
