package cfiindex

// Magic starts every index file.
const Magic = "GBPCFIX\x00"

// Version is the format version this package reads and writes.
const Version = 1

// Header flags.
const (
	// FlagHasCFI: the symbol file has STACK CFI INIT records (lookups
	// give CFI even when none is kept after overlaps are settled).
	FlagHasCFI = 1 << 0
	// FlagCorrupt: the symbol file held records that did not parse.
	FlagCorrupt = 1 << 1
	// FlagNoLookups: the symbol file's lookups cannot be served from a
	// SymCache (addresses at or above 4 GiB): read the symbol file for them.
	FlagNoLookups = 1 << 2
)

const (
	headerSize = 64
	initSize   = 32
	deltaSize  = 16
	winSize    = 40
	funcSize   = 24
)

// Stamp identifies the symbol file an index was made from.
type Stamp struct {
	Size    int64
	ModTime int64 // Unix nanoseconds
}

// Init is a STACK CFI INIT record with the delta records in force within its
// range, in address order.
type Init struct {
	Address, Size uint64
	Rules         string
	Deltas        []Delta
}

// Delta is a STACK CFI delta record.
type Delta struct {
	Address uint64
	Rules   string
}

// Win is the STACK WIN record answering for a range of addresses.
type Win struct {
	Address, Size        uint64
	Type                 uint8
	ParamSize            uint32
	SavedRegisterSize    uint32
	LocalSize            uint32
	AllocatesBasePointer bool
	HasProgram           bool
	Program              string
}

// Func is a FUNC record's range and parameter size.
type Func struct {
	Address, Size uint64
	ParamSize     uint32
}
