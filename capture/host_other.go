//go:build !linux

package capture

// addHostInfo records nothing off Linux: there is no /proc/cpuinfo to read.
func (p *Process) addHostInfo() {}
