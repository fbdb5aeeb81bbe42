//go:build !(linux || darwin || freebsd || netbsd || openbsd || dragonfly || windows)

package blob

import (
	"errors"
	"fmt"
)

// FreeSpace is not known on this system: an error.
func FreeSpace(path string) (free, total uint64, err error) {
	return 0, 0, fmt.Errorf("free space of %s: %w", path, errors.ErrUnsupported)
}
