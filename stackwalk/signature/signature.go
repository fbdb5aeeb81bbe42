package signature

import (
	"fmt"
	"strings"
	"sync"
)

// MaxFrames is how many frames of the crashing thread signature generation
// looks at (Socorro's MAXIMUM_FRAMES_TO_CONSIDER).
const MaxFrames = 40

// MaxLength is the longest signature; longer ones are cut to MaxLength-3
// bytes and "..." (Socorro's SIGNATURE_MAX_LENGTH).
const MaxLength = 255

// smallOOM is the largest allocation whose failure is an "OOM | small"
// (256 KiB, as Socorro).
const smallOOM = 256 << 10

// Crash is what a signature is made from: the crashing thread's frames and
// what the crash report says beside them.
type Crash struct {
	// HasThread is false when the crash has no thread to sign: Frames are
	// then ignored and the signature is "EMPTY: no frame data available",
	// as Socorro's for a crash without threads. (A crash without a crashing
	// thread is signed by its thread 0, as Socorro does: FromProcess.)
	HasThread bool
	// Frames are the crashing thread's frames (or thread 0's), innermost
	// first.
	Frames []Frame
	// OS is Breakpad's operating system name; for "Windows NT" module names
	// are lowercased, as Socorro does.
	OS string
	// Reason is the crash type as rust-minidump names it (Socorro's
	// "reason"), e.g. "EXCEPTION_STACK_OVERFLOW", "STATUS_NO_MEMORY",
	// "SIGSEGV".
	Reason string
	// OOMAllocationSize is the size of the allocation that failed, when
	// HasOOMAllocationSize (a crash annotation; minidumps do not carry it).
	OOMAllocationSize    uint64
	HasOOMAllocationSize bool
	// LargeAllocationFailure marks a failed large allocation that was
	// reported (Mozilla's JSLargeAllocationFailure=Reporting annotation).
	LargeAllocationFailure bool
	// AbortMessage is the message of an application abort (Mozilla's
	// MOZ_CRASH reason annotation), or "".
	AbortMessage string
}

// Result is a generated signature and how it was made.
type Result struct {
	// Signature is the crash signature: normalized frames joined by " | ",
	// possibly behind markers such as "OOM | unknown" or "stackoverflow".
	Signature string
	// Frames are the normalized frames considered (Socorro's
	// "proto signature" when joined by " | ").
	Frames []string
	// Notes say what the rules did, for people debugging the lists.
	Notes []string
}

// Generator makes signatures from compiled lists. It is safe for concurrent
// use; its fields must not change once it is in use.
type Generator struct {
	// BareModules names a frame without symbols by its module alone
	// ("libfoo.so", as current Socorro does) instead of "libfoo.so@0x1a2b".
	BareModules bool

	irrelevant, prefix, lineNumbers, oom *matcher
	sentinels                            []string
}

// New compiles lists into a Generator.
func New(l *Lists) (*Generator, error) {
	if l == nil {
		l = DefaultLists()
	}
	g := &Generator{sentinels: append([]string(nil), l.Sentinels...)}
	var err error
	if g.irrelevant, err = newMatcher(compileStart(l.Irrelevant)); err != nil {
		return nil, fmt.Errorf("signature: %s: %w", IrrelevantList, err)
	}
	if g.prefix, err = newMatcher(compileStart(l.Prefix)); err != nil {
		return nil, fmt.Errorf("signature: %s: %w", PrefixList, err)
	}
	if g.lineNumbers, err = newMatcher(compileStart(l.LineNumbers)); err != nil {
		return nil, fmt.Errorf("signature: %s: %w", LineNumbersList, err)
	}
	if g.oom, err = newMatcher(compileAnywhere(l.OOM)); err != nil {
		return nil, fmt.Errorf("signature: %s: %w", OOMList, err)
	}
	return g, nil
}

var (
	defaultOnce sync.Once
	defaultGen  *Generator
)

// Default returns the Generator of the embedded lists.
func Default() *Generator {
	defaultOnce.Do(func() {
		g, err := New(DefaultLists())
		if err != nil {
			panic(fmt.Sprintf("signature: embedded lists: %v", err)) // a build error, not input
		}
		defaultGen = g
	})
	return defaultGen
}

