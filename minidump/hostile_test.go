package minidump_test

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"runtime"
	"strings"
	"testing"

	"github.com/gobreakpad/gobreakpad/arch"
	"github.com/gobreakpad/gobreakpad/arch/amd64"
	"github.com/gobreakpad/gobreakpad/minidump"
	"github.com/gobreakpad/gobreakpad/minidump/synth"
)

// rawDump builds a file with the given streams, each given as its bytes
// (placed after the directory); patch may then edit the result.
func rawDump(streams map[minidump.StreamType][]byte) []byte {
	w := minidump.NewWriter()
	for _, t := range []minidump.StreamType{minidump.ThreadListStream, minidump.ModuleListStream,
		minidump.MemoryListStream, minidump.Memory64ListStream, minidump.ExceptionStream,
		minidump.SystemInfoStream, minidump.MiscInfoStream, minidump.MemoryInfoListStream,
		minidump.CrashpadInfoStream, minidump.ThreadNamesStream, minidump.HandleDataStream,
		minidump.UnloadedModuleListStream, minidump.ThreadInfoListStream, minidump.LinuxDSODebug} {
		if b, ok := streams[t]; ok {
			w.Stream(t, b)
		}
	}
	b, err := w.Bytes()
	if err != nil {
		panic(err)
	}
	return b
}

func le32s(v ...uint32) []byte {
	var b []byte
	for _, x := range v {
		b = binary.LittleEndian.AppendUint32(b, x)
	}
	return b
}

func TestHostileHeaders(t *testing.T) {
	good := rawDump(nil)
	bad := func(edit func([]byte) []byte) []byte { return edit(append([]byte(nil), good...)) }
	cases := map[string]struct {
		data []byte
		want string
	}{
		"empty":          {nil, "not a minidump: empty file"},
		"short":          {good[:20], "not a minidump: too short"},
		"signature":      {bad(func(b []byte) []byte { b[0] = 'X'; return b }), "signature"},
		"big-endian":     {bad(func(b []byte) []byte { copy(b, "PMDM"); return b }), "big-endian"},
		"version":        {bad(func(b []byte) []byte { b[4] = 0; return b }), "version"},
		"huge directory": {bad(func(b []byte) []byte { binary.LittleEndian.PutUint32(b[8:], 0xffffffff); return b }), "stream directory"},
		"directory past end": {bad(func(b []byte) []byte {
			binary.LittleEndian.PutUint32(b[8:], 1)
			binary.LittleEndian.PutUint32(b[12:], 0xfffffff0)
			return b
		}), "stream directory"},
	}
	for name, c := range cases {
		_, err := minidump.NewFileBytes(c.data)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: error %v, want one mentioning %q", name, err, c.want)
		}
		if _, err := minidump.NewFile(bytes.NewReader(c.data), int64(len(c.data))); err == nil {
			t.Errorf("%s: NewFile accepted it", name)
		}
	}
}

