package capture

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"os"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/gobreakpad/gobreakpad/arch"
	"github.com/gobreakpad/gobreakpad/arch/amd64"
	"github.com/gobreakpad/gobreakpad/arch/arm"
	"github.com/gobreakpad/gobreakpad/arch/arm64"
	"github.com/gobreakpad/gobreakpad/arch/x86"
	"github.com/gobreakpad/gobreakpad/minidump"
)

// WriteMinidump encodes p as a minidump and writes it to w. The streams come
// in the order Breakpad's Linux client writes them: thread list, module
// list, memory list, exception, system info, the Linux /proc files, then misc
// info and Breakpad info (and the thread names, when known). Streams whose
// source is unknown (nil) are left out.
func (p *Process) WriteMinidump(w io.Writer) error {
	mw := minidump.NewWriter()
	if !p.Time.IsZero() {
		mw.TimeDateStamp = uint32(p.Time.Unix())
	}

	threads := make([]minidump.ThreadData, len(p.Threads))
	contexts := make([]*minidump.Context, len(p.Threads))
	var stacks []span
	for i, t := range p.Threads {
		c, err := mdContext(p.CPU, t.Context)
		if err != nil {
			return fmt.Errorf("minidump: thread %d: %w", t.ID, err)
		}
		contexts[i] = c
		threads[i] = minidump.ThreadData{ThreadID: t.ID, Context: c, StackStart: t.Stack.Addr}
		// Stacks go into the memory list with the thread list; a stack that
		// overlaps one already written (threads sharing a signal stack) is
		// trimmed so that the memory list stays disjoint.
		s := span{t.Stack.Addr, t.Stack.End()}
		data := t.Stack.Data
		for _, o := range stacks {
			if s.start < o.end && o.start < s.end {
				if o.start <= s.start {
					cut := min(o.end, s.end) - s.start
					data, s.start = data[cut:], s.start+cut
				} else {
					data, s.end = data[:o.start-s.start], o.start
				}
			}
		}
		threads[i].StackStart = s.start
		if len(data) > 0 {
			threads[i].Stack = data
			stacks = append(stacks, s)
		}
	}
	mw.ThreadList(threads)
	mw.ModuleList(p.moduleData())
	mw.MemoryListHere()
	for _, r := range subtract(p.Memory, stacks) {
		mw.AddMemory(r.Addr, r.Data)
	}

	if p.Crash != nil {
		var ctx *minidump.Context
		for i, t := range p.Threads {
			if t.ID == p.Crash.ThreadID {
				ctx = contexts[i]
			}
		}
		mw.Exception(p.Crash.ThreadID, minidump.ExceptionRecord{
			ExceptionCode:    uint32(p.Crash.Signal),
			ExceptionFlags:   uint32(p.Crash.Code),
			ExceptionAddress: p.Crash.Address,
		}, ctx)
	}
	mw.SystemInfo(p.systemInfo())
	for _, s := range []struct {
		t    minidump.StreamType
		data []byte
	}{
		{minidump.LinuxCPUInfo, p.CPUInfo},
		{minidump.LinuxProcStatus, p.ProcStatus},
		{minidump.LinuxLSBRelease, p.LSBRelease},
		{minidump.LinuxCmdLine, p.CmdLine},
		{minidump.LinuxEnviron, p.Environ},
		{minidump.LinuxAuxv, p.Auxv},
		{minidump.LinuxMaps, p.ProcMaps},
	} {
		if s.data != nil {
			mw.Stream(s.t, s.data)
		}
	}
	if p.DSODebug != nil {
		mw.LinuxDSODebug(p.DSODebug.minidump(), p.CPU.PointerSize())
	}
	misc := &minidump.MiscInfo{SizeOfInfo: minidump.MiscInfoSize, Flags1: minidump.MiscInfoProcessID, ProcessID: p.PID}
	if !p.StartTime.IsZero() || p.UserTime != 0 || p.SystemTime != 0 {
		misc.Flags1 |= minidump.MiscInfoProcessTimes
		if !p.StartTime.IsZero() {
			misc.ProcessCreateTime = uint32(p.StartTime.Unix())
		}
		misc.ProcessUserTime = uint32(p.UserTime / time.Second)
		misc.ProcessKernelTime = uint32(p.SystemTime / time.Second)
	}
	mw.MiscInfo(misc)
	bi := minidump.BreakpadInfo{}
	if p.Crash != nil {
		// The dump was written by another process (this one), so there is no
		// dumping thread inside the crashed process; the requesting thread is
		// the one that crashed.
		bi.Validity = minidump.BreakpadInfoValidRequestingThreadID
		bi.RequestingThreadID = p.Crash.ThreadID
	}
	mw.BreakpadInfo(bi)
	p.writeThreadNames(mw)
	_, err := mw.WriteTo(w)
	return err
}

// WriteMinidumpFile creates (or truncates) the file path and writes p to it
// as a minidump; a failed encoding is reported with the path.
func (p *Process) WriteMinidumpFile(path string) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	if err := p.WriteMinidump(f); err != nil {
		f.Close()
		return fmt.Errorf("%s: %w", path, err)
	}
	return f.Close()
}

