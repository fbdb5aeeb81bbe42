package stackwalk

import (
	"bufio"
	"bytes"
	"strconv"
	"strings"

	"github.com/gobreakpad/gobreakpad/minidump"
)

// readExtras reads what the dump's Linux and Mozilla streams say beyond
// Breakpad's report: the pid (when the misc info stream lacks it), the
// distribution, the CPU microcode, the number of memory mappings and the
// dump writer's soft errors.
func readExtras(f *minidump.File, p *ProcessState) {
	if !p.HasProcessID {
		b, err := f.LinuxStream(minidump.LinuxProcStatus)
		p.problem(err, "no process id")
		if err == nil {
			p.ProcessID, p.HasProcessID = parsePID(b)
		}
	}
	b, err := f.LinuxStream(minidump.LinuxLSBRelease)
	p.problem(err, "no distribution")
	if err == nil {
		p.LSBRelease = parseLSB(b)
	}
	b, err = f.LinuxStream(minidump.LinuxCPUInfo)
	p.problem(err, "no CPU microcode")
	if err == nil {
		p.System.CPUMicrocode, p.System.HasCPUMicrocode = parseMicrocode(b)
	}
	if maps, err := f.LinuxMaps(); err == nil {
		p.LinuxMapCount, p.HasLinuxMaps = len(maps), true
	}
	b, err = f.Stream(minidump.MozSoftErrors)
	p.problem(err, "no writer's soft errors")
	if err == nil {
		p.SoftErrors = b
	}
	if v, ok := f.LinuxAuxvValue(minidump.AuxvEntryPoint); ok {
		p.EntryPoint = v
	}
}

// parseMicrocode reads the first "microcode" field of /proc/cpuinfo text, a
// hex number.
func parseMicrocode(b []byte) (uint64, bool) {
	sc := bufio.NewScanner(bytes.NewReader(b))
	for sc.Scan() {
		k, v, ok := strings.Cut(sc.Text(), ":")
		if !ok || strings.TrimSpace(k) != "microcode" {
			continue
		}
		n, err := strconv.ParseUint(strings.TrimPrefix(strings.TrimSpace(v), "0x"), 16, 64)
		return n, err == nil
	}
	return 0, false
}

// parsePID finds the "Pid:" line of /proc/PID/status text.
func parsePID(b []byte) (uint32, bool) {
	sc := bufio.NewScanner(bytes.NewReader(b))
	for sc.Scan() {
		k, v, ok := strings.Cut(sc.Text(), ":")
		if !ok || k != "Pid" {
			continue
		}
		n, err := strconv.ParseUint(strings.TrimSpace(v), 10, 32)
		return uint32(n), err == nil
	}
	return 0, false
}

// parseLSB reads KEY=value lines of lsb-release or os-release text.
func parseLSB(b []byte) *LSBRelease {
	var l LSBRelease
	sc := bufio.NewScanner(bytes.NewReader(b))
	for sc.Scan() {
		k, v, ok := strings.Cut(sc.Text(), "=")
		if !ok {
			continue
		}
		v = strings.Trim(strings.TrimSpace(v), `"`)
		switch strings.TrimSpace(k) {
		case "DISTRIB_ID", "ID":
			l.ID = v
		case "DISTRIB_RELEASE", "VERSION_ID":
			l.Release = v
		case "DISTRIB_CODENAME", "VERSION_CODENAME":
			l.Codename = v
		case "DISTRIB_DESCRIPTION", "PRETTY_NAME":
			l.Description = v
		}
	}
	return &l
}