func TestHostileCounts(t *testing.T) {
	cases := []struct {
		name   string
		stream minidump.StreamType
		data   []byte
		call   func(*minidump.File) error
		want   string
	}{
		{"threads 2^32-1", minidump.ThreadListStream, le32s(0xffffffff, 0, 0), func(f *minidump.File) error { _, err := f.ThreadList(); return err }, "thread list: count 4294967295"},
		{"threads short", minidump.ThreadListStream, le32s(2, 0, 0), func(f *minidump.File) error { _, err := f.ThreadList(); return err }, "thread list: count 2"},
		{"threads empty", minidump.ThreadListStream, nil, func(f *minidump.File) error { _, err := f.ThreadList(); return err }, "thread list"},
		{"modules 2^32-1", minidump.ModuleListStream, le32s(0xffffffff), func(f *minidump.File) error { _, err := f.ModuleList(); return err }, "module list: count"},
		{"memory 2^32-1", minidump.MemoryListStream, le32s(0xffffffff), func(f *minidump.File) error { _, err := f.MemoryList(); return err }, "memory list: count"},
		{"memory64 2^64-1", minidump.Memory64ListStream, le32s(0xffffffff, 0xffffffff, 0, 0), func(f *minidump.File) error { _, err := f.Memory64List(); return err }, "memory64 list: count"},
		{"memory info 2^64-1", minidump.MemoryInfoListStream, le32s(16, 48, 0xffffffff, 0xffffffff), func(f *minidump.File) error { _, err := f.MemoryInfoList(); return err }, "memory info list: count"},
		{"memory info tiny entries", minidump.MemoryInfoListStream, le32s(16, 1, 1, 0), func(f *minidump.File) error { _, err := f.MemoryInfoList(); return err }, "size_of_entry"},
		{"thread names 2^32-1", minidump.ThreadNamesStream, le32s(0xffffffff), func(f *minidump.File) error { _, err := f.ThreadNames(); return err }, "thread name list: count"},
		{"handles 2^32-1", minidump.HandleDataStream, le32s(16, 32, 0xffffffff, 0), func(f *minidump.File) error { _, err := f.HandleData(); return err }, "handle data"},
		{"unloaded 2^32-1", minidump.UnloadedModuleListStream, le32s(12, 24, 0xffffffff), func(f *minidump.File) error { _, err := f.UnloadedModuleList(); return err }, "unloaded module list"},
		{"thread info 2^32-1", minidump.ThreadInfoListStream, le32s(12, 64, 0xffffffff), func(f *minidump.File) error { _, err := f.ThreadInfoList(); return err }, "thread info list"},
		// The module list location points at the stream itself (offset 0x20), whose
		// first word, the version, is then read as a count of 2^32-1 links.
		{"crashpad module links 2^32-1", minidump.CrashpadInfoStream, append(append(le32s(0xffffffff), make([]byte, 40)...), le32s(4, 0x20)...), func(f *minidump.File) error { _, err := f.CrashpadInfo(); return err }, "crashpad info: module list"},
		{"dso debug 2^32-1 maps", minidump.LinuxDSODebug, append(le32s(1, 0x20, 0xffffffff, 0), make([]byte, 24)...), func(f *minidump.File) error { _, err := f.LinuxDSODebug(); return err }, "link maps"},
		{"exception short", minidump.ExceptionStream, le32s(1, 2, 3), func(f *minidump.File) error { _, err := f.Exception(); return err }, "exception: 12 bytes"},
		{"misc info odd size", minidump.MiscInfoStream, le32s(28, 0, 0, 0, 0, 0, 0), func(f *minidump.File) error { _, err := f.MiscInfo(); return err }, "misc info: 28 bytes"},
	}
	for _, c := range cases {
		data := rawDump(map[minidump.StreamType][]byte{c.stream: c.data})
		f, err := minidump.NewFileBytes(data)
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		err = c.call(f)
		runtime.ReadMemStats(&after)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: error %v, want one containing %q", c.name, err, c.want)
		}
		// No list may allocate more than the file holds (plus slack for errors).
		if grew := after.TotalAlloc - before.TotalAlloc; grew > uint64(len(data))+64<<10 {
			t.Errorf("%s: allocated %d bytes for a %d-byte file", c.name, grew, len(data))
		}
	}
}

