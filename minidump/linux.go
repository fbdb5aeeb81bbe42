package minidump

import (
	"bytes"
	"fmt"
	"math"
	"strconv"
)

// LinuxStream returns the bytes of one of the Breakpad Linux text streams
// (LinuxCPUInfo, LinuxProcStatus, LinuxLSBRelease, LinuxCmdLine,
// LinuxEnviron, LinuxAuxv, LinuxMaps) exactly as the client copied them from
// /proc or /etc. The slice must not be modified.
func (f *File) LinuxStream(t StreamType) ([]byte, error) { return f.Stream(t) }

// MapsEntry is one line of /proc/PID/maps.
type MapsEntry struct {
	Start, End uint64
	Perms      string // e.g. "r-xp"
	Offset     uint64
	Dev        string // "major:minor" in hex
	Inode      uint64
	Path       string // may be empty, or a pseudo-path such as "[stack]"
}

// Executable reports whether the mapping is executable.
func (e *MapsEntry) Executable() bool { return len(e.Perms) >= 3 && e.Perms[2] == 'x' }

// LinuxMaps parses the LinuxMaps stream.
func (f *File) LinuxMaps() ([]MapsEntry, error) {
	b, err := f.stream(LinuxMaps)
	if err != nil {
		return nil, fmt.Errorf("linux maps: %w", err)
	}
	m, err := ParseMaps(b)
	if err != nil {
		return m, fmt.Errorf("linux maps: %w", err)
	}
	return m, nil
}

// LinuxMapCount returns how many entries LinuxMaps would return, and its
// error, without building them: nothing is allocated unless a line is
// malformed.
func (f *File) LinuxMapCount() (int, error) {
	b, err := f.stream(LinuxMaps)
	if err != nil {
		return 0, fmt.Errorf("linux maps: %w", err)
	}
	n, err := CountMaps(b)
	if err != nil {
		return n, fmt.Errorf("linux maps: %w", err)
	}
	return n, nil
}

// ParseMaps parses the text of /proc/PID/maps. It returns the entries of
// the well-formed lines and an error naming the first malformed one.
func ParseMaps(b []byte) ([]MapsEntry, error) {
	var out []MapsEntry
	err := eachMapsLine(b, func(m mapsFields) {
		out = append(out, MapsEntry{Start: m.start, End: m.end, Perms: string(m.perms), Offset: m.offset,
			Dev: string(m.dev), Inode: m.inode, Path: string(m.path)})
	})
	return out, err
}

// CountMaps returns how many entries ParseMaps would return for b, and its
// error, without building them.
func CountMaps(b []byte) (int, error) {
	n := 0
	err := eachMapsLine(b, func(mapsFields) { n++ })
	return n, err
}

// eachMapsLine calls fn with the fields of each well-formed line of maps
// text b (blank lines skipped) and returns an error naming the first
// malformed one.
func eachMapsLine(b []byte, fn func(mapsFields)) error {
	var firstErr error
	for n := 1; len(b) > 0; n++ {
		line := b
		if i := bytes.IndexByte(b, '\n'); i >= 0 {
			line, b = b[:i], b[i+1:]
		} else {
			b = nil
		}
		if len(bytes.TrimSpace(line)) == 0 {
			continue
		}
		m, err := parseMapsLine(line)
		if err != nil {
			if firstErr == nil {
				firstErr = fmt.Errorf("line %d: %w", n, err)
			}
			continue
		}
		fn(m)
	}
	return firstErr
}

// mapsFields are the fields of one maps line; the byte slices alias it.
type mapsFields struct {
	start, end, offset, inode uint64
	perms, dev, path          []byte
}

func parseMapsLine(line []byte) (mapsFields, error) {
	var e mapsFields
	field := func() []byte {
		line = bytes.TrimLeft(line, " \t")
		i := bytes.IndexAny(line, " \t")
		if i < 0 {
			i = len(line)
		}
		f := line[:i]
		line = line[i:]
		return f
	}
	rng := field()
	dash := bytes.IndexByte(rng, '-')
	if dash < 0 {
		return e, fmt.Errorf("address range %q has no '-'", rng)
	}
	var err error
	if e.start, err = parseUint(rng[:dash], 16); err != nil {
		return e, fmt.Errorf("start address: %w", err)
	}
	if e.end, err = parseUint(rng[dash+1:], 16); err != nil {
		return e, fmt.Errorf("end address: %w", err)
	}
	if e.end < e.start {
		return e, fmt.Errorf("end %#x before start %#x", e.end, e.start)
	}
	e.perms = field()
	if len(e.perms) != 4 {
		return e, fmt.Errorf("permissions %q", e.perms)
	}
	if e.offset, err = parseUint(field(), 16); err != nil {
		return e, fmt.Errorf("offset: %w", err)
	}
	e.dev = field()
	if e.inode, err = parseUint(field(), 10); err != nil {
		return e, fmt.Errorf("inode: %w", err)
	}
	e.path = bytes.TrimRight(bytes.TrimLeft(line, " \t"), "\r")
	return e, nil
}

