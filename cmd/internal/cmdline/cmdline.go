// Package cmdline is what the programs' command lines share: the version
// that --version prints, and one way of reporting usage errors (one line on
// stderr naming the program and the problem, exit status 2; --help prints to
// stdout).
package cmdline

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"regexp"
	"runtime/debug"
	"strings"

	"github.com/urfave/cli/v3"
)

// Release is the version of this source tree when it is a tagged release
// ("v1.2.0"), and empty between releases: the commit a release tag points at
// sets it, so a build from a checkout of the tag knows its version too.
const Release = ""

// Version returns the programs' version: the module version the build info
// records (a `go install ...@v1.2.0` build, or the pseudo-version Go gives a
// build from a checkout: v0.0.0-DATE-REVISION), else Release, else "devel"
// with the VCS revision the build info records, or a note that none was
// recorded (a build with -buildvcs=false or outside a checkout).
func Version() string {
	bi, ok := debug.ReadBuildInfo()
	return versionOf(bi, ok)
}

func versionOf(bi *debug.BuildInfo, ok bool) string {
	var rev, modified string
	if ok {
		for _, s := range bi.Settings {
			switch s.Key {
			case "vcs.revision":
				rev = s.Value
			case "vcs.modified":
				modified = s.Value
			}
		}
	}
	if len(rev) > 12 {
		rev = rev[:12]
	}
	if ok && bi.Main.Version != "" && bi.Main.Version != "(devel)" {
		v := bi.Main.Version
		if rev != "" && !strings.Contains(v, rev) {
			v += " " + rev
		}
		return v
	}
	if Release != "" {
		return Release
	}
	if rev == "" {
		return "devel (no VCS revision recorded: built with -buildvcs=false or outside a git checkout)"
	}
	v := "devel " + rev
	if modified == "true" {
		v += "+dirty"
	}
	return v
}

// UsageError is a mistake on the command line: Run prints it as one line
// and exits with status 2.
type UsageError struct{ Err error }

func (e *UsageError) Error() string { return e.Err.Error() }
func (e *UsageError) Unwrap() error { return e.Err }

// Usagef returns a UsageError.
func Usagef(format string, args ...any) error {
	return &UsageError{fmt.Errorf(format, args...)}
}

// ExitStatus is an error that makes Run exit with that status and print
// nothing (the program has said what went wrong itself).
type ExitStatus int

func (e ExitStatus) Error() string { return fmt.Sprintf("exit status %d", int(e)) }

// Run runs cmd over args with its output on stdout and stderr, and returns
// the process exit status: 0; 2 after a usage error, printed as
// "NAME: PROBLEM (see --help)"; the status of an ExitStatus error; 1 after
// any other error, printed as "NAME: ERROR". It sets the command's version
// (--version, no short alias: -v belongs to the programs) and its writers.
func Run(ctx context.Context, cmd *cli.Command, args []string, stdout, stderr io.Writer) int {
	cmd.Writer, cmd.ErrWriter = stdout, stderr
	if cmd.Version == "" {
		cmd.Version = Version()
	}
	// Every command of the tree reports its own usage errors this way (urfave
	// only calls a command's own OnUsageError: a subcommand without one prints
	// "Incorrect Usage:" and its help), and an unknown subcommand is a usage
	// error too (urfave's help action says "No help topic for 'X'").
	var notFound struct {
		cmd  *cli.Command
		name string
	}
	var prepare func(c *cli.Command)
	prepare = func(c *cli.Command) {
		c.OnUsageError = func(ctx context.Context, cmd *cli.Command, err error, isSubcommand bool) error {
			return &UsageError{plainParseError(err)}
		}
		if len(c.Commands) > 0 {
			c.CommandNotFound = func(_ context.Context, cmd *cli.Command, name string) {
				notFound.cmd, notFound.name = cmd, name
			}
			if c.Action == nil {
				// Without a command (urfave printed the help on stdout,
				// exit 0) or with an unknown one.
				c.Action = func(_ context.Context, cmd *cli.Command) error {
					if cmd.Args().Len() > 0 {
						return Usagef("no command %q (commands: %s)", cmd.Args().First(), commandNames(cmd))
					}
					return Usagef("no command given (commands: %s)", commandNames(cmd))
				}
			}
		}
		for _, sub := range c.Commands {
			prepare(sub)
		}
	}
	prepare(cmd)
	cmd.ExitErrHandler = func(context.Context, *cli.Command, error) {}
	err := cmd.Run(ctx, args)
	if err == nil && notFound.cmd != nil {
		err = Usagef("no command %q (commands: %s)", notFound.name, commandNames(notFound.cmd))
	}
	if err == nil {
		return 0
	}
	var st ExitStatus
	if errors.As(err, &st) {
		return int(st)
	}
	var ue *UsageError
	if errors.As(err, &ue) {
		fmt.Fprintf(stderr, "%s: %s (see --help)\n", cmd.Name, strings.TrimSpace(ue.Error()))
		return 2
	}
	fmt.Fprintf(stderr, "%s: %v\n", cmd.Name, err)
	return 1
}

// commandNames lists cmd's visible subcommands, comma-separated.
func commandNames(cmd *cli.Command) string {
	var names []string
	for _, sub := range cmd.VisibleCommands() {
		names = append(names, sub.Name)
	}
	return strings.Join(names, ", ")
}

func init() {
	cli.VersionFlag = &cli.BoolFlag{Name: "version", Aliases: []string{"V"}, Usage: "print the version", HideDefault: true, Local: true}
	cli.VersionPrinter = func(cmd *cli.Command) {
		fmt.Fprintf(cmd.Root().Writer, "%s %s\n", cmd.Root().Name, cmd.Root().Version)
	}
}

// CheckDirs returns a warning for each of paths that does not exist, is
// not a directory or cannot be examined ("symbol path X does not exist"), what naming the kind
// of path.
func CheckDirs(what string, paths []string) []string {
	var out []string
	for _, p := range paths {
		st, err := os.Stat(p)
		switch {
		case errors.Is(err, fs.ErrNotExist):
			out = append(out, fmt.Sprintf("%s %s does not exist", what, p))
		case err != nil:
			out = append(out, fmt.Sprintf("%s %v", what, err))
		case !st.IsDir():
			out = append(out, fmt.Sprintf("%s %s is a file, not a directory", what, p))
		}
	}
	return out
}

// parseErr is the text strconv's errors add to a flag's parse error.
var parseErr = regexp.MustCompile(`strconv\.Parse(Int|Uint|Float|Bool): parsing "[^"]*": (invalid syntax|value out of range)`)

// plainParseError says a flag's unparsable value in words ("not an
// integer") instead of with Go's strconv error.
func plainParseError(err error) error {
	msg := err.Error()
	m := parseErr.FindStringSubmatch(msg)
	if m == nil {
		return err
	}
	what := map[string]string{"Int": "not an integer", "Uint": "not a non-negative integer", "Float": "not a number", "Bool": "not true or false"}[m[1]]
	if m[2] == "value out of range" {
		what = "out of range"
	}
	return errors.New(strings.Replace(msg, m[0], what, 1))
}