func TestHostileOffsets(t *testing.T) {
	b := synth.New(arch.AMD64, minidump.PlatformLinux)
	ctx := &amd64.Context{ContextFlags: amd64.ContextFull, Rip: 1}
	b.AddThread(1, synth.AMD64(ctx), synth.NewStack(0x1000, 8))
	b.AddELFModule("/a", 0x1000, 0x1000, []byte{1})
	data, err := b.Bytes()
	if err != nil {
		t.Fatal(err)
	}
	f, err := minidump.NewFileBytes(data)
	if err != nil {
		t.Fatal(err)
	}
	// Point the thread's context and the module's name past the end.
	threadStream, _ := f.Stream(minidump.ThreadListStream)
	modStream, _ := f.Stream(minidump.ModuleListStream)
	tOff := bytes.Index(data, threadStream)
	mOff := bytes.Index(data, modStream)
	bad := append([]byte(nil), data...)
	binary.LittleEndian.PutUint32(bad[tOff+4+44:], 0xfffffff0)       // context rva
	binary.LittleEndian.PutUint32(bad[mOff+4+20:], uint32(len(bad))) // module name rva
	f, err = minidump.NewFileBytes(bad)
	if err != nil {
		t.Fatal(err)
	}
	threads, err := f.ThreadList()
	if err != nil || len(threads) != 1 {
		t.Fatalf("thread list: %v", err)
	}
	if threads[0].Context != nil || threads[0].ContextErr == nil || !strings.Contains(threads[0].ContextErr.Error(), "past end of file") {
		t.Errorf("context past end: %v", threads[0].ContextErr)
	}
	if _, err := f.ModuleList(); err == nil || !strings.Contains(err.Error(), "module 0: name") {
		t.Errorf("module name past end: %v", err)
	}
	// One bad stream does not hide the others.
	if si, err := f.SystemInfo(); err != nil || si.CPU() != arch.AMD64 {
		t.Errorf("system info after bad streams: %v", err)
	}
	// A stream whose location is past the end names itself.
	cut := data[:len(data)-1]
	for i := range f.Directory {
		d := f.Directory[i]
		binary.LittleEndian.PutUint32(cut[f.Header.StreamDirectoryRva+uint32(12*i)+8:], 0xffffff00)
		_ = d
		break
	}
	if g, err := minidump.NewFileBytes(cut); err == nil {
		_, err := g.ThreadList()
		if err == nil || !strings.Contains(err.Error(), "thread list") {
			t.Errorf("stream past end: %v", err)
		}
	}
}

func TestOverlappingStreams(t *testing.T) {
	// Two directory entries pointing at the same bytes: each decodes on its own.
	w := minidump.NewWriter()
	l := w.Stream(minidump.ThreadListStream, le32s(0))
	data, _ := w.Bytes()
	// Add a second entry by rewriting the directory with a module list at the same place.
	hdr := data[:32]
	dir := binary.LittleEndian.Uint32(hdr[12:])
	data = append(data[:dir], le32s(uint32(minidump.ThreadListStream), l.DataSize, l.Rva, uint32(minidump.ModuleListStream), l.DataSize, l.Rva)...)
	binary.LittleEndian.PutUint32(data[8:], 2)
	f, err := minidump.NewFileBytes(data)
	if err != nil {
		t.Fatal(err)
	}
	if th, err := f.ThreadList(); err != nil || len(th) != 0 {
		t.Errorf("threads: %v %v", th, err)
	}
	if m, err := f.ModuleList(); err != nil || len(m) != 0 {
		t.Errorf("modules: %v %v", m, err)
	}
}

func TestDuplicateStreams(t *testing.T) {
	w := minidump.NewWriter()
	w.Stream(minidump.ThreadListStream, le32s(0))
	w.Stream(minidump.ThreadListStream, le32s(5))
	data, _ := w.Bytes()
	f, err := minidump.NewFileBytes(data)
	if err != nil {
		t.Fatal(err)
	}
	if d := f.DuplicateStreams(); len(d) != 1 || d[0] != minidump.ThreadListStream {
		t.Errorf("duplicates = %v", d)
	}
	if th, err := f.ThreadList(); err != nil || len(th) != 0 {
		t.Errorf("the first thread list should be used: %v %v", th, err)
	}
}

func TestMissingStream(t *testing.T) {
	f, err := minidump.NewFileBytes(rawDump(nil))
	if err != nil {
		t.Fatal(err)
	}
	_, err = f.ThreadList()
	if !errors.Is(err, minidump.ErrNoStream) {
		t.Errorf("missing thread list: %v", err)
	}
	m, err := f.Memory()
	if err != nil || m == nil || len(m.Regions()) != 0 {
		t.Errorf("memory of a dump without lists: %v %v", m, err)
	}
	if _, err := m.ReadMemory(0, 1); err == nil {
		t.Error("read from an empty memory succeeded")
	}
}

