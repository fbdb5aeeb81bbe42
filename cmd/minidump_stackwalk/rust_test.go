package main

import (
	"debug/elf"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gobreakpad/gobreakpad/arch"
	"github.com/gobreakpad/gobreakpad/arch/amd64"
	"github.com/gobreakpad/gobreakpad/internal/testkit/cmdtest"
	"github.com/gobreakpad/gobreakpad/internal/testkit/corpus"
	"github.com/gobreakpad/gobreakpad/minidump"
	"github.com/gobreakpad/gobreakpad/minidump/synth"
)

// TestSocorroInvocation runs Socorro's MinidumpStackwalkRule command line
// (rust-minidump's flags) on corpus dumps against a Breakpad-layout store
// served on a loopback port: the report it writes into --output-file is
// the --json report of a walk with the same symbols from the local stores.
func TestSocorroInvocation(t *testing.T) {
	prog := cmdtest.Build(t, ".")
	for _, c := range readCases(t, remoteCases) {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			raw := filepath.Join(dir, "raw.json")
			// Socorro's raw crash: annotations, one naming the main
			// module's certificate as a JSON string inside the JSON.
			local := cmdtest.RunClean(t, prog, nil, append([]string{"--json", c.dump}, c.paths...)...)
			var doc struct {
				Modules []struct {
					Filename    string  `json:"filename"`
					CertSubject *string `json:"cert_subject"`
				} `json:"modules"`
			}
			if err := json.Unmarshal([]byte(local.Stdout), &doc); err != nil || len(doc.Modules) == 0 {
				t.Fatalf("--json: %v\n%s", err, local.Stderr)
			}
			main := doc.Modules[0].Filename
			sig, _ := json.Marshal(map[string][]string{"Some Signer": {main}})
			rawJSON, _ := json.Marshal(map[string]string{"ProductName": "Test", "ModuleSignatureInfo": string(sig)})
			if err := os.WriteFile(raw, rawJSON, 0o644); err != nil {
				t.Fatal(err)
			}
			want := cmdtest.RunClean(t, prog, nil, append([]string{"--json", "--evil-json=" + raw, c.dump}, c.paths...)...)
			if want.Code != 0 || !strings.Contains(want.Stdout, `"cert_subject":"Some Signer"`) || want.Stdout == local.Stdout {
				t.Fatalf("--evil-json did not name the certificate: exit %d\n%s", want.Code, want.Stderr)
			}

			srv := serveStores(t, c.paths...)
			defer srv.Close()
			cache, tmp := filepath.Join(dir, "cache"), filepath.Join(dir, "tmp")
			out, log := filepath.Join(dir, "out.json"), filepath.Join(dir, "log.txt")
			r := cmdtest.RunClean(t, prog, nil, "--evil-json="+raw, "--symbols-cache="+cache, "--symbols-tmp="+tmp,
				"--no-color", "--output-file="+out, "--log-file="+log, "--symbols-url="+srv.URL, "--json", "--verbose=error", c.dump)
			if r.Code != 0 || r.Stdout != "" {
				t.Fatalf("exit %d, stdout %q, stderr:\n%s", r.Code, r.Stdout, r.Stderr)
			}
			got, err := os.ReadFile(out)
			if err != nil {
				t.Fatal(err)
			}
			if string(got) != want.Stdout {
				t.Errorf("--output-file differs from --json:\ngot  %.600s\nwant %.600s", got, want.Stdout)
			}
			if _, err := os.Stat(log); err != nil {
				t.Errorf("--log-file: %v", err)
			}
			if srv.n.Load() == 0 {
				t.Error("no request reached the store")
			}
			if ents, _ := os.ReadDir(tmp); len(ents) != 0 {
				t.Errorf("left in --symbols-tmp: %v", ents)
			}
			if ents, _ := os.ReadDir(cache); len(ents) == 0 {
				t.Error("nothing in --symbols-cache")
			}
		})
	}
}

