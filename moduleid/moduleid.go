// Package moduleid holds Breakpad's rules for naming a module: its debug
// identifier (the MODULE record's id, the folder of a symbol store, a
// minidump module's debug_identifier) and its code identifier (INFO CODE_ID,
// code_identifier).
//
// For PE modules the debug identifier comes from the CodeView record of the
// debug directory: a PDB 7.0 ("RSDS") record's GUID and age ([DebugID]), or a
// PDB 2.0 ("NB10") record's signature and age ([PDB20DebugID]); the code
// identifier is the link time stamp and image size ([PECodeID]).
//
// For ELF modules both come from the GNU build ID note ([BuildIDNote]), or,
// without one, from Breakpad's hash of the first page of .text ([TextHash]):
// the debug identifier is its first 16 bytes read as a GUID with age 0
// ([ELFDebugID]), the code identifier all of it in hex ([ELFCodeID]). The
// build ID is found in an ELF file ([BuildID]) or in a module's image as it
// lies loaded in a process ([LoadedBuildID]); a minidump carries it in a
// CodeView record with Breakpad's 'BpEL' signature.
//
// The package imports only the standard library, so every reader and writer
// of symbols and dumps can use it.
package moduleid

import (
	"bytes"
	"encoding/binary"
	"encoding/hex"
	"fmt"
)

// CodeView record signatures: the first four bytes of a record, read as a
// little-endian number.
const (
	SignatureRSDS = 0x53445352 // "RSDS", PDB 7.0
	SignatureNB10 = 0x3031424e // "NB10", PDB 2.0
)

// GUID is a Windows GUID as CodeView records store it: Data1 to Data3
// little-endian, Data4 as bytes.
type GUID struct {
	Data1 uint32
	Data2 uint16
	Data3 uint16
	Data4 [8]byte
}

// GUIDFromBytes reads a GUID as stored: the first three fields
// little-endian.
func GUIDFromBytes(b [16]byte) GUID {
	le := binary.LittleEndian
	return GUID{le.Uint32(b[0:]), le.Uint16(b[4:]), le.Uint16(b[6:]), [8]byte(b[8:])}
}

// DebugID formats a GUID and age as Breakpad's debug identifier: the GUID's
// fields in upper-case hex without separators, then the age in lower-case
// hex without padding ("5A9832E5287241C1838ED98914E9B7FF1").
func DebugID(g GUID, age uint32) string {
	return fmt.Sprintf("%08X%04X%04X%02X%02X%02X%02X%02X%02X%02X%02X%x",
		g.Data1, g.Data2, g.Data3, g.Data4[0], g.Data4[1], g.Data4[2], g.Data4[3],
		g.Data4[4], g.Data4[5], g.Data4[6], g.Data4[7], age)
}

// ELFDebugID returns Breakpad's debug identifier of an ELF module from its
// build ID (or text hash): the first 16 bytes (zero-padded when shorter)
// read as a stored GUID, so its first three fields appear byte-swapped, with
// age 0.
func ELFDebugID(buildID []byte) string {
	var raw [16]byte
	copy(raw[:], buildID)
	return DebugID(GUIDFromBytes(raw), 0)
}

// ELFCodeID returns the code identifier of an ELF module as Breakpad's
// minidump processor prints it: the whole build ID in lower-case hex.
// (dump_syms writes INFO CODE_ID in upper case.)
func ELFCodeID(buildID []byte) string { return hex.EncodeToString(buildID) }

// PDB20DebugID returns Breakpad's debug identifier from a PDB 2.0 (NB10)
// record: the signature as 8 upper-case hex digits, then the age in
// lower-case hex.
func PDB20DebugID(signature, age uint32) string { return fmt.Sprintf("%08X%x", signature, age) }

// PECodeID returns Breakpad's code identifier of a PE module: the link time
// stamp as 8 upper-case hex digits, then the image size in lower-case hex
// ("45D35F6C2d000"), as symbol servers index executables.
func PECodeID(timeDateStamp, sizeOfImage uint32) string {
	return fmt.Sprintf("%08X%x", timeDateStamp, sizeOfImage)
}

// RSDS is a PDB 7.0 CodeView record (CV_INFO_PDB70).
type RSDS struct {
	GUID        GUID
	Age         uint32
	PDBFileName string // up to the first NUL
}

// ParseRSDS decodes a PDB 7.0 CodeView record, b starting at its "RSDS"
// signature. It reports false when b is not one (wrong signature, or fewer
// than the 24 bytes of signature, GUID and age); a missing file name reads
// as "".
func ParseRSDS(b []byte) (RSDS, bool) {
	if len(b) < 24 || binary.LittleEndian.Uint32(b) != SignatureRSDS {
		return RSDS{}, false
	}
	return RSDS{GUIDFromBytes([16]byte(b[4:20])), binary.LittleEndian.Uint32(b[20:]), cString(b[24:])}, true
}

// DebugID returns the record's debug identifier.
func (r RSDS) DebugID() string { return DebugID(r.GUID, r.Age) }

// NB10 is a PDB 2.0 CodeView record (CV_INFO_PDB20).
type NB10 struct {
	Offset      uint32
	Signature   uint32 // the PDB's time stamp
	Age         uint32
	PDBFileName string // up to the first NUL
}

// ParseNB10 decodes a PDB 2.0 CodeView record, b starting at its "NB10"
// signature. It reports false when b is not one (wrong signature, or fewer
// than the 16 bytes before the file name).
func ParseNB10(b []byte) (NB10, bool) {
	if len(b) < 16 || binary.LittleEndian.Uint32(b) != SignatureNB10 {
		return NB10{}, false
	}
	le := binary.LittleEndian
	return NB10{le.Uint32(b[4:]), le.Uint32(b[8:]), le.Uint32(b[12:]), cString(b[16:])}, true
}

// DebugID returns the record's debug identifier.
func (r NB10) DebugID() string { return PDB20DebugID(r.Signature, r.Age) }

// cString returns b up to its first NUL, as a string.
func cString(b []byte) string {
	if i := bytes.IndexByte(b, 0); i >= 0 {
		b = b[:i]
	}
	return string(b)
}
