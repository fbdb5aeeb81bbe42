package main

import (
	"bufio"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/gobreakpad/gobreakpad/internal/testkit/cmdtest"
	"github.com/gobreakpad/gobreakpad/internal/testkit/corpus"
)

// TestStackContentsBreakpad compares -s (stack contents) with Breakpad's
// minidump_stackwalk -s over the corpus cases whose walks are Breakpad's
// (Breakpad's and rust-minidump's dumps), byte for byte. Breakpad is
// the binary $GOBREAKPAD_BREAKPAD_STACKWALK names (tools/breakpad/build.sh
// builds it); without it the test skips.
func TestStackContentsBreakpad(t *testing.T) {
	bp := os.Getenv("GOBREAKPAD_BREAKPAD_STACKWALK")
	if bp == "" {
		t.Skip("$GOBREAKPAD_BREAKPAD_STACKWALK is not set (tools/breakpad/build.sh builds Breakpad's minidump_stackwalk)")
	}
	prog := cmdtest.Build(t, ".")
	root := corpus.Dir(t)
	f, err := os.Open(filepath.Join(root, "cases.tsv"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	n, differ, slow := 0, 0, 0
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		fields := strings.Split(sc.Text(), "\t")
		// The generated cases' walks differ from Breakpad's on purpose
		// (docs/stackwalk.md, "Deliberate differences": the walk ends at
		// _start, signal frames, ...), and their stack contents with them.
		if len(fields) < 4 || !(strings.HasPrefix(fields[0], "bp-") || strings.HasPrefix(fields[0], "rm-")) {
			continue
		}
		// The macOS dumps' main threads end one frame before Breakpad's
		// (docs/stackwalk.md, "A copy of a frame's return address at its
		// stack pointer"; stackwalk's TestCorpus compares the rest).
		if fields[0] == "rm-simple-crashpad" || fields[0] == "rm-pipeline-inlines-macos-segv" {
			continue
		}
		args := []string{"-s", filepath.Join(root, fields[1])}
		for _, p := range strings.Fields(fields[3]) {
			args = append(args, filepath.Join(root, p))
		}
		// Breakpad's -s looks every stack word up; on some dumps it runs
		// for many minutes (rust-minidump's macOS pipeline dump: over 8
		// minutes): those are left out, and counted.
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		want, _ := exec.CommandContext(ctx, bp, args...).Output() // its exit status is not ours to judge
		timedOut := ctx.Err() != nil
		cancel()
		if timedOut {
			slow++
			t.Logf("%s: Breakpad's -s took over 20 s: left out", fields[0])
			continue
		}
		got := cmdtest.RunClean(t, prog, nil, args...)
		n++
		if got.Stdout != string(want) {
			differ++
			t.Errorf("%s: -s differs from Breakpad's (%d and %d bytes)", fields[0], len(got.Stdout), len(want))
		}
	}
	t.Logf("%d cases compared, %d differ; %d left out (Breakpad too slow)", n, differ, slow)
}
