//go:build !linux

package scaletest

import "errors"

// MountTmpfs mounts a tmpfs on dir; Linux only.
func MountTmpfs(dir string, size int64) (unmount func() error, err error) {
	return nil, errors.New("scaletest: tmpfs mounts are Linux only")
}
