// Package jsonout writes a walked process in rust-minidump's JSON schema, the
// output of `minidump-stackwalk --json` (Mozilla's Socorro schema; see
// docs/json.md for the fields and how each is filled).
//
// Use:
//
//	st, err := stackwalk.Process(dump, opts)
//	...
//	err = jsonout.Write(os.Stdout, st, pretty)
//
// Everything comes from the ProcessState: beside what Breakpad's output
// needs, stackwalk.Read keeps what rust-minidump prints: the raw system info
// and exception record for crash_info.type, the process id, the full thread
// list (Breakpad drops the thread that wrote the dump, rust-minidump lists it
// with no frames), thread names, /etc/lsb-release, the CPU microcode, the
// count of /proc/PID/maps lines of Linux dumps and Mozilla's soft-errors
// stream.
//
// Keys come out sorted, as serde_json prints rust-minidump's maps. Pretty
// output indents by two spaces as serde_json's pretty printer does; both forms
// end with a newline.
//
// Not produced (always null): rust-minidump's instruction analysis
// (crash_info.instruction, memory_accesses, possible_bit_flips,
// adjusted_address, instruction_pointer_update), Windows last_error_value,
// handles, proc_limits, mac_crash_info, mac_boot_args, certificate subjects and
// symbol URLs.
package jsonout

import (
	"bufio"
	"bytes"
	"crypto/rand"
	"encoding/json"
	"fmt"
	"io"
	"sort"
	"strconv"
	"strings"

	"github.com/gobreakpad/gobreakpad/stackwalk"
)

// Write writes st as rust-minidump's JSON to w, indented when pretty is set.
func Write(w io.Writer, st *stackwalk.ProcessState, pretty bool) error {
	return WriteWith(w, st, Options{Pretty: pretty})
}

// Options are WriteWith's choices beyond rust-minidump's report.
type Options struct {
	// Pretty indents the report.
	Pretty bool
	// Signature, when not empty, is written as a top-level "signature"
	// key (the crash signature of stackwalk/signature; not a key of
	// rust-minidump's schema, which leaves signatures to Socorro).
	Signature string
	// Evil is what rust-minidump's --evil-json reads from Socorro's raw
	// crash JSON (ReadEvil); nil: none.
	Evil *Evil
}

// Evil is what rust-minidump takes from the "evil JSON" Socorro passes with
// --evil-json (the raw crash's annotations, minidump-processor's evil.rs):
// the code-signing certificate of each module (annotation
// ModuleSignatureInfo: certificate subject → module names, an object or a
// string holding one) and the CPU microcode version (CPUMicrocodeVersion,
// "0x..."), used when the dump's /proc/cpuinfo has none.
type Evil struct {
	// CertSubjects maps a module's file name to its certificate subject.
	CertSubjects map[string]string
	// CPUMicrocodeVersion is the annotation's text ("0x..."), or empty.
	CPUMicrocodeVersion string
}

// ReadEvil reads Socorro's raw crash JSON from r as rust-minidump's
// --evil-json does. An annotation of the wrong shape is left out and named
// in the error returned with the rest (rust-minidump logs it and goes on);
// text that is not a JSON object fails.
func ReadEvil(r io.Reader) (*Evil, error) {
	var raw map[string]json.RawMessage
	if err := json.NewDecoder(r).Decode(&raw); err != nil {
		return nil, fmt.Errorf("evil json: not a JSON object: %w", err)
	}
	ev := &Evil{CertSubjects: map[string]string{}}
	var problem error
	if v, ok := raw["ModuleSignatureInfo"]; ok {
		var certs map[string][]string
		err := json.Unmarshal(v, &certs)
		if err != nil {
			var s string
			if json.Unmarshal(v, &s) == nil {
				err = json.Unmarshal([]byte(s), &certs)
			}
		}
		if err != nil {
			problem = fmt.Errorf("evil json: ModuleSignatureInfo: not an object of certificate subjects and module names")
		}
		// Go's map order is random, rust-minidump's HashMap too: a
		// module under two certificates gets either (sorted here, the
		// last subject wins, to be reproducible).
		subjects := make([]string, 0, len(certs))
		for c := range certs {
			subjects = append(subjects, c)
		}
		sort.Strings(subjects)
		for _, c := range subjects {
			for _, m := range certs[c] {
				ev.CertSubjects[m] = c
			}
		}
	}
	if v, ok := raw["CPUMicrocodeVersion"]; ok {
		_ = json.Unmarshal(v, &ev.CPUMicrocodeVersion) // not a string: none, as rust-minidump
	}
	return ev, problem
}