func TestMemoryEdges(t *testing.T) {
	w := minidump.NewWriter()
	w.AddMemory(0xfffffffffffffff0, bytes.Repeat([]byte{7}, 16)) // ends exactly at 2^64
	w.AddMemory(0x1000, []byte{1, 2, 3, 4})
	w.AddMemory(0x1002, []byte{9, 9, 9, 9}) // overlaps the previous one
	data, _ := w.Bytes()
	f, _ := minidump.NewFileBytes(data)
	m, err := f.Memory()
	if err != nil {
		t.Fatal(err)
	}
	if b, err := m.ReadMemory(0xfffffffffffffff8, 8); err != nil || b[0] != 7 {
		t.Errorf("top of address space: %v %v", b, err)
	}
	if _, err := m.ReadMemory(0xfffffffffffffff8, 9); err == nil {
		t.Error("read wrapping past 2^64 succeeded")
	}
	if b, err := m.ReadMemory(0x1003, 2); err != nil || b[0] != 9 {
		t.Errorf("overlap prefers the later start: %v %v", b, err)
	}
	if b, err := m.ReadMemory(0x1000, 2); err != nil || b[0] != 1 {
		t.Errorf("start of the first region: %v %v", b, err)
	}
	if _, err := m.ReadMemory(0x1000, -1); err == nil {
		t.Error("negative length accepted")
	}
	if b, err := m.ReadMemory(0x1001, 0); err != nil || len(b) != 0 {
		t.Errorf("zero-length read: %v %v", b, err)
	}
}

func TestStringRules(t *testing.T) {
	mk := func(units ...uint16) []byte {
		b := le32s(uint32(2 * len(units)))
		for _, u := range units {
			b = binary.LittleEndian.AppendUint16(b, u)
		}
		return b
	}
	cases := []struct {
		name string
		data []byte
		want string
		ok   bool
	}{
		{"ascii", mk('h', 'i'), "hi", true},
		{"pair", mk(0xd83d, 0xdc00), "\U0001f400", true},
		{"lone low", mk(0xdc00), "", false},
		{"lone high", mk('a', 0xd800), "", false},
		{"high then text", mk(0xd800, 'a'), "", false},
		{"dd00 passes as itself", mk(0xdd00), "\xed\xb4\x80", true},
		{"too long", mk(make([]uint16, 1025)...), "", false},
		{"odd length", append(le32s(3), 'a', 0, 'b'), "", false},
	}
	for _, c := range cases {
		w := minidump.NewWriter()
		l := w.Data(c.data)
		data, _ := w.Bytes()
		f, _ := minidump.NewFileBytes(data)
		got, err := f.String(l.Rva)
		if (err == nil) != c.ok || got != c.want {
			t.Errorf("%s: got %q, %v", c.name, got, err)
		}
	}
}

func TestParseMaps(t *testing.T) {
	text := "00400000-00452000 r-xp 00000000 08:02 173521      /usr/bin/dbus-daemon\n" +
		"7fff0000-7fff1000 rw-p 00000000 00:00 0\n" +
		"\n" +
		"bad line\n" +
		"7fffa000-7fffb000 r-xp 00000000 00:00 0          [vdso]\r\n"
	entries, err := minidump.ParseMaps([]byte(text))
	if err == nil || !strings.Contains(err.Error(), "line 4") {
		t.Errorf("error %v, want one naming line 4", err)
	}
	if len(entries) != 3 {
		t.Fatalf("got %d entries", len(entries))
	}
	e := entries[0]
	if e.Start != 0x400000 || e.End != 0x452000 || e.Perms != "r-xp" || e.Dev != "08:02" || e.Inode != 173521 || e.Path != "/usr/bin/dbus-daemon" {
		t.Errorf("entry 0 = %+v", e)
	}
	if entries[1].Path != "" || entries[2].Path != "[vdso]" {
		t.Errorf("paths %q %q", entries[1].Path, entries[2].Path)
	}
	if _, err := minidump.ParseMaps([]byte("2000-1000 r-xp 0 00:00 0\n")); err == nil {
		t.Error("end before start accepted")
	}
	if n, cerr := minidump.CountMaps([]byte(text)); n != 3 || fmt.Sprint(cerr) != fmt.Sprint(err) {
		t.Errorf("CountMaps = %d, %v; want 3, %v", n, cerr, err)
	}
	// The numbers are strconv.ParseUint's, errors included.
	for _, c := range []struct {
		line string
		ok   bool
	}{
		{"ABCDEF-abcdef0 r-xp 0 00:00 9", true},
		{"0-ffffffffffffffff r-xp ffffffffffffffff 00:00 18446744073709551615", true},
		{"0-10000000000000000 r-xp 0 00:00 0", false},
		{"0-1 r-xp 0 00:00 18446744073709551616", false},
		{"0x0-1 r-xp 0 00:00 0", false},
		{"+0-1 r-xp 0 00:00 0", false},
		{"0-1 r-xp 0 00:00 1_0", false},
		{"0-1 r-xp 0 00:00 a", false},
		{"-1 r-xp 0 00:00 0", false},
		{"0-1 r-xp  00:00", false},
	} {
		_, err := minidump.ParseMaps([]byte(c.line))
		if (err == nil) != c.ok {
			t.Errorf("%q: error %v, want ok %v", c.line, err, c.ok)
		}
		if !c.ok && err != nil && strings.Contains(c.line, "18446744073709551616") && !strings.Contains(err.Error(), "strconv.ParseUint: parsing \"18446744073709551616\": value out of range") {
			t.Errorf("%q: error %v is not strconv's", c.line, err)
		}
	}
}

