package capture

import (
	"bytes"
	"os"
	"syscall"
)

// addHostInfo records what describes the machine rather than the process:
// /proc/cpuinfo, the distribution's release file and uname's release,
// version and machine. /etc/lsb-release is preferred, as Breakpad reads it; systems
// without it (Debian) have /etc/os-release, whose KEY=value lines
// rust-minidump's reader understands as well.
func (p *Process) addHostInfo() {
	if b, err := os.ReadFile("/proc/cpuinfo"); err == nil {
		p.CPUInfo = b
		p.NumCPU = countProcessors(b)
	} else {
		p.note("/proc/cpuinfo: %v", err)
	}
	for _, name := range []string{"/etc/lsb-release", "/etc/os-release", "/usr/lib/os-release"} {
		if b, err := os.ReadFile(name); err == nil {
			p.LSBRelease = b
			break
		}
	}
	var u syscall.Utsname
	if err := syscall.Uname(&u); err == nil {
		p.OSRelease, p.OSVersion, p.OSMachine = utsString(u.Release[:]), utsString(u.Version[:]), utsString(u.Machine[:])
	}
}

func utsString[T int8 | uint8](field []T) string {
	b := make([]byte, 0, len(field))
	for _, c := range field {
		b = append(b, byte(c))
	}
	if i := bytes.IndexByte(b, 0); i >= 0 {
		b = b[:i]
	}
	return string(b)
}
