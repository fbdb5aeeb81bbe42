package cfi

import (
	"encoding/binary"
	"errors"
	"fmt"
)

// plusOneMemory is Breakpad's FakeMemoryRegion: the word at any address is
// the address plus one.
type plusOneMemory struct{ reads *int }

func (m plusOneMemory) ReadMemory(addr uint64, n int) ([]byte, error) {
	if m.reads != nil {
		*m.reads++
	}
	b := make([]byte, 8)
	binary.LittleEndian.PutUint64(b, addr+1)
	return b[:n], nil
}

var errOutside = errors.New("outside the dump")

// stackMemory is a stack of words at base, of the word size.
type stackMemory struct {
	base uint64
	data []byte
}

func newStack(base uint64, size int, words ...uint64) *stackMemory {
	m := &stackMemory{base: base}
	for _, w := range words {
		if size == 4 {
			m.data = binary.LittleEndian.AppendUint32(m.data, uint32(w))
		} else {
			m.data = binary.LittleEndian.AppendUint64(m.data, w)
		}
	}
	return m
}

func (m *stackMemory) ReadMemory(addr uint64, n int) ([]byte, error) {
	if addr < m.base || addr-m.base > uint64(len(m.data)) || uint64(len(m.data))-(addr-m.base) < uint64(n) {
		return nil, fmt.Errorf("%#x+%d: %w", addr, n, errOutside)
	}
	off := addr - m.base
	return m.data[off : off+uint64(n)], nil
}

// shortMemory returns fewer bytes than asked for.
type shortMemory struct{}

func (shortMemory) ReadMemory(addr uint64, n int) ([]byte, error) { return make([]byte, n-1), nil }
