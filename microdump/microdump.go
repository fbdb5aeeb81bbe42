// Package microdump reads Breakpad microdumps: the crash reports that
// Breakpad's Android and Linux clients write to the system log instead of a
// file, one text record a line between
//
//	-----BEGIN BREAKPAD MICRODUMP-----
//	-----END BREAKPAD MICRODUMP-----
//
// Lines may carry a log prefix that names the google-breakpad tag, as
// logcat prints it ("W/google-breakpad( 3745): O A arm ..." or
// "02-23 15:49:14.700  1740  1739 F google-breakpad: O A ..."), which is what
// Breakpad's processor requires; a microdump whose BEGIN line has no such
// prefix is read from bare lines ("O A arm ..."). Only the first microdump of
// a log is read, as Breakpad does.
//
// The records (Breakpad's microdump_writer.cc):
//
//	V PRODUCT:VERSION             product and version
//	O OS ARCH NCPU HWARCH VERSION  OS (A Android, L Linux), CPU, CPU count (hex), hardware CPU, OS build text
//	P PROCESS                      process type
//	R SIGNO SIGNAME ADDRESS        the crash: signal number, name, fault address (hex)
//	G VERSION|VENDOR|RENDERER      GL strings, or UNKNOWN
//	H ...                          address-space summary (kept as text)
//	S 0 SP START SIZE              the stack: pointer, first address, length
//	S ADDRESS HEXBYTES             a chunk of stack memory, chunks contiguous
//	C HEXBYTES                     the raw CPU context of the crashing thread
//	M BASE OFFSET SIZE ID NAME     a loaded module and its Breakpad debug id
//
// The context is decoded by the ARCH of the O record: arm, arm64 (the current
// and the old Breakpad layout), x86, mips and mips64 with exactly the size of
// their minidump context, as Breakpad's processor requires, and x86_64, which
// Breakpad's processor does not know: its writer's line buffer cuts the
// 1232-byte amd64 context to 1022 bytes and a nibble, so an x86_64 context is
// accepted when it holds at least the integer registers (the first 256
// bytes) and the rest is zero.
//
// Parse never panics on malformed text; records it cannot use are skipped
// with a message in Microdump.Warnings. Everything it allocates is bounded by
// the input's size.
package microdump

import (
	"bytes"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/gobreakpad/gobreakpad/arch/amd64"
	"github.com/gobreakpad/gobreakpad/arch/arm"
	"github.com/gobreakpad/gobreakpad/arch/arm64"
	"github.com/gobreakpad/gobreakpad/arch/x86"
)

// Markers of a microdump's first and last lines, and the log tag of its lines.
const (
	Begin = "-----BEGIN BREAKPAD MICRODUMP-----"
	End   = "-----END BREAKPAD MICRODUMP-----"
	Tag   = "google-breakpad"
)

// ErrNotFound is returned by Parse when the text holds no microdump.
var ErrNotFound = errors.New("no microdump: no " + Begin + " line")

// Microdump is one parsed microdump.
type Microdump struct {
	// Product is the V record's text ("WebView:48.0.2564.106"), or empty.
	Product string
	// OS is the O record; OS.Arch selects the context's layout.
	OS OS
	// ProcessType is the P record's text, or empty.
	ProcessType string
	// Crash is the R record, or nil when the microdump has none.
	Crash *Crash
	// GPU holds the G record's strings; all empty when it was UNKNOWN or
	// missing.
	GPU GPU
	// AddressSpace is the H record's text, or empty.
	AddressSpace string
	// Stack is the stack memory of the crashing thread.
	Stack Stack
	// Context is the crashing thread's CPU context, or nil when the
	// microdump has no usable C record.
	Context *Context
	// Modules are the M records in their order.
	Modules []Module
	// Warnings name the records that were skipped and why.
	Warnings []string
	// Complete is true when the END line was found.
	Complete bool
}

