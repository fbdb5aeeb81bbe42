//go:build !unix

package gsym

import (
	"io"
	"os"
)

// mapFile reads all of f; systems other than Unix get no memory mapping.
func mapFile(f *os.File, size int64) ([]byte, func() error, error) {
	b, err := io.ReadAll(f)
	return b, func() error { return nil }, err
}