// Extended returns the Generator of the embedded lists extended with the
// lists found in dir (Lists.LoadDir with extend), as the programs'
// --signature-lists DIR asks; for dir "", Default().
func Extended(dir string) (*Generator, error) {
	if dir == "" {
		return Default(), nil
	}
	l := DefaultLists()
	if err := l.LoadDir(dir, true); err != nil {
		return nil, err
	}
	return New(l)
}

// Generate makes the signature of a crash, following Socorro's rules:
// normalize the first MaxFrames frames; start at the first sentinel, if
// any; skip irrelevant frames; keep prefix frames and go on; stop after the
// first frame that is neither (repeats of one library without symbols count
// once). Then mark the crash: "bad hardware | ...", "OOM | ..." for
// out-of-memory crashes, "Abort | MESSAGE | ...", "stackoverflow | ..."; drop
// unprintable characters, tidy whitespace and cut to MaxLength.
func (g *Generator) Generate(c Crash) Result {
	var r Result
	windows := c.OS == "Windows NT"
	if c.HasThread {
		n := min(len(c.Frames), MaxFrames)
		for _, f := range c.Frames[:n] {
			f = fixRustModule(f)
			if windows {
				f.Module = strings.ToLower(f.Module)
			}
			r.Frames = append(r.Frames, g.normalizeFrame(f))
		}
	}
	sig, considered := g.fromFrames(&r)

	// The markers, in the order of Socorro's rules.
	if strings.Contains(c.Reason, "STATUS_DEVICE_DATA_ERROR") {
		sig = "bad hardware | " + sig
	}
	if g.isOOM(c, sig, considered) {
		switch {
		case c.LargeAllocationFailure:
			sig = "OOM | large | " + sig
		case !c.HasOOMAllocationSize:
			sig = "OOM | unknown | " + sig
		case c.OOMAllocationSize <= smallOOM:
			sig = "OOM | small"
		default:
			sig = "OOM | large | " + sig
		}
		r.Notes = append(r.Notes, "out-of-memory crash")
	}
	if c.AbortMessage != "" {
		sig = abortPrefix(c.AbortMessage) + sig
	}
	if c.Reason == "EXCEPTION_STACK_OVERFLOW" {
		sig = "stackoverflow | " + sig
	}
	r.Signature = tidy(sig)
	return r
}

// fromFrames runs the frame rules over r.Frames and returns the signature
// and the frames it looked at (those skipped included).
func (g *Generator) fromFrames(r *Result) (string, []string) {
	list := r.Frames
	start := -1
	for _, s := range g.sentinels {
		for i, f := range list {
			if f == s {
				if start < 0 || i < start {
					start = i
				}
				break
			}
		}
	}
	if start >= 0 {
		r.Notes = append(r.Notes, fmt.Sprintf("sentinel %q at frame %d", list[start], start))
		list = list[start:]
	}
	var sig []string
	used := 0
	for i, f := range list {
		used = i + 1
		if f == "" {
			continue
		}
		if g.irrelevant != nil && g.irrelevant.MatchString(f) {
			r.Notes = append(r.Notes, fmt.Sprintf("irrelevant: %q", f))
			continue
		}
		if mergeable(f) && len(sig) > 0 && sig[len(sig)-1] == f {
			continue
		}
		sig = append(sig, f)
		if g.prefix == nil || !g.prefix.MatchString(f) {
			break
		}
		r.Notes = append(r.Notes, fmt.Sprintf("prefix: %q", f))
	}
	if len(sig) > 0 {
		return strings.Join(sig, " | "), list[:used]
	}
	// Socorro's "EMPTY: no crashing thread identified" is not made: its
	// pipeline signs thread 0 when there is no crashing thread, so a crash
	// without frames there is "no frame data" (test_empty_dicts).
	if len(list) == 0 {
		r.Notes = append(r.Notes, "no frame data for the crashing thread")
		return "EMPTY: no frame data available", nil
	}
	// Every frame was irrelevant: the first one stands for the stack.
	r.Notes = append(r.Notes, "every frame irrelevant: using the first")
	return list[0], list
}

