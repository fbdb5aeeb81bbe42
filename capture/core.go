package capture

import (
	"debug/elf"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/gobreakpad/gobreakpad/arch"
	"github.com/gobreakpad/gobreakpad/capture/elfcore"
	"github.com/gobreakpad/gobreakpad/capture/procfs"
)

// auxv entry types used to place the executable.
const (
	atNull  = 0
	atEntry = 9
)

// CoreOptions are the optional inputs of [FromCore].
type CoreOptions struct {
	// Executable is the path of the crashed program. It identifies the
	// program's module when the core has no NT_FILE note (qemu-user writes
	// none) and supplies the code bytes around program counters, which cores
	// normally leave out.
	Executable string
	// HostInfo records this machine's /proc/cpuinfo, release file and uname
	// as the crashed machine's: set it when the core was made here.
	HostInfo bool
}

// FromCore converts an opened ELF core file into a Process. The thread that
// received the fatal signal comes first. Files named by the core's NT_FILE
// note are opened, when they exist here, to identify modules whose headers
// the core left out and to read code the core does not hold.
func FromCore(core *elfcore.File, opt CoreOptions) (*Process, error) {
	p := &Process{}
	switch core.Machine {
	case elf.EM_X86_64:
		p.CPU = arch.AMD64
	case elf.EM_386:
		p.CPU = arch.X86
	case elf.EM_AARCH64:
		p.CPU = arch.ARM64
	case elf.EM_ARM:
		p.CPU = arch.ARM
	default:
		return nil, fmt.Errorf("core: unsupported machine %v", core.Machine)
	}
	for i, ct := range core.Threads {
		t, err := coreThread(p.CPU, ct)
		if err != nil {
			return nil, fmt.Errorf("core: thread %d (id %d): %w", i, ct.ID, err)
		}
		p.Threads = append(p.Threads, t)
	}
	p.PID = uint32(core.Threads[0].ID)
	if core.Psinfo != nil {
		p.PID = uint32(core.Psinfo.PID)
		// Unless the stack gives the arguments (recoverArgs), NT_PRPSINFO's
		// first 80 bytes of the command line, joined by spaces, stand in for
		// /proc/PID/cmdline, whose arguments end in NULs.
		if core.Psinfo.Args != "" {
			p.CmdLine = []byte(strings.ReplaceAll(core.Psinfo.Args, " ", "\x00") + "\x00")
		}
	}
	// The group leader's prstatus carries the process's total CPU times.
	for _, ct := range core.Threads {
		if uint32(ct.ID) == p.PID {
			p.UserTime, p.SystemTime = ct.UserTime, ct.SystemTime
		}
	}
	p.setCrash(core)
	p.Auxv = core.Auxv

	mem := &coreMemory{core: core}
	var exe *exeImage
	if opt.Executable != "" {
		var err error
		if exe, err = loadExecutable(opt.Executable, core); err != nil {
			p.note("executable %s not used: %v", opt.Executable, err)
		} else {
			defer exe.file.Close()
			mem.exe = exe
		}
	}
	p.Maps = coreMaps(core, exe)
	p.nameVDSO()
	for _, m := range p.Maps {
		if m.Path != "" && (exe == nil || m.Path != exe.path) {
			mem.files = append(mem.files, m)
		}
	}
	defer mem.close()
	p.ProcMaps = formatMaps(p.Maps)
	if args, env := recoverArgs(core, mem, p.Maps); args != nil {
		p.CmdLine, p.Environ = args, env
	}
	p.collectMemory(mem)
	p.addDSODebug(mem)
	p.collectModules(mem, openFile)
	if opt.HostInfo {
		p.addHostInfo()
	}
	return p, nil
}

// setCrash finds the fatal signal, puts the thread that got it first, and
// records it in p.Crash. NT_SIGINFO belongs to the first thread, the one the
// kernel dumped from; without it (qemu-user's cores) the first thread with a
// pending signal (pr_cursig) is taken, with no si_code or address.
func (p *Process) setCrash(core *elfcore.File) {
	switch {
	case core.Siginfo != nil:
		si := core.Siginfo
		p.Crash = &Crash{ThreadID: uint32(core.Threads[0].ID), Signal: si.Signo, Code: si.Code, Errno: si.Errno, Address: si.Addr}
	default:
		i := slices.IndexFunc(core.Threads, func(t elfcore.Thread) bool { return t.Signal != 0 })
		if i < 0 {
			return
		}
		p.Crash = &Crash{ThreadID: uint32(core.Threads[i].ID), Signal: int32(core.Threads[i].Signal)}
	}
	if i := slices.IndexFunc(p.Threads, func(t Thread) bool { return t.ID == p.Crash.ThreadID }); i > 0 {
		t := p.Threads[i]
		copy(p.Threads[1:i+1], p.Threads[:i])
		p.Threads[0] = t
	}
}

// formatMaps writes mappings as /proc/PID/maps lines.
func formatMaps(maps []procfs.Mapping) []byte {
	var b strings.Builder
	for _, m := range maps {
		fmt.Fprintf(&b, "%08x-%08x %s %08x %s %d", m.Start, m.End, m.Perms, m.Offset, m.Dev, m.Inode)
		if m.Path != "" {
			fmt.Fprintf(&b, " %s", m.Path)
		}
		b.WriteByte('\n')
	}
	return []byte(b.String())
}