// TestRustFlags: each of rust-minidump's flags does what its --help says
// (or is accepted where it changes nothing in ours), beside Breakpad's.
func TestRustFlags(t *testing.T) {
	prog := cmdtest.Build(t, ".")
	c := readCases(t, []string{"bp-linux_inline"})[0]
	dir := t.TempDir()
	run := func(args ...string) cmdtest.Result {
		t.Helper()
		r := cmdtest.RunClean(t, prog, nil, append(append(args, c.dump), c.paths...)...)
		if r.Code != 0 {
			t.Fatalf("%v: exit %d\n%s", args, r.Code, r.Stderr)
		}
		return r
	}
	human, js, brief := run(), run("--json"), run("-b")
	if r := run("--human"); r.Stdout != human.Stdout {
		t.Error("--human differs from the default report")
	}
	if r := run("--brief"); r.Stdout != brief.Stdout {
		t.Error("--brief differs from -b")
	}
	if r := run("--json", "--pretty"); !strings.HasPrefix(r.Stdout, "{\n  ") {
		t.Error("--pretty does not indent")
	}
	cy := filepath.Join(dir, "cyborg.json")
	if r := run("--cyborg=" + cy); r.Stdout != human.Stdout {
		t.Error("--cyborg: stdout is not the human report")
	}
	if b, _ := os.ReadFile(cy); string(b) != js.Stdout {
		t.Error("--cyborg: the file is not the JSON report")
	}
	if r := run("--cyborg="+cy, "--pretty"); r.Stdout != human.Stdout {
		t.Error("--cyborg --pretty: stdout is not the human report")
	}
	if b, _ := os.ReadFile(cy); !strings.HasPrefix(string(b), "{\n  ") {
		t.Error("--cyborg --pretty: the JSON is not indented")
	}
	out := filepath.Join(dir, "out.txt")
	if r := run("--output-file", out, "--brief"); r.Stdout != "" {
		t.Errorf("--output-file: stdout %q", r.Stdout)
	}
	if b, _ := os.ReadFile(out); string(b) != brief.Stdout {
		t.Error("--output-file: the file is not the report")
	}
	// As rust-minidump, no report file for a dump that cannot be read.
	notDump := filepath.Join(dir, "not.dmp")
	os.WriteFile(notDump, []byte("not a minidump"), 0o644)
	missing := filepath.Join(dir, "none.json")
	if r := cmdtest.RunClean(t, prog, nil, "--output-file", missing, "--json", notDump); r.Code == 0 {
		t.Errorf("--output-file with a bad dump: exit 0")
	}
	if _, err := os.Stat(missing); !os.IsNotExist(err) {
		t.Errorf("--output-file with a bad dump: the file was created (%v)", err)
	}
	// -v's summary goes to --log-file; --verbose=error has none.
	log := filepath.Join(dir, "log.txt")
	if r := run("-v", "--log-file", log); r.Stderr != "" {
		t.Errorf("--log-file: stderr %q", r.Stderr)
	}
	if b, _ := os.ReadFile(log); !strings.Contains(string(b), "minidump_stackwalk: ") {
		t.Errorf("--log-file holds no -v summary: %q", b)
	}
	if r := run("--verbose=error"); r.Stderr != "" {
		t.Errorf("--verbose=error: stderr %q", r.Stderr)
	}
	if r := run("--verbose=info"); r.Stderr == "" {
		t.Error("--verbose=info: no summary")
	}
	for _, f := range [][]string{{"--no-color"}, {"--no-interactive"}, {"--recover-function-args"}, {"--features=unstable-all"}, {"--features", "stable-all"}, {"--use-local-debuginfo"}} { // x86-64: no arguments recovered
		if r := run(f...); r.Stdout != human.Stdout {
			t.Errorf("%v changes the report", f)
		}
	}
	// --symbols-path is a symbol path argument.
	var args []string
	for _, p := range c.paths {
		args = append(args, "--symbols-path="+p)
	}
	if r := cmdtest.RunClean(t, prog, nil, append(args, "--json", c.dump)...); r.Stdout != js.Stdout {
		t.Errorf("--symbols-path: exit %d, the report differs\n%s", r.Code, r.Stderr)
	}
	if r := cmdtest.RunClean(t, prog, nil, "-V"); r.Code != 0 || !strings.HasPrefix(r.Stdout, "minidump_stackwalk ") {
		t.Errorf("-V: exit %d %q", r.Code, r.Stdout)
	}
	for _, bad := range [][]string{{"--human", "--json"}, {"--cyborg=" + cy, "--json"}, {"--features=all"}, {"--verbose=loud"}, {"--symbols-download-timeout-secs=0"}} {
		if r := cmdtest.RunClean(t, prog, nil, append(bad, c.dump)...); r.Code != 2 {
			t.Errorf("%v: exit %d, want 2 (usage)\n%s", bad, r.Code, r.Stderr)
		}
	}
}