// TestCountMapsAllocs checks that counting well-formed maps allocates nothing.
func TestCountMapsAllocs(t *testing.T) {
	text := []byte(strings.Repeat("7f0000000000-7f0000001000 r-xp 00001000 08:02 173521   /usr/lib/x86_64-linux-gnu/libc.so.6\n", 50))
	var n int
	if a := testing.AllocsPerRun(10, func() { n, _ = minidump.CountMaps(text) }); a != 0 || n != 50 {
		t.Errorf("CountMaps: %v allocations, %d entries; want 0 and 50", a, n)
	}
}

// holeReader fails reads that cover offset hole, delivering only the bytes
// before it, like a file that changed under the reader.
type holeReader struct {
	data []byte
	hole int64
}

func (r holeReader) ReadAt(p []byte, off int64) (int, error) {
	if off <= r.hole && r.hole < off+int64(len(p)) {
		return copy(p, r.data[off:r.hole]), io.EOF
	}
	return copy(p, r.data[off:]), nil
}

// A reader that delivers less than asked gives errors, not zero-filled data.
func TestShortReaderAt(t *testing.T) {
	w := minidump.NewWriter()
	d := w.AddMemory(0x1000, []byte("tail bytes"))
	data, err := w.Bytes()
	if err != nil {
		t.Fatal(err)
	}
	f, err := minidump.NewFile(holeReader{data, int64(d.Memory.Rva) + 4}, int64(len(data)))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.Location(d.Memory); !errors.Is(err, io.EOF) {
		t.Errorf("short read: %v", err)
	}
	if b, err := f.Location(minidump.LocationDescriptor{DataSize: 4, Rva: d.Memory.Rva}); err != nil || string(b) != "tail" {
		t.Errorf("read before the cut: %q %v", b, err)
	}
}

