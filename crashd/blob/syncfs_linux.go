package blob

import (
	"fmt"

	"golang.org/x/sys/unix"
)

// syncAll makes every file of the store's file system durable with one
// syncfs(2): one journal commit for a whole batch of PutLazy, where an
// fsync per file commits the journal once each. It reports whether it
// did.
func (d *Dir) syncAll() (bool, error) {
	f, err := d.root.Open(".")
	if err != nil {
		return false, nil // the per-file way reports it
	}
	defer f.Close()
	if err := unix.Syncfs(int(f.Fd())); err != nil {
		return true, fmt.Errorf("blob sync: syncfs: %w", err)
	}
	return true, nil
}
