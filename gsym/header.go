package gsym

import (
	"encoding/binary"
	"fmt"
)

// Magic is the GSYM magic number ('GSYM' read as a 4-byte integer in the
// file's byte order).
const Magic = 0x4753594d

// Version is the only version this package reads and writes.
const Version = 1

// HeaderSize is the size of the encoded Header.
const HeaderSize = 48

// MaxUUIDSize is the largest UUID a header holds.
const MaxUUIDSize = 20

// Header is the start of every GSYM file.
type Header struct {
	Magic   uint32
	Version uint16
	// AddrOffSize is the size of one address table entry: 1, 2, 4 or 8.
	AddrOffSize uint8
	// UUIDSize is the number of bytes of UUID used.
	UUIDSize uint8
	// BaseAddress is the address the address table's offsets are added to.
	BaseAddress  uint64
	NumAddresses uint32
	// StrtabOffset and StrtabSize place the string table in the file.
	StrtabOffset uint32
	StrtabSize   uint32
	UUID         [MaxUUIDSize]byte
}

// ID returns the UUID's bytes in use.
func (h *Header) ID() []byte { return h.UUID[:min(int(h.UUIDSize), MaxUUIDSize)] }

// byteOrder tells the file's byte order from its first four bytes.
func byteOrder(b []byte) (binary.ByteOrder, error) {
	if len(b) < 4 {
		return nil, fmt.Errorf("gsym: %d bytes: too short for a header", len(b))
	}
	switch {
	case binary.LittleEndian.Uint32(b) == Magic:
		return binary.LittleEndian, nil
	case binary.BigEndian.Uint32(b) == Magic:
		return binary.BigEndian, nil
	}
	return nil, fmt.Errorf("gsym: bad magic % x", b[:4])
}

// parseHeader decodes and checks a header.
func parseHeader(b []byte) (Header, binary.ByteOrder, error) {
	var h Header
	order, err := byteOrder(b)
	if err != nil {
		return h, nil, err
	}
	if len(b) < HeaderSize {
		return h, nil, fmt.Errorf("gsym: %d bytes: too short for a header", len(b))
	}
	h.Magic = order.Uint32(b[0:])
	h.Version = order.Uint16(b[4:])
	h.AddrOffSize = b[6]
	h.UUIDSize = b[7]
	h.BaseAddress = order.Uint64(b[8:])
	h.NumAddresses = order.Uint32(b[16:])
	h.StrtabOffset = order.Uint32(b[20:])
	h.StrtabSize = order.Uint32(b[24:])
	copy(h.UUID[:], b[28:48])
	if h.Version != Version {
		return h, nil, fmt.Errorf("gsym: unsupported version %d (reads version %d)", h.Version, Version)
	}
	switch h.AddrOffSize {
	case 1, 2, 4, 8:
	default:
		return h, nil, fmt.Errorf("gsym: invalid address offset size %d", h.AddrOffSize)
	}
	if h.UUIDSize > MaxUUIDSize {
		return h, nil, fmt.Errorf("gsym: invalid UUID size %d", h.UUIDSize)
	}
	return h, order, nil
}

// appendHeader encodes h.
func appendHeader(b []byte, order binary.AppendByteOrder, h *Header) []byte {
	b = order.AppendUint32(b, h.Magic)
	b = order.AppendUint16(b, h.Version)
	b = append(b, h.AddrOffSize, h.UUIDSize)
	b = order.AppendUint64(b, h.BaseAddress)
	b = order.AppendUint32(b, h.NumAddresses)
	b = order.AppendUint32(b, h.StrtabOffset)
	b = order.AppendUint32(b, h.StrtabSize)
	return append(b, h.UUID[:]...)
}
