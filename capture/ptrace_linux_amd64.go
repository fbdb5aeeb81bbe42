package capture

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"time"
	"unsafe"

	"github.com/gobreakpad/gobreakpad/arch"
	"github.com/gobreakpad/gobreakpad/arch/amd64"
	"github.com/gobreakpad/gobreakpad/arch/x86"
	"github.com/gobreakpad/gobreakpad/capture/procfs"
)

// ptrace requests and options not named by package syscall.
const (
	ptraceGetSiginfo = 0x4202
	ptraceGetRegset  = 0x4204
	ptraceGetFPRegs  = 14
	ntPrstatus       = 1

	stopTimeout = 2 * time.Second // how long a thread may take to stop for the capture
)

// fatalSignals are the signals whose default action ends the process with a
// core dump, which Run captures.
var fatalSignals = map[syscall.Signal]bool{
	syscall.SIGSEGV: true, syscall.SIGBUS: true, syscall.SIGILL: true, syscall.SIGFPE: true,
	syscall.SIGABRT: true, syscall.SIGTRAP: true, syscall.SIGSYS: true,
}

// RunOptions configure [Run].
type RunOptions struct {
	// Stdin, Stdout and Stderr are the program's, as in os/exec.Cmd: nil
	// means the null device.
	Stdin          io.Reader
	Stdout, Stderr io.Writer
	// Env is the program's environment; nil means this process's.
	Env []string
	// OnCrash is called with each process (the program or a child it forked)
	// stopped at a fatal signal it does not handle, before the signal is let
	// through. An error it returns is returned by Run once the program has
	// ended; the program dies of its signal either way.
	OnCrash func(*Process) error
	// Started, when set, is called with the program's process id once it
	// runs (to forward signals to it, for example).
	Started func(pid int)
}

// Run starts argv[0] with arguments argv[1:] under ptrace, follows its
// threads, forks and execs, and captures every process of it that stops at a
// fatal signal (SIGSEGV, SIGBUS, SIGILL, SIGFPE, SIGABRT, SIGTRAP, SIGSYS) it
// does not handle itself; other signals are passed on untouched. It returns
// the program's wait status, which equals what it would have been without
// the tracing.
//
// A program stopped by SIGSTOP or SIGTSTP from outside is resumed at once:
// a tracer attached with PTRACE_TRACEME cannot hold group-stops.
func Run(argv []string, opt RunOptions) (syscall.WaitStatus, error) {
	if len(argv) == 0 {
		return 0, errors.New("run: no program")
	}
	// All ptrace requests must come from the thread that became the tracer.
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()

	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Stdin, cmd.Stdout, cmd.Stderr, cmd.Env = opt.Stdin, opt.Stdout, opt.Stderr, opt.Env
	cmd.SysProcAttr = &syscall.SysProcAttr{Ptrace: true}
	if err := cmd.Start(); err != nil {
		return 0, fmt.Errorf("run: %w", err)
	}
	pid := cmd.Process.Pid
	var ws syscall.WaitStatus
	if _, err := wait4(pid, &ws, 0); err != nil {
		return 0, fmt.Errorf("run: waiting for %s to start: %w", argv[0], err)
	}
	if !ws.Stopped() || ws.StopSignal() != syscall.SIGTRAP {
		return ws, fmt.Errorf("run: %s did not stop at exec (status %#x)", argv[0], uint32(ws))
	}
	opts := syscall.PTRACE_O_TRACECLONE | syscall.PTRACE_O_TRACEFORK | syscall.PTRACE_O_TRACEVFORK | syscall.PTRACE_O_TRACEEXEC
	if err := syscall.PtraceSetOptions(pid, opts); err != nil {
		syscall.Kill(pid, syscall.SIGKILL)
		return 0, fmt.Errorf("run: setting ptrace options: %w", err)
	}
	if opt.Started != nil {
		opt.Started(pid)
	}
	t := &tracer{opt: opt, announced: make(map[int]bool), started: map[int]bool{pid: true}}
	if err := syscall.PtraceCont(pid, 0); err != nil {
		return 0, fmt.Errorf("run: %w", err)
	}
	status, err := t.loop(pid)
	cmd.Process.Release()
	return status, errors.Join(append([]error{err}, t.errs...)...)
}

