//go:build unix

package server

import (
	"fmt"
	"log/slog"
	"os"
	"syscall"
)

// restrictUmask makes every file the process creates (the queue's, the
// index's, the symbols') unreadable by others: umask 077, or 027 when the
// group reads the data too.
func restrictUmask(groupReadable bool) {
	mask := 0o077
	if groupReadable {
		mask = 0o027
	}
	old := syscall.Umask(mask)
	syscall.Umask(old | mask) // never wider than the one crashd was given
}

// restrictDir makes the data directory mode (0700 or 0750) when it is
// wider: its files then are out of others' reach whatever their own
// modes (an install older than this rule).
func restrictDir(dir string, mode os.FileMode, log *slog.Logger) error {
	st, err := os.Stat(dir)
	if err != nil {
		return err
	}
	if st.Mode().Perm()&^mode == 0 {
		return nil
	}
	if err := os.Chmod(dir, st.Mode().Perm()&mode); err != nil {
		return fmt.Errorf("chmod %s: %w", dir, err)
	}
	log.Warn("data directory was readable by others; made "+fmt.Sprintf("%#o", st.Mode().Perm()&mode), "dir", dir, "was", fmt.Sprintf("%#o", st.Mode().Perm()))
	return nil
}
