package blob

import (
	"fmt"

	"golang.org/x/sys/windows"
)

// FreeSpace returns the bytes available to the caller on the volume
// holding path, and its size.
func FreeSpace(path string) (free, total uint64, err error) {
	p, err := windows.UTF16PtrFromString(path)
	if err != nil {
		return 0, 0, fmt.Errorf("free space of %s: %w", path, err)
	}
	if err := windows.GetDiskFreeSpaceEx(p, &free, &total, nil); err != nil {
		return 0, 0, fmt.Errorf("free space of %s: %w", path, err)
	}
	return free, total, nil
}