// parseUint is strconv.ParseUint(string(b), base, 64) (base 10 or 16: digits
// only, no sign, prefix or underscore) without converting b to a string
// unless it fails.
func parseUint(b []byte, base uint64) (uint64, error) {
	var v uint64
	ok := len(b) > 0
	for _, c := range b {
		var d uint64
		switch {
		case '0' <= c && c <= '9':
			d = uint64(c - '0')
		case base == 16 && 'a' <= c && c <= 'f':
			d = uint64(c-'a') + 10
		case base == 16 && 'A' <= c && c <= 'F':
			d = uint64(c-'A') + 10
		default:
			ok = false
		}
		if !ok || v > (math.MaxUint64-d)/base {
			ok = false
			break
		}
		v = v*base + d
	}
	if !ok {
		return strconv.ParseUint(string(b), int(base), 64) // its error
	}
	return v, nil
}

// KeyValue is one "key: value" or "KEY=value" line of a Linux text stream.
type KeyValue struct {
	Key, Value string
}

// LinuxCmdLine returns the process's arguments from the LinuxCmdLine stream.
func (f *File) LinuxCmdLine() ([]string, error) {
	b, err := f.stream(LinuxCmdLine)
	if err != nil {
		return nil, fmt.Errorf("linux cmdline: %w", err)
	}
	return splitNUL(b), nil
}

// LinuxEnviron returns the process's environment ("KEY=value" strings) from
// the LinuxEnviron stream.
func (f *File) LinuxEnviron() ([]string, error) {
	b, err := f.stream(LinuxEnviron)
	if err != nil {
		return nil, fmt.Errorf("linux environ: %w", err)
	}
	return splitNUL(b), nil
}

func splitNUL(b []byte) []string {
	b = bytes.TrimRight(b, "\x00")
	if len(b) == 0 {
		return nil
	}
	parts := bytes.Split(b, []byte{0})
	out := make([]string, len(parts))
	for i, p := range parts {
		out[i] = string(p)
	}
	return out
}

// LinuxProcStatus parses the LinuxProcStatus stream ("Name:\tvalue" lines).
func (f *File) LinuxProcStatus() ([]KeyValue, error) {
	b, err := f.stream(LinuxProcStatus)
	if err != nil {
		return nil, fmt.Errorf("linux proc status: %w", err)
	}
	return parseKeyValues(b, ':'), nil
}

// LinuxLSBRelease parses the LinuxLSBRelease stream (KEY=value lines, with
// surrounding double quotes removed from values).
func (f *File) LinuxLSBRelease() ([]KeyValue, error) {
	b, err := f.stream(LinuxLSBRelease)
	if err != nil {
		return nil, fmt.Errorf("linux lsb-release: %w", err)
	}
	kv := parseKeyValues(b, '=')
	for i := range kv {
		v := kv[i].Value
		if len(v) >= 2 && v[0] == '"' && v[len(v)-1] == '"' {
			kv[i].Value = v[1 : len(v)-1]
		}
	}
	return kv, nil
}

// LinuxCPUInfo parses the LinuxCPUInfo stream (/proc/cpuinfo) into one list
// of "key: value" pairs per processor block.
func (f *File) LinuxCPUInfo() ([][]KeyValue, error) {
	b, err := f.stream(LinuxCPUInfo)
	if err != nil {
		return nil, fmt.Errorf("linux cpuinfo: %w", err)
	}
	var blocks [][]KeyValue
	for _, blk := range bytes.Split(b, []byte("\n\n")) {
		if kv := parseKeyValues(blk, ':'); len(kv) > 0 {
			blocks = append(blocks, kv)
		}
	}
	return blocks, nil
}

// parseKeyValues splits lines at the first sep, trimming spaces and tabs;
// lines without sep are skipped.
func parseKeyValues(b []byte, sep byte) []KeyValue {
	var out []KeyValue
	for len(b) > 0 {
		line := b
		if i := bytes.IndexByte(b, '\n'); i >= 0 {
			line, b = b[:i], b[i+1:]
		} else {
			b = nil
		}
		i := bytes.IndexByte(line, sep)
		if i < 0 {
			continue
		}
		out = append(out, KeyValue{
			Key:   string(bytes.TrimSpace(line[:i])),
			Value: string(bytes.TrimSpace(line[i+1:])),
		})
	}
	return out
}

// AuxvEntry is one entry of the auxiliary vector.
type AuxvEntry struct {
	Type, Value uint64
}

// Auxiliary vector entry types the walker uses.
const (
	AuxvEntryPoint = 9  // AT_ENTRY: the program's entry point (_start)
	AuxvSysinfo    = 32 // AT_SYSINFO: i386's __kernel_vsyscall, the vDSO's system call entry
	AuxvVDSO       = 33 // AT_SYSINFO_EHDR: the vDSO's ELF header
)

