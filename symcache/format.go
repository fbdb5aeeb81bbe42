package symcache

import (
	"encoding/hex"
	"fmt"
	"strings"
)

// Magic starts every SymCache file.
const Magic = "SYMC"

// Versions this package reads; [LatestVersion] is what [Builder] writes by
// default.
const (
	Version7      = 7 // strings with a uint32 length
	Version8      = 8 // strings with a ULEB128 length
	Version9      = 9 // files with source-server name, directory and revision
	LatestVersion = Version9
)

// None is the value of an absent reference, address or string offset.
const None = ^uint32(0)

// Sizes of the records on disk.
const (
	preambleSize       = 8  // magic and version
	headerSize         = 72 // Header after the preamble
	fileSizeV7         = 12
	fileSizeV9         = 24
	functionSize       = 16
	sourceLocationSize = 16
	rangeSize          = 4
)

// DebugID is a module's debug identifier as symbolic stores it: a GUID
// (bytes in their printed order), an age ("appendix"), and a type byte.
type DebugID struct {
	UUID     [16]byte
	Appendix uint32
	Padding  [11]byte // stored as read, for byte-identical re-encoding
	Type     uint8
}

// String returns the identifier as Breakpad prints it: 32 uppercase hex
// digits and the age in hex.
func (d DebugID) String() string {
	return strings.ToUpper(hex.EncodeToString(d.UUID[:])) + fmt.Sprintf("%X", d.Appendix)
}

// ParseDebugID parses a Breakpad debug id (33 or more hex digits: GUID and
// age; dashes are ignored).
func ParseDebugID(s string) (DebugID, error) {
	var d DebugID
	s = strings.ReplaceAll(s, "-", "")
	if len(s) < 32 {
		return d, fmt.Errorf("symcache: debug id %q: too short", s)
	}
	if _, err := hex.Decode(d.UUID[:], []byte(s[:32])); err != nil {
		return d, fmt.Errorf("symcache: debug id %q: %v", s, err)
	}
	if rest := s[32:]; rest != "" {
		var age uint64
		if _, err := fmt.Sscanf(rest, "%x", &age); err != nil || age > uint64(None) {
			return d, fmt.Errorf("symcache: debug id %q: bad age %q", s, rest)
		}
		d.Appendix = uint32(age)
	}
	return d, nil
}

// Header is what follows the magic and version.
type Header struct {
	Version            uint32
	DebugID            DebugID
	Arch               Arch
	NumFiles           uint32
	NumFunctions       uint32
	NumSourceLocations uint32
	NumRanges          uint32
	StringBytes        uint32
	Reserved           [16]byte
}

// File is a source file record: string offsets (None when absent) of its
// compilation directory, directory and name, and from version 9 its name,
// directory and revision on a source server.
type File struct {
	CompDir, Directory, Name              uint32
	SrcSrvName, SrcSrvDir, SrcSrvRevision uint32
}

// Function is a function record: the string offset of its name, of a
// compilation directory (unused since version 7), its entry address (None
// for functions only seen inlined) and its language ([Language]).
type Function struct {
	Name, CompDir, EntryPC uint32
	Lang                   Language
}

// SourceLocation is a (possibly inlined) line of a function: indexes of its
// file and function, its line (0 when unknown), and the index of the source
// location it was inlined into (None for none).
type SourceLocation struct {
	File, Line, Function, InlinedInto uint32
}

// NoSourceLocation is the sentinel ending a range without information.
var NoSourceLocation = SourceLocation{None, None, None, None}

// Arch is symbolic's CPU architecture number.
type Arch uint32

// Some architectures (symbolic_common::Arch).
const (
	ArchUnknown Arch = 0
	ArchX86     Arch = 101
	ArchAmd64   Arch = 201
	ArchArm     Arch = 301
	ArchArm64   Arch = 401
	ArchPpc     Arch = 501
	ArchPpc64   Arch = 601
	ArchMips    Arch = 701
	ArchMips64  Arch = 801
)

var archNames = map[Arch]string{
	ArchUnknown: "unknown", ArchX86: "x86", ArchAmd64: "x86_64", ArchArm: "arm", ArchArm64: "arm64",
	ArchPpc: "ppc", ArchPpc64: "ppc64", ArchMips: "mips", ArchMips64: "mips64",
}

// String returns the architecture's Breakpad name (as in MODULE records) for
// the common ones, else its number.
func (a Arch) String() string {
	if n, ok := archNames[a]; ok {
		return n
	}
	return fmt.Sprintf("arch(%d)", uint32(a))
}

// ArchFromName returns the architecture of a Breakpad MODULE record's CPU
// name, ArchUnknown for names it does not know.
func ArchFromName(name string) Arch {
	switch name {
	case "x86_64", "amd64":
		return ArchAmd64
	case "arm64", "aarch64":
		return ArchArm64
	}
	for a, n := range archNames {
		if n == name {
			return a
		}
	}
	return ArchUnknown
}

// Language is symbolic's source language number (0 unknown, 1 C, 2 C++, ...).
type Language uint32