// OS is the O record.
type OS struct {
	// ID is "A" (Android) or "L" (Linux).
	ID string
	// Arch is the CPU the crashed process ran as: "arm", "arm64", "x86",
	// "x86_64", "mips", "mips64".
	Arch string
	// CPUCount is the number of CPUs.
	CPUCount int
	// HWArch is the machine's CPU ("armv7l", "aarch64", "i686").
	HWArch string
	// Version is the rest of the record: the OS build text.
	Version string
}

// Name returns Breakpad's name for the OS ("Android", "Linux"), or empty.
func (o OS) Name() string {
	switch o.ID {
	case "A":
		return "Android"
	case "L":
		return "Linux"
	}
	return ""
}

// Short returns Breakpad's short name for the OS ("android", "linux"), or
// empty.
func (o OS) Short() string { return strings.ToLower(o.Name()) }

// Crash is the R record.
type Crash struct {
	// Signal is the signal number.
	Signal uint32
	// Reason is the signal's name ("SIGSEGV"), Breakpad's crash reason.
	Reason string
	// Address is the fault address.
	Address uint64
}

// GPU is the G record's GL strings.
type GPU struct {
	Version, Vendor, Renderer string
}

// Stack is the dumped stack: the S 0 header and the memory of the chunks.
type Stack struct {
	// SP, Start and Size are the header's stack pointer, first address and
	// length (informational: the memory is Base and Data).
	SP, Start, Size uint64
	// Base is the address of Data[0]; Data is the chunks' bytes.
	Base uint64
	Data []byte
}

// ReadMemory returns the n bytes at addr when they lie inside the stack.
func (s *Stack) ReadMemory(addr uint64, n int) ([]byte, error) {
	end := s.Base + uint64(len(s.Data))
	if n < 0 || addr < s.Base || addr-s.Base > uint64(len(s.Data)) || uint64(len(s.Data))-(addr-s.Base) < uint64(n) {
		return nil, fmt.Errorf("microdump stack: %d bytes at %#x outside %#x-%#x", n, addr, s.Base, end)
	}
	off := addr - s.Base
	return s.Data[off : off+uint64(n)], nil
}

// Module is an M record.
type Module struct {
	// Base is the load address, Offset the file offset of the mapping and
	// Size its length.
	Base, Offset, Size uint64
	// ID is the Breakpad debug identifier (33 hex digits for ELF).
	ID string
	// Name is the module's file name, also its debug file name.
	Name string
}

// Context is the crashing thread's CPU context; exactly one of the per-CPU
// pointers is set, as named by Arch.
type Context struct {
	// Arch is the O record's architecture the context was decoded for.
	Arch     string
	ARM      *arm.Context
	ARM64    *arm64.Context
	ARM64Old *arm64.OldContext // the original of ARM64 when the old layout was used
	X86      *x86.Context
	AMD64    *amd64.Context
	MIPS     *MIPSContext // mips and mips64
}

// amd64IntegerBytes is how much of an amd64 context must be present: up to
// and including Rip.
const amd64IntegerBytes = 256

// Parse reads the first microdump in text. It returns ErrNotFound when text
// has no BEGIN line. A microdump cut short (no END line) is read as far as
// it goes, with a warning.
func Parse(text []byte) (*Microdump, error) {
	var md *Microdump
	prefixed := false
	var stackNext uint64 // address the next stack chunk must start at
	haveStack := false
	for len(text) > 0 {
		var line []byte
		if i := bytes.IndexByte(text, '\n'); i >= 0 {
			line, text = text[:i], text[i+1:]
		} else {
			line, text = text, nil
		}
		line = bytes.TrimSuffix(line, []byte{'\r'})
		rec, tagged := record(line)
		if md == nil {
			if strings.TrimSpace(rec) == Begin {
				md = &Microdump{}
				prefixed = tagged
			}
			continue
		}
		if prefixed && !tagged {
			continue // another program's log line
		}
		if strings.TrimSpace(rec) == End {
			md.Complete = true
			break
		}
		key, rest, _ := strings.Cut(rec, " ")
		switch key {
		case "V":
			md.Product = rest
		case "O":
			md.parseOS(rest)
		case "P":
			md.ProcessType = rest
		case "R":
			md.parseCrash(rest)
		case "G":
			if rest != "UNKNOWN" {
				parts := strings.SplitN(rest, "|", 4)
				parts = append(parts, "", "", "")
				md.GPU = GPU{parts[0], parts[1], parts[2]}
			}
		case "H":
			md.AddressSpace = rest
		case "S":
			md.parseStack(rest, &stackNext, &haveStack)
		case "C":
			md.parseContext(rest)
		case "M":
			md.parseModule(rest)
		}
	}
	if md == nil {
		return nil, ErrNotFound
	}
	if !md.Complete {
		md.warn("no %s line: the microdump is cut short", End)
	}
	return md, nil
}

