package symcache

import (
	"fmt"

	"github.com/gobreakpad/gobreakpad/internal/mmap"
)

// Open maps the file at path into memory and parses it; Close unmaps it.
func Open(path string) (*Reader, error) {
	data, unmap, err := mmap.Open(path, mmap.Normal)
	if err != nil {
		return nil, err
	}
	c, err := Parse(data)
	if err != nil {
		unmap()
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	c.close = unmap
	return c, nil
}
