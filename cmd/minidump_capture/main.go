// Command minidump_capture runs a program and writes a minidump when it
// crashes, without linking a crash reporter into it:
//
//	minidump_capture [-o DIR] [--breakpad-memory] -- PROGRAM [ARGS ...]
//
// The program runs under ptrace. When one of its processes receives a fatal
// signal it does not handle (SIGSEGV, SIGBUS, SIGILL, SIGFPE, SIGABRT,
// SIGTRAP, SIGSYS), a minidump of all its threads is written to
// DIR/NAME.PID.dmp, NAME being the base name of the crashed process's argv[0]
// (DIR defaults to the current directory; it is created, as mkdir -p does,
// and checked to be writable before the program starts: the command refuses
// to start it otherwise), and the
// signal is then delivered, so the program dies as it would have. This
// command exits with the program's status: the same exit code, or death by
// the same signal. Signals the program handles pass through untouched; a
// program that does not crash leaves no dump. SIGTERM and SIGHUP sent to
// this command are passed on to the program; SIGINT and SIGQUIT (which the
// terminal sends to both) do not end this command before the program.
// --breakpad-memory keeps only the memory Breakpad's client saves (the
// stacks and 256 bytes around the crash's pc).
//
// Captures of x86-64 programs and of 32-bit x86 programs on x86-64 hosts are
// supported. What could not be captured (unreadable memory, threads that
// would not stop) is listed on standard error; the dump is still written.
package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"syscall"

	"github.com/urfave/cli/v3"

	"github.com/gobreakpad/gobreakpad/capture"
	"github.com/gobreakpad/gobreakpad/cmd/internal/cmdline"
)

func main() {
	var status syscall.WaitStatus
	code := cmdline.Run(context.Background(), newCommand(os.Stderr, &status), os.Args, os.Stdout, os.Stderr)
	var none syscall.WaitStatus // no status: the program never ran
	if code != 0 && status == none {
		os.Exit(code)
	}
	exitLike(status)
}

func newCommand(stderr io.Writer, status *syscall.WaitStatus) *cli.Command {
	return &cli.Command{
		Name:            "minidump_capture",
		Usage:           "run a program and write a minidump when it crashes",
		ArgsUsage:       "-- PROGRAM [ARGS ...]",
		HideHelpCommand: true,
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "o", Value: ".", Usage: "write minidumps into `DIR`"},
			&cli.BoolFlag{Name: "breakpad-memory", Usage: "keep only the memory Breakpad's client saves: the stacks and 256 bytes around the crash's pc (no vDSO, no code around return addresses)"},
		},
		Action: func(ctx context.Context, cmd *cli.Command) error {
			argv := cmd.Args().Slice()
			if len(argv) == 0 {
				return cmdline.Usagef("missing program to run")
			}
			dir := cmd.String("o")
			if err := dumpDir(dir); err != nil {
				return err
			}
			ws, err := capture.Run(argv, capture.RunOptions{
				Stdin: os.Stdin, Stdout: os.Stdout, Stderr: os.Stderr,
				OnCrash: func(p *capture.Process) error {
					if cmd.Bool("breakpad-memory") {
						p.KeepBreakpadMemory()
					}
					return writeDump(stderr, dir, argv[0], p)
				},
				Started: forwardSignals(),
			})
			*status = ws
			return err
		},
	}
}

// dumpDir makes the dump directory (and its parents) when it does not exist
// yet, and checks that a file can be created in it: before the program runs,
// so that a crash is never lost for want of a place to write it.
func dumpDir(dir string) error {
	if err := os.MkdirAll(dir, 0o777); err != nil {
		return fmt.Errorf("dump directory: %w; not starting the program", err)
	}
	f, err := os.CreateTemp(dir, ".minidump_capture-check-*")
	if err != nil {
		return fmt.Errorf("dump directory %s is not writable (%w); not starting the program", dir, errors.Unwrap(err))
	}
	name := f.Name()
	f.Close()
	return os.Remove(name)
}

// writeDump writes p to DIR/PROGRAM.PID.dmp and reports it. PROGRAM is the
// crashed process's own argv[0] (it may have exec'd another program), else
// the program this command started.
func writeDump(stderr io.Writer, dir, program string, p *capture.Process) error {
	if arg0, _, _ := strings.Cut(string(p.CmdLine), "\x00"); arg0 != "" {
		program = arg0
	}
	name := filepath.Join(dir, fmt.Sprintf("%s.%d.dmp", filepath.Base(program), p.PID))
	if err := p.WriteMinidumpFile(name); err != nil {
		return err
	}
	for _, n := range p.Notes {
		fmt.Fprintf(stderr, "minidump_capture: note: %s\n", n)
	}
	fmt.Fprintf(stderr, "minidump_capture: %s: signal %d in thread %d of process %d\n", name, p.Crash.Signal, p.Crash.ThreadID, p.PID)
	return nil
}