// apply adds what ev says to doc.
func (ev *Evil) apply(doc *document) {
	if ev == nil {
		return
	}
	if len(ev.CertSubjects) > 0 {
		doc.ModulesContainsCertInfo = true
		for i := range doc.Modules {
			if c, ok := ev.CertSubjects[doc.Modules[i].Filename]; ok {
				doc.Modules[i].CertSubject = &c
			}
		}
		for i := range doc.UnloadedModules {
			if c, ok := ev.CertSubjects[doc.UnloadedModules[i].Filename]; ok {
				doc.UnloadedModules[i].CertSubject = &c
			}
		}
	}
	if doc.SystemInfo.CPUMicrocodeVersion == nil {
		if h, ok := strings.CutPrefix(ev.CPUMicrocodeVersion, "0x"); ok {
			if n, err := strconv.ParseUint(h, 16, 64); err == nil {
				v := fmt.Sprintf("0x%x", n)
				doc.SystemInfo.CPUMicrocodeVersion = &v
			}
		}
	}
}

// WriteWith writes st as rust-minidump's JSON to w, with the choices of o.
func WriteWith(w io.Writer, st *stackwalk.ProcessState, o Options) error {
	pretty := o.Pretty
	if st == nil {
		return fmt.Errorf("json: no process state")
	}
	doc := build(st)
	if o.Signature != "" {
		doc.Signature = &o.Signature
	}
	o.Evil.apply(doc)
	// The document is encoded with a placeholder for each thread's frames,
	// then written with the frames encoded one at a time in their place:
	// encoding/json marshals a value whole before writing it, and the
	// frames are nearly all of a big report (33 MB for a 65,536-frame
	// walk). Nothing is written when the document fails to encode.
	nonce := make([]byte, 8)
	rand.Read(nonce)
	tag := fmt.Sprintf("gobreakpad-frames-%x-", nonce)
	var lists []*frameSlot
	slot := func(t *thread) {
		t.Frames.token = tag + strconv.Itoa(len(lists))
		lists = append(lists, &t.Frames)
	}
	for i := range doc.Threads {
		slot(&doc.Threads[i])
	}
	if doc.CrashingThread != nil {
		slot(doc.CrashingThread)
	}
	var skel bytes.Buffer
	enc := json.NewEncoder(&skel)
	// serde_json does not escape <, > and & the way encoding/json does by
	// default.
	enc.SetEscapeHTML(false)
	if pretty {
		enc.SetIndent("", "  ")
	}
	if err := enc.Encode(doc); err != nil {
		return fmt.Errorf("json: %w", err)
	}
	// A bytes.Buffer (the crash server's case) takes the pieces as they
	// come; anything else gets them in 64 KiB writes.
	var bw interface {
		io.Writer
		Flush() error
	}
	if bb, ok := w.(*bytes.Buffer); ok {
		bb.Grow(skel.Len() + skel.Len()/2)
		bw = bufferFlusher{bb}
	} else {
		bw = bufio.NewWriterSize(w, 64<<10)
	}
	rest := skel.Bytes()
	marker := []byte(`"` + tag)
	// One buffer for every thread's frames: a report of 4,096 threads
	// made 16 MB of them.
	var scratch slotScratch
	for {
		i := bytes.Index(rest, marker)
		if i < 0 {
			bw.Write(rest)
			break
		}
		bw.Write(rest[:i])
		end := bytes.IndexByte(rest[i+len(marker):], '"')
		n, err := strconv.Atoi(string(rest[i+len(marker) : i+len(marker)+end]))
		if err != nil || n >= len(lists) {
			return fmt.Errorf("json: bad frame placeholder")
		}
		// The indentation of the line holding the placeholder.
		line := rest[bytes.LastIndexByte(rest[:i], '\n')+1 : i]
		ind := line[:len(line)-len(bytes.TrimLeft(line, " "))]
		if err := lists[n].write(bw, pretty, string(ind), &scratch); err != nil {
			return fmt.Errorf("json: %w", err)
		}
		rest = rest[i+len(marker)+end+1:]
	}
	if err := bw.Flush(); err != nil {
		return fmt.Errorf("json: %w", err)
	}
	return nil
}

// bufferFlusher is a bytes.Buffer with the Flush of a bufio.Writer.
type bufferFlusher struct{ *bytes.Buffer }

func (bufferFlusher) Flush() error { return nil }

