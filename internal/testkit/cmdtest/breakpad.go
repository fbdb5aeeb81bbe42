package cmdtest

import (
	"os"
	"testing"
)

// BreakpadTool is one of Google Breakpad's programs that tests run beside
// ours: the environment variable naming its binary and where
// tools/breakpad's scripts build it by default.
type BreakpadTool struct {
	// Env is the variable holding the binary's path.
	Env string
	// Default is the path the build script writes it to when DIR is left
	// at its default.
	Default string
	// Build is the script that builds it.
	Build string
}

var (
	// BreakpadMinidumpUpload is Breakpad's minidump_upload
	// (src/tools/linux/symupload), built by tools/breakpad/build-upload.sh.
	BreakpadMinidumpUpload = BreakpadTool{
		Env:     "GOBREAKPAD_BREAKPAD_MINIDUMP_UPLOAD",
		Default: "/tmp/bpsrc-upload/src/tools/linux/symupload/minidump_upload",
		Build:   "tools/breakpad/build-upload.sh",
	}
	// BreakpadSymUpload is Breakpad's sym_upload, built beside
	// minidump_upload.
	BreakpadSymUpload = BreakpadTool{
		Env:     "GOBREAKPAD_BREAKPAD_SYM_UPLOAD",
		Default: "/tmp/bpsrc-upload/src/tools/linux/symupload/sym_upload",
		Build:   "tools/breakpad/build-upload.sh",
	}
)

// Path returns the tool's binary: $Env when set (a test fails when it names
// no executable file), else the build script's default output when it is
// there; when neither, the test is skipped with a message saying how to get
// the tool.
func (b BreakpadTool) Path(tb testing.TB) string {
	tb.Helper()
	if p := os.Getenv(b.Env); p != "" {
		if st, err := os.Stat(p); err != nil || st.IsDir() || st.Mode()&0o111 == 0 {
			tb.Fatalf("$%s=%s is not an executable file", b.Env, p)
		}
		return p
	}
	if st, err := os.Stat(b.Default); err == nil && !st.IsDir() && st.Mode()&0o111 != 0 {
		return b.Default
	}
	tb.Skipf("Google Breakpad's program not built: skipping (run %s, or set $%s)", b.Build, b.Env)
	return ""
}
