// Package procfs parses the Linux /proc files a crash capture records:
// /proc/PID/maps (the process's memory mappings) and the signal masks of
// /proc/PID/status.
//
// The parsers take bytes, not paths, so the same code reads a live process and
// a copy saved in a minidump's MD_LINUX_MAPS or MD_LINUX_PROC_STATUS stream.
package procfs

import (
	"bytes"
	"errors"
	"fmt"
)

// Mapping is one line of /proc/PID/maps.
type Mapping struct {
	Start, End uint64 // [Start, End) virtual addresses
	Perms      string // "r-xp" and the like
	Offset     uint64 // offset in the mapped file
	Dev        string // "major:minor" of the file's device
	Inode      uint64
	Path       string // file path, "[stack]", "[vdso]", or empty for anonymous memory
}

// Readable reports whether the mapping may be read.
func (m Mapping) Readable() bool { return len(m.Perms) > 0 && m.Perms[0] == 'r' }

// Executable reports whether the mapping may be executed.
func (m Mapping) Executable() bool { return len(m.Perms) > 2 && m.Perms[2] == 'x' }

// Contains reports whether addr lies in [Start, End).
func (m Mapping) Contains(addr uint64) bool { return addr >= m.Start && addr < m.End }

// Deleted reports whether the kernel marked the mapped file as unlinked.
func (m Mapping) Deleted() bool { return bytes.HasSuffix([]byte(m.Path), []byte(" (deleted)")) }

// ParseMaps parses the contents of a /proc/PID/maps file. Lines are checked
// strictly: a malformed line is an error naming its number.
func ParseMaps(data []byte) ([]Mapping, error) {
	var maps []Mapping
	for n := 1; len(data) > 0; n++ {
		line := data
		if i := bytes.IndexByte(data, '\n'); i >= 0 {
			line, data = data[:i], data[i+1:]
		} else {
			data = nil
		}
		if len(bytes.TrimSpace(line)) == 0 {
			continue
		}
		var prev *Mapping
		if len(maps) > 0 {
			prev = &maps[len(maps)-1]
		}
		m, err := parseMapsLine(line, prev)
		if err != nil {
			return maps, fmt.Errorf("maps: line %d: %w", n, err)
		}
		maps = append(maps, m)
	}
	return maps, nil
}

// parseMapsLine parses "start-end perms offset dev inode   path". Strings
// equal to those of the previous line (a file's mappings come together) are
// shared rather than allocated again.
func parseMapsLine(line []byte, prev *Mapping) (Mapping, error) {
	var m Mapping
	var fields [5][]byte
	rest := line
	for i := range fields {
		rest = bytes.TrimLeft(rest, " \t")
		j := bytes.IndexAny(rest, " \t")
		if j < 0 {
			if i < 4 {
				return m, fmt.Errorf("want at least 5 fields, have %d", i+1)
			}
			j = len(rest)
		}
		fields[i], rest = rest[:j], rest[j:]
	}
	lo, hi, ok := bytes.Cut(fields[0], []byte{'-'})
	if !ok {
		return m, fmt.Errorf("address range %q: no '-'", fields[0])
	}
	var err error
	if m.Start, err = parseUint(lo, 16); err != nil {
		return m, fmt.Errorf("start address: %w", err)
	}
	if m.End, err = parseUint(hi, 16); err != nil {
		return m, fmt.Errorf("end address: %w", err)
	}
	if m.End < m.Start {
		return m, fmt.Errorf("address range %q ends before it starts", fields[0])
	}
	if len(fields[1]) != 4 {
		return m, fmt.Errorf("permissions %q: want 4 characters", fields[1])
	}
	m.Perms = intern(fields[1])
	if m.Offset, err = parseUint(fields[2], 16); err != nil {
		return m, fmt.Errorf("offset: %w", err)
	}
	if prev != nil && prev.Dev == string(fields[3]) {
		m.Dev = prev.Dev
	} else {
		m.Dev = intern(fields[3])
	}
	if m.Inode, err = parseUint(fields[4], 10); err != nil {
		return m, fmt.Errorf("inode: %w", err)
	}
	if path := bytes.TrimLeft(rest, " \t"); prev != nil && prev.Path == string(path) {
		m.Path = prev.Path
	} else {
		m.Path = string(path)
	}
	return m, nil
}

// common holds the strings most maps lines repeat, so that parsing does not
// allocate them again for every line.
var common = map[string]string{}

func init() {
	for _, s := range []string{"r--p", "r-xp", "rw-p", "---p", "rwxp", "r--s", "rw-s", "00:00"} {
		common[s] = s
	}
}

func intern(b []byte) string {
	if s, ok := common[string(b)]; ok {
		return s
	}
	return string(b)
}

// parseUint parses a hexadecimal or decimal number without allocating.
func parseUint(b []byte, base uint64) (uint64, error) {
	if len(b) == 0 {
		return 0, errors.New("empty number")
	}
	var n uint64
	for _, c := range b {
		var d uint64
		switch {
		case c >= '0' && c <= '9':
			d = uint64(c - '0')
		case base == 16 && c >= 'a' && c <= 'f':
			d = uint64(c-'a') + 10
		case base == 16 && c >= 'A' && c <= 'F':
			d = uint64(c-'A') + 10
		default:
			return 0, fmt.Errorf("invalid digit %q in %q", c, b)
		}
		if n > (^uint64(0)-d)/base {
			return 0, fmt.Errorf("%q overflows 64 bits", b)
		}
		n = n*base + d
	}
	return n, nil
}

// Find returns the index of the mapping holding addr in maps sorted by
// address (as the kernel lists them), or -1.
func Find(maps []Mapping, addr uint64) int {
	lo, hi := 0, len(maps)
	for lo < hi {
		mid := int(uint(lo+hi) >> 1)
		switch {
		case addr < maps[mid].Start:
			hi = mid
		case addr >= maps[mid].End:
			lo = mid + 1
		default:
			return mid
		}
	}
	return -1
}