// TestUseLocalDebugInfo: --use-local-debuginfo reads the native file at a
// module's recorded path (here a copy of a corpus binary) for its symbols.
func TestUseLocalDebugInfo(t *testing.T) {
	prog := cmdtest.Build(t, ".")
	bin := filepath.Join(corpus.Dir(t), "generated", "deep_chain-x64-O2", "deep_chain")
	data, err := os.ReadFile(bin)
	if err != nil {
		t.Skip(err)
	}
	ef, err := elf.Open(bin)
	if err != nil {
		t.Fatal(err)
	}
	note, err := ef.Section(".note.gnu.build-id").Data()
	ef.Close()
	if err != nil || len(note) < 16 {
		t.Fatalf("build id note: %v", err)
	}
	buildID := note[16:] // namesz 4, descsz, type, "GNU\0"
	dir := t.TempDir()
	local := filepath.Join(dir, "bin", "deep_chain")
	os.MkdirAll(filepath.Dir(local), 0o755)
	if err := os.WriteFile(local, data, 0o755); err != nil {
		t.Fatal(err)
	}
	const base = 0x555555554000
	b := synth.New(arch.AMD64, minidump.PlatformLinux)
	st := synth.NewStack(0x7ffc0000, 8)
	st.Zeros(0x40)
	ctx := &amd64.Context{ContextFlags: amd64.ContextFull, Rip: base + 0x117a, Rsp: 0x7ffc0000, Rbp: 0x7ffc0010}
	b.AddThread(1, synth.AMD64(ctx), st)
	b.AddELFModule(local, base, 0x4000, buildID)
	b.SetExceptionRecord(1, minidump.ExceptionRecord{ExceptionCode: 11}, synth.AMD64(ctx))
	dump := filepath.Join(dir, "local.dmp")
	if err := b.WriteFile(dump); err != nil {
		t.Fatal(err)
	}
	cache := "--symbols-cache=" + filepath.Join(dir, "cache")
	without := cmdtest.RunClean(t, prog, nil, "-b", cache, dump)
	with := cmdtest.RunClean(t, prog, nil, "-b", "-v", cache, "--use-local-debuginfo", dump)
	if with.Code != 0 || !strings.Contains(with.Stdout, "deep_chain!") || strings.Contains(without.Stdout, "deep_chain!") {
		t.Errorf("with --use-local-debuginfo (exit %d):\n%s%s\nwithout:\n%s", with.Code, with.Stdout, with.Stderr, without.Stdout)
	}
}

