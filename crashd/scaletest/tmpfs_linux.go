package scaletest

import (
	"fmt"
	"os"
	"strconv"
	"syscall"
)

// MountTmpfs mounts a tmpfs of size bytes on dir (created if needed), for
// tests of a full disk; it needs root (CAP_SYS_ADMIN). unmount unmounts
// it (lazily: a file still open does not keep it mounted).
func MountTmpfs(dir string, size int64) (unmount func() error, err error) {
	if os.Geteuid() != 0 {
		return nil, fmt.Errorf("scaletest: mounting a tmpfs needs root")
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, err
	}
	if err := syscall.Mount("tmpfs", dir, "tmpfs", syscall.MS_NOSUID|syscall.MS_NODEV, "size="+strconv.FormatInt(size, 10)+",mode=0700"); err != nil {
		return nil, fmt.Errorf("scaletest: mount -t tmpfs %s: %w", dir, err)
	}
	return func() error {
		if err := syscall.Unmount(dir, syscall.MNT_DETACH); err != nil {
			return fmt.Errorf("scaletest: umount %s: %w", dir, err)
		}
		return nil
	}, nil
}