// frameSlot is a thread's frames: written by WriteWith one at a time in
// the place of a placeholder token, or marshaled whole without one. The
// frames of a walked thread are made as they are written, from cs.
type frameSlot struct {
	// list holds the frames of a slot made without a walked thread (nil:
	// null), when cs is nil.
	list []frame
	// cs, st and f make the frames of a walked thread.
	cs *stackwalk.CallStack
	st *stackwalk.ProcessState
	f  formatter
	// first, when set, are the registers of the first frame (the
	// top-level crashing_thread's, which shares cs with its thread).
	first registerMap
	token string
}

// each calls yield with each frame in turn, the first with first's
// registers.
func (s *frameSlot) each(yield func(i int, fr *frame) error) error {
	i := 0
	one := func(fr *frame) error {
		if i == 0 && s.first != nil {
			f0 := *fr
			f0.Registers = s.first
			fr = &f0
		}
		err := yield(i, fr)
		i++
		return err
	}
	if s.cs != nil {
		return s.f.frames(s.cs, s.st, one)
	}
	for k := range s.list {
		if err := one(&s.list[k]); err != nil {
			return err
		}
	}
	return nil
}

// empty says whether the slot has no frames (null or []).
func (s *frameSlot) empty() bool {
	if s.cs != nil {
		return firstPhysical(s.cs) == nil
	}
	return len(s.list) == 0
}

// MarshalJSON writes the token, or the whole list.
func (s frameSlot) MarshalJSON() ([]byte, error) {
	if s.token != "" {
		return json.Marshal(s.token)
	}
	var b bytes.Buffer
	err := s.write(&b, false, "", nil)
	return b.Bytes(), err
}

// slotScratch is what writing a slot's frames needs, kept from one slot to
// the next: the compact form's buffer, the pretty form's buffer and its
// encoders (one per indentation).
type slotScratch struct {
	compact []byte
	pretty  bytes.Buffer
	encs    map[string]*json.Encoder
}

// write writes the frames as the encoder would at an indentation of ind
// (pretty), or compact, made in sc's buffers (a new scratch when sc is
// nil).
func (s *frameSlot) write(w io.Writer, pretty bool, ind string, sc *slotScratch) error {
	if s.cs == nil && s.list == nil {
		_, err := io.WriteString(w, "null")
		return err
	}
	if s.empty() {
		_, err := io.WriteString(w, "[]")
		return err
	}
	if sc == nil {
		sc = &slotScratch{}
	}
	if !pretty {
		return s.writeCompact(w, sc)
	}
	b := &sc.pretty
	b.Reset()
	elem := ind + "  "
	enc := sc.encs[ind]
	if enc == nil {
		enc = json.NewEncoder(b)
		enc.SetEscapeHTML(false)
		enc.SetIndent(elem, "  ")
		if sc.encs == nil {
			sc.encs = map[string]*json.Encoder{}
		}
		sc.encs[ind] = enc
	}
	b.WriteString("[")
	nl := "\n" + elem
	err := s.each(func(i int, fr *frame) error {
		if i > 0 {
			b.WriteString(",")
		}
		b.WriteString(nl)
		if err := enc.Encode(fr); err != nil {
			return err
		}
		b.Truncate(b.Len() - 1) // the encoder's newline
		if b.Len() >= 32<<10 {
			if _, err := w.Write(b.Bytes()); err != nil {
				return err
			}
			b.Reset()
		}
		return nil
	})
	if err != nil {
		return err
	}
	b.WriteString("\n" + ind)
	b.WriteString("]")
	_, err = w.Write(b.Bytes())
	return err
}

// writeCompact writes the frames without indentation, each by appendFrame,
// in pieces of about 32 KiB, made in sc.compact.
func (s *frameSlot) writeCompact(w io.Writer, sc *slotScratch) error {
	b := sc.compact[:0]
	if cap(b) == 0 {
		b = make([]byte, 0, 4<<10)
	}
	defer func() { sc.compact = b[:0] }()
	b = append(b, '[')
	err := s.each(func(i int, fr *frame) error {
		if i > 0 {
			b = append(b, ',')
		}
		b = appendFrame(b, fr)
		if len(b) >= 32<<10 {
			if _, err := w.Write(b); err != nil {
				return err
			}
			b = b[:0]
		}
		return nil
	})
	if err != nil {
		return err
	}
	b = append(b, ']')
	_, err = w.Write(b)
	return err
}

// The document's types mirror rust-minidump's keys; fields are declared in
// sorted key order so encoding/json emits them as serde_json does. A nil
// pointer or slice prints as null.