// record returns the record text of a log line: after the ": " that follows
// the google-breakpad tag when the line has one (tagged), else the whole line.
func record(line []byte) (rec string, tagged bool) {
	i := bytes.Index(line, []byte(Tag))
	if i < 0 {
		return string(line), false
	}
	rest := line[i+len(Tag):]
	j := bytes.Index(rest, []byte(": "))
	if j < 0 {
		return "", true
	}
	return string(rest[j+2:]), true
}

func (md *Microdump) warn(format string, args ...any) {
	if len(md.Warnings) < 100 {
		md.Warnings = append(md.Warnings, fmt.Sprintf(format, args...))
	}
}

// hexNumber parses a hexadecimal field, as Breakpad's HexStrToL does for a
// well-formed one.
func hexNumber(s string) (uint64, error) {
	return strconv.ParseUint(s, 16, 64)
}

// hexBytes decodes hex digits two at a time; a last odd digit makes a byte
// of its own, as Breakpad's ParseHexBuf reads it.
func hexBytes(s string) ([]byte, error) {
	out := make([]byte, 0, (len(s)+1)/2)
	for i := 0; i < len(s); i += 2 {
		j := min(i+2, len(s))
		v, err := strconv.ParseUint(s[i:j], 16, 8)
		if err != nil {
			return nil, fmt.Errorf("bad hex digits %q at %d", s[i:j], i)
		}
		out = append(out, byte(v))
	}
	return out, nil
}

func (md *Microdump) parseOS(rest string) {
	f := strings.Fields(rest)
	if len(f) < 4 {
		md.warn("O record: %d fields, want at least 4", len(f))
		if len(f) > 0 {
			md.OS.ID = f[0]
		}
		if len(f) > 1 {
			md.OS.Arch = f[1]
		}
		return
	}
	n, err := hexNumber(f[2])
	if err != nil {
		md.warn("O record: CPU count %q: %v", f[2], err)
	}
	md.OS = OS{ID: f[0], Arch: f[1], CPUCount: int(uint8(n)), HWArch: f[3]}
	// The version is the rest of the line after the hardware CPU, less the
	// one separating space.
	s := rest
	for range 4 {
		s = strings.TrimLeft(s, " \t")
		if i := strings.IndexAny(s, " \t"); i >= 0 {
			s = s[i:]
		} else {
			s = ""
		}
	}
	if s != "" {
		s = s[1:]
	}
	md.OS.Version = s
}

func (md *Microdump) parseCrash(rest string) {
	f := strings.Fields(rest)
	c := &Crash{}
	if len(f) > 0 {
		n, err := hexNumber(f[0])
		if err != nil {
			md.warn("R record: signal %q: %v", f[0], err)
		}
		c.Signal = uint32(n)
	}
	if len(f) > 1 {
		c.Reason = f[1]
	}
	if len(f) > 2 {
		a, err := hexNumber(f[2])
		if err != nil {
			md.warn("R record: address %q: %v", f[2], err)
		}
		c.Address = a
	}
	md.Crash = c
}

