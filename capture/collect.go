package capture

import (
	"cmp"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"

	"github.com/gobreakpad/gobreakpad/capture/procfs"
	"github.com/gobreakpad/gobreakpad/moduleid"
)

// memoryReader reads the captured process's memory.
type memoryReader interface {
	ReadMemory(addr uint64, n int) ([]byte, error)
}

// How much memory a capture keeps.
const (
	maxStack   = 256 << 10 // bytes of each thread's stack, from its stack pointer up
	redZone    = 128       // bytes below the stack pointer that leaf functions may use (x86-64 ABI)
	window     = 256       // bytes kept on either side of each program counter and the fault address
	pageSize   = 4096
	maxModules = 4096
	// maxMemory bounds the memory one capture keeps, whatever a hostile
	// core claims about its threads.
	maxMemory = 64 << 20
)

// span is an address range [start, end) to capture.
type span struct{ start, end uint64 }

// collectMemory reads each thread's stack, the windows around program
// counters and the fault address, and the vDSO's whole image into p.Memory, and sets each thread's
// Stack.
// p.Maps must be sorted by address.
func (p *Process) collectMemory(mem memoryReader) {
	var spans []span
	stacks := make([]span, len(p.Threads))
	clip := func(addr, below, above uint64) (span, bool) {
		i := procfs.Find(p.Maps, addr)
		if i < 0 || !p.Maps[i].Readable() {
			return span{}, false
		}
		m := p.Maps[i]
		s := span{m.Start, m.End}
		if addr-m.Start > below {
			s.start = addr - below
		}
		if m.End-addr > above {
			s.end = addr + above
		}
		return s, true
	}
	for i, t := range p.Threads {
		below := uint64(0)
		if t.SP >= redZone {
			below = t.SP - (t.SP-redZone)&^15
		}
		if s, ok := clip(t.SP, below, maxStack); ok {
			stacks[i] = s
			spans = append(spans, s)
			spans = append(spans, p.codeWindows(mem, t.SP, s.end, clip)...)
		} else {
			p.note("thread %d: stack pointer %#x is in no readable mapping; stack not captured", t.ID, t.SP)
		}
		if s, ok := clip(t.PC, window, window); ok {
			spans = append(spans, s)
		}
	}
	if p.Crash != nil && p.Crash.Address != 0 {
		if s, ok := clip(p.Crash.Address, window, window); ok {
			spans = append(spans, s)
		}
	}
	spans = append(spans, p.vdsoSpans()...)
	total := uint64(0)
	for _, s := range mergeSpans(spans) {
		if total += s.end - s.start; total > maxMemory {
			p.note("memory %#x-%#x left out: the capture already holds %d MiB", s.start, s.end, maxMemory>>20)
			continue
		}
		p.Memory = append(p.Memory, p.readSpan(mem, s)...)
	}
	for i, s := range stacks {
		if s.end > s.start {
			p.Threads[i].Stack = p.slice(s)
		}
	}
}

// How much code a capture keeps around the code addresses in each thread's
// stack: codeWindow bytes on either side of each of the first
// maxCodeWindows distinct such words within codeScan bytes of the stack
// pointer (a recursion's return address, repeated in every frame, takes
// one window).
const (
	codeWindow     = 16
	maxCodeWindows = 64
	codeScan       = 16 << 10
)

// codeWindows returns small windows around the words of the stack from sp
// (up to end) that point into executable mappings: return addresses and
// the signal trampoline a handler returns to. The walker reads call
// instructions and trampolines from them, which windows around program
// counters alone do not give.
func (p *Process) codeWindows(mem memoryReader, sp, end uint64, clip func(addr, below, above uint64) (span, bool)) []span {
	word := p.CPU.PointerSize()
	if word != 4 && word != 8 || end <= sp {
		return nil
	}
	b, err := mem.ReadMemory(sp, int(min(end-sp, codeScan)))
	if err != nil {
		return nil
	}
	var out []span
	seen := map[uint64]bool{}
	for o := 0; o+word <= len(b) && len(out) < maxCodeWindows; o += word {
		var v uint64
		if word == 4 {
			v = uint64(binary.LittleEndian.Uint32(b[o:]))
		} else {
			v = binary.LittleEndian.Uint64(b[o:])
		}
		if seen[v] {
			continue
		}
		i := procfs.Find(p.Maps, v)
		if i < 0 || !p.Maps[i].Executable() {
			continue
		}
		if s, ok := clip(v, codeWindow, codeWindow); ok {
			seen[v] = true
			out = append(out, s)
		}
	}
	return out
}

// mergeSpans sorts spans and joins those that overlap or touch.
func mergeSpans(spans []span) []span {
	slices.SortFunc(spans, func(a, b span) int { return cmp.Compare(a.start, b.start) })
	var out []span
	for _, s := range spans {
		if s.end <= s.start {
			continue
		}
		if n := len(out); n > 0 && s.start <= out[n-1].end {
			out[n-1].end = max(out[n-1].end, s.end)
			continue
		}
		out = append(out, s)
	}
	return out
}

