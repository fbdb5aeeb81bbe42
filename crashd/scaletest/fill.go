package scaletest

import (
	"errors"
	"os"
	"syscall"
)

// Fill writes a file of zeros at path until the file system is full (the
// write fails with ENOSPC) or limit bytes are written, and returns how many
// bytes it wrote.
func Fill(path string, limit int64) (int64, error) {
	f, err := os.OpenFile(path, os.O_CREATE|os.O_WRONLY|os.O_TRUNC, 0o600)
	if err != nil {
		return 0, err
	}
	defer f.Close()
	buf := make([]byte, 64<<10)
	var n int64
	for n < limit {
		k, err := f.Write(buf[:min(int64(len(buf)), limit-n)])
		n += int64(k)
		if err != nil {
			if errors.Is(err, syscall.ENOSPC) {
				return n, nil
			}
			return n, err
		}
	}
	return n, nil
}