// LinuxAuxvValue returns the value of the first auxiliary vector entry of
// type typ, and whether the dump has one.
func (f *File) LinuxAuxvValue(typ uint64) (uint64, bool) {
	var v uint64
	found := false
	f.eachAuxv(func(e AuxvEntry) bool {
		if e.Type == typ {
			v, found = e.Value, true
		}
		return !found
	})
	return v, found
}

// LinuxAuxv decodes the LinuxAuxv stream: pairs of pointer-sized words,
// pointer size taken from the system info's CPU (8 when unknown). It stops
// at the AT_NULL entry.
func (f *File) LinuxAuxv() ([]AuxvEntry, error) {
	b, err := f.stream(LinuxAuxv)
	if err != nil {
		return nil, fmt.Errorf("linux auxv: %w", err)
	}
	var out []AuxvEntry
	eachAuxvEntry(b, f.pointerSize(), func(e AuxvEntry) bool {
		out = append(out, e)
		return true
	})
	return out, nil
}

// eachAuxv calls fn with the entries of the LinuxAuxv stream, if any, until
// it returns false.
func (f *File) eachAuxv(fn func(AuxvEntry) bool) {
	if b, err := f.stream(LinuxAuxv); err == nil {
		eachAuxvEntry(b, f.pointerSize(), fn)
	}
}

// eachAuxvEntry calls fn with the entries of auxv bytes b (words of ps
// bytes) up to AT_NULL, until it returns false.
func eachAuxvEntry(b []byte, ps int, fn func(AuxvEntry) bool) {
	for ; len(b) >= 2*ps; b = b[2*ps:] {
		var e AuxvEntry
		if ps == 4 {
			e = AuxvEntry{uint64(le32(b)), uint64(le32(b[4:]))}
		} else {
			e = AuxvEntry{le64(b), le64(b[8:])}
		}
		if e.Type == 0 || !fn(e) {
			return
		}
	}
}

// pointerSize returns the dump's pointer size from its system info, 8 when
// unknown.
func (f *File) pointerSize() int {
	if si, err := f.SystemInfo(); err == nil {
		if n := si.CPU().PointerSize(); n != 0 {
			return n
		}
	}
	return 8
}

// DSODebug is the LinuxDSODebug stream (MDRawDebug32/64): the dynamic
// linker's r_debug and its list of loaded objects.
type DSODebug struct {
	Version  uint32
	MapRva   uint32
	DSOCount uint32
	Brk      uint64
	LDBase   uint64
	Dynamic  uint64
	LinkMaps []LinkMap
}

// LinkMap is one loaded object of DSODebug (MDRawLinkMap32/64).
type LinkMap struct {
	Addr    uint64
	NameRva uint32
	LD      uint64
	Name    string
}

// LinuxDSODebug decodes the LinuxDSODebug stream; its layout follows the
// dump's pointer size.
func (f *File) LinuxDSODebug() (*DSODebug, error) {
	b, err := f.stream(LinuxDSODebug)
	if err != nil {
		return nil, fmt.Errorf("linux dso debug: %w", err)
	}
	ps := f.pointerSize()
	debugSize, mapSize := 40, 24
	if ps == 4 {
		debugSize, mapSize = 24, 12
	}
	if len(b) < debugSize {
		return nil, fmt.Errorf("linux dso debug: %d bytes, want at least %d", len(b), debugSize)
	}
	d := &DSODebug{Version: le32(b), MapRva: le32(b[4:]), DSOCount: le32(b[8:])}
	if ps == 4 {
		d.Brk, d.LDBase, d.Dynamic = uint64(le32(b[12:])), uint64(le32(b[16:])), uint64(le32(b[20:]))
	} else {
		d.Brk, d.LDBase, d.Dynamic = le64(b[16:]), le64(b[24:]), le64(b[32:])
	}
	maps, err := f.bytes(uint64(d.MapRva), uint64(d.DSOCount)*uint64(mapSize))
	if err != nil {
		return nil, fmt.Errorf("linux dso debug: %d link maps: %w", d.DSOCount, err)
	}
	d.LinkMaps = make([]LinkMap, d.DSOCount)
	bud := f.newBudget()
	for i := range d.LinkMaps {
		e := maps[i*mapSize:]
		m := &d.LinkMaps[i]
		if ps == 4 {
			m.Addr, m.NameRva, m.LD = uint64(le32(e)), le32(e[4:]), uint64(le32(e[8:]))
		} else {
			m.Addr, m.NameRva, m.LD = le64(e), le32(e[8:]), le64(e[16:])
		}
		if m.NameRva != 0 {
			if m.Name, err = f.String(m.NameRva); err != nil {
				return nil, fmt.Errorf("linux dso debug: link map %d: name: %w", i, err)
			}
			if err := bud.take(len(m.Name)); err != nil {
				return nil, fmt.Errorf("linux dso debug: link map %d: %w", i, err)
			}
		}
	}
	return d, nil
}
