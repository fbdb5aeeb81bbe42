package pdb

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"path/filepath"
	"strings"
)

// An info stream: version, signature, age, GUID, and an empty named
// stream map.
func exampleInfoStream() []byte {
	le := binary.LittleEndian
	b := le.AppendUint32(nil, 20000404)
	b = le.AppendUint32(b, 0x5ab38077)
	b = le.AppendUint32(b, 1)
	b = append(b, 0x9d, 0xd9, 0x49, 0x32, 0x40, 0x0c, 0x31, 0x49, 0x86, 0x10, 0xf4, 0xe4, 0xfb, 0x0b, 0x69, 0x36)
	b = le.AppendUint32(b, 0)    // string buffer size
	b = le.AppendUint32(b, 0)    // map size
	b = le.AppendUint32(b, 1)    // capacity
	b = le.AppendUint32(b, 0)    // present bit vector: no words
	return le.AppendUint32(b, 0) // deleted bit vector
}

// NewFile opens a PDB held in memory (Open opens one by path); streams are
// read when first asked for.
func ExampleNewFile() {
	data := buildMSF(512, [][]byte{nil, exampleInfoStream()})
	f, err := NewFile(bytes.NewReader(data), int64(len(data)))
	if err != nil {
		fmt.Println(err)
		return
	}
	info, err := f.Info()
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(f.MSF.NumStreams(), "streams, block size", f.MSF.Super.BlockSize)
	fmt.Println("debug id", info.DebugID())
	// Output:
	// 2 streams, block size 512
	// debug id 3249D99D0C4049318610F4E4FB0B69361
}

// Open maps a PDB file and reads its streams on demand: here the PDB of
// cmd/dump_syms/testdata/winprogs/chkstk (built by its mkchkstk.sh), its
// debug identifier, machine and the compilation units with symbols.
func ExampleOpen() {
	f, err := Open(filepath.Join("..", "cmd", "dump_syms", "testdata", "winprogs", "chkstk", "big.pdb"))
	if err != nil {
		fmt.Println(err)
		return
	}
	defer f.Close()
	info, err := f.Info()
	if err != nil {
		fmt.Println(err)
		return
	}
	dbi, err := f.DBI()
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Printf("debug id %s, machine %#x\n", info.DebugID(), uint16(dbi.Header.Machine))
	for _, m := range dbi.Modules {
		if m.SymStream != 0xFFFF && m.C13ByteSize > 0 {
			fmt.Println("module", filepath.Base(strings.ReplaceAll(m.Name, `\`, "/")))
		}
	}
	// Output:
	// debug id 439A19FA5FE394FE4C4C44205044422E1, machine 0x8664
	// module big.o
}
