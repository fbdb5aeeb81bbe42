package minidump

import "fmt"

// BreakpadInfo.Validity bits.
const (
	BreakpadInfoValidDumpThreadID       = 1 << 0
	BreakpadInfoValidRequestingThreadID = 1 << 1
)

// BreakpadInfo is the Breakpad info stream (MDRawBreakpadInfo): which thread
// wrote the dump and which thread asked for it.
type BreakpadInfo struct {
	Validity           uint32
	DumpThreadID       uint32
	RequestingThreadID uint32
}

// BreakpadInfo decodes the Breakpad info stream.
func (f *File) BreakpadInfo() (*BreakpadInfo, error) {
	b, err := f.stream(BreakpadInfoStream)
	if err != nil {
		return nil, fmt.Errorf("breakpad info: %w", err)
	}
	if len(b) != breakpadInfoSize {
		return nil, fmt.Errorf("breakpad info: %d bytes, want %d", len(b), breakpadInfoSize)
	}
	return &BreakpadInfo{le32(b), le32(b[4:]), le32(b[8:])}, nil
}

// AssertionInfo is the Breakpad assertion info stream (MDRawAssertionInfo):
// an invalid-parameter or pure-virtual-call report on Windows.
type AssertionInfo struct {
	Expression [128]uint16
	Function   [128]uint16
	File       [128]uint16
	Line       uint32
	Type       uint32
}

// Assertion types (AssertionInfo.Type).
const (
	AssertionUnknown          = 0
	AssertionInvalidParameter = 1
	AssertionPureVirtualCall  = 2
)

const assertionInfoSize = 3*256 + 8

// AssertionInfo decodes the assertion info stream.
func (f *File) AssertionInfo() (*AssertionInfo, error) {
	b, err := f.stream(AssertionInfoStream)
	if err != nil {
		return nil, fmt.Errorf("assertion info: %w", err)
	}
	if len(b) != assertionInfoSize {
		return nil, fmt.Errorf("assertion info: %d bytes, want %d", len(b), assertionInfoSize)
	}
	a := new(AssertionInfo)
	for i := range 128 {
		a.Expression[i] = le16(b[2*i:])
		a.Function[i] = le16(b[256+2*i:])
		a.File[i] = le16(b[512+2*i:])
	}
	a.Line = le32(b[768:])
	a.Type = le32(b[772:])
	return a, nil
}