// mergeable tells frames of which consecutive repeats count once: libraries
// without symbols and placeholder names.
func mergeable(f string) bool {
	if strings.HasPrefix(f, "(unloaded") {
		return false
	}
	low := strings.ToLower(f)
	return strings.HasSuffix(low, ".dll") || strings.HasSuffix(low, ".so") || f == "XUL" ||
		f == "<name omitted>" || strings.HasPrefix(f, "<unknown in")
}

// isOOM tells out-of-memory crashes: a known allocation size, a reported
// large allocation failure, an out-of-memory fragment in the signature or in
// the frames skipped on the way to it, or an out-of-memory crash reason.
func (g *Generator) isOOM(c Crash, sig string, considered []string) bool {
	// A size of 0 marks nothing by itself: Socorro tests the size for truth.
	if (c.HasOOMAllocationSize && c.OOMAllocationSize > 0) || c.LargeAllocationFailure {
		return true
	}
	if g.oom != nil {
		if g.oom.MatchString(sig) {
			return true
		}
		for _, f := range considered {
			if g.oom.MatchString(f) {
				return true
			}
		}
	}
	return c.Reason == "STATUS_NO_MEMORY" || c.Reason == "STATUS_FATAL_MEMORY_EXHAUSTION"
}

// abortPrefix returns "Abort | MESSAGE | " for an abort message: the file
// and line part and Mozilla's "###!!! ABORT:" noise dropped, printable ASCII
// only, at most 80 characters.
func abortPrefix(msg string) string {
	if strings.Contains(msg, "###!!! ABORT: file ") {
		return "Abort | "
	}
	if _, after, ok := strings.Cut(msg, "###!!! ABORT:"); ok {
		msg = after
	}
	if before, _, ok := strings.Cut(msg, ": file "); ok {
		msg = before
	}
	if strings.Contains(msg, "unable to find a usable font") {
		if i := strings.Index(msg, "("); i >= 0 {
			if j := strings.LastIndex(msg, ")"); j > i {
				msg = msg[:i] + msg[j+1:]
			}
		}
	}
	msg = strings.TrimSpace(printable(msg))
	if len(msg) > 80 {
		msg = msg[:77] + "..."
	}
	return "Abort | " + msg + " | "
}

// printable keeps printable ASCII (space to '~').
func printable(s string) string {
	return strings.Map(func(r rune) rune {
		if r < ' ' || r > '~' {
			return -1
		}
		return r
	}, s)
}

// tidy applies Socorro's last rules: printable ASCII only (whitespace other
// than space is dropped with the rest), runs of spaces collapsed, ends
// trimmed, and at most MaxLength bytes.
func tidy(sig string) string {
	sig = strings.Join(strings.Fields(printable(strings.TrimSpace(sig))), " ")
	if len(sig) > MaxLength {
		sig = sig[:MaxLength-3] + "..."
	}
	return sig
}

// rustModuleFixes gives the full names of Rust 1.34's panic functions, whose
// symbols lacked their module path (Socorro bug 1544246), by source file and
// name.
var rustModuleFixes = map[[2]string]string{
	{"src/liballoc/raw_vec.rs", "capacity_overflow"}:       "alloc::raw_vec::capacity_overflow",
	{"src/libcore/option.rs", "expect_failed"}:             "core::option::expect_failed",
	{"src/libcore/panicking.rs", "panic_bounds_check"}:     "core::panicking::panic_bounds_check",
	{"src/libcore/panicking.rs", "panic_fmt"}:              "core::panicking::panic_fmt",
	{"src/libcore/panicking.rs", "panic"}:                  "core::panicking::panic",
	{"src/libcore/slice/mod.rs", "slice_index_order_fail"}: "core::slice::slice_index_order_fail",
	{"src/libstd/panicking.rs", "begin_panic_fmt"}:         "std::panicking::begin_panic_fmt",
	{"src/libstd/panicking.rs", "continue_panic_fmt"}:      "std::panicking::continue_panic_fmt",
	{"src/libstd/panicking.rs", "rust_panic_with_hook"}:    "std::panicking::rust_panic_with_hook",
}

// fixRustModule restores the module path of Rust 1.34's panic functions.
func fixRustModule(f Frame) Frame {
	if f.File == "" || f.Function == "" {
		return f
	}
	if full, ok := rustModuleFixes[[2]string{sourceFile(f.File), f.Function}]; ok {
		f.Function = full
	}
	return f
}