// TestQuickStart walks the README's quick start: every frame of the
// crashed thread is named, down to _start (a first impression without
// scanned junk frames).
func TestQuickStart(t *testing.T) {
	readme, err := os.ReadFile(filepath.Join("..", "..", "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	var args []string
	for _, l := range strings.Split(string(readme), "\n") {
		if f := strings.Fields(l); len(f) > 3 && f[0] == "go" && f[1] == "run" && f[2] == "./cmd/minidump_stackwalk" {
			for _, a := range f[3:] {
				args = append(args, filepath.Join("..", "..", a))
			}
			break
		}
	}
	if len(args) == 0 {
		t.Fatal("no quick start command in README.md")
	}
	r := cmdtest.RunClean(t, cmdtest.Build(t, "."), nil, args...)
	var frames []string
	in := false
	for _, l := range strings.Split(r.Stdout, "\n") {
		switch {
		case strings.HasSuffix(l, "(crashed)"):
			in = true
		case in && l == "":
			in = false
		case in && !strings.HasPrefix(l, "    "):
			frames = append(frames, l)
		}
	}
	if r.Code != 0 || len(frames) < 3 || r.Stderr != "" {
		t.Fatalf("exit %d, %d frames, stderr %q", r.Code, len(frames), r.Stderr)
	}
	for _, f := range frames {
		if !strings.Contains(f, "!") {
			t.Errorf("frame without a function: %q", f)
		}
	}
	if last := frames[len(frames)-1]; !strings.Contains(last, "!_start") {
		t.Errorf("the walk ends at %q, not _start", last)
	}
}

// TestMachineStackContents: -m -s is accepted, as Breakpad accepts it, and
// prints the -m report.
func TestMachineStackContents(t *testing.T) {
	prog := cmdtest.Build(t, ".")
	m := cmdtest.RunClean(t, prog, nil, "-m", exampleDump, exampleSyms)
	ms := cmdtest.RunClean(t, prog, nil, "-m", "-s", exampleDump, exampleSyms)
	if ms.Code != 0 || ms.Stdout != m.Stdout {
		t.Errorf("-m -s: exit %d, %s", ms.Code, ms.Stderr)
	}
}

// TestRecoverFunctionArgs: --recover-function-args prints, after each x86
// frame whose function has a parameter list, the arguments read from the
// stack: c1(200, true) and c2(201), as the program called them
// (testdata/truth/cxx/cxx.cc); without it the report is Breakpad's.
func TestRecoverFunctionArgs(t *testing.T) {
	prog := cmdtest.Build(t, ".")
	d := filepath.Join("..", "..", "testdata", "truth", "cxx", "dtor-x86-O0")
	plain := cmdtest.RunClean(t, prog, nil, filepath.Join(d, "crash.dmp"), filepath.Join(d, "symbols"))
	r := cmdtest.RunClean(t, prog, nil, "--recover-function-args", filepath.Join(d, "crash.dmp"), filepath.Join(d, "symbols"))
	for _, want := range []string{
		"    Found by: call frame info\n    Arguments (assuming cdecl [static function])\n        arg 0 (int) = 0x000000c9\n\n",
		"    Arguments (assuming cdecl [static function])\n        arg 0 (int) = 0x000000c8\n        arg 1 (bool) = 0x00000001\n\n",
	} {
		if r.Code != 0 || !strings.Contains(r.Stdout, want) {
			t.Errorf("exit %d: no %q in\n%s", r.Code, want, r.Stdout)
		}
	}
	if strings.Contains(plain.Stdout, "Arguments") {
		t.Error("arguments without --recover-function-args")
	}
	if u := cmdtest.RunClean(t, prog, nil, "--features=unstable-all", filepath.Join(d, "crash.dmp"), filepath.Join(d, "symbols")); u.Stdout != r.Stdout {
		t.Error("--features=unstable-all does not recover arguments")
	}
}

// TestRustDumpAndVerboseLevel: rust-minidump's --dump prints the raw
// contents as minidump_dump does (byte for byte Breakpad's minidump_dump
// reference of the corpus), into --output-file too, and conflicts with the
// other output formats; --verbose LEVEL without "=" takes LEVEL as the
// level, not as the dump (--verbose error: no summary; --verbose info: the
// summary), while a dump named like a level stays the dump.
func TestRustDumpAndVerboseLevel(t *testing.T) {
	prog := cmdtest.Build(t, ".")
	dump := corpus.File(t, "breakpad/processor/ascii_read_av.dmp")
	want, err := os.ReadFile(corpus.File(t, "breakpad/expected/bp-ascii_read_av.dump.txt"))
	if err != nil {
		t.Fatal(err)
	}
	if r := cmdtest.Run(t, prog, "--dump", dump); r.Code != 0 || r.Stdout != string(want) {
		t.Errorf("--dump: exit %d, equal to minidump_dump's reference %v: %s", r.Code, r.Stdout == string(want), r.Stderr)
	}
	out := filepath.Join(t.TempDir(), "out.txt")
	if r := cmdtest.Run(t, prog, "--dump", "--brief", "--output-file="+out, dump); r.Code != 0 || r.Stdout != "" {
		t.Errorf("--dump --brief --output-file: exit %d, %d bytes on stdout", r.Code, len(r.Stdout))
	}
	if b, _ := os.ReadFile(out); string(b) != string(want) {
		t.Error("--dump --output-file: the file is not the dump's contents")
	}
	for _, f := range []string{"--json", "--human", "-m", "-s"} {
		if r := cmdtest.Run(t, prog, "--dump", f, dump); r.Code != 2 || !strings.Contains(r.Stderr, "--dump and "+f+" conflict") {
			t.Errorf("--dump %s: exit %d, %q", f, r.Code, r.Stderr)
		}
	}

	gen := corpus.File(t, "generated/threads-x64-O2")
	d, syms := filepath.Join(gen, "crash.dmp"), filepath.Join(gen, "symbols")
	plain := cmdtest.Run(t, prog, "-m", d, syms)
	if r := cmdtest.Run(t, prog, "--verbose", "error", "-m", d, syms); r.Code != 0 || r.Stdout != plain.Stdout || r.Stderr != plain.Stderr {
		t.Errorf("--verbose error: exit %d, stderr %q", r.Code, r.Stderr)
	}
	if r := cmdtest.Run(t, prog, "--verbose", "info", "-m", d, syms); r.Code != 0 || r.Stdout != plain.Stdout || !strings.Contains(r.Stderr, "minidump_stackwalk: symbols: ") {
		t.Errorf("--verbose info: exit %d, stderr %q, want the summary", r.Code, r.Stderr)
	}
	if r := cmdtest.Run(t, prog, "--verbose", "off", "-m", d, syms); r.Code != 0 || r.Stdout != plain.Stdout || r.Stderr != "" {
		t.Errorf("--verbose off: exit %d, stderr %q", r.Code, r.Stderr)
	}
	// A dump file named "warn" in the working directory stays the dump.
	dir := t.TempDir()
	b, _ := os.ReadFile(d)
	os.WriteFile(filepath.Join(dir, "warn"), b, 0o644)
	cmd := exec.Command(prog, "-v", "-m", "warn", syms)
	cmd.Dir = dir
	var stderr strings.Builder
	cmd.Stderr = &stderr
	got, err := cmd.Output()
	if err != nil || string(got) != plain.Stdout || !strings.Contains(stderr.String(), "minidump_stackwalk: symbols: ") {
		t.Errorf("-v with a dump named warn: %v, stderr %q", err, stderr.String())
	}
}
