package minidump_test

import (
	"errors"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gobreakpad/gobreakpad/internal/testkit/corpus"
	"github.com/gobreakpad/gobreakpad/minidump"
)

// corpusDumps lists every minidump of the shared corpus.
func corpusDumps(t testing.TB) []string {
	root := corpus.Dir(t)
	var out []string
	for _, pat := range []string{"breakpad/processor/*.dmp", "rust-minidump/testdata/*.dmp", "generated/*/crash.dmp"} {
		m, _ := filepath.Glob(filepath.Join(root, pat))
		for _, p := range m {
			if !strings.Contains(filepath.Base(p), "microdump") { // text files, not minidumps
				out = append(out, p)
			}
		}
	}
	if len(out) == 0 {
		t.Skip("no minidumps in the corpus")
	}
	return out
}

// TestCorpusAllStreams reads every stream of every corpus dump through every
// accessor: nothing may panic, and a stream that is present either decodes
// or reports an error naming it.
func TestCorpusAllStreams(t *testing.T) {
	for _, p := range corpusDumps(t) {
		name := strings.TrimPrefix(p, corpus.Path()+"/")
		t.Run(name, func(t *testing.T) {
			f, err := minidump.Open(p)
			if err != nil {
				if strings.Contains(name, "invalid") || strings.Contains(name, "malformed") {
					return
				}
				t.Fatal(err)
			}
			defer f.Close()
			check := func(what string, err error) {
				if err != nil && !errors.Is(err, minidump.ErrNoStream) {
					t.Logf("%s: %v", what, err)
				}
			}
			_, err = f.ThreadList()
			check("threads", err)
			_, err = f.ModuleList()
			check("modules", err)
			_, err = f.Memory()
			check("memory", err)
			_, err = f.Exception()
			check("exception", err)
			_, err = f.SystemInfo()
			check("system info", err)
			_, err = f.MiscInfo()
			check("misc info", err)
			_, err = f.BreakpadInfo()
			check("breakpad info", err)
			_, err = f.MemoryInfoList()
			check("memory info", err)
			_, err = f.ThreadNames()
			check("thread names", err)
			_, err = f.ThreadInfoList()
			check("thread info", err)
			_, err = f.UnloadedModuleList()
			check("unloaded modules", err)
			_, err = f.HandleData()
			check("handle data", err)
			_, err = f.CrashpadInfo()
			check("crashpad", err)
			_, err = f.AssertionInfo()
			check("assertion", err)
			_, err = f.LinuxMaps()
			check("maps", err)
			_, err = f.LinuxDSODebug()
			check("dso debug", err)
			_, err = f.LinuxAuxv()
			check("auxv", err)
			_, err = f.LinuxCPUInfo()
			check("cpuinfo", err)
			_, err = f.LinuxProcStatus()
			check("status", err)
			_, err = f.LinuxLSBRelease()
			check("lsb", err)
			_, err = f.LinuxCmdLine()
			check("cmdline", err)
			_, err = f.LinuxEnviron()
			check("environ", err)
		})
	}
}

// TestCorpusLinuxStreams checks decoded Linux streams of one known dump.
func TestCorpusLinuxStreams(t *testing.T) {
	p := corpus.File(t, "breakpad/processor/linux_null_dereference.dmp")
	f, err := minidump.Open(p)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if args, err := f.LinuxCmdLine(); err != nil || len(args) != 1 || args[0] != "./driver" {
		t.Errorf("cmdline = %q, %v", args, err)
	}
	d, err := f.LinuxDSODebug()
	if err != nil {
		t.Fatal(err)
	}
	if d.Version != 1 || d.DSOCount != 8 || len(d.LinkMaps) != 8 || d.MapRva != 0x92f8 {
		t.Errorf("dso debug: %d link maps", d.DSOCount)
	}
	found := false
	for _, m := range d.LinkMaps {
		if strings.Contains(m.Name, "libc") {
			found = true
		}
	}
	if !found {
		t.Errorf("no libc among link maps %+v", d.LinkMaps)
	}
	maps, err := f.LinuxMaps()
	if err != nil || len(maps) == 0 {
		t.Errorf("maps: %d entries, %v", len(maps), err)
	}
	if auxv, err := f.LinuxAuxv(); err != nil || len(auxv) == 0 {
		t.Errorf("auxv: %d entries, %v", len(auxv), err)
	}
	if cpus, err := f.LinuxCPUInfo(); err != nil || len(cpus) == 0 || cpus[0][0].Key != "processor" {
		t.Errorf("cpuinfo: %v", err)
	}
	if st, err := f.LinuxProcStatus(); err != nil || len(st) == 0 || st[0].Key != "Name" {
		t.Errorf("status: %+v %v", st, err)
	}
}
