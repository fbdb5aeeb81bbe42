// Package golden keeps what a walk of a crash dump found, for regression
// tests of walks: a Record holds the dump's signature, crash reason and the
// crashing thread's frames (module, function, file, line, trust), written as
// a small tab-separated text file that diffs well, and Diff says how two
// records differ, frame by frame.
//
// For runs over many dumps (cmd/crashdiff, a crash server's regression
// checks): FromWalk makes the records of the dumps stackwalk/batch walks,
// Compare compares them with the golden files of a directory (Path names
// each; the golden files of dumps gone are reported missing) and Update
// writes them there; NewReport sums up a run (each dump's Status, the
// signatures with their counts), written as text or JSON.
//
// # Format
//
//	# crashdiff golden file (gobreakpad)
//	dump	breakpad/processor/linux_overflow.dmp
//	signature	gsignal | abort | overflow
//	reason	SIGABRT
//	address	0x3e800004ea0
//	thread	0
//	frame	0	libc-2.19.so	gsignal	/build/raise.c	56	context
//	frame	1	driver	+0x1f26			cfi
//
// One "key<TAB>value" line each for dump, signature, reason, address (only
// for a crash) and thread (the index of the crashing or dump-requesting
// thread; "-1" when none), or a single "error" line when the dump could not
// be walked; then one line per frame of that thread, innermost first:
// "frame", index, module (file name), function, source file, line (empty
// when unknown), trust (context, cfi, cfi_scan, frame_pointer, scan,
// prewalked, inline, leaf, none). A frame without a function has
// "+0xOFFSET" (its module offset) in the function column, or "0xADDRESS"
// outside every module. A frame outside the loaded modules but in the
// range of a module the process had unloaded (Breakpad's attribution, as
// the stackwalk outputs print it) has that module's file name followed by
// " (unloaded)" in the module column, and its offset from that module's
// base; records written before unloaded modules were recorded show such a
// frame as "0xADDRESS" without a module, and read as they did. Tabs,
// newlines and "%" inside values are written %09, %0A, %0D and %25 (and a
// loaded module's name ending in " (unloaded)" has that space written
// %20). Lines starting with "#" are comments.
package golden

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/gobreakpad/gobreakpad/stackwalk"
	"github.com/gobreakpad/gobreakpad/symstore"
	"github.com/gobreakpad/gobreakpad/unwind"
)

// Record is what a golden file keeps of one walked dump.
type Record struct {
	// Dump names the dump (cmd/crashdiff: its path as given, relative to
	// the working directory when inside it).
	Dump string
	// Error is why the dump could not be walked; the other fields are then
	// empty.
	Error string
	// Signature is the crash signature (stackwalk/signature).
	Signature string
	// Reason and Address are Breakpad's crash reason and address; Crashed
	// says whether the dump has an exception.
	Crashed bool
	Reason  string
	Address uint64
	// Thread is the index of the crashing (or dump-requesting) thread, or
	// -1.
	Thread int
	// Frames are that thread's frames, innermost first.
	Frames []Frame
}

// Frame is one frame of a Record.
type Frame struct {
	Module string
	// Unloaded says that Module is a module the process had unloaded
	// (stackwalk.StackFrame.UnloadedModule): the frame is outside every
	// loaded module.
	Unloaded bool
	Function string // "+0xOFFSET" (module offset) when the frame has no function
	File     string
	Line     int
	Trust    string
}

// unloadedSuffix follows an unloaded module's name in the module column.
const unloadedSuffix = " (unloaded)"

// FromProcess makes the Record of a walked process with its signature.
func FromProcess(dump string, st *stackwalk.ProcessState, sig string) *Record {
	r := &Record{Dump: dump, Signature: sig, Thread: -1}
	if st == nil {
		return r
	}
	r.Crashed, r.Reason, r.Address = st.Crashed, st.CrashReason, st.CrashAddress
	if st.RequestingThread < 0 || st.RequestingThread >= len(st.Threads) || st.Threads[st.RequestingThread] == nil {
		return r
	}
	r.Thread = st.RequestingThread
	for _, sf := range st.Threads[st.RequestingThread].Frames {
		if sf == nil {
			continue
		}
		f := Frame{Function: sf.Function, File: sf.SourceFile, Line: sf.SourceLine, Trust: TrustName(sf.Trust)}
		m := sf.Module
		if m == nil && sf.UnloadedModule != nil {
			m, f.Unloaded = sf.UnloadedModule, true
		}
		if m != nil {
			f.Module = symstore.BaseName(m.CodeFile)
			if f.Function == "" {
				f.Function = "+0x" + strconv.FormatUint(sf.Instruction-m.Base, 16)
			}
		} else if f.Function == "" {
			f.Function = "0x" + strconv.FormatUint(sf.Instruction, 16)
		}
		r.Frames = append(r.Frames, f)
	}
	return r
}