// tracer follows one traced program.
type tracer struct {
	opt RunOptions
	// A new task (thread or process) starts in a SIGSTOP stop that is ours
	// to swallow. It may be reported before or after the clone/fork event
	// that announces it, so both orders are tracked.
	announced map[int]bool // announced by an event, first stop not seen yet
	started   map[int]bool // first stop seen
	held      map[int]bool // tasks stopped for a capture, not to be resumed
	errs      []error
}

// loop dispatches wait events until the program's first process ends.
func (t *tracer) loop(pid int) (syscall.WaitStatus, error) {
	for {
		var ws syscall.WaitStatus
		tid, err := wait4(-1, &ws, 0)
		if err != nil {
			return 0, fmt.Errorf("run: wait: %w", err)
		}
		switch {
		case ws.Exited() || ws.Signaled():
			if tid == pid {
				return ws, nil
			}
			delete(t.started, tid) // its id may be reused
			delete(t.announced, tid)
		case ws.Stopped():
			t.stopped(tid, ws)
		}
	}
}

// stopped handles one ptrace-stop of task tid.
func (t *tracer) stopped(tid int, ws syscall.WaitStatus) {
	sig := ws.StopSignal()
	if sig == syscall.SIGTRAP && ws.TrapCause() != 0 {
		switch ws.TrapCause() {
		case syscall.PTRACE_EVENT_CLONE, syscall.PTRACE_EVENT_FORK, syscall.PTRACE_EVENT_VFORK:
			if msg, err := syscall.PtraceGetEventMsg(tid); err == nil && !t.started[int(msg)] {
				t.announced[int(msg)] = true
			}
		}
		syscall.PtraceCont(tid, 0)
		return
	}
	if sig == syscall.SIGSTOP && (t.announced[tid] || !t.started[tid]) {
		// A new task's initial stop: not a signal to pass on.
		delete(t.announced, tid)
		t.started[tid] = true
		syscall.PtraceCont(tid, 0)
		return
	}
	t.started[tid] = true
	si, err := getSiginfo(tid)
	if err != nil {
		// No siginfo: a group-stop (or a task we have not seen announced).
		syscall.PtraceCont(tid, 0)
		return
	}
	if fatalSignals[sig] && t.isFatal(tid, sig, si) {
		t.capture(tid, si)
	}
	syscall.PtraceCont(tid, int(sig))
}

// siginfo is the part of a siginfo_t that a capture records.
type siginfo struct {
	signo, errno, code int32
	addr               uint64
}

func getSiginfo(tid int) (siginfo, error) {
	var buf [128]byte
	if _, _, e := syscall.Syscall6(syscall.SYS_PTRACE, ptraceGetSiginfo, uintptr(tid), 0, uintptr(unsafe.Pointer(&buf[0])), 0, 0); e != 0 {
		return siginfo{}, e
	}
	le := func(o int) uint32 {
		return uint32(buf[o]) | uint32(buf[o+1])<<8 | uint32(buf[o+2])<<16 | uint32(buf[o+3])<<24
	}
	return siginfo{int32(le(0)), int32(le(4)), int32(le(8)), uint64(le(16)) | uint64(le(20))<<32}, nil
}

// isFatal reports whether delivering sig to tid will kill the process: the
// signal is not caught by a handler, or the kernel raised it for a fault
// while it was blocked or ignored (then it forces the default action).
func (t *tracer) isFatal(tid int, sig syscall.Signal, si siginfo) bool {
	status, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", tid))
	if err != nil {
		return true
	}
	m, err := procfs.ParseSignalMasks(status)
	if err != nil {
		return true
	}
	s := int(sig)
	kernelFault := si.code > 0 // SI_USER, SI_TKILL, SI_QUEUE... are <= 0
	switch {
	case kernelFault && (procfs.Has(m.Blocked, s) || procfs.Has(m.Ignored, s)):
		return true
	case procfs.Has(m.Caught, s), procfs.Has(m.Ignored, s):
		return false
	}
	return true
}

