package minidump

import (
	"bytes"
	"fmt"
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
	b, err := f.Stream(LinuxMaps)
	if err != nil {
		return nil, fmt.Errorf("linux maps: %w", err)
	}
	m, err := ParseMaps(b)
	if err != nil {
		return m, fmt.Errorf("linux maps: %w", err)
	}
	return m, nil
}

// ParseMaps parses the text of /proc/PID/maps. It returns the entries of
// the well-formed lines and an error naming the first malformed one.
func ParseMaps(b []byte) ([]MapsEntry, error) {
	var out []MapsEntry
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
		e, err := parseMapsLine(line)
		if err != nil {
			if firstErr == nil {
				firstErr = fmt.Errorf("line %d: %w", n, err)
			}
			continue
		}
		out = append(out, e)
	}
	return out, firstErr
}

func parseMapsLine(line []byte) (MapsEntry, error) {
	var e MapsEntry
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
	if e.Start, err = strconv.ParseUint(string(rng[:dash]), 16, 64); err != nil {
		return e, fmt.Errorf("start address: %w", err)
	}
	if e.End, err = strconv.ParseUint(string(rng[dash+1:]), 16, 64); err != nil {
		return e, fmt.Errorf("end address: %w", err)
	}
	if e.End < e.Start {
		return e, fmt.Errorf("end %#x before start %#x", e.End, e.Start)
	}
	e.Perms = string(field())
	if len(e.Perms) != 4 {
		return e, fmt.Errorf("permissions %q", e.Perms)
	}
	if e.Offset, err = strconv.ParseUint(string(field()), 16, 64); err != nil {
		return e, fmt.Errorf("offset: %w", err)
	}
	e.Dev = string(field())
	if e.Inode, err = strconv.ParseUint(string(field()), 10, 64); err != nil {
		return e, fmt.Errorf("inode: %w", err)
	}
	e.Path = string(bytes.TrimRight(bytes.TrimLeft(line, " \t"), "\r"))
	return e, nil
}