// Entries that all point at the same data must not decode into more memory
// than the file holds.
func TestHostileSharedData(t *testing.T) {
	const n = 200
	name := make([]uint16, 1024)
	for i := range name {
		name[i] = 'x'
	}
	str := le32s(2 * 1024)
	for _, u := range name {
		str = binary.LittleEndian.AppendUint16(str, u)
	}
	ctx := (&amd64.Context{ContextFlags: amd64.ContextFull}).Encode()

	cases := []struct {
		name  string
		build func(w *minidump.Writer)
		call  func(*minidump.File) error
	}{
		{"module names", func(w *minidump.Writer) {
			rva := w.Data(str).Rva
			b := le32s(n)
			for range n {
				e := make([]byte, 108)
				binary.LittleEndian.PutUint32(e[8:], 0x1000) // size_of_image
				binary.LittleEndian.PutUint32(e[20:], rva)
				b = append(b, e...)
			}
			w.Stream(minidump.ModuleListStream, b)
		}, func(f *minidump.File) error { _, err := f.ModuleList(); return err }},
		{"thread contexts", func(w *minidump.Writer) {
			l := w.Data(ctx)
			b := le32s(n)
			for i := range n {
				e := make([]byte, 48)
				binary.LittleEndian.PutUint32(e, uint32(i))
				binary.LittleEndian.PutUint32(e[40:], l.DataSize)
				binary.LittleEndian.PutUint32(e[44:], l.Rva)
				b = append(b, e...)
			}
			w.Stream(minidump.ThreadListStream, b)
		}, func(f *minidump.File) error { _, err := f.ThreadList(); return err }},
		{"thread names", func(w *minidump.Writer) {
			rva := w.Data(str).Rva
			b := le32s(n)
			for i := range n {
				b = binary.LittleEndian.AppendUint32(b, uint32(i))
				b = binary.LittleEndian.AppendUint64(b, uint64(rva))
			}
			w.Stream(minidump.ThreadNamesStream, b)
		}, func(f *minidump.File) error { _, err := f.ThreadNames(); return err }},
		{"crashpad list annotations", func(w *minidump.Writer) {
			s := w.Data(append(le32s(1024), bytes.Repeat([]byte{'a'}, 1024)...)).Rva
			list := le32s(n)
			for range n {
				list = binary.LittleEndian.AppendUint32(list, s)
			}
			lrva := w.Data(list).Rva
			info := w.Data(append(le32s(1, uint32(len(list)), lrva), make([]byte, 16)...)).Rva
			links := w.Data(le32s(1, 0, 28, info)).Rva
			cp := append(make([]byte, 44), le32s(16, links)...)
			w.Stream(minidump.CrashpadInfoStream, cp)
		}, func(f *minidump.File) error { _, err := f.CrashpadInfo(); return err }},
	}
	for _, c := range cases {
		w := minidump.NewWriter()
		c.build(w)
		data, err := w.Bytes()
		if err != nil {
			t.Fatal(err)
		}
		f, err := minidump.NewFileBytes(data)
		if err != nil {
			t.Fatal(err)
		}
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		err = c.call(f)
		runtime.ReadMemStats(&after)
		if err == nil || !strings.Contains(err.Error(), "exceeds the file's size") {
			t.Errorf("%s: error %v, want the shared-data limit", c.name, err)
		}
		if grew := after.TotalAlloc - before.TotalAlloc; grew > 2*uint64(len(data))+64<<10 {
			t.Errorf("%s: allocated %d bytes for a %d-byte file", c.name, grew, len(data))
		}
	}
}

// TestNotAMinidump: a file too short for a header, empty, or of another
// signature says "not a minidump" first (ErrNotMinidump); data past the end
// of a cut dump says "truncated at" its size (ErrTruncated). The messages
// were accurate but cryptic: "header: 32 bytes at offset 0x0: past end of
// file (size 15)".
func TestNotAMinidump(t *testing.T) {
	for _, c := range []struct {
		data []byte
		want string
	}{
		{nil, "not a minidump: empty file"},
		{[]byte("MDMP\x93\xa7\x00\x00shortie"), "not a minidump: too short (15 bytes; a minidump's header alone is 32)"},
		{append([]byte("PK\x03\x04"), make([]byte, 60)...), `not a minidump: starts with "PK\x03\x04" (signature 0x4034b50), not MDMP`},
	} {
		_, err := minidump.NewFileBytes(c.data)
		if !errors.Is(err, minidump.ErrNotMinidump) || err.Error() != c.want {
			t.Errorf("%q: %v, want %q", c.data, err, c.want)
		}
	}
	// A header whose stream directory lies past the end of the file.
	h := make([]byte, 32)
	binary.LittleEndian.PutUint32(h[0:], minidump.HeaderSignature)
	binary.LittleEndian.PutUint32(h[4:], minidump.HeaderVersion)
	binary.LittleEndian.PutUint32(h[8:], 3)     // streams
	binary.LittleEndian.PutUint32(h[12:], 0x20) // directory right after the header
	_, err := minidump.NewFileBytes(h)
	if want := "stream directory: 3 entries at 0x20: truncated at 0x20 (the file's size): 36 bytes at offset 0x20 run past end of file"; !errors.Is(err, minidump.ErrTruncated) || err.Error() != want {
		t.Errorf("directory past the end: %v, want %q", err, want)
	}
}