func (md *Microdump) parseStack(rest string, next *uint64, have *bool) {
	f := strings.Fields(rest)
	if len(f) > 0 && f[0] == "0" {
		if len(f) < 4 {
			md.warn("S 0 record: %d fields, want 4", len(f))
			return
		}
		var v [3]uint64
		for i := range v {
			var err error
			if v[i], err = hexNumber(f[i+1]); err != nil {
				md.warn("S 0 record: %q: %v", f[i+1], err)
				return
			}
		}
		md.Stack.SP, md.Stack.Start, md.Stack.Size = v[0], v[1], v[2]
		return
	}
	if len(f) < 2 {
		md.warn("S record: %d fields, want 2", len(f))
		return
	}
	addr, err := hexNumber(f[0])
	if err != nil {
		md.warn("S record: address %q: %v", f[0], err)
		return
	}
	data, err := hexBytes(f[1])
	if err != nil {
		md.warn("S record at %#x: %v", addr, err)
		return
	}
	if !*have {
		*have = true
		md.Stack.Base = addr
	} else if addr != *next {
		md.warn("S record at %#x: not contiguous with the stack so far (ends at %#x); dropped", addr, *next)
		return
	}
	md.Stack.Data = append(md.Stack.Data, data...)
	*next = md.Stack.Base + uint64(len(md.Stack.Data))
}

func (md *Microdump) parseModule(rest string) {
	f := strings.Fields(rest)
	if len(f) < 5 {
		md.warn("M record: %d fields, want 5", len(f))
		return
	}
	var v [3]uint64
	for i := range v {
		var err error
		if v[i], err = hexNumber(f[i]); err != nil {
			md.warn("M record %s: %q: %v", f[4], f[i], err)
			return
		}
	}
	md.Modules = append(md.Modules, Module{Base: v[0], Offset: v[1], Size: v[2], ID: f[3], Name: f[4]})
}

func (md *Microdump) parseContext(rest string) {
	raw, err := hexBytes(strings.TrimSpace(rest))
	if err != nil {
		md.warn("C record: %v", err)
		return
	}
	c, err := decodeContext(md.OS.Arch, raw)
	if err != nil {
		md.warn("C record: %v", err)
		return
	}
	md.Context = c
}

// decodeContext decodes a raw context for the O record's architecture.
func decodeContext(archName string, raw []byte) (*Context, error) {
	c := &Context{Arch: archName}
	size := func(want int) error {
		if len(raw) != want {
			return fmt.Errorf("malformed %s context: %d bytes instead of %d", archName, len(raw), want)
		}
		return nil
	}
	var err error
	switch archName {
	case "arm":
		if err = size(arm.ContextSize); err == nil {
			c.ARM, err = arm.DecodeContext(raw)
		}
	case "arm64":
		switch len(raw) {
		case arm64.OldContextSize:
			c.ARM64Old, err = arm64.DecodeOldContext(raw)
			if err == nil {
				c.ARM64 = c.ARM64Old.Upgrade()
			}
		default:
			if err = size(arm64.ContextSize); err == nil {
				c.ARM64, err = arm64.DecodeContext(raw)
			}
		}
	case "x86":
		if err = size(x86.ContextSize); err == nil {
			c.X86, err = x86.DecodeContext(raw)
		}
	case "x86_64":
		if len(raw) < amd64IntegerBytes || len(raw) > amd64.ContextSize {
			return nil, fmt.Errorf("malformed x86_64 context: %d bytes, want %d to %d", len(raw), amd64IntegerBytes, amd64.ContextSize)
		}
		full := make([]byte, amd64.ContextSize)
		copy(full, raw)
		c.AMD64, err = amd64.DecodeContext(full)
	case "mips", "mips64":
		if err = size(MIPSContextSize); err == nil {
			c.MIPS, err = decodeMIPS(raw)
		}
	case "":
		return nil, fmt.Errorf("no O record before the context names its CPU")
	default:
		return nil, fmt.Errorf("unsupported architecture %q", archName)
	}
	if err != nil {
		return nil, err
	}
	return c, nil
}