// coreThread converts a thread's core notes to a Thread.
func coreThread(cpu arch.CPU, ct elfcore.Thread) (Thread, error) {
	t := Thread{ID: uint32(ct.ID)}
	switch cpu {
	case arch.AMD64:
		c, err := amd64Context(ct.Regs, ct.FPRegs)
		if err != nil {
			return t, err
		}
		t.Context, t.SP, t.PC = c, c.Rsp, c.Rip
	case arch.X86:
		c, err := x86Context(ct.Regs, ct.FPRegs, ct.XFPRegs)
		if err != nil {
			return t, err
		}
		t.Context, t.SP, t.PC = c, uint64(c.Esp), uint64(c.Eip)
	case arch.ARM64:
		c, err := arm64Context(ct.Regs, ct.FPRegs)
		if err != nil {
			return t, err
		}
		t.Context, t.SP, t.PC = c, c.Iregs[31], c.Iregs[32]
	case arch.ARM:
		c, err := armContext(ct.Regs)
		if err != nil {
			return t, err
		}
		t.Context, t.SP, t.PC = c, uint64(c.Iregs[13]), uint64(c.Iregs[15])
	}
	return t, nil
}

// exeImage is the crashed program's file, placed where the core says it was
// loaded.
type exeImage struct {
	path  string
	file  *os.File
	bias  uint64 // load address minus link-time address
	progs []*elf.Prog
}

// loadExecutable opens the program and finds its load bias from the core's
// AT_ENTRY auxv entry.
func loadExecutable(path string, core *elfcore.File) (*exeImage, error) {
	// Modules are named by absolute paths, as in /proc/PID/maps.
	path, err := filepath.Abs(path)
	if err != nil {
		return nil, err
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	ef, err := elf.NewFile(f)
	if err != nil {
		f.Close()
		return nil, err
	}
	if ef.Machine != core.Machine {
		f.Close()
		return nil, fmt.Errorf("it is for %v, the core for %v", ef.Machine, core.Machine)
	}
	entry, ok := auxvValue(core, atEntry)
	if !ok {
		f.Close()
		return nil, fmt.Errorf("core has no AT_ENTRY auxv entry to place it")
	}
	exe := &exeImage{path: path, file: f, bias: entry - ef.Entry}
	for _, p := range ef.Progs {
		if p.Type == elf.PT_LOAD {
			exe.progs = append(exe.progs, p)
		}
	}
	return exe, nil
}

// auxvValue returns the value of the first auxv entry of type typ.
func auxvValue(core *elfcore.File, typ uint64) (uint64, bool) {
	w := 8
	if core.Class == elf.ELFCLASS32 {
		w = 4
	}
	return auxvWord(core.Auxv, core.ByteOrder, w, typ)
}

// coreMaps rebuilds /proc/PID/maps lines from the core's segments, naming
// each after the NT_FILE entry or executable segment that covers it.
func coreMaps(core *elfcore.File, exe *exeImage) []procfs.Mapping {
	maps := make([]procfs.Mapping, 0, len(core.Segments))
	for _, s := range core.Segments {
		if s.Vaddr+s.Memsz < s.Vaddr {
			continue // wraps around the address space: not a real mapping
		}
		perms := []byte("---p")
		if s.Flags&elf.PF_R != 0 {
			perms[0] = 'r'
		}
		if s.Flags&elf.PF_W != 0 {
			perms[1] = 'w'
		}
		if s.Flags&elf.PF_X != 0 {
			perms[2] = 'x'
		}
		m := procfs.Mapping{Start: s.Vaddr, End: s.Vaddr + s.Memsz, Perms: string(perms), Dev: "00:00"}
		for _, f := range core.Files {
			if s.Vaddr >= f.Start && s.Vaddr < f.End {
				m.Path, m.Offset = f.Path, f.Offset+(s.Vaddr-f.Start)
				break
			}
		}
		if m.Path == "" && exe != nil {
			for _, p := range exe.progs {
				lo := (exe.bias + p.Vaddr) &^ (pageSize - 1)
				if s.Vaddr >= lo && s.Vaddr < exe.bias+p.Vaddr+p.Memsz && s.Vaddr-lo < p.Filesz+p.Vaddr%pageSize+pageSize {
					m.Path, m.Offset = exe.path, (p.Off&^(pageSize-1))+(s.Vaddr-lo)
					break
				}
			}
		}
		maps = append(maps, m)
	}
	return maps
}

// coreMemory reads process memory from the core, and from the mapped files
// (the executable, and NT_FILE's files when present here) for file-backed
// ranges the core leaves out, such as code.
type coreMemory struct {
	core   *elfcore.File
	exe    *exeImage
	files  []procfs.Mapping // file-backed mappings other than the executable's
	opened map[string]*os.File
}

func (m *coreMemory) ReadMemory(addr uint64, n int) ([]byte, error) {
	b, err := m.core.ReadMemory(addr, n)
	if err == nil {
		return b, nil
	}
	end := addr + uint64(n)
	if m.exe != nil {
		for _, p := range m.exe.progs {
			lo := m.exe.bias + p.Vaddr
			if addr >= lo && end <= lo+p.Filesz && end >= addr {
				buf := make([]byte, n)
				if _, rerr := p.ReadAt(buf, int64(addr-lo)); rerr == nil {
					return buf, nil
				}
			}
		}
	}
	if i := procfs.Find(m.files, addr); i >= 0 && end <= m.files[i].End {
		f := m.file(m.files[i].Path)
		if f != nil {
			buf := make([]byte, n)
			if _, rerr := f.ReadAt(buf, int64(m.files[i].Offset+(addr-m.files[i].Start))); rerr == nil {
				return buf, nil
			}
		}
	}
	return nil, err
}

func (m *coreMemory) file(path string) *os.File {
	if f, ok := m.opened[path]; ok {
		return f
	}
	if m.opened == nil {
		m.opened = make(map[string]*os.File)
	}
	f, _ := openRegular(path) // nil when unusable; a core may name devices and pipes
	m.opened[path] = f
	return f
}

func (m *coreMemory) close() {
	for _, f := range m.opened {
		if f != nil {
			f.Close()
		}
	}
}
