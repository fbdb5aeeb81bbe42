package moduleid_test

import (
	"encoding/hex"
	"fmt"

	"github.com/gobreakpad/gobreakpad/moduleid"
)

// Breakpad's identifiers of an ELF module from its GNU build ID: the debug
// id (the first 16 bytes as a GUID, age 0) of MODULE records and store
// paths, and the code id (the whole build ID) of INFO CODE_ID records.
func ExampleELFDebugID() {
	buildID, _ := hex.DecodeString("10ffba1880c8c8a6b55bb5bdb2732f0a1b2c3d4e")
	fmt.Println(moduleid.ELFDebugID(buildID))
	fmt.Println(moduleid.ELFCodeID(buildID))
	// Output:
	// 18BAFF10C880A6C8B55BB5BDB2732F0A0
	// 10ffba1880c8c8a6b55bb5bdb2732f0a1b2c3d4e
}

// Breakpad's identifiers of a Windows module: the debug id from the PE's
// CodeView (RSDS) record, the code id from its header.
func ExampleParseRSDS() {
	record, _ := hex.DecodeString("52534453" + // "RSDS"
		"9dd949324c0c31498610f4e4fb0b6936" + // GUID
		"01000000" + // age
		"6170702e70646200") // "app.pdb"
	rsds, ok := moduleid.ParseRSDS(record)
	if !ok {
		fmt.Println("not an RSDS record")
		return
	}
	fmt.Println(rsds.DebugID(), rsds.PDBFileName)
	fmt.Println(moduleid.PECodeID(0x5ab38077, 0x2a000))
	// Output:
	// 3249D99D0C4C49318610F4E4FB0B69361 app.pdb
	// 5AB380772a000
}
