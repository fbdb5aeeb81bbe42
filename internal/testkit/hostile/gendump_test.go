//go:build linux

package hostile

import (
	"encoding/binary"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/gobreakpad/gobreakpad/minidump"
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
