package main

import (
	"encoding/json"
	"github.com/gobreakpad/gobreakpad/internal/testkit/corpus"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/gobreakpad/gobreakpad/internal/testkit/cmdtest"
)

func TestMain(m *testing.M) { cmdtest.Main(m) }

// TestCommandLine runs the built program with Breakpad's current flags and
// checks exit status, stdout and stderr.
func TestCommandLine(t *testing.T) {
	prog := cmdtest.Build(t, ".")
	human := cmdtest.Run(t, prog, exampleDump, exampleSyms)
	machine := cmdtest.Run(t, prog, "-m", exampleDump, exampleSyms)
	if human.Code != 0 || machine.Code != 0 || human.Stderr != "" || !strings.HasPrefix(machine.Stdout, "OS|Linux|") {
		t.Fatalf("plain runs: %+v %+v", human, machine)
	}
	same := []struct {
		args []string
		want string
	}{
		{[]string{"-f", "machine", exampleDump, exampleSyms}, machine.Stdout},
		{[]string{"-f", "human", exampleDump, exampleSyms}, human.Stdout},
		{[]string{"-j", "1", exampleDump, exampleSyms}, human.Stdout},
		{[]string{"--jobs", "3", "-m", exampleDump, exampleSyms}, machine.Stdout},
	}
	for _, c := range same {
		if r := cmdtest.Run(t, prog, c.args...); r.Code != 0 || r.Stderr != "" || r.Stdout != c.want {
			t.Errorf("%v: exit %d, stderr %q, same report %v", c.args, r.Code, r.Stderr, r.Stdout == c.want)
		}
	}

	// -t INDEX: the crashed thread, then thread INDEX, and no module list.
	r := cmdtest.Run(t, prog, "-t", "0", exampleDump, exampleSyms)
	crashed := human.Stdout[:strings.Index(human.Stdout, "\nLoaded modules:")]
	thread0 := crashed[strings.Index(crashed, "Thread 0 (crashed)\n")+len("Thread 0 (crashed)\n"):]
	if r.Code != 0 || r.Stdout != crashed+"\nThread 0\n"+thread0 {
		t.Errorf("-t 0: exit %d, stderr %q, stdout:\n%s", r.Code, r.Stderr, r.Stdout)
	}
	r = cmdtest.Run(t, prog, "-t", "5", exampleDump, exampleSyms)
	if r.Code != 1 || r.Stdout != crashed || r.Stderr != "minidump_stackwalk: thread index 5 is out of range (the dump has 1 threads)\n" {
		t.Errorf("-t 5: exit %d, stderr %q, stdout:\n%s", r.Code, r.Stderr, r.Stdout)
	}

	// -d: the pointers on the stack instead of the frames.
	r = cmdtest.Run(t, prog, "-d", exampleDump, exampleSyms)
	for _, want := range []string{
		"Thread 0 (crashed)\nstack begin:    0x000000007ffc0000\nstack end:      0x000000007ffc0040\nstack pointer:  0x000000007ffc0000\n",
		"\nStack range to dump: 0x000000007ffc0000 - 0x000000007ffc0040\n\nPossible instruction pointers:\n",
		" *(0x000000007ffc0000) = 0x000000000000002a\n",
		" *(0x000000007ffc0008) = 0x000055555555515a main [demo.c : 31 + 0xa]\n",
		"\nLoaded modules:\n",
	} {
		if !strings.Contains(r.Stdout, want) {
			t.Errorf("-d report lacks %q:\n%s", want, r.Stdout)
		}
	}
	if r.Code != 0 || r.Stderr != "" || strings.Contains(r.Stdout, "Found by:") {
		t.Errorf("-d: exit %d, stderr %q", r.Code, r.Stderr)
	}
	r = cmdtest.Run(t, prog, "-d", "-s", exampleDump, exampleSyms)
	if !strings.Contains(r.Stdout, " *(0x000000007ffc0000) = 0x000000000000002a 2a 00 00 00 00 00 00 00  *.......\n") {
		t.Errorf("-d -s: the other words lack their bytes:\n%s", r.Stdout)
	}
}

// TestUsageErrors: one line on stderr, nothing on stdout, exit 2; --help
// and --version print to stdout.
func TestUsageErrors(t *testing.T) {
	prog := cmdtest.Build(t, ".")
	for _, c := range []struct {
		args []string
		msg  string
	}{
		{nil, "missing minidump file"},
		{[]string{"-x", exampleDump}, "flag provided but not defined: -x"},
		{[]string{"-m", "--json", exampleDump}, "--json and -m (or -f machine) conflict"},
		{[]string{"-f", "machine", "--json", exampleDump}, "--json and -m (or -f machine) conflict"},
		{[]string{"-b", "--json", exampleDump}, "--json and -b conflict (-b applies to the human report)"},
		{[]string{"-m", "-c", exampleDump}, "-m and -c conflict (-c applies to the human report)"},
		{[]string{"-c", "-t", "0", exampleDump}, "-c and -t cannot be used together"},
		{[]string{"-b", "-d", exampleDump}, "-b and -d conflict"},
		{[]string{"-f", "xml", exampleDump}, `unknown output format "xml" (human or machine)`},
		{[]string{"-f", "human", "-m", exampleDump}, "-f human and -m conflict"},
		{[]string{"-j", "0", exampleDump}, "-j 0: at least 1 thread at once"},
		{[]string{"-t", "-1", exampleDump}, "-t -1: thread indexes start at 0"},
	} {
		r := cmdtest.Run(t, prog, c.args...)
		want := "minidump_stackwalk: " + c.msg + " (see --help)\n"
		if r.Code != 2 || r.Stdout != "" || r.Stderr != want {
			t.Errorf("%q: exit %d, stdout %q, stderr %q; want exit 2, %q", c.args, r.Code, r.Stdout, r.Stderr, want)
		}
	}
	if r := cmdtest.Run(t, prog, "--help"); r.Code != 0 || r.Stderr != "" || !strings.Contains(r.Stdout, "--jobs N, -j N") {
		t.Errorf("--help: exit %d, stderr %q, stdout %q", r.Code, r.Stderr, r.Stdout)
	}
	if r := cmdtest.Run(t, prog, "--version"); r.Code != 0 || r.Stderr != "" || !regexp.MustCompile(`^minidump_stackwalk \S+`).MatchString(r.Stdout) {
		t.Errorf("--version: exit %d, stderr %q, stdout %q", r.Code, r.Stderr, r.Stdout)
	}
}

