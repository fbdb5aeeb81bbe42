//go:build linux

package hostile

import (
	"encoding/binary"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/gobreakpad/gobreakpad/arch"
	"github.com/gobreakpad/gobreakpad/arch/amd64"
	"github.com/gobreakpad/gobreakpad/arch/x86"
	"github.com/gobreakpad/gobreakpad/minidump"
	"github.com/gobreakpad/gobreakpad/minidump/synth"
)

// listDump writes an amd64 Linux dump (system info only) with one more
// stream of raw bytes, and returns its path.
func listDump(t *testing.T, name string, typ minidump.StreamType, raw []byte) string {
	t.Helper()
	w := minidump.NewWriter()
	w.SystemInfo(&minidump.SystemInfo{ProcessorArchitecture: minidump.ArchAMD64, PlatformID: minidump.PlatformLinux, NumberOfProcessors: 1})
	w.Stream(typ, raw)
	b, err := w.Bytes()
	if err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(p, b, 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// le builds little-endian fields: uint16, uint32 and uint64 values.
func le(fields ...any) []byte {
	var b []byte
	for _, f := range fields {
		switch v := f.(type) {
		case uint16:
			b = binary.LittleEndian.AppendUint16(b, v)
		case uint32:
			b = binary.LittleEndian.AppendUint32(b, v)
		case uint64:
			b = binary.LittleEndian.AppendUint64(b, v)
		default:
			panic(fmt.Sprintf("le: %T", f))
		}
	}
	return b
}

// TestGeneratedListCounts runs minidump_dump and minidump_stackwalk (human,
// -m, JSON) on dumps whose lists claim huge counts (and zero-sized entries
// with huge counts, for the lists that declare their entry size): every list
// is bounded by its stream's bytes, so each run ends at once in little
// memory, with the damage said.
func TestGeneratedListCounts(t *testing.T) {
	const max32, max64 = uint32(1<<32 - 1), uint64(1<<64 - 1)
	pad := make([]byte, 64) // a few bytes of entries, fewer than claimed
	for _, c := range []struct {
		name     string
		typ      minidump.StreamType
		raw      []byte
		walkErr  string // what minidump_stackwalk says ("": the walk does not read the stream)
		dumpExit int    // minidump_dump's exit status: 1 for the streams it prints
		dumpErr  string
	}{
		{"threads", minidump.ThreadListStream, le(max32), "thread list: count 4294967295 needs 206158430160 bytes, stream has 64 (no thread walked)", 1, "thread list: count 4294967295"},
		{"modules", minidump.ModuleListStream, le(max32), "module list: count 4294967295 needs 463856467860 bytes, stream has 64 (no module read)", 1, "module list: count 4294967295"},
		{"memory", minidump.MemoryListStream, le(max32), "", 1, "memory list: count 4294967295"},
		{"memory64", minidump.Memory64ListStream, le(max64, uint64(0)), "", 0, ""},
		{"memory64-half", minidump.Memory64ListStream, le(uint64(1)<<60, uint64(0)), "", 0, ""},
		{"memory-info", minidump.MemoryInfoListStream, le(uint32(16), uint32(48), max64), "", 1, "memory info list: count 18446744073709551615 of 48 bytes"},
		{"memory-info-entry-0", minidump.MemoryInfoListStream, le(uint32(16), uint32(0), max64), "", 1, "memory info list: size_of_entry 0, want at least 48"},
		{"memory-info-entry-huge", minidump.MemoryInfoListStream, le(uint32(16), max32, uint64(2)), "", 1, "memory info list: count 2 of 4294967295 bytes"},
		{"memory-info-header-huge", minidump.MemoryInfoListStream, le(max32, uint32(48), uint64(2)), "", 1, "memory info list: size_of_header 4294967295"},
		{"unloaded-modules", minidump.UnloadedModuleListStream, le(uint32(12), uint32(24), max32), "(no unloaded module read)", 0, ""},
		{"unloaded-modules-entry-0", minidump.UnloadedModuleListStream, le(uint32(12), uint32(0), max32), "(no unloaded module read)", 0, ""},
		{"thread-names", minidump.ThreadNamesStream, le(max32), "(no thread name read)", 0, ""},
		{"handles", minidump.HandleDataStream, le(uint32(16), uint32(40), max32, uint32(0)), "", 0, ""},
		{"handles-entry-0", minidump.HandleDataStream, le(uint32(16), uint32(0), max32, uint32(0)), "", 0, ""},
		{"thread-info", minidump.ThreadInfoListStream, le(uint32(12), uint32(64), max32), "", 0, ""},
		{"thread-info-entry-0", minidump.ThreadInfoListStream, le(uint32(12), uint32(0), max32), "", 0, ""},
		{"dso-debug", minidump.LinuxDSODebug, le(uint32(1), max32, uint64(0), uint64(0), uint64(0)), "", 0, ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel() // as TestCorpus's
			p := listDump(t, c.name+".dmp", c.typ, append(c.raw, pad...))
			var walkErr, dumpErr, soft []string
			if c.walkErr != "" {
				walkErr, soft = []string{c.walkErr}, []string{`{"ProcessingProblem":"`}
			}
			if c.dumpErr != "" {
				dumpErr = []string{c.dumpErr}
			}
			run{name: "minidump_stackwalk " + c.name, prog: "minidump_stackwalk", args: []string{p}, stderr: walkErr, stdout: []string{"Operating system: Linux"}}.do(t)
			run{name: "minidump_stackwalk -m " + c.name, prog: "minidump_stackwalk", args: []string{"-m", p}, stderr: walkErr, stdout: []string{"OS|Linux"}}.do(t)
			run{name: "minidump_stackwalk --json " + c.name, prog: "minidump_stackwalk", args: []string{"--json", p}, stderr: walkErr, stdout: soft}.do(t)
			run{name: "minidump_dump " + c.name, prog: "minidump_dump", args: []string{p}, exit: c.dumpExit, stderr: dumpErr, stdout: []string{"MDRawSystemInfo"}}.do(t)
		})
	}
}

// chainDump writes a Linux dump of threads whose stacks are nothing but
// frame-pointer links (each frame two words: the caller's frame pointer and
// a return address), each thread its own stack of stackBytes, and returns
// its path: the most frames a dump can justify per byte.
func chainDump(t *testing.T, name string, cpu arch.CPU, threads, stackBytes int) string {
	t.Helper()
	word := uint64(cpu.PointerSize())
	b := synth.New(cpu, minidump.PlatformLinux)
	for i := range threads {
		base := uint64(0x10000000 + i*0x01000000)
		st := synth.NewStack(base, int(word))
		for a := base; a+2*word <= base+uint64(stackBytes); a += 2 * word {
			st.Ptr(a + 2*word)
			st.Ptr(0x08048000 + a&0xffff)
		}
		switch cpu {
		case arch.X86:
			b.AddThread(uint32(i+1), synth.X86(&x86.Context{ContextFlags: x86.ContextFull, Eip: 0x08048010, Esp: uint32(base), Ebp: uint32(base)}), st)
		default:
			b.AddThread(uint32(i+1), synth.AMD64(&amd64.Context{ContextFlags: amd64.ContextFull, Rip: 0x08048010, Rsp: base, Rbp: base}), st)
		}
	}
	p := filepath.Join(t.TempDir(), name)
	if err := b.WriteFile(p); err != nil {
		t.Fatal(err)
	}
	return p
}

// TestFrameChains walks dumps made only of frame-pointer links up to the
// walk's cap of MaxTotalFrames (262,144 frames: 4 threads of 65,536): a
// 2 MiB x86 dump (a frame per 8 bytes) and a 4 MiB amd64 one (per 16).
// The walk keeps every frame until the report is written, about 165 bytes
// each: peak RSS within docs/hostile.md's bound with its frame term. Before
// (2026-11-26) the x86 dump peaked at 188 MB with -m and 382 MB with --json.
func TestFrameChains(t *testing.T) {
	const frames = 4 << 16
	for _, c := range []struct {
		cpu        arch.CPU
		stackBytes int
	}{{arch.X86, 512<<10 + 8}, {arch.AMD64, 1<<20 + 16}} {
		p := chainDump(t, c.cpu.String()+"-chains.dmp", c.cpu, 4, c.stackBytes)
		bound := memBound(t, 8, p) + frameBytes*frames
		for _, mode := range []string{"-m", "--json"} {
			run{name: "minidump_stackwalk " + mode + " " + c.cpu.String() + " chains", prog: "minidump_stackwalk", args: []string{mode, p},
				stderr: []string{"4 threads cut at 65536 frames (MaxFrames)"}, maxOut: 128 << 20, maxRSS: bound}.do(t)
		}
	}
}
