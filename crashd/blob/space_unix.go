//go:build linux || darwin || freebsd || netbsd || openbsd || dragonfly

package blob

import (
	"fmt"

	"golang.org/x/sys/unix"
)

// FreeSpace returns the bytes available to an unprivileged writer on the
// file system holding path, and its size.
func FreeSpace(path string) (free, total uint64, err error) {
	var st unix.Statfs_t
	if err := unix.Statfs(path, &st); err != nil {
		return 0, 0, fmt.Errorf("free space of %s: %w", path, err)
	}
	bs := uint64(st.Bsize)
	return uint64(st.Bavail) * bs, uint64(st.Blocks) * bs, nil
}