// capture stops every thread of the process of tid, which is at a fatal
// signal, records the process and hands it to OnCrash.
func (t *tracer) capture(tid int, si siginfo) {
	tgid, err := threadGroup(tid)
	if err != nil {
		t.errs = append(t.errs, fmt.Errorf("capture of task %d: %w", tid, err))
		return
	}
	p := &Process{PID: uint32(tgid), Time: time.Now(), Crash: &Crash{ThreadID: uint32(tid), Signal: si.signo, Code: si.code, Errno: si.errno, Address: si.addr}}
	t.held = map[int]bool{tid: true}
	tids := t.stopThreads(p, tgid)
	if err := p.readLive(tgid, append([]int{tid}, tids...)); err != nil {
		t.errs = append(t.errs, fmt.Errorf("capture of process %d: %w", tgid, err))
		return
	}
	if t.opt.OnCrash != nil {
		if err := t.opt.OnCrash(p); err != nil {
			t.errs = append(t.errs, err)
		}
	}
}

// stopThreads sends SIGSTOP to every other thread of tgid and waits until
// each has stopped, exited or timed out. The stopped ones are left stopped:
// the process is about to die of its signal, which ends them too.
func (t *tracer) stopThreads(p *Process, tgid int) []int {
	var stopped []int
	for round := 0; round < 10; round++ {
		var todo []int
		for _, tid := range tasks(tgid) {
			if !t.held[tid] {
				todo = append(todo, tid)
			}
		}
		if len(todo) == 0 {
			break
		}
		for _, tid := range todo {
			syscall.Tgkill(tgid, tid, syscall.SIGSTOP)
		}
		deadline := time.Now().Add(stopTimeout)
		for _, tid := range todo {
			t.held[tid] = true
			for {
				var ws syscall.WaitStatus
				n, err := wait4(tid, &ws, syscall.WNOHANG)
				if err != nil {
					break // gone
				}
				if n == tid {
					if ws.Stopped() {
						stopped = append(stopped, tid)
					}
					break
				}
				if time.Now().After(deadline) {
					p.note("thread %d did not stop within %v; not captured", tid, stopTimeout)
					break
				}
				time.Sleep(time.Millisecond)
			}
		}
	}
	return stopped
}

// tasks lists the thread ids of process tgid.
func tasks(tgid int) []int {
	ents, err := os.ReadDir(fmt.Sprintf("/proc/%d/task", tgid))
	if err != nil {
		return nil
	}
	var ids []int
	for _, e := range ents {
		if id, err := strconv.Atoi(e.Name()); err == nil {
			ids = append(ids, id)
		}
	}
	return ids
}

// threadGroup returns the process id (Tgid) of task tid.
func threadGroup(tid int) (int, error) {
	status, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", tid))
	if err != nil {
		return 0, err
	}
	for line := range bytes.Lines(status) {
		if v, ok := bytes.CutPrefix(line, []byte("Tgid:")); ok {
			return strconv.Atoi(string(bytes.TrimSpace(v)))
		}
	}
	return 0, fmt.Errorf("/proc/%d/status has no Tgid", tid)
}

// readLive records the stopped process tgid whose threads tids (the crashing
// one first) are all in ptrace-stop.
func (p *Process) readLive(tgid int, tids []int) error {
	dir := fmt.Sprintf("/proc/%d/", tgid)
	for _, tid := range tids {
		th, cpu, err := liveThread(tid)
		if err != nil {
			p.note("thread %d: registers unreadable: %v", tid, err)
			continue
		}
		if p.CPU == arch.Unknown {
			p.CPU = cpu
		}
		if comm, err := os.ReadFile(fmt.Sprintf("%stask/%d/comm", dir, tid)); err == nil {
			th.Name = strings.TrimSuffix(string(comm), "\n")
		}
		p.Threads = append(p.Threads, th)
	}
	if len(p.Threads) == 0 {
		return errors.New("no thread's registers could be read")
	}
	var err error
	if p.ProcMaps, err = os.ReadFile(dir + "maps"); err != nil {
		return err
	}
	if p.Maps, err = procfs.ParseMaps(p.ProcMaps); err != nil {
		p.note("%smaps: %v; using the %d mappings before it", dir, err, len(p.Maps))
	}
	read := func(name string) []byte {
		b, err := os.ReadFile(dir + name)
		if err != nil {
			p.note("%s%s: %v", dir, name, err)
		}
		return b
	}
	p.ProcStatus, p.CmdLine, p.Environ, p.Auxv = read("status"), read("cmdline"), read("environ"), read("auxv")
	if stat := read("stat"); stat != nil {
		p.processTimes(stat)
	}
	p.addHostInfo()
	mem, err := os.Open(dir + "mem")
	if err != nil {
		return err
	}
	defer mem.Close()
	lm := liveMemory{mem}
	p.collectMemory(lm)
	p.addDSODebug(lm)
	p.collectModules(lm, func(path string) (io.ReaderAt, io.Closer, error) {
		// The process's own view of the file, even when it was replaced or
		// deleted on disk since it was mapped.
		for _, m := range p.Maps {
			if m.Path == path {
				if f, err := os.Open(fmt.Sprintf("%smap_files/%x-%x", dir, m.Start, m.End)); err == nil {
					return f, f, nil
				}
				break
			}
		}
		return openFile(path)
	})
	return nil
}

