package stackwalk

import (
	"sort"

	"github.com/gobreakpad/gobreakpad/minidump"
)

// execRange is one range of the process's address space map.
type execRange struct {
	start, end uint64 // [start, end)
	exec       bool
}

// memMap is the process's address space map as the dump gives it (a Linux
// dump's /proc/PID/maps, else a memory info list), sorted by start: the
// walk asks it whether a context pc is in executable memory
// (unwind.Env.Executable).
type memMap []execRange

// readMemMap returns the dump's map, or nil when it has none.
func readMemMap(f *minidump.File) memMap {
	var m memMap
	if maps, err := f.LinuxMaps(); err == nil && len(maps) > 0 {
		for i := range maps {
			if maps[i].End > maps[i].Start {
				m = append(m, execRange{maps[i].Start, maps[i].End, maps[i].Executable()})
			}
		}
	} else if l, err := f.MemoryInfoList(); err == nil && len(l.Entries) > 0 {
		for i := range l.Entries {
			e := &l.Entries[i]
			if e.State != minidump.MemCommit || e.RegionSize == 0 || e.BaseAddress+e.RegionSize < e.BaseAddress {
				continue
			}
			m = append(m, execRange{e.BaseAddress, e.BaseAddress + e.RegionSize, e.Executable()})
		}
	}
	sort.Slice(m, func(i, j int) bool { return m[i].start < m[j].start })
	return m
}

// executable says whether addr is in an executable range; an address in
// no range is not (nothing is mapped there). known is false without a map.
func (m memMap) executable(addr uint64) (exec, known bool) {
	if len(m) == 0 {
		return false, false
	}
	i := sort.Search(len(m), func(i int) bool { return m[i].start > addr })
	// Ranges may overlap in a damaged dump: any executable one counts.
	for j := i - 1; j >= 0 && j >= i-4; j-- {
		if addr < m[j].end && m[j].exec {
			return true, true
		}
	}
	return false, true
}