// readSpan reads s, page by page when the whole cannot be read, keeping the
// readable pieces and noting the rest.
func (p *Process) readSpan(mem memoryReader, s span) []Region {
	if b, err := mem.ReadMemory(s.start, int(s.end-s.start)); err == nil {
		return []Region{{s.start, b}}
	}
	var out []Region
	var bad []span
	for a := s.start; a < s.end; {
		next := min((a+pageSize)&^(pageSize-1), s.end)
		if next <= a { // the last page of the address space
			next = s.end
		}
		b, err := mem.ReadMemory(a, int(next-a))
		switch {
		case err != nil:
			if n := len(bad); n > 0 && bad[n-1].end == a {
				bad[n-1].end = next
			} else {
				bad = append(bad, span{a, next})
			}
		case len(out) > 0 && out[len(out)-1].End() == a:
			out[len(out)-1].Data = append(out[len(out)-1].Data, b...)
		default:
			out = append(out, Region{a, b})
		}
		a = next
	}
	for _, b := range bad {
		p.note("memory %#x-%#x unreadable; left out", b.start, b.end)
	}
	return out
}

// slice returns the captured bytes of s from the first region of p.Memory
// that overlaps it (for a stack, the part around the stack pointer).
func (p *Process) slice(s span) Region {
	for _, r := range p.Memory {
		if r.End() <= s.start || r.Addr >= s.end {
			continue
		}
		lo, hi := max(r.Addr, s.start), min(r.End(), s.end)
		return Region{lo, r.Data[lo-r.Addr : hi-r.Addr]}
	}
	return Region{}
}

// fileOpener opens a module's file for reading its build ID when the loaded
// image does not hold it.
type fileOpener func(path string) (io.ReaderAt, io.Closer, error)

// openFile opens a regular file for reading a build ID (see openRegular).
func openFile(path string) (io.ReaderAt, io.Closer, error) {
	f, err := openRegular(path)
	if err != nil {
		return nil, nil, err
	}
	return f, f, nil
}

// openRegular opens a regular file, never a device or pipe, which a hostile
// core or mapping name could point at.
func openRegular(path string) (*os.File, error) {
	st, err := os.Stat(path)
	if err != nil {
		return nil, err
	}
	if !st.Mode().IsRegular() {
		return nil, fmt.Errorf("%s is not a regular file", path)
	}
	return os.Open(path)
}

// collectModules groups the file-backed mappings of p.Maps into modules, one
// per mapped ELF file with at least one executable mapping, and reads their
// build IDs from memory or, failing that, from the file.
func (p *Process) collectModules(mem memoryReader, open fileOpener) {
	type candidate struct {
		Module
		exec bool
	}
	var cands []candidate
	for _, m := range p.Maps {
		if !isModulePath(m.Path) {
			continue
		}
		if n := len(cands); n > 0 && cands[n-1].Path == m.Path && m.Offset != 0 && m.Start >= cands[n-1].Base+cands[n-1].Size {
			c := &cands[n-1]
			c.Size = m.End - c.Base
			c.exec = c.exec || m.Executable()
			continue
		}
		cands = append(cands, candidate{Module{Base: m.Start, Size: m.End - m.Start, Path: m.Path}, m.Executable()})
		if len(cands) > maxModules {
			p.note("more than %d file mappings; the rest are not listed as modules", maxModules)
			break
		}
	}
	for _, c := range cands {
		if !c.exec {
			continue
		}
		mod := c.Module
		id, err := moduleid.LoadedBuildID(&imageReader{mem, mod.Base, mod.Size})
		if err != nil && mod.Path != "[vdso]" {
			id, err = fileBuildID(mod.Path, open, err)
		}
		if err != nil {
			if errors.Is(err, errNotELF) {
				continue
			}
			p.note("module %s: no identifier: %v", mod.Path, err)
		}
		mod.BuildID = id
		if mod.Path == "[vdso]" {
			mod.Path = "linux-gate.so" // the name Breakpad gives the vDSO
		}
		p.Modules = append(p.Modules, mod)
	}
}

var errNotELF = errors.New("not an ELF file")

func fileBuildID(path string, open fileOpener, memErr error) ([]byte, error) {
	r, c, err := open(strings.TrimSuffix(path, " (deleted)"))
	if err != nil {
		return nil, fmt.Errorf("in memory: %v; on disk: %w", memErr, err)
	}
	defer c.Close()
	var magic [4]byte
	if _, err := r.ReadAt(magic[:], 0); err != nil || string(magic[:]) != "\x7fELF" {
		return nil, errNotELF
	}
	id, err := moduleid.BuildID(r)
	if err != nil {
		return nil, fmt.Errorf("in memory: %v; on disk: %w", memErr, err)
	}
	return id, nil
}

// isModulePath reports whether a mapping's path names something that can be
// a module: a file, or the vDSO.
func isModulePath(path string) bool {
	return strings.HasPrefix(path, "/") && !strings.HasPrefix(path, "/dev/") && !strings.HasPrefix(path, "/memfd:") || path == "[vdso]"
}

// imageReader reads a module's loaded image as an io.ReaderAt whose offset 0
// is the module's base address.
type imageReader struct {
	mem        memoryReader
	base, size uint64
}

func (r *imageReader) ReadAt(b []byte, off int64) (int, error) {
	if off < 0 || uint64(off) >= r.size || uint64(len(b)) > r.size-uint64(off) {
		return 0, io.EOF
	}
	data, err := r.mem.ReadMemory(r.base+uint64(off), len(b))
	if err != nil {
		return 0, err
	}
	return copy(b, data), nil
}

func (p *Process) note(format string, args ...any) {
	p.Notes = append(p.Notes, fmt.Sprintf(format, args...))
}