// writeThreadNames writes the thread name list, which rust-minidump shows;
// nothing when no thread has a name.
func (p *Process) writeThreadNames(mw *minidump.Writer) {
	var names []minidump.ThreadName
	for _, t := range p.Threads {
		if t.Name != "" {
			names = append(names, minidump.ThreadName{ThreadID: t.ID, Name: t.Name})
		}
	}
	if len(names) > 0 {
		mw.ThreadNames(names)
	}
}

// mdContext wraps a thread's context for the minidump writer.
func mdContext(cpu arch.CPU, c Context) (*minidump.Context, error) {
	mc := &minidump.Context{CPU: cpu}
	switch c := c.(type) {
	case *amd64.Context:
		mc.AMD64 = c
	case *x86.Context:
		mc.X86 = c
	case *arm64.Context:
		mc.ARM64 = c
	case *arm.Context:
		mc.ARM = c
	default:
		return nil, fmt.Errorf("context of type %T cannot be written", c)
	}
	return mc, nil
}

// subtract returns the parts of regions not covered by the spans.
func subtract(regions []Region, spans []span) []Region {
	spans = mergeSpans(slices.Clone(spans))
	var out []Region
	for _, r := range regions {
		start := r.Addr
		for _, s := range spans {
			if s.end <= start || s.start >= r.End() {
				continue
			}
			if s.start > start {
				out = append(out, Region{start, r.Data[start-r.Addr : s.start-r.Addr]})
			}
			start = min(s.end, r.End())
		}
		if start < r.End() {
			out = append(out, Region{start, r.Data[start-r.Addr:]})
		}
	}
	return out
}

func (p *Process) moduleData() []minidump.ModuleData {
	mods := make([]minidump.ModuleData, len(p.Modules))
	for i, m := range p.Modules {
		mods[i] = minidump.ModuleData{
			BaseOfImage: m.Base,
			SizeOfImage: uint32(min(m.Size, 1<<32-1)),
			Name:        m.Path,
		}
		if m.BuildID != nil {
			mods[i].CodeView = minidump.CodeViewELFRecord(m.BuildID)
		}
	}
	return mods
}

// systemInfo fills the system info stream as Breakpad's Linux client does:
// version numbers 0, the uname line as the CSD version, and for x86 CPUs the
// family, model and stepping and vendor from /proc/cpuinfo.
func (p *Process) systemInfo() *minidump.SystemInfo {
	si := &minidump.SystemInfo{
		PlatformID:         minidump.PlatformLinux,
		NumberOfProcessors: uint8(min(p.NumCPU, 255)),
	}
	if p.OSRelease != "" {
		si.CSDVersion = strings.Join([]string{"Linux", p.OSRelease, p.OSVersion, p.machine()}, " ")
	}
	si.ProcessorArchitecture = minidump.LinuxArchitecture(p.CPU)
	if p.CPU == arch.AMD64 || p.CPU == arch.X86 {
		info := cpuinfoFields(p.CPUInfo)
		family, _ := strconv.Atoi(info["cpu family"])
		model, _ := strconv.Atoi(info["model"])
		stepping, _ := strconv.Atoi(info["stepping"])
		si.ProcessorLevel = uint16(family)
		si.ProcessorRevision = uint16(model<<8 | stepping)
		var vendor [12]byte
		copy(vendor[:], info["vendor_id"])
		copy(si.CPUInfo[:12], vendor[:])
	}
	return si
}

// machine returns the machine name uname gave the process: the host's when
// the process's CPU runs natively there (a 32-bit x86 program on x86-64
// sees x86_64), else the CPU's own.
func (p *Process) machine() string {
	native := map[string][]arch.CPU{
		"x86_64": {arch.AMD64, arch.X86}, "i686": {arch.X86}, "i586": {arch.X86}, "i386": {arch.X86},
		"aarch64": {arch.ARM64, arch.ARM},
	}
	if slices.Contains(native[p.OSMachine], p.CPU) {
		return p.OSMachine
	}
	return machineName(p.CPU)
}

// machineName returns uname's machine name for the CPU.
func machineName(cpu arch.CPU) string {
	switch cpu {
	case arch.AMD64:
		return "x86_64"
	case arch.X86:
		return "i686"
	case arch.ARM64:
		return "aarch64"
	case arch.ARM:
		return "armv7l"
	}
	return cpu.String()
}

// cpuinfoFields returns the "key : value" pairs of the first processor in
// /proc/cpuinfo.
func cpuinfoFields(cpuinfo []byte) map[string]string {
	fields := make(map[string]string)
	sc := bufio.NewScanner(bytes.NewReader(cpuinfo))
	for sc.Scan() {
		line := sc.Text()
		if line == "" && len(fields) > 0 {
			break
		}
		k, v, ok := strings.Cut(line, ":")
		if ok {
			fields[strings.TrimSpace(k)] = strings.TrimSpace(v)
		}
	}
	return fields
}

// countProcessors counts the "processor" entries of /proc/cpuinfo.
func countProcessors(cpuinfo []byte) int {
	n := 0
	for line := range bytes.Lines(cpuinfo) {
		if k, _, ok := bytes.Cut(line, []byte(":")); ok && string(bytes.TrimSpace(k)) == "processor" {
			n++
		}
	}
	return n
}
