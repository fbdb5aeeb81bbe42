package main

import (
	"context"
	"strings"
	"testing"

	"github.com/gobreakpad/gobreakpad/cmd/internal/cmdline"
)

// TestNoArguments: crashdiff without a dump is a usage error, said as the
// other programs say theirs.
func TestNoArguments(t *testing.T) {
	var stdout, stderr strings.Builder
	code := cmdline.Run(context.Background(), newCommand(&stdout, &stderr), []string{"crashdiff"}, &stdout, &stderr)
	if code != 2 || stderr.String() != "crashdiff: no dump or directory given (see --help)\n" {
		t.Errorf("exit %d, stderr %q", code, stderr.String())
	}
}

// TestNegativePrefetch: --prefetch -1 is a usage error, not accepted silently.
func TestNegativePrefetch(t *testing.T) {
	var stdout, stderr strings.Builder
	code := cmdline.Run(context.Background(), newCommand(&stdout, &stderr), []string{"crashdiff", "--prefetch", "-1", "x.dmp"}, &stdout, &stderr)
	if code != 2 || !strings.Contains(stderr.String(), "--prefetch -1: at least 0") {
		t.Errorf("exit %d, stderr %q", code, stderr.String())
	}
}
