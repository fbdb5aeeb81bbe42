//go:build !unix

package cfiindex

import (
	"io"
	"os"
)

// mapFile reads the whole file where mapping is not available.
func mapFile(f *os.File, size int64) ([]byte, func() error, error) {
	b, err := io.ReadAll(f)
	return b, func() error { return nil }, err
}
