// Command trimpe is a fixture step of ../generate.sh: it copies a PE image
// keeping only what a walk takes from a system DLL without a PDB, so that
// the test data need not hold Wine's 6 MiB DLLs:
//
//   - the headers, unchanged but for the section table and the COFF
//     symbol table (dropped: it names only the debug sections): the time
//     stamp and image size, the module's code identifier, stay as they are;
//
//   - the raw data of .pdata and .xdata (the unwind rules) and .edata (the
//     exports: the functions' names); every other section keeps its header
//     (its address and size in memory) with no raw data, and the sections
//     after the image's last loaded one (.debug_*, named through the
//     string table) are left out.
//
//     go run ./testdata/truth/wincxx/trimpe IN.dll OUT.dll
package main

import (
	"encoding/binary"
	"fmt"
	"os"
	"strings"
)

func main() {
	if len(os.Args) != 3 {
		fmt.Fprintln(os.Stderr, "usage: trimpe IN.dll OUT.dll")
		os.Exit(2)
	}
	if err := run(os.Args[1], os.Args[2]); err != nil {
		fmt.Fprintln(os.Stderr, "trimpe:", err)
		os.Exit(1)
	}
}

var keep = map[string]bool{".pdata": true, ".xdata": true, ".edata": true}

func run(in, out string) error {
	b, err := os.ReadFile(in)
	if err != nil {
		return err
	}
	le := binary.LittleEndian
	if len(b) < 0x40 {
		return fmt.Errorf("%s: too short", in)
	}
	pe := int(le.Uint32(b[0x3c:]))
	if pe+24 > len(b) || string(b[pe:pe+4]) != "PE\x00\x00" {
		return fmt.Errorf("%s: no PE signature", in)
	}
	coff := pe + 4
	nsec := int(le.Uint16(b[coff+2:]))
	optSize := int(le.Uint16(b[coff+16:]))
	secs := coff + 20 + optSize
	if secs+40*nsec > len(b) {
		return fmt.Errorf("%s: section table out of the file", in)
	}
	const align = 0x200
	hdrEnd := (secs + 40*nsec + align - 1) &^ (align - 1)
	o := append([]byte(nil), b[:hdrEnd]...)
	le.PutUint32(o[coff+8:], 0)  // PointerToSymbolTable
	le.PutUint32(o[coff+12:], 0) // NumberOfSymbols
	kept := 0
	for i := 0; i < nsec; i++ {
		h := o[secs+40*i : secs+40*i+40]
		name := strings.TrimRight(string(h[:8]), "\x00")
		if strings.HasPrefix(name, "/") {
			break // a long name: a debug section, after the image
		}
		kept++
		size, off := int(le.Uint32(h[16:])), int(le.Uint32(h[20:]))
		if !keep[name] || size == 0 {
			le.PutUint32(h[16:], 0)
			le.PutUint32(h[20:], 0)
			continue
		}
		if off+size > len(b) || off < 0 {
			return fmt.Errorf("%s: section %s out of the file", in, name)
		}
		le.PutUint32(h[20:], uint32(len(o)))
		o = append(o, b[off:off+size]...)
		for len(o)%align != 0 {
			o = append(o, 0)
		}
	}
	for i := kept; i < nsec; i++ {
		clear(o[secs+40*i : secs+40*i+40])
	}
	le.PutUint16(o[coff+2:], uint16(kept))
	return os.WriteFile(out, o, 0o644)
}