type document struct {
	CrashInfo               crashInfo        `json:"crash_info"`
	CrashingThread          *thread          `json:"crashing_thread,omitempty"`
	Handles                 any              `json:"handles"`
	LinuxMemoryMapCount     *int             `json:"linux_memory_map_count"`
	LSBRelease              *lsbRelease      `json:"lsb_release"`
	MacBootArgs             *string          `json:"mac_boot_args"`
	MacCrashInfo            any              `json:"mac_crash_info"`
	MainModule              int              `json:"main_module"`
	Modules                 []module         `json:"modules"`
	ModulesContainsCertInfo bool             `json:"modules_contains_cert_info"`
	PID                     *uint32          `json:"pid"`
	ProcLimits              any              `json:"proc_limits"`
	ProcessUptime           *uint32          `json:"process_uptime"`
	Signature               *string          `json:"signature,omitempty"`
	SoftErrors              any              `json:"soft_errors"`
	Status                  string           `json:"status"`
	SystemInfo              systemInfo       `json:"system_info"`
	ThreadCount             int              `json:"thread_count"`
	Threads                 []thread         `json:"threads"`
	UnloadedModules         []unloadedModule `json:"unloaded_modules"`
}

type crashInfo struct {
	Address                  *string  `json:"address"`
	AdjustedAddress          any      `json:"adjusted_address"`
	Assertion                *string  `json:"assertion"`
	CrashInconsistencies     []string `json:"crash_inconsistencies"`
	CrashingThread           *int     `json:"crashing_thread"`
	Instruction              *string  `json:"instruction"`
	InstructionPointerUpdate any      `json:"instruction_pointer_update"`
	MemoryAccesses           any      `json:"memory_accesses"`
	PossibleBitFlips         any      `json:"possible_bit_flips"`
	Type                     *string  `json:"type"`
}

type lsbRelease struct {
	Codename    string `json:"codename"`
	Description string `json:"description"`
	ID          string `json:"id"`
	Release     string `json:"release"`
}

type module struct {
	BaseAddr       string  `json:"base_addr"`
	CertSubject    *string `json:"cert_subject"`
	CodeID         string  `json:"code_id"`
	CorruptSymbols bool    `json:"corrupt_symbols"`
	DebugFile      string  `json:"debug_file"`
	DebugID        string  `json:"debug_id"`
	EndAddr        string  `json:"end_addr"`
	Filename       string  `json:"filename"`
	LoadedSymbols  bool    `json:"loaded_symbols"`
	MissingSymbols bool    `json:"missing_symbols"`
	SymbolURL      *string `json:"symbol_url"`
	Version        *string `json:"version"`
}

type unloadedModule struct {
	BaseAddr    string  `json:"base_addr"`
	CertSubject *string `json:"cert_subject"`
	CodeID      string  `json:"code_id"`
	EndAddr     string  `json:"end_addr"`
	Filename    string  `json:"filename"`
}

type systemInfo struct {
	CPUArch             string  `json:"cpu_arch"`
	CPUCount            int     `json:"cpu_count"`
	CPUInfo             *string `json:"cpu_info"`
	CPUMicrocodeVersion *string `json:"cpu_microcode_version"`
	OS                  string  `json:"os"`
	OSVer               *string `json:"os_ver"`
}

type thread struct {
	FrameCount     int       `json:"frame_count"`
	Frames         frameSlot `json:"frames"`
	LastErrorValue *string   `json:"last_error_value"`
	ThreadID       uint32    `json:"thread_id"`
	ThreadName     *string   `json:"thread_name"`
	// ThreadsIndex is set on the top-level crashing_thread copy only.
	ThreadsIndex *int `json:"threads_index,omitempty"`
}

type frame struct {
	File            *string        `json:"file"`
	Frame           int            `json:"frame"`
	Function        *string        `json:"function"`
	FunctionOffset  *string        `json:"function_offset"`
	Inlines         []inline       `json:"inlines"`
	Line            *int           `json:"line"`
	MissingSymbols  bool           `json:"missing_symbols"`
	Module          *string        `json:"module"`
	ModuleOffset    *string        `json:"module_offset"`
	Offset          string         `json:"offset"`
	Registers       registerMap    `json:"registers,omitempty"`
	Trust           string         `json:"trust"`
	UnloadedModules []unloadedHits `json:"unloaded_modules"`
}

// registerMap prints its keys sorted, as encoding/json does for every map.
type registerMap map[string]string

type inline struct {
	File     *string `json:"file"`
	Function *string `json:"function"`
	Line     *int    `json:"line"`
}

// unloadedHits names an unloaded module that covered a frame's address, with
// the offsets into each of its load ranges that did.
type unloadedHits struct {
	Module  string   `json:"module"`
	Offsets []string `json:"offsets"`
}