// TrustName is the short name of a frame trust used in golden files (as
// rust-minidump's JSON names them, plus inline, leaf and none).
func TrustName(t unwind.Trust) string {
	switch t {
	case unwind.TrustContext:
		return "context"
	case unwind.TrustPrewalked:
		return "prewalked"
	case unwind.TrustCFI:
		return "cfi"
	case unwind.TrustCFIScan:
		return "cfi_scan"
	case unwind.TrustFP:
		return "frame_pointer"
	case unwind.TrustScan:
		return "scan"
	case unwind.TrustInline:
		return "inline"
	case unwind.TrustLeaf:
		return "leaf"
	case unwind.TrustSignal:
		return "signal"
	case unwind.TrustCallSite:
		return "scan_call"
	case unwind.TrustTailCall:
		return "tail_call"
	case unwind.TrustPrologue:
		return "prologue"
	}
	return "none"
}

const header = "# crashdiff golden file (gobreakpad): see docs/signature.md\n"

// Marshal returns the record's text.
func (r *Record) Marshal() []byte {
	var b bytes.Buffer
	b.WriteString(header)
	kv := func(k, v string) { b.WriteString(k + "\t" + escape(v) + "\n") }
	kv("dump", r.Dump)
	if r.Error != "" {
		kv("error", r.Error)
		return b.Bytes()
	}
	kv("signature", r.Signature)
	if r.Crashed {
		kv("reason", r.Reason)
		kv("address", "0x"+strconv.FormatUint(r.Address, 16))
	}
	kv("thread", strconv.Itoa(r.Thread))
	for i, f := range r.Frames {
		line := ""
		if f.Line != 0 {
			line = strconv.Itoa(f.Line)
		}
		fmt.Fprintf(&b, "frame\t%d\t%s\t%s\t%s\t%s\t%s\n", i, moduleColumn(f), escape(f.Function), escape(f.File), line, escape(f.Trust))
	}
	return b.Bytes()
}

// Parse reads a record written by Marshal; name is used in errors.
func Parse(rd io.Reader, name string) (*Record, error) {
	r := &Record{Thread: -1}
	sc := bufio.NewScanner(rd)
	sc.Buffer(make([]byte, 64<<10), 16<<20)
	seenDump := false
	for n := 1; sc.Scan(); n++ {
		line := sc.Text()
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		fields := strings.Split(line, "\t")
		bad := func(why string) error { return fmt.Errorf("%s:%d: %s", name, n, why) }
		if fields[0] == "frame" {
			if len(fields) != 7 {
				return nil, bad(fmt.Sprintf("a frame line has 7 fields, not %d", len(fields)))
			}
			f := Frame{Function: unescape(fields[3]), File: unescape(fields[4]), Trust: unescape(fields[6])}
			f.Module, f.Unloaded = parseModule(fields[2])
			if fields[5] != "" {
				v, err := strconv.Atoi(fields[5])
				if err != nil {
					return nil, bad("bad line number " + strconv.Quote(fields[5]))
				}
				f.Line = v
			}
			r.Frames = append(r.Frames, f)
			continue
		}
		if len(fields) != 2 {
			return nil, bad("want KEY<TAB>VALUE")
		}
		v := unescape(fields[1])
		switch fields[0] {
		case "dump":
			r.Dump, seenDump = v, true
		case "error":
			r.Error = v
		case "signature":
			r.Signature = v
		case "reason":
			r.Reason, r.Crashed = v, true
		case "address":
			a, err := strconv.ParseUint(strings.TrimPrefix(v, "0x"), 16, 64)
			if err != nil {
				return nil, bad("bad address " + strconv.Quote(v))
			}
			r.Address, r.Crashed = a, true
		case "thread":
			t, err := strconv.Atoi(v)
			if err != nil {
				return nil, bad("bad thread " + strconv.Quote(v))
			}
			r.Thread = t
		default:
			return nil, bad("unknown key " + strconv.Quote(fields[0]))
		}
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	if !seenDump {
		return nil, fmt.Errorf("%s: not a golden file (no dump line)", name)
	}
	return r, nil
}

// moduleColumn is a frame's module as written: an unloaded module's name
// with unloadedSuffix, a loaded module's with the space of such a suffix
// written %20.
func moduleColumn(f Frame) string {
	m := escape(f.Module)
	if f.Unloaded {
		return m + unloadedSuffix
	}
	if s, ok := strings.CutSuffix(m, unloadedSuffix); ok {
		return s + "%20" + unloadedSuffix[1:]
	}
	return m
}

// parseModule reads a module column: the module and whether it was
// unloaded.
func parseModule(col string) (string, bool) {
	if s, ok := strings.CutSuffix(col, unloadedSuffix); ok {
		return unescape(s), true
	}
	return unescape(col), false
}

var (
	escaper = strings.NewReplacer("%", "%25", "\t", "%09", "\n", "%0A", "\r", "%0D")
	// unescaper also reads %20, which only a module column has (a literal
	// "%20" is written "%2520").
	unescaper = strings.NewReplacer("%25", "%", "%09", "\t", "%0A", "\n", "%0D", "\r", "%20", " ")
)

func escape(s string) string   { return escaper.Replace(s) }
func unescape(s string) string { return unescaper.Replace(s) }
