// Command core2md converts a Linux ELF core file into a minidump:
//
//	core2md [-o OUT] [--no-host-info] [--breakpad-memory] CORE [EXECUTABLE]
//
// Cores of x86-64, 32-bit x86, AArch64 and 32-bit arm processes are understood, whether
// the kernel or qemu-user wrote them. EXECUTABLE is the crashed program: it
// identifies the program's module when the core does not name its files
// (qemu-user's cores) and supplies the code around the program counters.
// The minidump goes to OUT, by default CORE.dmp. Unless --no-host-info is
// given, this machine's /proc/cpuinfo, release file and kernel version are
// recorded as the crashed machine's. --breakpad-memory keeps only the memory
// Breakpad's client saves (the stacks and 256 bytes around the crash's pc).
// What could not be converted is listed on
// standard error; the dump is still written.
package main

import (
	"bytes"
	"context"
	"fmt"
	"github.com/gobreakpad/gobreakpad/cmd/internal/cmdline"
	"io"
	"os"

	"github.com/urfave/cli/v3"

	"github.com/gobreakpad/gobreakpad/capture"
	"github.com/gobreakpad/gobreakpad/capture/elfcore"
	"github.com/gobreakpad/gobreakpad/microdump"
)

func main() {
	os.Exit(cmdline.Run(context.Background(), newCommand(os.Stderr), os.Args, os.Stdout, os.Stderr))
}

func newCommand(stderr io.Writer) *cli.Command {
	return &cli.Command{
		Name:            "core2md",
		Usage:           "convert an ELF core file into a minidump",
		ArgsUsage:       "CORE [EXECUTABLE]",
		HideHelpCommand: true,
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "o", Usage: "write the minidump to `FILE` (default CORE.dmp)"},
			&cli.BoolFlag{Name: "no-host-info", Usage: "do not record this machine's CPU and OS information"},
			&cli.BoolFlag{Name: "breakpad-memory", Usage: "keep only the memory Breakpad's client saves: the stacks and 256 bytes around the crash's pc (no vDSO, no code around return addresses)"},
		},
		Action: func(ctx context.Context, cmd *cli.Command) error {
			args := cmd.Args().Slice()
			if len(args) < 1 || len(args) > 2 {
				return cmdline.Usagef("want CORE [EXECUTABLE], have %d arguments", len(args))
			}
			out := cmd.String("o")
			if out == "" {
				out = args[0] + ".dmp"
			}
			opt := capture.CoreOptions{HostInfo: !cmd.Bool("no-host-info")}
			if len(args) == 2 {
				opt.Executable = args[1]
			}
			return convert(stderr, args[0], out, opt, cmd.Bool("breakpad-memory"))
		},
	}
}

func convert(stderr io.Writer, corePath, out string, opt capture.CoreOptions, breakpadMemory bool) error {
	core, err := elfcore.Open(corePath)
	if err != nil {
		return explainNotCore(corePath, err)
	}
	defer core.Close()
	p, err := capture.FromCore(core, opt)
	if err != nil {
		return fmt.Errorf("%s: %w", corePath, err)
	}
	if st, err := os.Stat(corePath); err == nil {
		p.Time = st.ModTime() // the core was written when the process died
	}
	for _, n := range p.Notes {
		fmt.Fprintf(stderr, "core2md: note: %s\n", n)
	}
	if breakpadMemory {
		p.KeepBreakpadMemory()
	}
	return p.WriteMinidumpFile(out)
}

// explainNotCore says what the file is when it is a minidump or a
// microdump rather than a core file.
func explainNotCore(path string, err error) error {
	b := make([]byte, 64<<10)
	f, oerr := os.Open(path)
	if oerr != nil {
		return err
	}
	n, _ := io.ReadFull(f, b)
	f.Close()
	b = b[:n]
	switch {
	case bytes.HasPrefix(b, []byte("MDMP")):
		return fmt.Errorf("%s is a minidump, not a core file: walk it with minidump_stackwalk", path)
	case bytes.Contains(b, []byte(microdump.Begin)):
		return fmt.Errorf("%s holds a microdump, not a core file: walk it with microdump_stackwalk", path)
	case bytes.HasPrefix(b, []byte("\x7fELF")) && len(b) > 17 && b[16] != 4:
		return fmt.Errorf("%s is an ELF file but not a core file (%w)", path, err)
	}
	return err
}