// TestHonestErrors: a missing symbol path is a warning; an ELF core file or
// a microdump is named as such, with the program that reads it.
func TestHonestErrors(t *testing.T) {
	prog := cmdtest.Build(t, ".")
	r := cmdtest.Run(t, prog, exampleDump, "/nonexistent/syms", exampleSyms)
	if r.Code != 0 || !strings.Contains(r.Stdout, "demo!draw_pixel") ||
		r.Stderr != "minidump_stackwalk: warning: symbol path /nonexistent/syms does not exist; walking without it\n" {
		t.Errorf("missing symbol path: exit %d, stderr %q", r.Code, r.Stderr)
	}
	tmp := t.TempDir()
	core := make([]byte, 64)
	copy(core, "\x7fELF\x02\x01\x01")
	core[16] = 4 // ET_CORE
	corePath := filepath.Join(tmp, "core")
	os.WriteFile(corePath, core, 0o644)
	md := filepath.Join(tmp, "log.txt")
	os.WriteFile(md, []byte("I/google-breakpad(1): -----BEGIN BREAKPAD MICRODUMP-----\n"), 0o644)
	short := filepath.Join(tmp, "short.dmp")
	os.WriteFile(short, []byte("MDMP\x93\xa7\x00\x00shortie"), 0o644)
	empty := filepath.Join(tmp, "empty.dmp")
	os.WriteFile(empty, nil, 0o644)
	for _, c := range []struct{ path, want string }{
		{corePath, "is an ELF core file, not a minidump: convert it with core2md ("},
		{md, "holds a microdump, not a minidump: walk it with microdump_stackwalk ("},
		// Not "header: 32 bytes at offset 0x0: past end of file (size 15)".
		{short, "minidump_stackwalk: " + short + ": not a minidump: too short (15 bytes; a minidump's header alone is 32)\n"},
		{empty, "minidump_stackwalk: " + empty + ": not a minidump: empty file\n"},
	} {
		r := cmdtest.Run(t, prog, c.path)
		if r.Code != 1 || r.Stdout != "" || !strings.Contains(r.Stderr, c.want) || strings.Count(r.Stderr, "\n") != 1 {
			t.Errorf("%s: exit %d, stderr %q", c.path, r.Code, r.Stderr)
		}
	}
}

// TestDamagedDump: a real dump cut in half still prints what can be read,
// and says what was lost: a warning per unreadable stream on stderr (human
// and -m) and rust-minidump's soft_errors in JSON (main_module still 0, as
// rust-minidump writes whatever the module list holds).
func TestDamagedDump(t *testing.T) {
	dir := corpus.Dir(t)
	data, err := os.ReadFile(filepath.Join(dir, "generated", "deep_chain-x64-O2", "crash.dmp"))
	if err != nil {
		t.Skip(err)
	}
	half := filepath.Join(t.TempDir(), "half.dmp")
	if err := os.WriteFile(half, data[:len(data)/2], 0o644); err != nil {
		t.Fatal(err)
	}
	prog := cmdtest.Build(t, ".")
	for _, args := range [][]string{{half}, {"-m", half}} {
		r := cmdtest.Run(t, prog, args...)
		if r.Code != 0 || r.Stdout == "" || !strings.Contains(r.Stderr, "system info: ") ||
			!strings.Contains(r.Stderr, "exception: truncated at 0x") || !strings.Contains(r.Stderr, "past end of file") {
			t.Errorf("%q: exit %d, stderr %q", args, r.Code, r.Stderr)
		}
	}
	r := cmdtest.Run(t, prog, "--json", half)
	var doc struct {
		SoftErrors []map[string]string `json:"soft_errors"`
		MainModule *int                `json:"main_module"`
	}
	if err := json.Unmarshal([]byte(r.Stdout), &doc); err != nil {
		t.Fatalf("--json: %v", err)
	}
	if len(doc.SoftErrors) < 3 || !strings.Contains(doc.SoftErrors[0]["ProcessingProblem"], "past end of file") || doc.MainModule == nil || *doc.MainModule != 0 {
		t.Errorf("--json: soft_errors %v, main_module %v", doc.SoftErrors, doc.MainModule)
	}
}
