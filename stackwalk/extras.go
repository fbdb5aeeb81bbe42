package stackwalk

import (
	"bytes"
	"strconv"

	"github.com/gobreakpad/gobreakpad/minidump"
)

// readExtras reads what the dump's Linux, Mozilla and Crashpad streams say
// beyond Breakpad's report: the pid (when the misc info stream lacks it),
// the distribution, the CPU microcode, the number of memory mappings, the
// dump writer's soft errors and the Crashpad annotations. It allocates little: the maps are counted
// without being built, the text streams scanned in place, and absent
// streams cost no error value.
func readExtras(f *minidump.File, p *ProcessState) {
	if !p.HasProcessID {
		b, err := optionalStream(f, minidump.LinuxProcStatus)
		p.problem(err, "no process id")
		if err == nil {
			p.ProcessID, p.HasProcessID = parsePID(b)
		}
	}
	b, err := optionalStream(f, minidump.LinuxLSBRelease)
	p.problem(err, "no distribution")
	if err == nil {
		p.LSBRelease = parseLSB(b)
	}
	b, err = optionalStream(f, minidump.LinuxCPUInfo)
	p.problem(err, "no CPU microcode")
	if err == nil {
		p.System.CPUMicrocode, p.System.HasCPUMicrocode = parseMicrocode(b)
	}
	if f.StreamIndex(minidump.LinuxMaps) >= 0 {
		if n, err := f.LinuxMapCount(); err == nil {
			p.LinuxMapCount, p.HasLinuxMaps = n, true
		}
	}
	b, err = optionalStream(f, minidump.MozSoftErrors)
	p.problem(err, "no writer's soft errors")
	if err == nil {
		p.SoftErrors = b
	}
	if v, ok := f.LinuxAuxvValue(minidump.AuxvEntryPoint); ok {
		p.EntryPoint = v
	}
	if v, ok := f.LinuxAuxvValue(minidump.AuxvSysinfo); ok {
		p.KernelVsyscall = v
	}
	if present(f, minidump.CrashpadInfoStream) {
		p.Annotations = crashpadAnnotations(f)
	}
}

// crashpadAnnotations returns the annotations of the dump's Crashpad info
// stream (ProcessState.Annotations), or nil when it is unreadable.
func crashpadAnnotations(f *minidump.File) map[string]string {
	info, err := f.CrashpadInfo()
	if err != nil || info == nil {
		return nil
	}
	out := map[string]string{}
	add := func(k, v string) {
		if _, ok := out[k]; !ok {
			out[k] = v
		}
	}
	for _, a := range info.SimpleAnnotations {
		add(a.Key, a.Value)
	}
	for _, m := range info.Modules {
		for _, a := range m.SimpleAnnotations {
			add(a.Key, a.Value)
		}
		for _, o := range m.AnnotationObjects {
			if o.Type == 1 { // a string
				add(o.Name, string(o.Value))
			}
		}
	}
	return out
}

// optionalStream is f.Stream(t) for a stream a dump may well lack: an
// absent one gives minidump.ErrNoStream itself, which costs no allocation.
func optionalStream(f *minidump.File, t minidump.StreamType) ([]byte, error) {
	if f.StreamIndex(t) < 0 {
		return nil, minidump.ErrNoStream
	}
	return f.Stream(t)
}

// maxLine is the longest line the text scans read, as bufio.Scanner's
// default limit (bufio.MaxScanTokenSize, newline included): a longer line
// ends the scan.
const maxLine = 64<<10 - 1

// eachLine calls fn with each line of text b, without its newline and one
// trailing carriage return (bufio.ScanLines' lines), until fn returns false
// or a line is longer than maxLine.
func eachLine(b []byte, fn func(line []byte) bool) {
	for len(b) > 0 {
		line := b
		if i := bytes.IndexByte(b, '\n'); i >= 0 {
			line, b = b[:i], b[i+1:]
		} else {
			b = nil
		}
		if len(line) > maxLine {
			return
		}
		line, _ = bytes.CutSuffix(line, []byte{'\r'})
		if !fn(line) {
			return
		}
	}
}

// parseMicrocode reads the first "microcode" field of /proc/cpuinfo text, a
// hex number.
func parseMicrocode(b []byte) (n uint64, ok bool) {
	eachLine(b, func(line []byte) bool {
		k, v, found := bytes.Cut(line, []byte{':'})
		if !found || string(bytes.TrimSpace(k)) != "microcode" {
			return true
		}
		var err error
		n, err = strconv.ParseUint(string(bytes.TrimPrefix(bytes.TrimSpace(v), []byte("0x"))), 16, 64)
		ok = err == nil
		return false
	})
	return n, ok
}

// parsePID finds the "Pid:" line of /proc/PID/status text.
func parsePID(b []byte) (pid uint32, ok bool) {
	eachLine(b, func(line []byte) bool {
		k, v, found := bytes.Cut(line, []byte{':'})
		if !found || string(k) != "Pid" {
			return true
		}
		n, err := strconv.ParseUint(string(bytes.TrimSpace(v)), 10, 32)
		pid, ok = uint32(n), err == nil
		return false
	})
	return pid, ok
}

// parseLSB reads KEY=value lines of lsb-release or os-release text as
// rust-minidump does (its linux_list_iter): the key and the value each
// trimmed of ASCII white space and then of one pair of surrounding double
// quotes (`"DISTRIB_RELEASE" = "22.04"`); a quote without its pair is kept.
// The last line of a key wins.
func parseLSB(b []byte) *LSBRelease {
	var l LSBRelease
	eachLine(b, func(line []byte) bool {
		k, v, found := bytes.Cut(line, []byte{'='})
		if !found {
			return true
		}
		var field *string
		switch string(stripQuotes(k)) {
		case "DISTRIB_ID", "ID":
			field = &l.ID
		case "DISTRIB_RELEASE", "VERSION_ID":
			field = &l.Release
		case "DISTRIB_CODENAME", "VERSION_CODENAME":
			field = &l.Codename
		case "DISTRIB_DESCRIPTION", "PRETTY_NAME":
			field = &l.Description
		default:
			return true
		}
		*field = string(stripQuotes(v))
		return true
	})
	return &l
}

// stripQuotes trims ASCII white space (Rust's is_ascii_whitespace: space,
// tab, LF, FF, CR) and then one pair of surrounding double quotes.
func stripQuotes(b []byte) []byte {
	b = bytes.Trim(b, " \t\n\f\r")
	if len(b) >= 2 && b[0] == '"' && b[len(b)-1] == '"' {
		b = b[1 : len(b)-1]
	}
	return b
}