// liveThread reads the registers of a stopped task: the general ones with
// PTRACE_GETREGSET (whose length tells a 32-bit process from a 64-bit one,
// see liveContext), the floating-point ones with PTRACE_GETFPREGS (the
// fxsave area, for both).
func liveThread(tid int) (Thread, arch.CPU, error) {
	gregs := make([]byte, amd64NumRegs*8)
	iov := syscall.Iovec{Base: &gregs[0]}
	iov.SetLen(len(gregs))
	if _, _, e := syscall.Syscall6(syscall.SYS_PTRACE, ptraceGetRegset, uintptr(tid), ntPrstatus, uintptr(unsafe.Pointer(&iov)), 0, 0); e != 0 {
		return Thread{}, 0, e
	}
	gregs = gregs[:min(iov.Len, uint64(len(gregs)))]
	fx := make([]byte, fxsaveSize)
	if _, _, e := syscall.Syscall6(syscall.SYS_PTRACE, ptraceGetFPRegs, uintptr(tid), 0, uintptr(unsafe.Pointer(&fx[0])), 0, 0); e != 0 {
		fx = nil
	}
	th := Thread{ID: uint32(tid)}
	c, cpu, err := liveContext(gregs, fx)
	if err != nil {
		return th, 0, err
	}
	th.Context = c
	switch c := c.(type) {
	case *x86.Context:
		th.SP, th.PC = uint64(c.Esp), uint64(c.Eip)
	case *amd64.Context:
		th.SP, th.PC = c.Rsp, c.Rip
	}
	return th, cpu, nil
}

// processTimes reads the start time and CPU times from /proc/PID/stat.
func (p *Process) processTimes(stat []byte) {
	const clockTicks = 100 // USER_HZ on every Linux architecture we capture
	// The command name (field 2) is in parentheses and may hold spaces.
	i := bytes.LastIndexByte(stat, ')')
	if i < 0 {
		return
	}
	f := strings.Fields(string(stat[i+1:])) // f[0] is field 3 (state)
	if len(f) < 20 {
		return
	}
	num := func(field int) uint64 { v, _ := strconv.ParseUint(f[field-3], 10, 64); return v }
	tick := func(n uint64) time.Duration { return time.Duration(n) * time.Second / clockTicks }
	p.UserTime, p.SystemTime = tick(num(14)), tick(num(15))
	if boot := bootTime(); !boot.IsZero() {
		p.StartTime = boot.Add(tick(num(22)))
	}
}

// bootTime returns the boot time from /proc/stat's btime line.
func bootTime() time.Time {
	b, err := os.ReadFile("/proc/stat")
	if err != nil {
		return time.Time{}
	}
	for line := range bytes.Lines(b) {
		if v, ok := bytes.CutPrefix(line, []byte("btime ")); ok {
			if s, err := strconv.ParseInt(string(bytes.TrimSpace(v)), 10, 64); err == nil {
				return time.Unix(s, 0)
			}
		}
	}
	return time.Time{}
}

// liveMemory reads a stopped process's memory through /proc/PID/mem.
type liveMemory struct{ f *os.File }

func (m liveMemory) ReadMemory(addr uint64, n int) ([]byte, error) {
	if n < 0 || addr > 1<<63 {
		return nil, fmt.Errorf("memory: bad range %#x+%d", addr, n)
	}
	b := make([]byte, n)
	if _, err := m.f.ReadAt(b, int64(addr)); err != nil {
		return nil, fmt.Errorf("memory at %#x: %w", addr, err)
	}
	return b, nil
}

// wait4 waits for task tid (-1: any) including threads, retrying on EINTR.
func wait4(tid int, ws *syscall.WaitStatus, options int) (int, error) {
	for {
		n, err := syscall.Wait4(tid, ws, options|syscall.WALL, nil)
		if err != syscall.EINTR {
			return n, err
		}
	}
}
